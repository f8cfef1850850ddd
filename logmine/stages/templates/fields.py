"""Which leading words of log lines are fields, not the word that names their event.

Read by the clustering core (:mod:`logmine.stages.templates.cluster`) before it buckets units:
a first word that varies across events (a process name, ``chrome.exe - ...``), masked values
and ``key=value`` fields in front (``pid=<*> level=INFO ...``), and after a field a word nearly
every line has (a logger's name in ``main|ray.serve|Started ...``).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence

from logmine.masking import WILDCARD
from logmine.stages.templates.tokens import KEYED, has_mask, slot_names

LETTER = re.compile(r"[A-Za-z]")


def field_token(values: Sequence[str]) -> str:
    """A field's values as one variable that keeps the punctuation they share: ``alice|`` and
    ``bob|`` are ``<*>|``; ``chrome.exe`` and ``python`` are ``<*>``."""
    shapes = {_FIELD_VALUE.sub(WILDCARD, v, count=1) for v in values}
    return shapes.pop() if len(shapes) == 1 else WILDCARD


_FIELD_VALUE = re.compile(r"[\w.-]+")
_FIELD_SHARE = 0.5
"""Share of the lines whose rest recurs after several first words before the first word is a field."""
_FIELD_FIRSTS = 3
"""First words a rest must follow to count as evidence that the first word is a field."""
_REST = 3
"""Words after the first that name a line's rest, for that test."""


def first_is_field(
    units: Sequence[tuple[str, ...]], weights: Sequence[int], members: Sequence[int], min_context: int, wildcards: frozenset[str],
) -> bool:
    """Whether the first word of these lines is a field that varies across events (a process
    name, ``chrome.exe - open through proxy``), not the word that names the event: most lines
    have a rest (length and next words) that follows at least three different first words and
    holds ``min_context`` constant words. In logs whose first word names the event, a
    rest follows one first word, two at most (``Starting``/``Stopping``)."""
    firsts: dict[tuple[int, tuple[str, ...]], set[str]] = defaultdict(set)
    for i in members:
        toks = units[i]
        if len(toks) > 1:
            firsts[(len(toks), toks[1 : 1 + _REST])].add(toks[0])
    total = shared = 0
    for i in members:
        toks = units[i]
        total += weights[i]
        if (
            len(toks) > 1 and len(firsts[(len(toks), toks[1 : 1 + _REST])]) >= _FIELD_FIRSTS
            and sum(1 for t in toks[1:] if not has_mask(t, wildcards)) >= min_context
        ):
            shared += weights[i]
    return total > 0 and shared >= _FIELD_SHARE * total


def bucket_word(toks: Sequence[str], start: int, wildcards: frozenset[str], common: frozenset[tuple[int, str]] = frozenset()) -> str:
    """The word that names a line's event: the first from ``start`` that holds a letter and is
    neither a masked value, a ``key=value`` field nor a word nearly every line has at its
    position (``common``: a logger's name in ``main|ray.serve|Started ...``); so
    ``pid=<*> level=INFO Closing ...`` is bucketed by ``Closing``. The line's first word when
    there is none."""
    for pos in range(start, min(len(toks), start + 4)):
        tok = toks[pos]
        if LETTER.search(tok) and not has_mask(tok, wildcards) and not KEYED.match(tok) and (pos, tok) not in common:
            return slot_names(tok)
    return slot_names(toks[0]) if toks else ""


_HEAD = re.compile(r"[A-Za-z_][\w.]*[(=\[{]")


def word_head(word: str) -> str:
    """A word up to the punctuation that opens a value in it: ``setLightsOn(`` of
    ``setLightsOn(true)``, ``ready=`` of ``ready=yes,policy=...``; the word itself when none."""
    m = _HEAD.match(word)
    return m.group(0) if m else word


_COMMON_SHARE = 0.9
"""Share of the lines a word needs at its position (among the first four) to name no event."""


def common_words(units: Sequence[tuple[str, ...]], weights: Sequence[int], members: Sequence[int]) -> frozenset[tuple[int, str]]:
    """``(position, word)`` for the first four positions where one word is in nearly all lines
    (``_COMMON_SHARE``): a constant field, the same for every event."""
    out = set()
    for pos in range(4):
        counts: Counter[str] = Counter()
        for i in members:
            if len(units[i]) > pos:
                counts[units[i][pos]] += weights[i]
        total = sum(counts.values())
        if total:
            word, n = counts.most_common(1)[0]
            if n >= _COMMON_SHARE * total and total >= _COMMON_SHARE * sum(weights[i] for i in members):
                out.add((pos, word))
    return frozenset(out)


def leading_fields(
    units: Sequence[tuple[str, ...]], weights: Sequence[int], members: Sequence[int], min_context: int, wildcards: frozenset[str],
) -> tuple[int, frozenset[tuple[int, str]]]:
    """``(start, common)`` for :func:`bucket_word`: 1 when the first word is a field (else 0), and
    after such a field the words nearly every line has at their position."""
    if not first_is_field(units, weights, members, min_context, wildcards):
        return 0, frozenset()
    return 1, common_words(units, weights, members)
