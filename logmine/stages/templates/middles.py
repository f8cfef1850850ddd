"""Prompt templates whose static lines differ in runs of lines that vary freely.

The anchor merge (:mod:`logmine.stages.templates.anchors`) joins templates whose prompts have the
same static lines. A value made of lines drawn from a small vocabulary (a list of rules chosen per
project, four of a dozen) recurs verbatim, so its lines count as static, and each choice of lines
became a template. Here, templates that open with the same static line and hold the same frame (the
static lines nearly all their prompts hold) are one template when the lines they hold besides take
many contents, each template's in few prompts: a template's own text takes few contents, each in
many prompts (``anchors.REGION_RATIO`` reads a free-text region alike). Templates whose middles hold
sections of their own (blocks of lines that the same families hold) are parted by them first.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Sequence

MIN_MIDDLES = 5
"""A region must take this many contents among the templates it would join..."""
MIDDLE_RATIO = 0.3
"""...that are this share of their prompts, or more (as a free-text region's, ``anchors.REGION_RATIO``)."""


def join_varying_middles(
    anchors: dict[Hashable, tuple[Hashable, tuple[str, ...]]], weights: dict[Hashable, int], static_chars: int, turn: str,
) -> list[list[Hashable]]:
    """Sets of families to join. ``anchors`` maps a family to its structure (its chat's turns) and its
    anchor lines in order (a chat's turn labels start with ``turn``); ``weights`` to its prompts.
    Families of one structure that open with the same static line join when the anchors all of them
    hold (their frame: :func:`_frame`) have ``static_chars`` characters or more, each holds its other
    anchors in runs after a static line of the frame (inside a text, not a chat's whole turn: a turn
    of another template), and these runs are ``MIN_MIDDLES`` contents or more, ``MIDDLE_RATIO`` of
    their prompts or more."""
    buckets: dict[tuple[Hashable, str], list[Hashable]] = defaultdict(list)
    for family, (structure, lines) in anchors.items():
        first = next((a for a in lines if a[:1] != turn), None)
        if first is not None:
            buckets[(structure, first)].append(family)
    return [joined for families in buckets.values() for joined in _join(families, anchors, weights, static_chars, turn)]


def _join(
    families: list[Hashable], anchors: dict[Hashable, tuple[Hashable, tuple[str, ...]]], weights: dict[Hashable, int],
    static_chars: int, turn: str,
) -> list[list[Hashable]]:
    """The sets of ``families`` (one structure, one first static line) to join: all of them, or none, or, where
    their middles hold templates' own texts (:func:`_own_texts`), the sets to join among the families of each text."""
    if len(families) < MIN_MIDDLES:
        return []
    common = _frame(families, anchors, weights)
    if sum(len(a) for a in common if a[:1] != turn) < static_chars:
        return []
    families = [f for f in families if _holds(anchors[f][1], common)]  # a family without the frame stays apart
    middles = {f: _middles(anchors[f][1], common) for f in families}
    parts = _own_texts(middles)
    if len(parts) > 1:
        return [joined for part in parts for joined in _join(part, anchors, weights, static_chars, turn)]
    contents = set(middles.values())
    framed = all(at > 0 and common[at - 1][:1] != turn for content in contents for at, _ in content)
    prompts = sum(weights[f] for f in families)
    if framed and len(contents) >= MIN_MIDDLES and len(contents) >= MIDDLE_RATIO * prompts:
        return [families]
    return []


OWN_TEXT_LINES = 4
"""Lines held by the same families, this many or more, are a template's own text, not lines drawn one by one."""


def _own_texts(middles: dict[Hashable, tuple[tuple[int, tuple[str, ...]], ...]]) -> list[list[Hashable]]:
    """The families of ``middles`` (family -> its runs of lines off the frame, :func:`_middles`) parted by the
    templates' own texts those runs hold. Lines drawn from a vocabulary one by one are each held by families of
    their own; a template's own text (a section some templates of the bucket have, others not) is a block of
    ``OWN_TEXT_LINES`` lines or more that the same families hold. Families that hold the same blocks are one part;
    without such a block, all are one."""
    holders: dict[str, set[Hashable]] = defaultdict(set)
    for f, runs in middles.items():
        for _, run in runs:
            for line in run:
                holders[line].add(f)
    blocks: dict[frozenset[Hashable], int] = defaultdict(int)
    for held in holders.values():
        blocks[frozenset(held)] += 1
    own = [held for held, lines in blocks.items() if lines >= OWN_TEXT_LINES]
    parts: dict[tuple[bool, ...], list[Hashable]] = defaultdict(list)
    for f in middles:
        parts[tuple(f in held for held in own)].append(f)
    return list(parts.values())


FRAME_SHARE = 0.9
"""A bucket's frame: the anchors of its heaviest family that families of this share of its prompts hold
(a family that lacks a frame's tail, read into a slot, stays apart), but for a line some family lacks alone."""


def _frame(families: list[Hashable], anchors: dict[Hashable, tuple[Hashable, tuple[str, ...]]], weights: dict[Hashable, int]) -> list[str]:
    held: dict[str, int] = defaultdict(int)
    for f in families:
        for line in set(anchors[f][1]):
            held[line] += weights[f]
    total = sum(weights[f] for f in families)
    heaviest = max(families, key=lambda f: (weights[f], str(f)))
    frame = [a for a in anchors[heaviest][1] if held[a] >= FRAME_SHARE * total]
    # a line some family lacks alone, holding the rest of the frame, is a value's line most prompts drew
    alone = {a for f in families for a in [_lacks_one(set(anchors[f][1]), frame)] if a is not None}
    return [a for a in frame if a not in alone]


def _lacks_one(lines: set[str], frame: list[str]) -> str | None:
    missing = [a for a in frame if a not in lines]
    return missing[0] if len(missing) == 1 else None


def _holds(lines: Sequence[str], frame: Sequence[str]) -> bool:
    """Whether ``frame`` is a subsequence of ``lines``."""
    it = iter(lines)
    return all(any(line == a for line in it) for a in frame)


def _middles(lines: Sequence[str], common: Sequence[str]) -> tuple[tuple[int, tuple[str, ...]], ...]:
    """The runs of ``lines`` not in ``common`` (a subsequence of it), each with the index in ``common``
    it comes before."""
    runs: dict[int, list[str]] = defaultdict(list)
    j = 0
    for line in lines:
        if j < len(common) and line == common[j]:
            j += 1
        else:
            runs[j].append(line)
    return tuple((at, tuple(run)) for at, run in sorted(runs.items()))
