"""Mergeable quantile sketches: log-spaced buckets with a relative-error guarantee (DDSketch-style).

A value ``x > 0`` falls in bucket ``i = ceil(log(x) / log(gamma))`` with
``gamma = (1 + alpha) / (1 - alpha)``; bucket ``i`` covers ``(gamma**(i-1), gamma**i]`` and is
represented by ``2 * gamma**i / (gamma + 1)``, which is within ``alpha`` (relative) of every value
in it. Values ``<= MIN_VALUE`` (zero latencies) go to :data:`ZERO_BUCKET`, represented by 0.

A sketch is just ``(bucket, count, sum)`` rows, so merging sketches is summing counts per bucket:
the sketch of a union equals the merge of the sketches, exactly. Quantile ``q`` of ``n`` values is
the representative of the first bucket whose cumulative count exceeds ``q * (n - 1)``; it is within
``alpha`` of the exact lower quantile (the sorted value at index ``floor(q * (n - 1))``).

Two forms share these rules: :class:`Sketch` (numpy, one distribution) and the frame functions
(:func:`sketch_frame`, :func:`merge_frames`, :func:`summarise`), which keep one sketch per group
of key columns in a Polars frame, as the workspace's ``heatmap_sketch`` table stores them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

DEFAULT_ALPHA = 0.01
"""Relative accuracy: every quantile is within 1 % of the exact one."""
ZERO_BUCKET = -(2**31)
"""Bucket index of values at or below :data:`MIN_VALUE` (and of negative values)."""
MIN_VALUE = 1e-9
"""Values at or below this are counted in the zero bucket."""
DEFAULT_QUANTILES = (0.5, 0.95, 0.99)


def gamma(alpha: float = DEFAULT_ALPHA) -> float:
    """The bucket growth factor for relative accuracy ``alpha``."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    return (1.0 + alpha) / (1.0 - alpha)


def bucket_index(values: Sequence[float] | np.ndarray, alpha: float = DEFAULT_ALPHA) -> np.ndarray:
    """The bucket index (int32) of each value."""
    v = np.asarray(values, dtype=np.float64)
    out = np.full(v.shape, ZERO_BUCKET, dtype=np.int32)
    pos = v > MIN_VALUE
    out[pos] = np.ceil(np.log(v[pos]) / math.log(gamma(alpha))).astype(np.int32)
    return out


def bucket_value(index: Sequence[int] | np.ndarray, alpha: float = DEFAULT_ALPHA) -> np.ndarray:
    """The representative value of each bucket (0 for the zero bucket)."""
    i = np.asarray(index, dtype=np.int64)
    g = gamma(alpha)
    return np.where(i == ZERO_BUCKET, 0.0, 2.0 * np.power(g, np.where(i == ZERO_BUCKET, 0, i).astype(np.float64)) / (g + 1.0))


def bucket_bounds(index: Sequence[int] | np.ndarray, alpha: float = DEFAULT_ALPHA) -> tuple[np.ndarray, np.ndarray]:
    """The ``(lower, upper]`` value range of each bucket (``[0, MIN_VALUE]`` for the zero bucket)."""
    i = np.asarray(index, dtype=np.int64)
    g = gamma(alpha)
    zero = i == ZERO_BUCKET
    safe = np.where(zero, 0, i).astype(np.float64)
    return np.where(zero, 0.0, np.power(g, safe - 1.0)), np.where(zero, MIN_VALUE, np.power(g, safe))


@dataclass(frozen=True, eq=False)
class Sketch:
    """One distribution's sketch: sorted bucket indices with their counts, plus the exact sum."""

    alpha: float
    """Relative accuracy the buckets were made for."""
    index: np.ndarray
    """Sorted, unique bucket indices (int32)."""
    count: np.ndarray
    """Values per bucket (int64), aligned with ``index``."""
    total: float
    """The exact sum of the values (for the mean)."""

    @classmethod
    def from_values(cls, values: Iterable[float] | np.ndarray, alpha: float = DEFAULT_ALPHA) -> Sketch:
        v = np.asarray(list(values) if not isinstance(values, np.ndarray) else values, dtype=np.float64)
        index, count = np.unique(bucket_index(v, alpha), return_counts=True)
        return cls(alpha, index.astype(np.int32), count.astype(np.int64), float(v.sum()))

    @classmethod
    def empty(cls, alpha: float = DEFAULT_ALPHA) -> Sketch:
        return cls(alpha, np.zeros(0, np.int32), np.zeros(0, np.int64), 0.0)

    @property
    def n(self) -> int:
        return int(self.count.sum())

    def merge(self, other: Sketch) -> Sketch:
        """The sketch of both inputs' values together: counts summed per bucket."""
        if other.alpha != self.alpha:
            raise ValueError(f"cannot merge sketches with alpha {self.alpha} and {other.alpha}")
        index = np.concatenate([self.index, other.index])
        count = np.concatenate([self.count, other.count])
        uniq, inverse = np.unique(index, return_inverse=True)
        return Sketch(self.alpha, uniq.astype(np.int32), np.bincount(inverse, weights=count).astype(np.int64),
                      self.total + other.total)

    def quantiles(self, qs: Sequence[float] = DEFAULT_QUANTILES) -> list[float | None]:
        """Quantile estimates (None for an empty sketch)."""
        n = self.n
        if n == 0:
            return [None for _ in qs]
        cum = np.cumsum(self.count)
        ranks = np.asarray([q * (n - 1) for q in qs])
        pos = np.searchsorted(cum, ranks, side="right")  # first bucket with cum > rank
        return [float(v) for v in bucket_value(self.index[pos], self.alpha)]

    def quantile(self, q: float) -> float | None:
        return self.quantiles([q])[0]

    def mean(self) -> float | None:
        return self.total / self.n if self.n else None

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Sketch) and self.alpha == other.alpha and np.array_equal(self.index, other.index)
                and np.array_equal(self.count, other.count) and math.isclose(self.total, other.total, rel_tol=1e-9, abs_tol=1e-9))

    __hash__ = None  # type: ignore[assignment]


