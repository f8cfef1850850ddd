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
of key columns in a Polars frame, as the workspace's ``heatmap_sketch`` table stores them (and
the flows stage its per-edge gap sketches; :func:`sketch_codes` builds such a frame with numpy
from integer group codes, without value lists).

Small groups are exact. The frames also keep, per (group, bucket) row, the group's values that
fall in the bucket (sorted, the ``values`` column) while the group holds at most ``exact_max``
values (:data:`EXACT_MAX`); past that the lists are null and only the buckets remain. A merge
keeps the lists exactly when the merged group is still that small, so a summarised group of at
most ``exact_max`` values gets exact quantiles, interpolated like DuckDB's ``quantile_cont``
(position ``q * (n - 1)``, linear between its neighbours), and a larger one the sketch's; the
``exact`` column says which. The rule depends on the merged group's count alone, so merging stays
exact: the frame of a union equals the merge of the frames, lists included.
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
EXACT_MAX = 100
"""Groups of at most this many values keep them and get exact quantiles."""


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
SKETCH_COLUMNS = {"bucket": pl.Int32(), "count": pl.Int64(), "sum": pl.Float64(), "values": pl.List(pl.Float64())}


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


def sketch_frame(values: pl.LazyFrame | pl.DataFrame, keys: Sequence[str], value: str, alpha: float = DEFAULT_ALPHA,
                 exact_max: int = EXACT_MAX) -> pl.LazyFrame:
    """Compute a partial: one row per (keys, bucket) with the count and sum of ``value``, and the
    sorted values themselves while the group has at most ``exact_max`` of them (with
    ``exact_max`` 0 no values are gathered: the lists are all null)."""
    col = pl.col(value).cast(pl.Float64)
    kept = col.sort() if exact_max > 0 else pl.lit(None, dtype=pl.List(pl.Float64()))
    return (
        values.lazy()
        .filter(pl.col(value).is_not_null() & pl.col(value).is_not_nan())
        .group_by(*keys, bucket_expr(value, alpha).alias("bucket"))
        .agg(pl.len().cast(pl.Int64).alias("count"), col.sum().alias("sum"), kept.alias("values"))
        .with_columns(_small(keys, exact_max))
    )


def sketch_codes(codes: np.ndarray, values: np.ndarray, alpha: float = DEFAULT_ALPHA) -> pl.DataFrame:
    """The frame of one sketch per integer group code, with numpy: ``group``, ``bucket``, ``count``,
    ``sum``, one row per (group, bucket) sorted by both, without value lists: what
    :func:`sketch_frame` gives with ``exact_max`` 0 (same buckets), for large inputs
    whose groups are already codes (the flows stage's edges)."""
    v = np.asarray(values, dtype=np.float64)
    g = np.asarray(codes).astype(np.int64)
    keep = ~np.isnan(v)
    v, g = v[keep], g[keep]
    b = bucket_index(v, alpha).astype(np.int64)
    zero = b == ZERO_BUCKET
    low = int(b[~zero].min()) if (~zero).any() else 0
    slot = np.where(zero, 0, b - low + 1)  # 0 is the zero bucket, 1.. the others in order
    width = int(slot.max()) + 1 if slot.size else 1
    key = g * width + slot
    if key.size and int(key.max()) < max(4 * key.size, 1 << 20):  # dense enough: one bincount
        count = np.bincount(key)
        total = np.bincount(key, weights=v, minlength=count.size)
        key = np.flatnonzero(count)
        count, total = count[key], total[key]
    else:
        key, inverse = np.unique(key, return_inverse=True)
        count, total = np.bincount(inverse, minlength=key.size), np.bincount(inverse, weights=v, minlength=key.size)
    slot = key % width
    bucket = np.where(slot == 0, ZERO_BUCKET, slot + low - 1)
    return pl.DataFrame({"group": key // width, "bucket": bucket.astype(np.int32), "count": count.astype(np.int64),
                         "sum": total.astype(np.float64)})


