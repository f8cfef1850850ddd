"""Per-token latencies of one request: gaps, chunks, split completions and malformed timings."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logmine.stages.heatmap.tokens import (
    ISSUE_NON_MONOTONIC,
    ISSUE_NULL_TIMES,
    ISSUE_TEXT_MISMATCH,
    ISSUE_TIMES_LONGER,
    ISSUE_TIMES_SHORTER,
    SKIP_EMPTY,
    SKIP_NO_TIMES,
    split_tokens,
    timeline,
)


def test_first_token_is_ttft_then_gaps() -> None:
    tl = timeline(["def", " f", "():", "\n"], [120.0, 150.0, 155.0, 190.0], "def f():\n")
    assert tl.tokens == ["def", " f", "():", "\n"]
    assert tl.latency_ms == [120.0, 30.0, 5.0, 35.0]
    assert (tl.granularity, tl.tokens_from, tl.pieces, tl.issues, tl.skip_reason) == ("token", "log", 4, (), None)


def test_chunks_spread_their_gap_over_their_tokens() -> None:
    tl = timeline(["def foo(x):", "\n    return x"], [200.0, 260.0], None)
    assert tl.granularity == "chunk"
    assert tl.tokens == ["def", " foo", "(", "x", "):", "\n   ", " return", " x"]
    assert tl.latency_ms == [40.0] * 5 + [20.0] * 3


def test_a_few_multi_token_pieces_stay_token_granular() -> None:
    tl = timeline(["x", " =", ' "hello world"', "\n"], [10.0, 20.0, 70.0, 80.0], None)
    assert tl.granularity == "token"
    assert tl.tokens[2] == ' "hello world"' and tl.latency_ms == [10.0, 10.0, 50.0, 10.0]


def test_empty_deltas_merge_into_the_next_gap() -> None:
    tl = timeline(["", "a", "", " b"], [50.0, 60.0, 70.0, 90.0], "a b")
    assert tl.tokens == ["a", " b"] and tl.latency_ms == [60.0, 30.0]


def test_completion_split_when_token_texts_are_missing() -> None:
    tl = timeline(None, [100.0, 110.0, 130.0], "x = 1")
    assert (tl.tokens, tl.latency_ms, tl.granularity, tl.tokens_from) == (["x", " =", " 1"], [100.0, 10.0, 20.0], "token", "completion")


def test_completion_split_into_chunks_when_timings_are_fewer() -> None:
    tl = timeline(None, [100.0, 140.0], "x = 1 + y")
    assert tl.granularity == "chunk" and tl.tokens_from == "completion"
    assert tl.tokens == ["x", " =", " 1", " +", " y"]
    assert tl.latency_ms == [50.0, 50.0, 40.0 / 3, 40.0 / 3, 40.0 / 3]


@pytest.mark.parametrize(
    ("texts", "times", "completion", "reason"),
    [
        (None, [1.0, 2.0], None, SKIP_EMPTY),
        ([], None, "", SKIP_EMPTY),
        (["", ""], [1.0, 2.0], None, SKIP_EMPTY),
        (["a", "b"], None, "ab", SKIP_NO_TIMES),
        (["a", "b"], [], "ab", SKIP_NO_TIMES),
        (None, None, "x = 1", SKIP_NO_TIMES),
    ],
    ids=["nothing", "empty-lists", "empty-texts", "no-times", "empty-times", "completion-only"],
)
def test_skipped_with_a_reason(texts: list[str] | None, times: list[float] | None, completion: str | None, reason: str) -> None:
    tl = timeline(texts, times, completion)
    assert tl.skip_reason == reason and tl.tokens == [] and tl.latency_ms == []


def test_timings_shorter_than_tokens_drop_the_unmeasured_tail() -> None:
    tl = timeline(["a", " b", " c"], [10.0, 20.0], "a b c")
    assert tl.tokens == ["a", " b"] and tl.latency_ms == [10.0, 10.0]
    assert tl.issues == (ISSUE_TIMES_SHORTER,) and tl.text == "a b c"


def test_timings_longer_than_tokens_are_cut() -> None:
    assert timeline(["a", " b"], [10.0, 20.0, 30.0], None).issues == (ISSUE_TIMES_LONGER,)
    split = timeline(None, [10.0, 20.0, 30.0, 40.0], "a b")
    assert split.tokens == ["a", " b"] and split.latency_ms == [10.0, 10.0] and split.issues == (ISSUE_TIMES_LONGER,)


def test_bad_timings_are_repaired_and_reported() -> None:
    tl = timeline(["a", " b", " c", " d"], [10.0, None, 5.0, float("nan")], "a b c d")
    assert tl.latency_ms == [10.0, 0.0, 0.0, 0.0]
    assert set(tl.issues) == {ISSUE_NULL_TIMES, ISSUE_NON_MONOTONIC}
    assert ISSUE_TEXT_MISMATCH in timeline(["a"], [1.0], "b").issues


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=200))
def test_split_tokens_is_lossless(text: str) -> None:
    assert "".join(split_tokens(text)) == text


@settings(max_examples=100, deadline=None)
@given(
    texts=st.lists(st.text(max_size=12), max_size=30),
    times=st.one_of(st.none(), st.lists(st.one_of(st.none(), st.just(float("nan")), st.floats(0, 1e6)), max_size=35)),
    completion=st.one_of(st.none(), st.text(max_size=60)),
)
def test_never_crashes_and_tokens_prefix_the_text(texts: list[str], times: list[float | None] | None, completion: str | None) -> None:
    tl = timeline(texts, times, completion)
    assert len(tl.tokens) == len(tl.latency_ms)
    assert tl.text.startswith("".join(tl.tokens))
    assert all(v >= 0 for v in tl.latency_ms)
    assert (tl.skip_reason is None) == (tl.granularity is not None)
