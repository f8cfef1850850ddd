"""Sessions, the directly-follows graph, n-grams and variants: the countable part of `flows`.

Everything here works on a *sequenced* frame (see :func:`sessionize`): one row per event,
ordered by ``case`` then time, ties in ``ts`` ordered by ``source_file`` then ``source_line``.
A ``case`` is a session after idle-gap splitting; it is the case id pm4py would be given.

Each function returns a *partial*: plain counts and sums keyed by action names, so partials
of disjoint sets of sessions add up exactly (:func:`merge_dfg` etc.). Quantiles are the one
thing that does not add up: partials carry a gap histogram (quarter-octave bins) from which
p50/p95 can be estimated after a merge, and a one-shot run computes them exactly instead.

Weights: every row counts as one event, as in pm4py (``count``, ``events``). A merged
JetBrains event of weight w stands for w consecutive occurrences of its action; the
``weighted_*`` columns count it so, adding w-1 self-transitions (which have no gap).
"""

from __future__ import annotations

import math

import polars as pl

US = 1_000_000
"""Microseconds per second."""
GAP_BINS_PER_OCTAVE = 4
"""Gap histogram resolution: bin b > 0 holds gaps in [2^((b-1)/4), 2^(b/4)) microseconds."""


def session_key() -> pl.Expr:
    """The raw session a row belongs to: its session_id, else its user, IDE and source file."""
    sid = pl.col("session_id")
    auto = pl.concat_str(
        [pl.lit("\x1fa"), pl.col("user_id").fill_null(""), pl.col("ide").fill_null(""), pl.col("source_file").fill_null("")],
        separator="\x1f",
    )
    return pl.when(sid.is_not_null() & (sid != "")).then(sid).otherwise(auto).alias("_key")


def sessionize(events: pl.LazyFrame, idle_gap_s: float | None, vocab: list[str]) -> pl.LazyFrame:
    """Order events into cases: a session (or user/IDE/file group) split at idle gaps.

    Output columns: ``case`` (UInt32, 0..n-1 in key order), ``seg`` (segment of the raw
    session, 0 for the first), ``action`` (Enum over ``vocab``), ``ts``, ``weight`` and the
    raw ``_key``, ``session_id``, ``user_id``, ``ide``. Rows without ts or action are dropped.
    A gap strictly longer than ``idle_gap_s`` starts a new case; ``None`` or 0 never splits.
    """
    lf = (
        events.filter(pl.col("ts").is_not_null() & pl.col("action").is_not_null())
        .select(
            session_key(), "session_id", "user_id", "ide", "ts", pl.col("action").cast(pl.Enum(vocab)),
            pl.col("weight").fill_null(1), "source_file", "source_line",
        )
        .sort(["_key", "ts", "source_file", "source_line"], nulls_last=True, maintain_order=True)
    )
    key_change = (pl.col("_key") != pl.col("_key").shift(1)).fill_null(True)
    new_case = key_change
    if idle_gap_s:
        gap = (pl.col("ts") - pl.col("ts").shift(1)).dt.total_microseconds()
        new_case = key_change | (gap > int(round(idle_gap_s * US))).fill_null(False)
    return (
        lf.with_columns(new_case.alias("_new"), key_change.alias("_first"))
        .with_columns((pl.col("_new").cast(pl.UInt32).cum_sum() - 1).alias("case"))
        .with_columns((pl.col("case") - pl.when(pl.col("_first")).then(pl.col("case")).forward_fill()).alias("seg"))
        .drop("_new", "_first", "source_file", "source_line")
    )


def transitions(seq: pl.DataFrame) -> pl.DataFrame:
    """Every directly-follows step: ``src``, ``dst``, ``gap_us`` and its ``case``."""
    return (
        seq.lazy()
        .select(
            "case", pl.col("action").alias("src"), pl.col("action").shift(-1).alias("dst"),
            (pl.col("ts").shift(-1) - pl.col("ts")).dt.total_microseconds().alias("gap_us"),
            (pl.col("case").shift(-1) == pl.col("case")).alias("_same"),
        )
        .filter(pl.col("_same"))
        .drop("_same")
        .collect()
    )