# -- one sketch per group, in Polars frames -------------------------------------------------------
SKETCH_COLUMNS = {"bucket": pl.Int32(), "count": pl.Int64(), "sum": pl.Float64()}


def bucket_expr(value: str | pl.Expr, alpha: float = DEFAULT_ALPHA) -> pl.Expr:
    """A Polars expression for the bucket index of ``value`` (same rule as :func:`bucket_index`)."""
    col = pl.col(value) if isinstance(value, str) else value
    idx = (col.log() / math.log(gamma(alpha))).ceil()
    return pl.when(col > MIN_VALUE).then(idx).otherwise(ZERO_BUCKET).cast(pl.Int32)


def bucket_value_expr(bucket: str | pl.Expr, alpha: float = DEFAULT_ALPHA) -> pl.Expr:
    """A Polars expression for a bucket's representative value."""
    col = pl.col(bucket) if isinstance(bucket, str) else bucket
    g = gamma(alpha)
    return pl.when(col == ZERO_BUCKET).then(0.0).otherwise(2.0 * pl.lit(g).pow(col.cast(pl.Float64)) / (g + 1.0))


def sketch_frame(values: pl.LazyFrame | pl.DataFrame, keys: Sequence[str], value: str, alpha: float = DEFAULT_ALPHA) -> pl.LazyFrame:
    """Compute a partial: one row per (keys, bucket) with the count and sum of ``value``."""
    return (
        values.lazy()
        .filter(pl.col(value).is_not_null() & pl.col(value).is_not_nan())
        .group_by(*keys, bucket_expr(value, alpha).alias("bucket"))
        .agg(pl.len().cast(pl.Int64).alias("count"), pl.col(value).sum().cast(pl.Float64).alias("sum"))
    )


def merge_frames(partials: Iterable[pl.LazyFrame | pl.DataFrame], keys: Sequence[str]) -> pl.LazyFrame:
    """Merge partials (or roll one up onto fewer ``keys``): sum counts and sums per (keys, bucket)."""
    frames = [p.lazy().select(*keys, "bucket", "count", "sum") for p in partials]
    if not frames:
        raise ValueError("merge_frames needs at least one partial")
    return (
        pl.concat(frames, how="vertical_relaxed")
        .group_by(*keys, "bucket")
        .agg(pl.col("count").sum(), pl.col("sum").sum())
    )


def summarise(
    sketch: pl.LazyFrame | pl.DataFrame,
    keys: Sequence[str],
    quantiles: Sequence[float] = DEFAULT_QUANTILES,
    alpha: float = DEFAULT_ALPHA,
    suffix: str = "",
) -> pl.DataFrame:
    """Finalize: per group of ``keys``, ``count``, ``mean`` and ``p50``/``p95``/... from the buckets.

    Output columns are ``keys + [count, mean<suffix>, p<q><suffix>...]``, sorted by the keys.
    """
    keys = list(keys)
    group = keys or ["_all"]
    lf = merge_frames([sketch.lazy().with_columns(pl.lit(0).alias("_all")) if not keys else sketch], group)
    lf = lf.sort([*group, "bucket"]).with_columns(
        pl.col("count").cum_sum().over(group).alias("_cum"),
        pl.col("count").sum().over(group).alias("_n"),
    )
    names = [quantile_name(q) for q in quantiles]
    out = (
        lf.group_by(group, maintain_order=True)
        .agg(
            pl.col("count").sum().alias("count"),
            (pl.col("sum").sum() / pl.col("count").sum()).alias("mean" + suffix),
            *[pl.col("bucket").filter(pl.col("_cum") > q * (pl.col("_n") - 1)).first().alias(f"_{n}") for q, n in zip(quantiles, names)],
        )
        .with_columns(*[bucket_value_expr(f"_{n}", alpha).alias(n + suffix) for n in names])
        .drop([f"_{n}" for n in names])
        .sort(group)
        .collect()
    )
    return out.drop("_all") if not keys else out


def quantile_name(q: float) -> str:
    """``0.95`` -> ``p95``, ``0.999`` -> ``p99_9``."""
    text = f"{q * 100:.6g}"
    return "p" + text.replace(".", "_")
