"""Per-token latencies of one streamed response: tokens, their gaps, and how sure we are of them.

``token_times_ms`` holds each streamed piece's arrival offset from the request start. The
first piece's latency is the time to first token, each later one's the gap since the previous
piece. Logs stream either single tokens or multi-token *chunks*; a chunk's gap is spread evenly
over the tokens in it and the request's granularity says which it was. Tokens are counted with
a GPT-2-style pre-tokenizer (:func:`split_tokens`): a BPE token never spans two of its pieces,
so a streamed piece that splits into several is a chunk.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

# GPT-2's pre-tokenizer with Python's re: contractions, words (with one leading space), digit
# runs, punctuation runs (underscore included), and whitespace runs.
_PRETOKEN_RE = re.compile(r"'(?:[sdmt]|ll|ve|re)| ?[^\W\d_]+| ?\d+| ?(?:[^\s\w]|_)+|\s+(?!\S)|\s+")

SKIP_EMPTY = "empty_completion"
"""Nothing was generated (no token texts and no completion)."""
SKIP_NO_TIMES = "no_token_times"
"""The request has text but no token timings at all."""

ISSUE_TIMES_SHORTER = "times_shorter_than_tokens"
"""Fewer timings than token texts: the tokens without a time are left out."""
ISSUE_TIMES_LONGER = "times_longer_than_tokens"
"""More timings than tokens: the extra timings are ignored."""
ISSUE_NON_MONOTONIC = "non_monotonic_times"
"""A timing earlier than the previous one: that gap counts as 0."""
ISSUE_NULL_TIMES = "null_times"
"""A missing (null/NaN) timing: it is taken to equal the previous one."""
ISSUE_TEXT_MISMATCH = "texts_differ_from_completion"
"""The token texts do not join up to the completion; the token texts are labelled."""


def split_tokens(text: str) -> list[str]:
    """Split ``text`` into token-sized pieces; ``"".join(split_tokens(t)) == t``."""
    return _PRETOKEN_RE.findall(text)


def _is_one_token(text: str) -> bool:
    """True when ``text`` is a single pre-tokenizer piece (the common case, checked without splitting)."""
    match = _PRETOKEN_RE.match(text)
    return match is not None and match.end() == len(text)


@dataclass(frozen=True, slots=True)
class Timeline:
    """A request's measured tokens, each with its latency; or the reason it was skipped."""

    text: str
    """The generated text the tokens are taken from (the joined token texts, else the completion)."""
    tokens: list[str]
    """Measured tokens, in order; they are a prefix of ``text``."""
    latency_ms: list[float]
    """Each token's latency in ms, aligned with ``tokens``."""
    granularity: str | None
    """``token`` (one streamed piece per token) or ``chunk`` (gaps spread over the chunk's tokens)."""
    tokens_from: str | None
    """``log`` (token texts from the log) or ``completion`` (split from the completion by logmine)."""
    pieces: int = 0
    """Streamed pieces (token texts, or timings when the completion was split) that were used."""
    issues: tuple[str, ...] = ()
    """Problems that were handled (``ISSUE_*``)."""
    skip_reason: str | None = None
    """Why the request yields no tokens (``SKIP_*``), else None."""

    @classmethod
    def skipped(cls, reason: str, text: str = "") -> Timeline:
        return cls(text, [], [], None, None, skip_reason=reason)


def timeline(
    token_texts: Sequence[str | None] | None,
    token_times_ms: Sequence[float | None] | None,
    completion: str | None,
    chunk_fraction: float = 0.5,
) -> Timeline:
    """Measure one request's tokens.

    ``chunk_fraction``: the request is chunk-granular when more than this fraction of its
    streamed pieces holds more than one token.
    """
    texts = [t or "" for t in token_texts] if token_texts else []
    if not any(texts):
        return _from_completion(token_times_ms, completion)
    text = "".join(texts)
    if not token_times_ms:
        return Timeline.skipped(SKIP_NO_TIMES, text)
    issues: list[str] = []
    if completion and completion != text:
        issues.append(ISSUE_TEXT_MISMATCH)
    times, time_issues = _clean_times(token_times_ms)
    issues += time_issues
    if len(times) < len(texts):
        issues.append(ISSUE_TIMES_SHORTER)
    elif len(times) > len(texts):
        issues.append(ISSUE_TIMES_LONGER)
    pairs = [(t, s) for t, s in zip(texts, times) if t]  # empty deltas: the next piece's gap spans them
    multi = sum(not _is_one_token(t) for t, _ in pairs)
    granularity = "chunk" if multi > chunk_fraction * len(pairs) else "token"
    entries = [split_tokens(t) for t, _ in pairs] if granularity == "chunk" else []
    gaps = _gaps([s for _, s in pairs], issues)
    tokens, latency = _spread([t for t, _ in pairs], entries, gaps, granularity)
    return Timeline(text, tokens, latency, granularity, "log", len(pairs), tuple(dict.fromkeys(issues)))


def _from_completion(token_times_ms: Sequence[float | None] | None, completion: str | None) -> Timeline:
    """No token texts in the log: split the completion and line it up with the timings."""
    if not completion:
        return Timeline.skipped(SKIP_EMPTY)
    if not token_times_ms:
        return Timeline.skipped(SKIP_NO_TIMES, completion)
    times, issues = _clean_times(token_times_ms)
    pieces = split_tokens(completion)
    n, m = len(times), len(pieces)
    if m <= n:
        if m < n:
            issues.append(ISSUE_TIMES_LONGER)
        gaps = _gaps(times[:m], issues)
        return Timeline(completion, pieces, gaps, "token", "completion", m, tuple(dict.fromkeys(issues)))
    # more tokens than timings: each timing closes a chunk of about m/n tokens
    bounds = [math.floor(i * m / n) for i in range(n + 1)]
    chunks = [pieces[bounds[i]:bounds[i + 1]] for i in range(n)]
    gaps = _gaps(times, issues)
    tokens, latency = _spread(["".join(c) for c in chunks], chunks, gaps, "chunk")
    return Timeline(completion, tokens, latency, "chunk", "completion", n, tuple(dict.fromkeys(issues)))


def _clean_times(raw: Sequence[float | None]) -> tuple[list[float], list[str]]:
    """Timings as floats; a null or NaN takes the previous value (0 at the start)."""
    times: list[float] = []
    issues: list[str] = []
    previous = 0.0
    for value in raw:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            if ISSUE_NULL_TIMES not in issues:
                issues.append(ISSUE_NULL_TIMES)
            value = previous
        times.append(float(value))
        previous = float(value)
    return times, issues


def _gaps(times: Sequence[float], issues: list[str]) -> list[float]:
    """First value as is (time to first token), then differences; negative gaps become 0."""
    gaps: list[float] = []
    previous = 0.0
    for t in times:
        gap = t - previous
        if gap < 0:
            gap = 0.0
            if ISSUE_NON_MONOTONIC not in issues:
                issues.append(ISSUE_NON_MONOTONIC)
        gaps.append(gap)
        previous = max(previous, t)
    return gaps


def _spread(texts: list[str], entries: list[list[str]], gaps: list[float], granularity: str) -> tuple[list[str], list[float]]:
    if granularity == "token":
        return texts, gaps
    tokens: list[str] = []
    latency: list[float] = []
    for pieces, gap in zip(entries, gaps):
        share = gap / len(pieces)
        tokens.extend(pieces)
        latency.extend([share] * len(pieces))
    return tokens, latency
