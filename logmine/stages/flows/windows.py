"""Action co-occurrence within a window, and what precedes accepted vs rejected completions.

Co-occurrence: every event anchors one *window*, itself and the events after it in its
session, limited to ``k`` events and/or ``W`` seconds (both limits apply when both are set).
A window is a transaction: the set of distinct actions in it. Over all windows,

- ``support(a, b)`` = windows holding both / windows,
- ``confidence(a -> b)`` = windows holding both / windows holding a,
- ``lift`` = support(a, b) / (support(a) support(b)), ``pmi`` = log2(lift).

Windows are computed as bitmasks of actions (a range-OR over each window by doubling),
then counted by distinct mask, so the pair counts are one small matrix product. The
counts of disjoint session sets add up (:func:`merge_cooccurrence`).

Outcomes: for each ``completion.accepted`` / ``completion.rejected`` event, the ``n``
actions right before it in its session (1 <= n <= max_n), skipping the completion
lifecycle events (requested, shown) that precede every outcome. Each preceding n-gram gets
accepted and rejected counts, its acceptance rate, lift over the overall rate, and a 95 %
Wilson interval so that small groups show as uncertain.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

US = 1_000_000
ACCEPTED, REJECTED = "completion.accepted", "completion.rejected"
OUTCOME_SKIP = ("completion.requested", "completion.shown")
"""Actions ignored when looking back from an outcome: they precede every outcome."""

_PAIR_SCHEMA = {"a": pl.String, "b": pl.String, "windows": pl.Int64}
_ACTION_SCHEMA = {"action": pl.String, "windows": pl.Int64}


def window_ends(case: np.ndarray, ts_us: np.ndarray, events: int | None, seconds: float | None) -> np.ndarray:
    """Index of the last event of each event's window (rows sorted by case, then time)."""
    n = case.size
    idx = np.arange(n, dtype=np.int64)
    last_of_case = np.r_[np.flatnonzero(np.diff(case)), n - 1] if n else np.zeros(0, dtype=np.int64)
    end = last_of_case[np.searchsorted(last_of_case, idx)]
    if events is not None:
        end = np.minimum(end, idx + max(events, 1) - 1)
    if seconds is not None and n:
        width = int(round(seconds * US))
        # gaps longer than the window, and case changes, are clipped to width+1: the
        # clipped clock is non-decreasing over the whole frame and keeps "within width"
        gaps = np.clip(np.diff(ts_us), 0, width + 1)
        gaps[np.diff(case) != 0] = width + 1
        clock = np.r_[0, np.cumsum(gaps)]
        end = np.minimum(end, np.searchsorted(clock, clock + width, side="right") - 1)
    return end


