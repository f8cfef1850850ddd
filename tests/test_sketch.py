"""The log-bucket sketch: merging is exact and quantiles stay within the relative-error bound."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logmine.sketch import (
    DEFAULT_ALPHA,
    EXACT_MAX,
    ZERO_BUCKET,
    Sketch,
    bucket_bounds,
    bucket_index,
    bucket_value,
    merge_frames,
    quantile_name,
    sketch_codes,
    sketch_frame,
    summarise,
)

latency = st.one_of(st.just(0.0), st.floats(min_value=1e-3, max_value=1e9, allow_nan=False, allow_infinity=False))
latencies = st.lists(latency, min_size=1, max_size=300)
alphas = st.sampled_from([0.005, 0.01, 0.02, 0.05])
QS = (0.0, 0.25, 0.5, 0.9, 0.95, 0.99, 1.0)


def exact_lower(values: list[float], q: float) -> float:
    return float(np.sort(np.asarray(values))[math.floor(q * (len(values) - 1))])


def within(estimate: float, exact: float, alpha: float) -> bool:
    if exact <= 1e-9:
        return estimate == 0.0
    return abs(estimate - exact) <= alpha * exact * (1 + 1e-9)


@settings(max_examples=150, deadline=None)
@given(a=latencies, b=latencies, alpha=alphas)
def test_merge_equals_sketch_of_union(a: list[float], b: list[float], alpha: float) -> None:
    assert Sketch.from_values(a, alpha).merge(Sketch.from_values(b, alpha)) == Sketch.from_values(a + b, alpha)


@settings(max_examples=150, deadline=None)
@given(values=latencies, alpha=alphas)
def test_quantiles_within_relative_error(values: list[float], alpha: float) -> None:
    estimates = Sketch.from_values(values, alpha).quantiles(QS)
    for q, est in zip(QS, estimates):
        assert est is not None and within(est, exact_lower(values, q), alpha), (q, est, exact_lower(values, q))


def _frame(values: list[tuple[str, float]]) -> pl.DataFrame:
    return pl.DataFrame(values, schema={"k": pl.String, "v": pl.Float64}, orient="row")


@settings(max_examples=80, deadline=None)
@given(values=st.lists(st.tuples(st.sampled_from("abc"), latency), min_size=1, max_size=200), cuts=st.lists(st.integers(0, 200), max_size=3),
       exact_max=st.sampled_from([0, 3, 20, EXACT_MAX]))
def test_frame_merge_equals_frame_of_union(values: list[tuple[str, float]], cuts: list[int], exact_max: int) -> None:
    df = _frame(values)
    whole = sketch_frame(df, ["k"], "v", exact_max=exact_max).collect()
    bounds = [0, *sorted(cuts), len(values)]
    pieces = [sketch_frame(df[a:b], ["k"], "v", exact_max=exact_max) for a, b in zip(bounds, bounds[1:])]
    once = merge_frames(pieces, ["k"], exact_max).collect()
    stepwise = pieces[0]
    for piece in pieces[1:]:  # merging merges (as day after day) is the same as merging once
        stepwise = merge_frames([piece, stepwise], ["k"], exact_max)
    for parts in (once, stepwise.collect()):
        cols = ["k", "bucket", "count", "values"]
        assert whole.select(cols).sort("k", "bucket").equals(parts.select(cols).sort("k", "bucket"))
        joined = whole.join(parts, on=["k", "bucket"], suffix="_p")
        assert np.allclose(joined["sum"], joined["sum_p"], rtol=1e-9, atol=1e-9)
    sizes = dict(Counter(k for k, _ in values))
    kept = whole.group_by("k").agg(pl.col("values").is_not_null().all().alias("kept"))
    assert dict(kept.iter_rows()) == {k: n <= exact_max for k, n in sizes.items()}


@settings(max_examples=80, deadline=None)
@given(values=st.lists(st.tuples(st.sampled_from("xy"), latency), min_size=1, max_size=200), exact_max=st.sampled_from([0, 5, EXACT_MAX]))
def test_small_groups_get_exact_quantiles_and_large_ones_the_sketch(values: list[tuple[str, float]], exact_max: int) -> None:
    qs = (0.5, 0.95, 0.99)
    table = summarise(sketch_frame(_frame(values), ["k"], "v", exact_max=exact_max), ["k"], quantiles=qs, exact_max=exact_max)
    for row in table.iter_rows(named=True):
        group = [v for k, v in values if k == row["k"]]
        assert row["count"] == len(group)
        assert row["exact"] == (len(group) <= exact_max)
        assert row["mean"] == pytest.approx(sum(group) / len(group), rel=1e-9, abs=1e-9)
        got = [row[quantile_name(q)] for q in qs]
        if row["exact"]:
            assert got == pytest.approx([float(np.quantile(group, q, method="linear")) for q in qs], rel=1e-12, abs=1e-12)
        else:
            assert got == pytest.approx(Sketch.from_values(group).quantiles(qs), rel=1e-12)
            assert all(within(g, exact_lower(group, q), DEFAULT_ALPHA) for g, q in zip(got, qs))


def test_three_values_get_duckdbs_quantile_cont() -> None:
    import duckdb

    df = pl.DataFrame({"k": ["m"] * 3, "v": [4.2, 5.9, 27.0]})
    row = summarise(sketch_frame(df, ["k"], "v"), ["k"]).row(0, named=True)
    want = duckdb.sql("SELECT quantile_cont(v, 0.5), quantile_cont(v, 0.95), quantile_cont(v, 0.99) FROM df").fetchall()[0]
    assert (row["count"], row["exact"]) == (3, True)
    assert [row["p50"], row["p95"], row["p99"]] == pytest.approx(list(want), rel=1e-12)
    assert row["p95"] == pytest.approx(24.89) and row["p99"] == pytest.approx(26.578)


def test_a_partial_without_values_makes_its_groups_sketched() -> None:
    """Partials stored before the values were kept merge on, their groups read from the buckets."""
    old = sketch_frame(pl.DataFrame({"k": ["a", "b"], "v": [1.0, 2.0]}), ["k"], "v").collect().drop("values")
    new = sketch_frame(pl.DataFrame({"k": ["a", "c"], "v": [3.0, 4.0]}), ["k"], "v")
    table = summarise(merge_frames([old, new], ["k"]), ["k"])
    assert dict(zip(table["k"], table["exact"])) == {"a": False, "b": False, "c": True}
    assert table["count"].to_list() == [2, 1, 1]


def test_summarise_without_keys_is_one_row() -> None:
    df = pl.DataFrame({"v": [1.0, 2.0, 3.0, 100.0]})
    table = summarise(sketch_frame(df, [], "v"), [])
    assert table.columns == ["count", "mean", "p50", "p95", "p99", "exact"]
    assert table.row(0, named=True) == {"count": 4, "mean": 26.5, "p50": 2.5, "p95": pytest.approx(85.45), "p99": pytest.approx(97.09),
                                        "exact": True}
    big = summarise(sketch_frame(pl.DataFrame({"v": np.arange(1.0, 1001.0)}), [], "v"), [])
    assert big.row(0, named=True)["exact"] is False and big["p50"][0] == pytest.approx(500.0, rel=DEFAULT_ALPHA)


def test_polars_and_numpy_buckets_agree() -> None:
    values = np.geomspace(1e-6, 1e9, 5000)
    polars_idx = sketch_frame(pl.DataFrame({"v": values}), [], "v").collect()["bucket"].sort().to_numpy()
    numpy_idx = np.unique(bucket_index(values))
    assert len(numpy_idx) > 1000
    assert np.array_equal(polars_idx, numpy_idx)


@settings(max_examples=100, deadline=None)
@given(rows=st.lists(st.tuples(st.integers(0, 4 * 10**9), st.one_of(st.just(0), st.integers(1, 10**11))), max_size=300),
       spread=st.sampled_from([41, 4 * 10**9]), alpha=alphas)
def test_sketch_codes_is_the_frame_without_values(rows: list[tuple[int, int]], spread: int, alpha: float) -> None:
    """Few codes take the one-bincount path, codes spread wide the sorting one: the same frame."""
    codes = np.asarray([c % spread for c, _ in rows], dtype=np.uint32)
    values = np.asarray([v for _, v in rows], dtype=np.int64)
    fast = sketch_codes(codes, values, alpha)
    df = pl.DataFrame({"group": codes.astype(np.int64), "v": values.astype(np.float64)})
    frame = sketch_frame(df, ["group"], "v", alpha, exact_max=0).collect()
    assert frame["values"].null_count() == frame.height
    assert fast.columns == ["group", "bucket", "count", "sum"]
    assert fast.equals(frame.drop("values").sort("group", "bucket"))
    assert fast["count"].sum() == len(rows)


def test_zero_and_bounds() -> None:
    idx = bucket_index([0.0, -1.0, 1.0, 10.0])
    assert idx[0] == idx[1] == ZERO_BUCKET
    lo, hi = bucket_bounds(idx[2:])
    assert np.all(lo < [1.0, 10.0]) and np.all(np.asarray([1.0, 10.0]) <= hi * (1 + 1e-12))
    assert bucket_value([ZERO_BUCKET])[0] == 0.0
    assert Sketch.empty().quantiles() == [None, None, None]
    assert quantile_name(0.95) == "p95" and quantile_name(0.999) == "p99_9"


def test_merge_rejects_different_alpha() -> None:
    with pytest.raises(ValueError, match="alpha"):
        Sketch.from_values([1.0], 0.01).merge(Sketch.from_values([1.0], 0.02))