def gap_bin(gap_us: pl.Expr) -> pl.Expr:
    """Histogram bin of a gap: 0 for no gap, else ``floor(log2(us) * 4) + 1``."""
    return (
        pl.when(gap_us <= 0).then(0)
        .otherwise((gap_us.cast(pl.Float64).log(2) * GAP_BINS_PER_OCTAVE).floor().cast(pl.Int64) + 1)
        .alias("bin")
    )


def bin_bounds_s(b: int) -> tuple[float, float]:
    """The [lower, upper) gap range of histogram bin ``b`` in seconds."""
    if b <= 0:
        return 0.0, 0.0
    return 2 ** ((b - 1) / GAP_BINS_PER_OCTAVE) / US, 2 ** (b / GAP_BINS_PER_OCTAVE) / US


def dfg_partial(seq: pl.DataFrame, steps: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The DFG edges (counts, distinct sessions, gap sum/min/max) and the gap histogram."""
    edges = steps.group_by("src", "dst").agg(
        pl.len().alias("count"),
        pl.col("case").n_unique().alias("sessions"),
        pl.col("gap_us").sum().alias("gap_sum_us"),
        pl.col("gap_us").min().alias("gap_min_us"),
        pl.col("gap_us").max().alias("gap_max_us"),
    )
    loops = (
        seq.filter(pl.col("weight") > 1)
        .group_by(pl.col("action").alias("src"))
        .agg((pl.col("weight") - 1).sum().alias("extra"), pl.col("case").n_unique().alias("extra_sessions"))
        .with_columns(pl.col("src").alias("dst"))
    )
    edges = _strings(edges, "src", "dst")
    loops = _strings(loops, "src", "dst")
    edges = (
        edges.join(loops, on=["src", "dst"], how="full", coalesce=True)
        .with_columns(
            pl.col("count").fill_null(0).cast(pl.Int64),
            pl.col("sessions").fill_null(0).cast(pl.Int64),
            (pl.col("count").fill_null(0) + pl.col("extra").fill_null(0)).cast(pl.Int64).alias("weighted_count"),
            pl.col("gap_sum_us").fill_null(0),
        )
    )
    # sessions with weighted self-loops but no timed a->a step still contain the weighted edge
    weighted_sessions = _weighted_sessions(seq, steps)
    edges = edges.join(weighted_sessions, on=["src", "dst"], how="left").with_columns(
        pl.col("weighted_sessions").fill_null(pl.col("sessions")).cast(pl.Int64)
    )
    edges = edges.select("src", "dst", "count", "weighted_count", "sessions", "weighted_sessions", "gap_sum_us", "gap_min_us", "gap_max_us")
    hist = _strings(steps.group_by("src", "dst", gap_bin(pl.col("gap_us"))).agg(pl.len().alias("count")), "src", "dst")
    return edges, hist.with_columns(pl.col("count").cast(pl.Int64))


def _weighted_sessions(seq: pl.DataFrame, steps: pl.DataFrame) -> pl.DataFrame:
    heavy = seq.filter(pl.col("weight") > 1)
    if heavy.height == 0:
        return pl.DataFrame(schema={"src": pl.String, "dst": pl.String, "weighted_sessions": pl.Int64})
    loops = heavy.select("case", pl.col("action").alias("src"), pl.col("action").alias("dst"))
    timed = steps.filter(pl.col("src") == pl.col("dst")).select("case", "src", "dst")
    both = pl.concat([loops, timed]).unique()
    return _strings(both.group_by("src", "dst").agg(pl.len().cast(pl.Int64).alias("weighted_sessions")), "src", "dst")


def exact_gap_quantiles(steps: pl.DataFrame) -> pl.DataFrame:
    """Exact gap quantiles per edge, in microseconds: the two middle gaps and p95 (linear)."""
    gap = pl.col("gap_us")
    q = steps.group_by("src", "dst").agg(
        gap.quantile(0.5, interpolation="lower").alias("mid_lo_us"),
        gap.quantile(0.5, interpolation="higher").alias("mid_hi_us"),
        gap.quantile(0.95, interpolation="linear").alias("p95_us"),
    )
    return _strings(q, "src", "dst")


def seconds(us: pl.Series) -> pl.Series:
    """Microseconds to seconds, correctly rounded (polars divides by multiplying by 1e-6)."""
    return pl.Series(us.name, us.cast(pl.Float64).to_numpy() / US, dtype=pl.Float64)


def activities_partial(seq: pl.DataFrame) -> pl.DataFrame:
    """Per action: events, weighted events, sessions containing it, session starts and ends."""
    first = (pl.col("case") != pl.col("case").shift(1)).fill_null(True)
    last = (pl.col("case") != pl.col("case").shift(-1)).fill_null(True)
    df = (
        seq.lazy()
        .with_columns(first.alias("_start"), last.alias("_end"))
        .group_by("action")
        .agg(
            pl.len().cast(pl.Int64).alias("events"),
            pl.col("weight").sum().cast(pl.Int64).alias("weighted_events"),
            pl.col("case").n_unique().cast(pl.Int64).alias("sessions"),
            pl.col("_start").sum().cast(pl.Int64).alias("starts"),
            pl.col("_end").sum().cast(pl.Int64).alias("ends"),
        )
        .collect()
    )
    return _strings(df, "action")


def ngrams_partial(seq: pl.DataFrame, lengths: range) -> pl.DataFrame:
    """Contiguous action sequences of each length in ``lengths``: count and distinct sessions."""
    parts = []
    for n in lengths:
        cols = [pl.col("action").shift(-k).alias(f"a{k}") for k in range(n)]
        same = pl.col("case").shift(-(n - 1)) == pl.col("case")
        grams = (
            seq.lazy()
            .select("case", *cols, same.alias("_same"))
            .filter(pl.col("_same"))
            .group_by([f"a{k}" for k in range(n)])
            .agg(pl.len().cast(pl.Int64).alias("count"), pl.col("case").n_unique().cast(pl.Int64).alias("sessions"))
            .select(pl.lit(n, pl.Int64).alias("n"), pl.concat_list([pl.col(f"a{k}").cast(pl.String) for k in range(n)]).alias("ngram"), "count", "sessions")
            .collect()
        )
        parts.append(grams)
    if not parts:
        return pl.DataFrame(schema={"n": pl.Int64, "ngram": pl.List(pl.String), "count": pl.Int64, "sessions": pl.Int64})
    return pl.concat(parts)


def variants_partial(seq: pl.DataFrame) -> pl.DataFrame:
    """Whole-session action sequences and how many sessions follow each."""
    return (
        seq.lazy()
        .group_by("case", maintain_order=True)
        .agg(pl.col("action").cast(pl.String).alias("variant"))
        .group_by("variant")
        .agg(pl.len().cast(pl.Int64).alias("sessions"))
        .collect()
    )


def sessions_table(seq: pl.DataFrame) -> pl.DataFrame:
    """One row per case: its label, raw session id, user, IDE, time span and event count."""
    df = (
        seq.lazy()
        .group_by("case")
        .agg(
            pl.col("_key").first(), pl.col("seg").first(), pl.col("session_id").first(), pl.col("user_id").first(),
            pl.col("ide").first(), pl.col("ts").min().alias("started_at"), pl.col("ts").max().alias("ended_at"),
            pl.len().cast(pl.Int64).alias("events"),
        )
        .with_columns(
            _label().alias("session"), (pl.col("seg") + 1).cast(pl.Int64).alias("segment"),
            ((pl.col("ended_at") - pl.col("started_at")).dt.total_microseconds() / US).alias("duration_s"),
        )
        .sort("case")
        .select("case", "session", "session_id", "segment", "user_id", "ide", "started_at", "ended_at", "duration_s", "events")
        .collect()
    )
    return df


def _label() -> pl.Expr:
    raw = pl.when(pl.col("_key").str.starts_with("\x1fa")).then(
        pl.concat_str([pl.lit("auto:"), pl.col("_key").str.slice(3).str.replace_all("\x1f", "|")])
    ).otherwise(pl.col("_key"))
    return pl.when(pl.col("seg") == 0).then(raw).otherwise(pl.concat_str([raw, pl.lit("~"), (pl.col("seg") + 1).cast(pl.String)]))


def merge_sum(frames: list[pl.DataFrame], keys: list[str], mins: tuple[str, ...] = (), maxs: tuple[str, ...] = ()) -> pl.DataFrame:
    """Add partials of disjoint session sets: sums for counts, min/max where named."""
    frames = [f for f in frames if f.height]
    if not frames:
        raise ValueError("merge_sum needs at least one non-empty partial")
    df = pl.concat(frames, how="vertical_relaxed")
    aggs = [
        pl.col(c).min() if c in mins else pl.col(c).max() if c in maxs else pl.col(c).sum()
        for c in df.columns if c not in keys
    ]
    return df.group_by(keys).agg(aggs)


def finalize_dfg(edges: pl.DataFrame, hist: pl.DataFrame, exact: pl.DataFrame | None) -> pl.DataFrame:
    """Edges with mean, p50 and p95 gap in seconds (exact when ``exact`` is given, else from ``hist``).

    Seconds are computed as pandas/pm4py do: min, max and the two middle gaps are divided by
    1e6 (correctly rounded) and p50 is the mean of the two middle ones; the mean is the exact
    integer sum of microseconds over the count, so it may differ from pm4py's float sum in
    the last bits.
    """
    count = edges["count"].to_numpy().astype("float64")
    with_gaps = count > 0
    mean = edges["gap_sum_us"].cast(pl.Float64).to_numpy() / US
    mean[with_gaps] = mean[with_gaps] / count[with_gaps]
    df = edges.with_columns(
        pl.Series("gap_mean_s", mean).set(pl.Series(~with_gaps), None) if not with_gaps.all() else pl.Series("gap_mean_s", mean),
        seconds(edges["gap_min_us"]).alias("gap_min_s"),
        seconds(edges["gap_max_us"]).alias("gap_max_s"),
    )
    if exact is not None:
        q = exact.with_columns(
            ((seconds(exact["mid_lo_us"]) + seconds(exact["mid_hi_us"])) / 2).alias("gap_p50_s"),
            seconds(exact["p95_us"]).alias("gap_p95_s"),
        ).select("src", "dst", "gap_p50_s", "gap_p95_s")
    else:
        q = _hist_quantiles(hist)
    df = df.join(q, on=["src", "dst"], how="left")
    return df.select(
        "src", "dst", "count", "sessions", "gap_mean_s", "gap_p50_s", "gap_p95_s", "gap_min_s", "gap_max_s",
        "weighted_count", "weighted_sessions", "gap_sum_us",
    ).sort(["count", "src", "dst"], descending=[True, False, False])


def _hist_quantiles(hist: pl.DataFrame) -> pl.DataFrame:
    """p50/p95 estimated from the gap histogram: the geometric middle of the bin that holds them."""
    rows = []
    for (src, dst), grp in hist.sort("bin").group_by(["src", "dst"], maintain_order=True):
        bins, counts = grp["bin"].to_list(), grp["count"].to_list()
        total = sum(counts)
        rows.append({"src": src, "dst": dst, "gap_p50_s": _hist_q(bins, counts, total, 0.5), "gap_p95_s": _hist_q(bins, counts, total, 0.95)})
    return pl.DataFrame(rows, schema={"src": pl.String, "dst": pl.String, "gap_p50_s": pl.Float64, "gap_p95_s": pl.Float64})


def _hist_q(bins: list[int], counts: list[int], total: int, q: float) -> float:
    rank, seen = q * (total - 1), 0
    for b, c in zip(bins, counts, strict=True):
        seen += c
        if seen > rank:
            lo, hi = bin_bounds_s(b)
            return math.sqrt(lo * hi) if lo > 0 else 0.0
    return bin_bounds_s(bins[-1])[1]


def _strings(df: pl.DataFrame, *cols: str) -> pl.DataFrame:
    return df.with_columns(pl.col(c).cast(pl.String) for c in cols)