def window_masks(codes: np.ndarray, end: np.ndarray, n_actions: int) -> np.ndarray:
    """Bitmask (n, words) of the actions in each window ``[i, end[i]]``: range-OR by doubling."""
    n, words = codes.size, max(1, math.ceil(n_actions / 64))
    table = np.zeros((n, words), dtype=np.uint64)
    table[np.arange(n), codes // 64] = np.left_shift(np.uint64(1), (codes % 64).astype(np.uint64))
    length = end - np.arange(n) + 1
    level = np.floor(np.log2(np.maximum(length, 1))).astype(np.int64)
    out = np.zeros_like(table)
    span = 1
    for j in range(int(level.max()) + 1 if n else 0):
        at = np.flatnonzero(level == j)
        out[at] = table[at] | table[end[at] - span + 1]
        shifted = np.zeros_like(table)
        shifted[: n - span] = table[span:]
        table |= shifted
        span *= 2
    return out


def cooccurrence_partial(seq: pl.DataFrame, events: int | None, seconds: float | None) -> tuple[int, pl.DataFrame, pl.DataFrame]:
    """Windows, windows holding each action, and windows holding each pair ``a < b``."""
    if seq.height == 0:
        return 0, pl.DataFrame(schema=_ACTION_SCHEMA), pl.DataFrame(schema=_PAIR_SCHEMA)
    vocab = seq["action"].dtype.categories.to_list()
    codes = seq["action"].to_physical().to_numpy().astype(np.int64)
    case = seq["case"].to_numpy()
    ts_us = seq["ts"].dt.epoch("us").to_numpy()
    masks = window_masks(codes, window_ends(case, ts_us, events, seconds), len(vocab))
    uniq, counts = np.unique(masks.view(np.dtype((np.void, masks.shape[1] * 8))).ravel(), return_counts=True)
    bits = np.unpackbits(np.frombuffer(uniq.tobytes(), dtype=np.uint8).reshape(uniq.size, -1), axis=1, bitorder="little")
    present = bits[:, : len(vocab)].astype(np.float64)
    both = present.T @ (present * counts[:, None].astype(np.float64))
    names = np.array(vocab, dtype=object)
    holds = np.diag(both)
    actions = pl.DataFrame({"action": names[holds > 0].tolist(), "windows": holds[holds > 0].astype(np.int64)}, schema=_ACTION_SCHEMA)
    ia, ib = np.nonzero(np.triu(both, k=1) > 0)
    a, b = names[ia], names[ib]
    swap = a > b  # store each pair once, names in order, so partials of other vocabularies merge
    pairs = pl.DataFrame(
        {"a": np.where(swap, b, a).tolist(), "b": np.where(swap, a, b).tolist(), "windows": both[ia, ib].astype(np.int64)},
        schema=_PAIR_SCHEMA,
    )
    return int(seq.height), actions, pairs


def merge_cooccurrence(parts: list[tuple[int, pl.DataFrame, pl.DataFrame]]) -> tuple[int, pl.DataFrame, pl.DataFrame]:
    """Add co-occurrence partials of disjoint session sets."""
    windows = sum(p[0] for p in parts)
    actions = pl.concat([p[1] for p in parts]).group_by("action").agg(pl.col("windows").sum())
    pairs = pl.concat([p[2] for p in parts]).group_by("a", "b").agg(pl.col("windows").sum())
    return windows, actions, pairs


def finalize_cooccurrence(windows: int, actions: pl.DataFrame, pairs: pl.DataFrame, min_windows: int = 1) -> pl.DataFrame:
    """Both directions of every pair with support, confidence, lift and PMI."""
    both = pl.concat([pairs, pairs.select(pl.col("b").alias("a"), pl.col("a").alias("b"), "windows")])
    df = (
        both.filter(pl.col("windows") >= min_windows)
        .join(actions.rename({"action": "a", "windows": "windows_a"}), on="a")
        .join(actions.rename({"action": "b", "windows": "windows_b"}), on="b")
        .with_columns(
            (pl.col("windows") / windows).alias("support"),
            (pl.col("windows") / pl.col("windows_a")).alias("confidence"),
            (pl.col("windows") * windows / (pl.col("windows_a") * pl.col("windows_b"))).alias("lift"),
        )
        .with_columns(pl.col("lift").log(2).alias("pmi"))
    )
    return df.select(
        pl.col("a").alias("action"), pl.col("b").alias("other"), "windows", "windows_a", "windows_b",
        "support", "confidence", "lift", "pmi",
    ).sort(["windows", "action", "other"], descending=[True, False, False])


def outcomes_partial(seq: pl.DataFrame, max_n: int, skip: tuple[str, ...] = OUTCOME_SKIP) -> pl.DataFrame:
    """Accepted and rejected counts by the n actions before each outcome (n = 0: all outcomes)."""
    schema = {"n": pl.Int64, "context": pl.List(pl.String), "accepted": pl.Int64, "rejected": pl.Int64}
    act = pl.col("action").cast(pl.String)
    lf = seq.lazy().select("case", act.alias("a")).filter(~pl.col("a").is_in(list(skip)))
    prev = [pl.col("a").shift(k).alias(f"p{k}") for k in range(1, max_n + 1)]
    same = [(pl.col("case").shift(k) == pl.col("case")).alias(f"s{k}") for k in range(1, max_n + 1)]
    hits = lf.with_columns(*prev, *same).filter(pl.col("a").is_in([ACCEPTED, REJECTED])).collect()
    parts = [_outcome_counts(hits, [], 0)]
    for n in range(1, max_n + 1):
        ok = hits.filter(pl.all_horizontal([pl.col(f"s{k}").fill_null(False) for k in range(1, n + 1)]))
        parts.append(_outcome_counts(ok, [f"p{k}" for k in range(n, 0, -1)], n))
    return pl.concat([p.cast(schema) for p in parts if p.height]) if any(p.height for p in parts) else pl.DataFrame(schema=schema)


def _outcome_counts(df: pl.DataFrame, cols: list[str], n: int) -> pl.DataFrame:
    if df.height == 0:
        return pl.DataFrame()
    ctx = pl.concat_list(cols) if cols else pl.lit([], dtype=pl.List(pl.String))
    return (
        df.with_columns(ctx.alias("context"), (pl.col("a") == ACCEPTED).alias("_acc"))
        .group_by("context")
        .agg(pl.col("_acc").sum().alias("accepted"), (~pl.col("_acc")).sum().alias("rejected"))
        .select(pl.lit(n, pl.Int64).alias("n"), "context", "accepted", "rejected")
    )


def finalize_outcomes(counts: pl.DataFrame) -> pl.DataFrame:
    """Acceptance rate per preceding n-gram, its lift over the overall rate, and a Wilson interval."""
    total = counts.filter(pl.col("n") == 0)
    acc, rej = (int(total["accepted"].sum()), int(total["rejected"].sum())) if total.height else (0, 0)
    base = acc / (acc + rej) if acc + rej else None
    z = 1.959963984540054
    nn = pl.col("outcomes")
    p = pl.col("acceptance_rate")
    centre = (p + z * z / (2 * nn)) / (1 + z * z / nn)
    half = z * ((p * (1 - p) / nn + z * z / (4 * nn * nn)).sqrt()) / (1 + z * z / nn)
    return (
        counts.filter(pl.col("n") > 0)
        .with_columns((pl.col("accepted") + pl.col("rejected")).alias("outcomes"))
        .with_columns((pl.col("accepted") / pl.col("outcomes")).alias("acceptance_rate"))
        .with_columns(
            pl.lit(base, pl.Float64).alias("baseline_rate"),
            (p / base if base else pl.lit(None, pl.Float64)).alias("lift"),
            pl.min_horizontal(centre - half, p).clip(0.0, 1.0).alias("wilson_low"),  # clamped: rounding near 0 and 1
            pl.max_horizontal(centre + half, p).clip(0.0, 1.0).alias("wilson_high"),
        )
        .select("n", "context", "outcomes", "accepted", "rejected", "acceptance_rate", "baseline_rate", "lift", "wilson_low", "wilson_high")
        .sort(["outcomes", "n", "context"], descending=[True, False, False])
    )
