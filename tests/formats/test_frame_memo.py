"""FrameMemo: each distinct text computed once, looked up by a join, bounded."""

from __future__ import annotations

import polars as pl

from logmine.memo import FrameMemo


def test_each_distinct_text_is_computed_once_and_nulls_stay_null() -> None:
    calls: list[str] = []
    memo = FrameMemo(lambda t: calls.append(t) or t.upper(), limit=100)
    first = memo(pl.Series("x", ["a", None, "b", "a"], dtype=pl.String))
    second = memo(pl.Series("x", ["b", "c", "c"], dtype=pl.String))
    assert first.to_list() == ["A", None, "B", "A"] and second.to_list() == ["B", "C", "C"]
    assert first.name == "x" and sorted(calls) == ["a", "b", "c"]


def test_past_its_limit_the_memo_starts_over_and_still_answers() -> None:
    memo = FrameMemo(str.upper, limit=3)
    memo(pl.Series(["a", "b", "c"], dtype=pl.String))
    assert memo(pl.Series(["d", "a"], dtype=pl.String)).to_list() == ["D", "A"]
    assert len(memo.memo) <= 3
