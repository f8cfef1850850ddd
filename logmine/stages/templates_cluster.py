"""The pure clustering core of the template miner: masked token sequences in, templates out.

Input: *units*, each a masked token sequence (a distinct signature, or a template found
earlier) with the number of lines it stands for. Output: a partition of the units into
templates. The steps, each deterministic and independent of the order of the units:

1. Bucket the units by token count and first token (the first word names the event, as in
   Drain's tree).
2. Split each bucket recursively, always on the position with the fewest distinct words,
   while that position looks like a constant: few distinct words (at most
   ``max_constant_values``), not a ``key=value`` pair, no masked value among them. The
   positions left that still differ are variables.
3. Merge templates that differ only in their first word, when that word takes many values
   and the rest of the line holds enough constant words to identify the event.
4. Merge templates of different lengths whose patterns are equal once runs of adjacent
   wildcards are read as one variable-length wildcard (a value of several words).
"""

from __future__ import annotations

import os
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from logmine.masking import WILDCARD

_KEYED = re.compile(r"^([^=:\s]+[=:])(?=.)")


@dataclass(frozen=True)
class ClusterParams:
    """The thresholds of the clustering core (one set for every system)."""

    max_constant_values: int = 4
    """A position with more distinct words than this is a variable."""
    variable_ratio: float = 0.5
    """A position with at least 3 distinct words in fewer than 1/ratio lines each is a variable."""
    min_context_tokens: int = 3
    """Constant words the rest of a line needs before its first word may be a variable."""


@dataclass
class Group:
    """One template: the units it holds and its token pattern (wildcards where they differ)."""

    members: list[int]
    pattern: tuple[str, ...]
    parts: list[Group] = field(default_factory=list)
    """For a variable-length template: its fixed-length templates, one per token count."""


def has_mask(token: str, wildcards: frozenset[str]) -> bool:
    return any(w in token for w in wildcards)


def is_variable(values: Counter[str], lines: int, params: ClusterParams, wildcards: frozenset[str]) -> bool:
    """Whether a position taking ``values`` (word -> lines) over ``lines`` lines is a variable."""
    distinct = len(values)
    if distinct <= 1:
        return False
    if distinct > params.max_constant_values:
        return True
    if distinct >= 3 and distinct / max(lines, 1) > params.variable_ratio:
        return True
    if any(v in wildcards for v in values) or 2 * sum(has_mask(v, wildcards) for v in values) >= distinct:
        return True
    keys = {m.group(1) if (m := _KEYED.match(v)) else None for v in values}
    return len(keys) == 1 and None not in keys


def pattern_of(rows: Sequence[Sequence[str]]) -> tuple[str, ...]:
    """Position-wise: the shared word, or a wildcard where the rows differ (keeping a shared
    head or tail that ends or starts at punctuation: ``rhost=<*>``, ``(<*>)``)."""
    return tuple(col[0] if len(set(col)) == 1 else generalise(col) for col in zip(*rows))


_HEAD = re.compile(r"^.*[^A-Za-z0-9_<>*]")
_TAIL = re.compile(r"[^A-Za-z0-9_<>*].*$")


def generalise(values: Sequence[str]) -> str:
    """One wildcard standing for ``values``, inside the punctuation they all share."""
    head = _cut(os.path.commonprefix(list(values)), _HEAD)
    rest = [v[len(head):][::-1] for v in values]
    tail = _cut(os.path.commonprefix(rest)[::-1], _TAIL)
    if any(len(v) <= len(head) + len(tail) for v in values):
        return WILDCARD
    return head + WILDCARD + tail


def _cut(text: str, rx: re.Pattern[str]) -> str:
    m = rx.search(text)
    return m.group(0) if m else ""


