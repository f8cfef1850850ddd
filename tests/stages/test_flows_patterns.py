"""Sequential patterns: the same pattern set and supports as PyPI ``prefixspan`` (a test oracle only),
and, with a gap limit, the same as a brute-force enumeration."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np
import polars as pl
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from prefixspan import PrefixSpan
from test_flows import make_events, reference_cases

from logmine.stages.flows.core import FlowsConfig, compute_flows
from logmine.stages.flows.patterns import PatternConfig, prefixspan


def flat(db: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    items = np.array([x for s in db for x in s], dtype=np.int64)
    return items, np.cumsum([0, *(len(s) for s in db)])


def oracle(db: list[list[int]], min_count: int, max_len: int, min_len: int = 1) -> dict[tuple[int, ...], int]:
    ps = PrefixSpan(db)
    ps.minlen, ps.maxlen = min_len, max_len
    return {tuple(p): s for s, p in ps.frequent(min_count)}


def brute(db: list[list[int]], min_count: int, max_len: int, max_gap: int | None, min_len: int = 1) -> dict[tuple[int, ...], int]:
    """Every pattern with an embedding whose consecutive positions are at most max_gap apart."""
    support: Counter = Counter()
    for seq in db:
        found: set[tuple[int, ...]] = set()

        def grow(patt: tuple[int, ...], last: int) -> None:
            if patt:
                found.add(patt)
            if len(patt) == max_len:
                return
            stop = len(seq) if last < 0 or max_gap is None else min(len(seq), last + max_gap + 1)
            for j in range(last + 1, stop):
                grow((*patt, seq[j]), j)

        grow((), -1)
        support.update(found)
    return {p: c for p, c in support.items() if c >= min_count and len(p) >= min_len}


databases = st.lists(st.lists(st.integers(0, 5), min_size=0, max_size=9), min_size=1, max_size=30)


@settings(max_examples=150, deadline=None)
@given(databases, st.integers(1, 6), st.integers(1, 5), st.integers(1, 3))
def test_same_patterns_as_prefixspan(db: list[list[int]], min_count: int, max_len: int, min_len: int) -> None:
    assume(min_len <= max_len)  # prefixspan ignores maxlen below minlen; logmine rejects it
    items, offsets = flat(db)
    got = prefixspan(items, offsets, PatternConfig(min_count, max_len, min_len))
    assert len(got) == len(set(p for p, _ in got))
    assert dict(got) == oracle(db, min_count, max_len, min_len)


@settings(max_examples=150, deadline=None)
@given(databases, st.integers(1, 5), st.integers(1, 4), st.integers(1, 4))
def test_gap_limit_matches_brute_force(db: list[list[int]], min_count: int, max_len: int, max_gap: int) -> None:
    items, offsets = flat(db)
    got = prefixspan(items, offsets, PatternConfig(min_count, max_len, max_gap=max_gap))
    assert dict(got) == brute(db, min_count, max_len, max_gap)


def test_gap_limit_keeps_later_occurrences() -> None:
    # the leftmost "a" cannot reach "b" within one step; the second can
    assert dict(prefixspan(*flat([[0, 9, 0, 1]]), PatternConfig(1, 2, 2, max_gap=1))) == {(9, 0): 1, (0, 1): 1, (0, 9): 1}


def test_a_gap_as_long_as_the_longest_session_is_no_limit() -> None:
    db = [[0, 1, 2, 0, 1], [2, 2, 0], [1, 0, 2, 1]]
    items, offsets = flat(db)
    assert dict(prefixspan(items, offsets, PatternConfig(2, 4, max_gap=4))) == oracle(db, 2, 4)


def test_row_budget_groups_give_the_same_patterns(monkeypatch: pytest.MonkeyPatch) -> None:
    from logmine.stages.flows import patterns as flows_patterns

    rng = np.random.default_rng(3)
    db = [rng.integers(0, 6, size=rng.integers(1, 12)).tolist() for _ in range(300)]
    items, offsets = flat(db)
    whole = prefixspan(items, offsets, PatternConfig(15, 4))
    for gap in (None, 2):
        monkeypatch.setattr(flows_patterns, "ROW_BUDGET", 50)
        small = prefixspan(items, offsets, PatternConfig(15, 4, max_gap=gap))
        monkeypatch.undo()
        assert dict(small) == dict(prefixspan(items, offsets, PatternConfig(15, 4, max_gap=gap)))
    assert dict(whole) == oracle(db, 15, 4)


def test_no_frequent_items_and_empty_input() -> None:
    assert prefixspan(*flat([[0], [1], [2]]), PatternConfig(2, 3)) == []
    assert prefixspan(np.zeros(0, dtype=np.int64), np.zeros(1, dtype=np.int64), PatternConfig(1, 3)) == []


@pytest.mark.parametrize(("min_support", "max_gap"), [(0.05, None), (0.2, None), (0.05, 2)])
def test_flows_patterns_table_matches_prefixspan_on_sessions(min_support: float, max_gap: int | None) -> None:
    events = make_events(n_sessions=70, seed=31)
    result = compute_flows(events, FlowsConfig(min_support=min_support, max_gap=max_gap, max_pattern_length=3))
    sessions: dict[str, list[str]] = {}
    for case, row in reference_cases(events, 1800.0):
        sessions.setdefault(case, []).append(row["action"])
    names = sorted({a for acts in sessions.values() for a in acts})
    db = [[names.index(a) for a in acts] for acts in sessions.values()]
    min_count = math.ceil(min_support * len(db))
    expected = oracle(db, min_count, 3) if max_gap is None else brute(db, min_count, 3, max_gap)
    got = {tuple(names.index(a) for a in r["pattern"]): r["sessions"] for r in result.patterns.to_dicts()}
    assert got == expected and len(got) >= 10
    assert result.patterns["support"].min() >= min_support
    assert result.patterns.equals(result.patterns.sort(["sessions", "length", "pattern"], descending=[True, False, False]))


def test_min_support_rounds_up_to_whole_sessions() -> None:
    events = pl.DataFrame({"session_id": [f"s{i}" for i in range(100)], "action": ["x"] * 100})
    from datetime import UTC, datetime

    from logmine.records import EVENTS_SCHEMA, conform

    events = conform(events.with_columns(pl.lit(datetime(2025, 1, 1, tzinfo=UTC)).alias("ts")), EVENTS_SCHEMA)
    assert compute_flows(events, FlowsConfig(min_support=1.0)).patterns.rows() == [(["x"], 1, 100, 1.0)]
    assert compute_flows(events.head(99), FlowsConfig(min_support=0.01)).patterns.rows() == [(["x"], 1, 99, 1.0)]
