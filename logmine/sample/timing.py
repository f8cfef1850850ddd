"""Token timings of a streamed completion: a code-aware tokenizer and the latency model.

The completion is split by :data:`TOKEN_RE` into tokens of seven kinds. The first token
arrives after the time to first token (TTFT); every later token after a gap of
``model.token_ms * KIND_FACTOR[kind] * noise * tail(i)``. STRING tokens are planted 5x slower
than identifiers; :func:`latency_truth` documents every constant for ``truth.json``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

TOKEN_RE = re.compile(
    r"""(?P<S>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?!`)(?:[^`\\\n]|\\.)*`)"""
    r"""|(?P<C>\#[^\n]*|//[^\n]*)"""
    r"""|(?P<N>\d+(?:\.\d+)?)"""
    r"""|(?P<I>[^\W\d]\w*)"""
    r"""|(?P<L>\n)"""
    r"""|(?P<W>[^\S\n]+)"""
    r"""|(?P<O>```|==|!=|<=|>=|->|=>|::|\*\*|//|&&|\|\||[^\w\s])""",
)
"""One alternative per token kind, tried in this order; every character lands in some token."""

KIND_NAMES = {"I": "IDENT", "N": "NUMBER", "S": "STRING", "C": "COMMENT", "O": "OP", "W": "WS", "L": "NEWLINE"}
"""Token kind letters (as in ``attrs.token_kinds``) and their names."""

KIND_FACTOR = {"I": 1.0, "N": 1.2, "S": 5.0, "C": 1.5, "O": 0.8, "W": 0.6, "L": 1.3}
"""Per-kind multiplier of a model's per-token latency. STRING = 5.0 is the planted fact."""

NOISE_SIGMA = 0.25
"""Log-normal noise on every inter-token gap (sigma of the underlying normal)."""
TTFT_SIGMA = 0.35
"""Log-normal spread of the time to first token around the model's median."""
TTFT_CLIP_MS = (150.0, 600.0)
"""Completion TTFTs are clipped to this range."""
CHAT_TTFT_CLIP_MS = (200.0, 1500.0)
"""Chat and edit TTFTs (longer prompts) are clipped to this range."""
TAIL_START = 64
"""Tokens after this index get slower: the slow tail of long completions."""
TAIL_SLOPE = 0.01
"""Each token past :data:`TAIL_START` adds this fraction to the gap (token 164 is 2x)."""
STALL_P = 0.004
"""Chance that a gap carries an extra stall (a scheduler hiccup)."""
STALL_MS = 250.0
"""Median of such a stall."""
MAX_WS_RUN = 4
"""Whitespace runs are split into tokens of at most this many characters (indentation)."""

_FACTOR_TABLE = np.zeros(128)
for _k, _f in KIND_FACTOR.items():
    _FACTOR_TABLE[ord(_k)] = _f


def tokenize(text: str) -> tuple[list[str], str]:
    """Split ``text`` into tokens; returns the token texts and their kinds, one letter each."""
    texts: list[str] = []
    kinds: list[str] = []
    for match in TOKEN_RE.finditer(text):
        kind = match.lastgroup or "O"
        token = match.group()
        if kind == "W" and len(token) > MAX_WS_RUN:
            for i in range(0, len(token), MAX_WS_RUN):
                texts.append(token[i : i + MAX_WS_RUN])
                kinds.append("W")
            continue
        texts.append(token)
        kinds.append(kind)
    return texts, "".join(kinds)


@dataclass(frozen=True, slots=True)
class Timing:
    """When each token arrived, in ms from the request start (float, 0.1 ms resolution)."""

    ttft_ms: float
    token_times_ms: list[float]
    total_ms: float


def token_times(
    rng: np.random.Generator, kinds: str, token_ms: float, ttft_median_ms: float, chat: bool = False
) -> Timing:
    """Arrival offsets of the tokens whose kinds are ``kinds`` for a model of this speed."""
    n = len(kinds)
    lo, hi = CHAT_TTFT_CLIP_MS if chat else TTFT_CLIP_MS
    ttft = min(hi, max(lo, ttft_median_ms * math.exp(TTFT_SIGMA * float(rng.standard_normal()))))
    if n == 0:
        total = round(ttft + 5.0, 1)
        return Timing(round(ttft, 1), [], total)
    codes = np.frombuffer(kinds.encode("ascii"), dtype=np.uint8)
    gaps = token_ms * _FACTOR_TABLE[codes] * np.exp(NOISE_SIGMA * rng.standard_normal(n))
    if n > TAIL_START:
        index = np.arange(n, dtype=np.float64)
        gaps *= 1.0 + TAIL_SLOPE * np.maximum(0.0, index - TAIL_START)
    stalls = rng.random(n) < STALL_P
    if stalls.any():
        gaps[stalls] += STALL_MS * np.exp(0.5 * rng.standard_normal(int(stalls.sum())))
    gaps[0] = ttft
    times = np.round(np.cumsum(gaps), 1)
    total = round(float(times[-1]) + 2.0 + 8.0 * float(rng.random()), 1)
    return Timing(float(times[0]), times.tolist(), total)


def latency_truth() -> dict[str, object]:
    """The planted latency model, for ``truth.json``."""
    return {
        "token_regex": TOKEN_RE.pattern,
        "kind_names": KIND_NAMES,
        "kind_factor": {KIND_NAMES[k]: v for k, v in KIND_FACTOR.items()},
        "planted": "STRING tokens are 5x slower than IDENT tokens of the same model",
        "gap_ms": "model.token_ms * kind_factor * exp(noise_sigma * N(0,1)) * (1 + tail_slope * max(0, i - tail_start))",
        "noise_sigma": NOISE_SIGMA,
        "ttft": {"median": "model.ttft_ms", "sigma": TTFT_SIGMA, "clip_ms": list(TTFT_CLIP_MS), "chat_clip_ms": list(CHAT_TTFT_CLIP_MS)},
        "tail_start": TAIL_START,
        "tail_slope": TAIL_SLOPE,
        "stall": {"p": STALL_P, "median_ms": STALL_MS},
        "max_whitespace_run": MAX_WS_RUN,
    }
