"""The log-bucket sketch: merging is exact and quantiles stay within the relative-error bound."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logmine.sketch import (
    DEFAULT_ALPHA,
    ZERO_BUCKET,
    Sketch,
    bucket_bounds,
    bucket_index,
    bucket_value,
    merge_frames,
    quantile_name,
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


@settings(max_examples=60, deadline=None)
@given(values=st.lists(st.tuples(st.sampled_from("abc"), latency), min_size=1, max_size=200), split=st.integers(0, 200))
def test_frame_merge_equals_frame_of_union(values: list[tuple[str, float]], split: int) -> None:
    df = pl.DataFrame(values, schema={"k": pl.String, "v": pl.Float64}, orient="row")
    whole = sketch_frame(df, ["k"], "v").collect()
    parts = merge_frames([sketch_frame(df[:split], ["k"], "v"), sketch_frame(df[split:], ["k"], "v")], ["k"]).collect()
    cols = ["k", "bucket", "count"]
    assert whole.select(cols).sort(cols).equals(parts.select(cols).sort(cols))
    joined = whole.join(parts, on=["k", "bucket"], suffix="_p")
    assert np.allclose(joined["sum"], joined["sum_p"], rtol=1e-9, atol=1e-9)


@settings(max_examples=60, deadline=None)
@given(values=st.lists(st.tuples(st.sampled_from("xy"), latency), min_size=1, max_size=200))
def test_summarise_matches_sketch_and_exact_quantiles(values: list[tuple[str, float]]) -> None:
    df = pl.DataFrame(values, schema={"k": pl.String, "v": pl.Float64}, orient="row")
    table = summarise(sketch_frame(df, ["k"], "v"), ["k"], quantiles=(0.5, 0.95, 0.99))
    for row in table.iter_rows(named=True):
        group = [v for k, v in values if k == row["k"]]
        assert row["count"] == len(group)
        assert row["mean"] == pytest.approx(sum(group) / len(group), rel=1e-9, abs=1e-9)
        assert [row["p50"], row["p95"], row["p99"]] == pytest.approx(Sketch.from_values(group).quantiles((0.5, 0.95, 0.99)), rel=1e-12)
        for q in (0.5, 0.95, 0.99):
            assert within(row[quantile_name(q)], exact_lower(group, q), DEFAULT_ALPHA)


def test_summarise_without_keys_is_one_row() -> None:
    df = pl.DataFrame({"v": [1.0, 2.0, 3.0, 100.0]})
    table = summarise(sketch_frame(df, [], "v"), [])
    assert table.columns == ["count", "mean", "p50", "p95", "p99"]
    assert table.row(0, named=True)["count"] == 4
    assert table.row(0, named=True)["p50"] == pytest.approx(2.0, rel=DEFAULT_ALPHA)


def test_polars_and_numpy_buckets_agree() -> None:
    values = np.geomspace(1e-6, 1e9, 5000)
    polars_idx = sketch_frame(pl.DataFrame({"v": values}), [], "v").collect()["bucket"].sort().to_numpy()
    numpy_idx = np.unique(bucket_index(values))
    assert len(numpy_idx) > 1000
    assert np.array_equal(polars_idx, numpy_idx)


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
