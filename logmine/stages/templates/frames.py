"""The frame search of the gap merge (:func:`~logmine.stages.templates.cluster.cluster`, step 4): which templates
are compared pairwise for a shared head and tail (their frame), and the frame's constant words.

A frame is the longest shared head and tail of two templates' patterns, leaving each a non-empty middle; the
templates it holds merge when the region between takes many values. Comparing every pair costs the square of the
templates, so they are compared within buckets of a shared first or last word, bounded in size.
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict

from logmine.masking import WILDCARD
from logmine.stages.templates.last_turn import TURN_LABELS
from logmine.stages.templates.tokens import has_mask


_FENCE_TOKEN = re.compile(r"(?:```|~~~)[\w+#.-]*$")
"""A code fence (with its info string): a context item's structure, as a turn label is."""


def structure_only(words: tuple[str, ...], wildcards: frozenset[str]) -> bool:
    """Whether ``words`` are a chat's structure alone: turn labels, code fences and masked values."""
    return all(tok in TURN_LABELS or has_mask(tok, wildcards) or _FENCE_TOKEN.match(tok) for tok in words)


MAX_FRAME_BUCKET = 200
"""Templates compared pairwise per shared first or last word (bounds the work)..."""
MAX_FRAME_DEPTH = 8
"""...and, in a larger bucket of chats (their first word a turn label), per shared first two words, three,
... up to this many."""


def frame_buckets(bucket: list[int], pats: list[tuple[str, ...]], deeper: bool, depth: int = 1) -> list[list[int]]:
    """The templates of ``bucket`` (sharing their first ``depth`` words) to compare pairwise for frames: the
    first ``MAX_FRAME_BUCKET`` in pattern order and, ``deeper`` and when there are more, each set of them that
    shares one more word, in turn (a log of many chats opens most of them with ``user:``: the templates of one
    instruction are compared among themselves, not only the first of the bucket). The words are read past a
    chat's structure (:func:`_words`): files before the instruction do not use up the depth."""
    ordered = sorted(bucket, key=lambda k: pats[k])
    if len(ordered) <= MAX_FRAME_BUCKET:
        return [ordered]
    out = [ordered[:MAX_FRAME_BUCKET]]
    if deeper and depth < MAX_FRAME_DEPTH:
        by_word: dict[tuple[str, ...], list[int]] = defaultdict(list)
        for k in ordered:
            words = _words(pats[k])
            if len(words) > depth:
                by_word[words[: depth + 1]].append(k)
        out += [b for part in by_word.values() if len(part) > 1 for b in frame_buckets(part, pats, True, depth + 1)]
    return out


@functools.lru_cache(maxsize=1 << 14)
def _words(pattern: tuple[str, ...]) -> tuple[str, ...]:
    """A chat's pattern less its structure (turn labels but the first, fences, slots, masks): the words its
    text opens with, whatever files come before it (every chat with two files opens with the same eight tokens)."""
    return pattern[:1] + tuple(tok for tok in pattern[1:] if not structure_only((tok,), _MASK_WORDS))


_MASK_WORDS = frozenset({WILDCARD})


def shared_frame(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The longest shared head and tail of ``a`` and ``b`` leaving both a non-empty middle."""
    limit = min(len(a), len(b)) - 1
    h = 0
    while h < limit and a[h] == b[h]:
        h += 1
    t = 0
    while t < limit - h and a[-1 - t] == b[-1 - t]:
        t += 1
    if h + t == 0 or a == b:
        return None
    return a[:h], a[len(a) - t :]


def frame_words(frame: tuple[tuple[str, ...], tuple[str, ...]], wildcards: frozenset[str], common: frozenset[str] = frozenset()) -> int:
    """The constant words of a frame; a word nearly every line has (``common``) tells no event apart."""
    return sum(1 for part in frame for tok in part if not has_mask(tok, wildcards) and tok not in common)


def frame_chars(frame: tuple[tuple[str, ...], tuple[str, ...]], wildcards: frozenset[str], common: frozenset[str] = frozenset()) -> int:
    return sum(len(tok) for part in frame for tok in part if not has_mask(tok, wildcards) and tok not in common)


def in_frame(p: tuple[str, ...], head: tuple[str, ...], tail: tuple[str, ...]) -> bool:
    return len(p) > len(head) + len(tail) and p[: len(head)] == head and p[len(p) - len(tail) :] == tail