def _split_bucket(
    members: list[int], units: Sequence[tuple[str, ...]], weights: Sequence[int], params: ClusterParams, wildcards: frozenset[str]
) -> list[Group]:
    out: list[Group] = []
    stack = [members]
    while stack:
        idx = stack.pop()
        rows = [units[i] for i in idx]
        best: tuple[int, int] | None = None
        for pos, col in enumerate(zip(*rows)):
            if pos == 0 or len(distinct := set(col)) == 1:
                continue
            if best is not None and len(distinct) >= best[0]:
                continue
            values: Counter[str] = Counter()
            for i, v in zip(idx, col):
                values[v] += weights[i]
            if not is_variable(values, sum(values.values()), params, wildcards):
                best = (len(distinct), pos)
        if best is None:
            out.append(Group(idx, pattern_of(rows)))
            continue
        parts: dict[str, list[int]] = defaultdict(list)
        for i in idx:
            parts[units[i][best[1]]].append(i)
        stack.extend(parts[v] for v in sorted(parts, reverse=True))
    return out


def _merge_first_words(groups: list[Group], weights: Sequence[int], params: ClusterParams, wildcards: frozenset[str]) -> list[Group]:
    """Merge same-length templates that differ only in a first word that takes many values."""
    by_rest: dict[tuple[str, ...], list[Group]] = defaultdict(list)
    keep: list[Group] = []
    for g in groups:
        context = sum(1 for t in g.pattern[1:] if not has_mask(t, wildcards))
        (by_rest[g.pattern[1:]] if len(g.pattern) > 1 and context >= params.min_context_tokens else keep).append(g)
    for rest, same in by_rest.items():
        values: Counter[str] = Counter()
        for g in same:
            values[g.pattern[0]] += sum(weights[i] for i in g.members)
        if len(same) > 1 and is_variable(values, sum(values.values()), params, wildcards):
            keep.append(Group(sorted(i for g in same for i in g.members), (WILDCARD, *rest)))
        else:
            keep.extend(same)
    return keep


def collapse_wildcards(pattern: Sequence[str]) -> tuple[str, ...]:
    """Runs of adjacent wildcards read as one (variable-length) wildcard."""
    out: list[str] = []
    for tok in pattern:
        if tok == WILDCARD and out and out[-1] == WILDCARD:
            continue
        out.append(tok)
    return tuple(out)


def _merge_lengths(groups: list[Group]) -> list[Group]:
    """Merge templates whose patterns are equal with variable-length wildcards."""
    by_key: dict[tuple[str, ...], list[Group]] = defaultdict(list)
    for g in groups:
        by_key[collapse_wildcards(g.pattern)].append(g)
    out = []
    for key, same in by_key.items():
        by_len: dict[int, list[Group]] = defaultdict(list)
        for g in same:
            by_len[len(g.pattern)].append(g)
        parts = [_union(gs) for _, gs in sorted(by_len.items())]
        if len(parts) == 1:
            out.append(parts[0])
        else:
            out.append(Group(sorted(i for g in parts for i in g.members), key, parts))
    return out


def _union(groups: list[Group]) -> Group:
    if len(groups) == 1:
        return groups[0]
    return Group(sorted(i for g in groups for i in g.members), pattern_of([g.pattern for g in groups]))


def cluster(
    units: Sequence[tuple[str, ...]],
    weights: Sequence[int],
    params: ClusterParams | None = None,
    wildcards: frozenset[str] = frozenset({WILDCARD}),
    members: Sequence[int] | None = None,
) -> list[Group]:
    """Partition ``units`` (or the subset ``members``) into templates, sorted by pattern."""
    params = params or ClusterParams()
    buckets: dict[tuple[int, str], list[int]] = defaultdict(list)
    for i in range(len(units)) if members is None else members:
        toks = units[i]
        buckets[(len(toks), toks[0] if toks else "")].append(i)
    groups: list[Group] = []
    for key in sorted(buckets):
        idx = sorted(buckets[key], key=lambda i: units[i])
        groups.extend(_split_bucket(idx, units, weights, params, wildcards))
    groups = _merge_lengths(_merge_first_words(groups, weights, params, wildcards))
    for g in groups:
        g.members.sort()
    return sorted(groups, key=lambda g: (g.pattern, g.members[0] if g.members else -1))