def merge_frames(partials: Iterable[pl.LazyFrame | pl.DataFrame], keys: Sequence[str], exact_max: int = EXACT_MAX) -> pl.LazyFrame:
    """Merge partials (or roll one up onto fewer ``keys``): sum counts and sums per (keys, bucket),
    and join the values lists while the merged group has at most ``exact_max`` values (a partial
    without lists, or with a null one, makes its group's lists null)."""
    frames = [_with_values(p.lazy()).select(*keys, "bucket", "count", "sum", "values") for p in partials]
    if not frames:
        raise ValueError("merge_frames needs at least one partial")
    joined = pl.col("values").list.explode(keep_nulls=False, empty_as_null=False).sort()
    return (
        pl.concat(frames, how="vertical_relaxed")
        .group_by(*keys, "bucket")
        .agg(pl.col("count").sum(), pl.col("sum").sum(), joined.alias("values"), pl.col("values").is_null().any().alias("_lost"))
        .with_columns(pl.when(pl.col("_lost")).then(None).otherwise(pl.col("values")).alias("values"))
        .drop("_lost")
        .with_columns(_small(keys, exact_max))
    )


def _with_values(lf: pl.LazyFrame) -> pl.LazyFrame:
    """``lf`` with a ``values`` column (null lists when it was stored without one)."""
    if "values" in lf.collect_schema().names():
        return lf.with_columns(pl.col("values").cast(pl.List(pl.Float64())))
    return lf.with_columns(pl.lit(None, dtype=pl.List(pl.Float64())).alias("values"))


def _small(keys: Sequence[str], exact_max: int) -> pl.Expr:
    """The ``values`` lists of groups with at most ``exact_max`` values; null for larger groups."""
    n = pl.col("count").sum().over(list(keys)) if keys else pl.col("count").sum()
    return pl.when(n <= exact_max).then(pl.col("values")).otherwise(None).alias("values")


def summarise(
    sketch: pl.LazyFrame | pl.DataFrame,
    keys: Sequence[str],
    quantiles: Sequence[float] = DEFAULT_QUANTILES,
    alpha: float = DEFAULT_ALPHA,
    suffix: str = "",
    exact_max: int = EXACT_MAX,
) -> pl.DataFrame:
    """Finalize: per group of ``keys``, ``count``, ``mean``, ``p50``/``p95``/... and ``exact``.

    A group of at most ``exact_max`` values whose lists the frame kept gets exact interpolated
    quantiles (``exact`` true); the others are read from the buckets. Output columns are
    ``keys + [count, mean<suffix>, p<q><suffix>..., exact]``, sorted by the keys.
    """
    keys = list(keys)
    group = keys or ["_all"]
    lf = merge_frames([sketch.lazy().with_columns(pl.lit(0).alias("_all")) if not keys else sketch], group, exact_max)
    lf = lf.sort([*group, "bucket"]).with_columns(
        pl.col("count").cum_sum().over(group).alias("_cum"),
        pl.col("count").sum().over(group).alias("_n"),
    )
    names = [quantile_name(q) for q in quantiles]
    values = pl.col("values").list.explode(keep_nulls=False, empty_as_null=False)
    out = (
        lf.group_by(group, maintain_order=True)
        .agg(
            pl.col("count").sum().alias("count"),
            (pl.col("sum").sum() / pl.col("count").sum()).alias("mean" + suffix),
            *[pl.col("bucket").filter(pl.col("_cum") > q * (pl.col("_n") - 1)).first().alias(f"_{n}") for q, n in zip(quantiles, names)],
            *[values.quantile(q, interpolation="linear").alias(f"_exact_{n}") for q, n in zip(quantiles, names)],
            pl.col("values").is_not_null().all().alias("exact"),
        )
        .with_columns(*[pl.when(pl.col("exact")).then(pl.col(f"_exact_{n}")).otherwise(bucket_value_expr(f"_{n}", alpha)).alias(n + suffix)
                        for n in names])
        .select(*group, "count", "mean" + suffix, *[n + suffix for n in names], "exact")
        .sort(group)
        .collect()
    )
    return out.drop("_all") if not keys else out


def quantile_name(q: float) -> str:
    """``0.95`` -> ``p95``, ``0.999`` -> ``p99_9``."""
    text = f"{q * 100:.6g}"
    return "p" + text.replace(".", "_")
