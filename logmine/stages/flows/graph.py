"""Sessions, the directly-follows graph, n-grams and variants: the countable part of `flows`.

Everything here works on a *sequenced* frame (see :func:`sessionize`): one row per event,
ordered by ``case`` then time, ties in ``ts`` ordered by ``source_file`` then ``source_line``.
A ``case`` is a session after idle-gap splitting; it is the case id pm4py would be given.

Each function returns a *partial*: plain counts and sums keyed by action names, so partials
of disjoint sets of sessions add up exactly (:func:`merge_sum`, :func:`merge_gaps`). Quantiles
are the one thing that does not add up: partials carry each edge's gap sketch (:mod:`logmine.sketch`,
relative accuracy :data:`GAP_ALPHA`), whose merge is exact and from which p50/p95 are estimated
after a merge; a one-shot run computes them exactly instead.

Weights: every row counts as one event, as in pm4py (``count``, ``events``). A merged
JetBrains event of weight w stands for w consecutive occurrences of its action; the
``weighted_*`` columns count it so, adding w-1 self-transitions (which have no gap).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from logmine import sketch

US = 1_000_000
"""Microseconds per second."""
GAP_ALPHA = sketch.DEFAULT_ALPHA
"""Relative accuracy of the gap sketches: an estimated p50/p95 is within 1 % of the exact lower
quantile. Gaps are sketched in microseconds (whole numbers, so the sketches' sums add up exactly)."""
GAP_KEYS = ["src", "dst"]
"""The group of a gap sketch: one sketch per edge."""


def session_key() -> pl.Expr:
    """The raw session a row belongs to: its session_id, else its user, IDE and source file."""
    sid = pl.col("session_id")
    auto = pl.concat_str(
        [pl.lit("\x1fa"), pl.col("user_id").fill_null(""), pl.col("ide").fill_null(""), pl.col("source_file").fill_null("")],
        separator="\x1f",
    )
    return pl.when(sid.is_not_null() & (sid != "")).then(sid).otherwise(auto).alias("_key")


def sessionize(events: pl.LazyFrame, idle_gap_s: float | None) -> tuple[pl.DataFrame, pl.LazyFrame]:
    """Order events into cases: a session (or user/IDE/file group) split at idle gaps.

    Returns ``(seq, info)``. ``seq`` has one row per event, ordered by case then ``ts``,
    ties by ``source_file`` then ``source_line``: ``case`` (UInt32, 0..n-1), ``seg`` (segment
    of the raw session, 0 for the first), ``action`` (Enum over the sorted action names),
    ``ts``, ``weight`` and ``row``, the event's row in ``info`` (a LazyFrame of the same rows
    with session_id, user_id, ide and source_file, read only when sessions are reported).
    Rows without ts or action are dropped. A gap strictly longer than ``idle_gap_s`` starts a
    new case; ``None`` or 0 never splits.

    Sorting is on integers: session keys become categorical codes (case numbers follow those
    codes, so they mean nothing across runs). When each session's rows already come in
    (ts, file, line) order, as in a log written in time order, one UInt64 per row (code,
    row number) is sorted (:func:`_presorted_order`); otherwise source files become their
    rank by name and the rows are sorted by all four keys, so ties keep file-then-line order.
    """
    base = events.select("session_id", "ts", "action", pl.col("weight").fill_null(1), "source_file", "source_line").collect()
    lf = events
    if base["ts"].null_count() or base["action"].null_count():  # filter only when needed: it copies every column
        lf = events.filter(pl.col("ts").is_not_null() & pl.col("action").is_not_null())
        base = base.filter(pl.col("ts").is_not_null() & pl.col("action").is_not_null())
    sid = base["session_id"]
    if (sid.is_null() | (sid == "")).any():  # only then are user and IDE part of the key
        base = pl.concat([base, lf.select("user_id", "ide").collect()], how="horizontal")
        key = base.select(session_key())["_key"]
    else:
        key = sid
    vocab = sorted(base["action"].unique().to_list())
    k = key.cast(pl.Categorical).to_physical().cast(pl.UInt64)
    payload = pl.DataFrame({"action": base["action"].cast(pl.Enum(vocab)), "ts": base["ts"], "weight": base["weight"]})
    presorted = _presorted_order(k.to_numpy(), base["ts"].to_physical().to_numpy(), base["source_file"], base["source_line"])
    if presorted is not None:
        order, k_sorted, t_sorted = presorted
        ones = base["weight"].min() == base["weight"].max() == 1  # the usual case: no gather needed
        seq = payload.select("action", *([] if ones else ["weight"]))[order].with_columns(
            pl.Series("row", order, dtype=pl.UInt32), pl.Series("ts", t_sorted).cast(base["ts"].dtype),
            *([pl.lit(1, base["weight"].dtype).alias("weight")] if ones else []),
        )
    else:
        files = sorted(base["source_file"].drop_nulls().unique().to_list())
        keys = payload.with_columns(
            k.alias("k"), base["ts"].dt.epoch("us").alias("t"),
            base["source_file"].cast(pl.Enum(files)).to_physical().cast(pl.UInt64).alias("f"), base["source_line"].alias("line"),
        ).with_row_index("row")
        seq = _sort_order(keys).select("row", "k", "action", "ts", "weight")  # the sort carries the payload
        k_sorted = seq["k"].to_numpy()
    case, seg = _cases(k_sorted, seq["ts"].dt.epoch("us").to_numpy(), idle_gap_s)
    seq = seq.select(pl.Series("case", case), pl.Series("seg", seg), "action", "ts", "weight", "row").rechunk()
    return seq, lf.select("session_id", "user_id", "ide", "source_file")


def _cases(k: np.ndarray, t: np.ndarray, idle_gap_s: float | None) -> tuple[np.ndarray, np.ndarray]:
    """Case and segment numbers (UInt32) of rows sorted by k then time ``t`` (microseconds)."""
    first = np.ones(k.size, dtype=bool)
    np.not_equal(k[1:], k[:-1], out=first[1:])
    new = first
    if idle_gap_s and k.size:
        new = first.copy()
        new[1:] |= np.diff(t) > int(round(idle_gap_s * US))
    case = np.cumsum(new, dtype=np.uint32) - np.uint32(1)
    return case, case - np.maximum.accumulate(np.where(first, case, np.uint32(0)))


def _presorted_order(k: np.ndarray, t: np.ndarray, files: pl.Series, lines: pl.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """The rows in (k, t, source_file, source_line) order, and k and t in that order, if each k's rows already are, else None.

    Logs are written in time order, so this is the usual case: then one sort of a single
    UInt64 (k in the high bits, the row number in the low ones) orders everything, and a
    pass over neighbours checks the time, file and line order within each k.
    """
    n = k.size
    row_bits = max(int(n - 1).bit_length(), 1)
    if n == 0 or int(k.max()).bit_length() + row_bits > 64:
        return None
    packed = np.sort((k << np.uint64(row_bits)) | np.arange(n, dtype=np.uint64))  # keys are unique: any sort is stable
    order = (packed & np.uint64((1 << row_bits) - 1)).view(np.int64)
    packed >>= np.uint64(row_bits)
    same = packed[1:] == packed[:-1]
    t = t[order]
    step = t[1:] < t[:-1]  # boolean temporaries only: no array of differences
    step &= same
    if step.any():
        return None
    np.equal(t[1:], t[:-1], out=step)
    step &= same
    ties = np.flatnonzero(step)
    if ties.size == 0:
        return order, packed, t
    a, b = pl.Series(order[ties]), pl.Series(order[ties + 1])
    pairs = pl.DataFrame({"fa": files.gather(a), "fb": files.gather(b), "la": lines.gather(a), "lb": lines.gather(b)})
    fa, fb, la, lb = pl.col("fa"), pl.col("fb"), pl.col("la"), pl.col("lb")  # nulls sort last
    in_order = (fa.is_not_null() & (fb.is_null() | (fa < fb))) | (fa.eq_missing(fb) & (lb.is_null() | (la.is_not_null() & (la <= lb))))
    return (order, packed, t) if pairs.select(in_order.all()).item() else None


def _sort_order(keys: pl.DataFrame) -> pl.DataFrame:
    """``keys`` (row, k, t, f, line, payload...) sorted by k, t, f, line, nulls last, stable.

    When they fit, (k, t) and (f, line) are packed into one UInt64 each: two sort keys
    instead of four, which is what makes sessionizing ten million events fast.
    """
    if keys.height == 0:
        return keys
    t_min, t_max = keys["t"].min(), keys["t"].max()
    k_max, f_max = keys["k"].max(), keys["f"].max()
    line_min, line_max = keys["line"].min(), keys["line"].max()
    t_bits = max(int(t_max - t_min).bit_length(), 1)  # type: ignore[operator]
    fits = (
        int(k_max).bit_length() + t_bits <= 64  # type: ignore[arg-type]
        and (f_max is None or int(f_max) < 2**23) and (line_min is None or (line_min >= 0 and line_max < 2**40))  # type: ignore[operator]
    )
    if not fits:
        return keys.sort(["k", "t", "f", "line"], nulls_last=True, maintain_order=True)
    unknown_f, unknown_line = 2**23, 2**40  # nulls sort last
    payload = [c for c in keys.columns if c not in ("k", "t", "f", "line")]
    packed = keys.select(
        (pl.col("k") * (1 << t_bits) + (pl.col("t") - t_min).cast(pl.UInt64)).alias("kt"),
        (pl.col("f").fill_null(unknown_f) * (1 << 40) + pl.col("line").fill_null(unknown_line).cast(pl.UInt64)).alias("fl"),
        *payload,
    )
    return packed.sort(["kt", "fl"], maintain_order=True).with_columns((pl.col("kt") // (1 << t_bits)).alias("k")).drop("kt", "fl")


def transitions(seq: pl.DataFrame) -> pl.DataFrame:
    """Every directly-follows step: ``case``, ``edge`` (src code * actions + dst code) and ``gap_us``."""
    width = max(len(seq["action"].dtype.categories), 1)
    code = pl.col("action").to_physical().cast(pl.UInt32)
    return (
        seq.lazy()
        .select(
            "case", (code * width + code.shift(-1)).alias("edge"),
            (pl.col("ts").shift(-1) - pl.col("ts")).dt.total_microseconds().alias("gap_us"),
            (pl.col("case").shift(-1) == pl.col("case")).alias("_same"),
        )
        .filter(pl.col("_same"))
        .drop("_same")
        .collect()
    )


def edge_names(df: pl.DataFrame, vocab: list[str]) -> pl.DataFrame:
    """Replace the ``edge`` code column by ``src`` and ``dst`` action names."""
    names = pl.Series(vocab, dtype=pl.String)
    width = max(len(vocab), 1)
    edge = df["edge"].cast(pl.Int64)
    src, dst = names.gather(edge // width), names.gather(edge % width)
    return df.drop("edge").insert_column(0, dst.alias("dst")).insert_column(0, src.alias("src"))


def bucket_bounds_s(buckets: pl.Series) -> tuple[pl.Series, pl.Series]:
    """The ``(lower, upper]`` gap range in seconds of each gap-sketch bucket (0, 0 for the zero bucket: zero gaps)."""
    b = buckets.to_numpy()
    lower, upper = sketch.bucket_bounds(b, GAP_ALPHA)
    zero = b == sketch.ZERO_BUCKET
    return (pl.Series("lower_s", np.where(zero, 0.0, lower / US), dtype=pl.Float64),
            pl.Series("upper_s", np.where(zero, 0.0, upper / US), dtype=pl.Float64))


def dfg_partial(seq: pl.DataFrame, steps: pl.DataFrame, exact: bool = False, gaps: bool = True) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """The DFG edges (counts, distinct sessions, gap sum/min/max) and the gap sketches.

    With ``exact`` the edges also carry ``mid_lo_us``, ``mid_hi_us`` and ``p95_us`` (see
    :func:`exact_gap_quantiles`), computed in the same grouping pass. Without ``gaps`` the
    second value is None.
    """
    vocab = seq["action"].dtype.categories.to_list()
    gap = pl.col("gap_us")
    aggs = [
        pl.len().cast(pl.Int64).alias("count"), pl.col("case").n_unique().cast(pl.Int64).alias("sessions"),
        gap.sum().alias("gap_sum_us"), gap.min().alias("gap_min_us"), gap.max().alias("gap_max_us"),
    ]
    fast = _edge_aggregates(steps, exact) if steps.height else None
    edges = edge_names(steps.group_by("edge").agg(*aggs, *(_quantile_aggs() if exact else [])) if fast is None else fast, vocab)
    heavy = seq.filter(pl.col("weight") > 1)
    if heavy.height:
        edges = _weighted(edges, heavy, steps, vocab)
    else:
        edges = edges.with_columns(pl.col("count").alias("weighted_count"), pl.col("sessions").alias("weighted_sessions"))
    quantiles = ["mid_lo_us", "mid_hi_us", "p95_us"] if exact else []
    edges = edges.select("src", "dst", "count", "weighted_count", "sessions", "weighted_sessions", "gap_sum_us", "gap_min_us", "gap_max_us", *quantiles)
    return edges, gap_sketch(steps, vocab) if gaps else None


def _edge_aggregates(steps: pl.DataFrame, exact: bool) -> pl.DataFrame | None:
    """Per edge: count, distinct sessions, gap sum/min/max (and exact quantiles), or None.

    Two sorts of packed UInt64 keys (numpy's vectorised sort): (edge, gap) puts each edge's
    gaps in order, from which everything but sessions is read off; (case, edge) counts the
    distinct sessions. Quantiles pick the order statistics polars' ``quantile`` uses, with
    its interpolation. None when the keys do not fit 64 bits (or a gap is negative).
    """
    edge, case, gap = steps["edge"].to_numpy(), steps["case"].to_numpy(), steps["gap_us"].to_numpy()
    e_bits, c_bits = max(int(edge.max()).bit_length(), 1), max(int(case.max()).bit_length(), 1)
    g_min, g_max = int(gap.min()), int(gap.max())
    g_bits = max(g_max.bit_length(), 1)
    if g_min < 0 or e_bits + g_bits > 64 or e_bits + c_bits > 64:
        return None
    by_edge = _packed(edge, gap, g_bits)
    by_edge.sort()
    gaps = (by_edge & np.uint64((1 << g_bits) - 1)).view(np.int64)
    by_edge >>= np.uint64(g_bits)
    starts = np.r_[0, np.flatnonzero(by_edge[1:] != by_edge[:-1]) + 1]
    edges = by_edge[starts]
    counts = np.diff(np.r_[starts, by_edge.size])
    del by_edge
    pairs = _packed(case, edge, e_bits)
    pairs.sort()
    first = np.ones(pairs.size, dtype=bool)
    np.not_equal(pairs[1:], pairs[:-1], out=first[1:])
    pairs &= np.uint64((1 << e_bits) - 1)
    sessions = np.bincount(pairs.view(np.int64)[first], minlength=int(edges.max()) + 1)[edges]
    cols: dict[str, object] = {
        "edge": pl.Series(edges, dtype=pl.UInt32), "count": counts.astype(np.int64), "sessions": sessions.astype(np.int64),
        "gap_sum_us": np.add.reduceat(gaps, starts), "gap_min_us": gaps[starts], "gap_max_us": gaps[starts + counts - 1],
    }
    if exact:
        pos = (counts - 1) * 0.95
        q_lo, q_hi = np.floor(pos).astype(np.int64), np.ceil(pos).astype(np.int64)
        lo, hi = gaps[starts + q_lo].astype(np.float64), gaps[starts + q_hi].astype(np.float64)
        cols |= {
            "mid_lo_us": gaps[starts + (counts - 1) // 2].astype(np.float64), "mid_hi_us": gaps[starts + counts // 2].astype(np.float64),
            "p95_us": np.where(q_lo == q_hi, lo, lo + (hi - lo) * (pos - q_lo)),
        }
    return pl.DataFrame(cols)


def _packed(high: np.ndarray, low: np.ndarray, low_bits: int) -> np.ndarray:
    """``high << low_bits | low`` as a new UInt64 array, built in place (one allocation)."""
    out = high.astype(np.uint64)
    out <<= np.uint64(low_bits)
    out |= low.astype(np.uint64, copy=False)
    return out


def gap_sketch(steps: pl.DataFrame, vocab: list[str]) -> pl.DataFrame:
    """Each edge's gap sketch: ``src``, ``dst``, ``bucket``, ``count``, ``sum`` (gaps in microseconds).

    The frame rows of :func:`logmine.sketch.sketch_codes` keyed by edge, without value lists:
    exact quantiles come from :func:`exact_gap_quantiles` instead.
    """
    frame = sketch.sketch_codes(steps["edge"].to_numpy(), steps["gap_us"].to_numpy(), GAP_ALPHA)
    return edge_names(frame.rename({"group": "edge"}), vocab).sort([*GAP_KEYS, "bucket"])


def merge_gaps(frames: list[pl.DataFrame]) -> pl.DataFrame:
    """Merge gap sketches of disjoint session sets (counts and sums per edge and bucket)."""
    merged = sketch.merge_frames(frames, GAP_KEYS, exact_max=0).drop("values").collect()
    return merged.sort([*GAP_KEYS, "bucket"])


def _quantile_aggs() -> list[pl.Expr]:
    gap = pl.col("gap_us")
    return [
        gap.quantile(0.5, interpolation="lower").alias("mid_lo_us"),
        gap.quantile(0.5, interpolation="higher").alias("mid_hi_us"),
        gap.quantile(0.95, interpolation="linear").alias("p95_us"),
    ]


def _weighted(edges: pl.DataFrame, heavy: pl.DataFrame, steps: pl.DataFrame, vocab: list[str]) -> pl.DataFrame:
    """Add the weighted columns: w-1 extra self-transitions per merged event of weight w."""
    width = max(len(vocab), 1)
    loop = (pl.col("action").to_physical().cast(pl.UInt32) * (width + 1)).alias("edge")  # a -> a
    extra = heavy.group_by(loop).agg((pl.col("weight") - 1).sum().cast(pl.Int64).alias("extra"))
    # sessions holding a -> a: those with a timed a -> a step or a merged a event
    timed = steps.filter(pl.col("edge") % (width + 1) == 0).select("case", "edge")
    holders = pl.concat([heavy.select("case", loop), timed]).unique().group_by("edge").agg(pl.len().cast(pl.Int64).alias("loop_sessions"))
    extra = edge_names(extra.join(holders, on="edge", how="left"), vocab)
    return (
        edges.join(extra, on=["src", "dst"], how="full", coalesce=True)
        .with_columns(
            pl.col("count").fill_null(0), pl.col("sessions").fill_null(0), pl.col("gap_sum_us").fill_null(0),
            (pl.col("count").fill_null(0) + pl.col("extra").fill_null(0)).alias("weighted_count"),
            pl.coalesce("loop_sessions", "sessions", pl.lit(0, pl.Int64)).alias("weighted_sessions"),
        )
    )


def exact_gap_quantiles(steps: pl.DataFrame, vocab: list[str]) -> pl.DataFrame:
    """Exact gap quantiles per edge, in microseconds: the two middle gaps and p95 (linear)."""
    return edge_names(steps.group_by("edge").agg(*_quantile_aggs()), vocab)


def seconds(us: pl.Series) -> pl.Series:
    """Microseconds to float seconds the way pm4py does: whole seconds + 1e-6 * the remainder.

    (pm4py's ``get_total_seconds``; polars would multiply by 1e-6 and numpy divide by 1e6,
    each of which differs from it in the last bit for some values.)
    """
    values = us.cast(pl.Float64).to_numpy()
    out = np.full(values.shape, np.nan)
    ok = ~np.isnan(values)
    ints = us.to_numpy()[ok].astype(np.int64) if ok.any() else np.zeros(0, dtype=np.int64)
    whole, micro = np.divmod(ints, US)
    out[ok] = whole.astype(np.float64) + 1e-6 * micro.astype(np.float64)
    return pl.Series(us.name, out, dtype=pl.Float64).fill_nan(None)


def activities_partial(seq: pl.DataFrame) -> pl.DataFrame:
    """Per action: events, weighted events, sessions containing it, session starts and ends."""
    schema = {"action": pl.String, "events": pl.Int64, "weighted_events": pl.Int64, "sessions": pl.Int64, "starts": pl.Int64, "ends": pl.Int64}
    if seq.height == 0:
        return pl.DataFrame(schema=schema)
    vocab = seq["action"].dtype.categories.to_list()
    width = len(vocab)
    codes = seq["action"].to_physical().to_numpy()
    case = seq["case"].to_numpy()
    starts = np.r_[0, np.flatnonzero(case[1:] != case[:-1]) + 1]
    ends = np.r_[starts[1:] - 1, codes.size - 1]
    if width <= 64:  # one bitmask of actions per session, then a count per bit
        bits = np.left_shift(np.uint64(1), np.arange(width, dtype=np.uint64))
        masks = np.bitwise_or.reduceat(bits[codes], starts)
        sessions = np.array([np.count_nonzero(masks & np.uint64(1 << a)) for a in range(width)], dtype=np.int64)
    else:
        sessions = np.bincount(np.unique(case.astype(np.int64) * width + codes.astype(np.int64)) % width, minlength=width)
    df = pl.DataFrame({
        "action": vocab,
        "events": np.bincount(codes, minlength=width),
        "weighted_events": np.bincount(codes, weights=seq["weight"].to_numpy().astype(np.float64), minlength=width).round().astype(np.int64),
        "sessions": sessions,
        "starts": np.bincount(codes[starts], minlength=width),
        "ends": np.bincount(codes[ends], minlength=width),
    }, schema=schema)
    return df.filter(pl.col("events") > 0)


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


def sessions_table(seq: pl.DataFrame, info: pl.LazyFrame) -> pl.DataFrame:
    """One row per case: its label, raw session id, user, IDE, time span and event count."""
    cases = (
        seq.lazy()
        .group_by("case")
        .agg(
            pl.col("row").first(), pl.col("seg").first(), pl.col("ts").min().alias("started_at"),
            pl.col("ts").max().alias("ended_at"), pl.len().cast(pl.Int64).alias("events"),
        )
        .collect()
    )
    firsts = info.collect()[cases["row"]].with_columns(session_key())
    return (
        pl.concat([cases, firsts], how="horizontal")
        .with_columns(
            _label().alias("session"), (pl.col("seg") + 1).cast(pl.Int64).alias("segment"),
            ((pl.col("ended_at") - pl.col("started_at")).dt.total_microseconds() / US).alias("duration_s"),
        )
        .sort("session")
        .select("session", "session_id", "segment", "user_id", "ide", "started_at", "ended_at", "duration_s", "events")
    )


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


def finalize_dfg(edges: pl.DataFrame, gaps: pl.DataFrame | None, exact: pl.DataFrame | None) -> pl.DataFrame:
    """Edges with mean, p50 and p95 gap in seconds (exact when ``exact`` is given, else from the ``gaps`` sketches).

    Seconds are computed as pm4py does (:func:`seconds`): min, max and the two middle gaps
    are converted to float seconds and p50 is the mean of the two middle ones, so these equal
    pm4py's bit for bit; the mean is the exact integer sum of microseconds over the count,
    so it may differ from pm4py's float sum in the last bits (tests: relative 1e-12).
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
            pl.Series(exact["p95_us"].cast(pl.Float64).to_numpy() / US).alias("gap_p95_s"),
        ).select("src", "dst", "gap_p50_s", "gap_p95_s")
    else:
        q = sketch_quantiles(gaps)
    df = df.join(q, on=["src", "dst"], how="left")
    return df.select(
        "src", "dst", "count", "sessions", "gap_mean_s", "gap_p50_s", "gap_p95_s", "gap_min_s", "gap_max_s",
        "weighted_count", "weighted_sessions", "gap_sum_us",
    ).sort(["count", "src", "dst"], descending=[True, False, False])


def sketch_quantiles(gaps: pl.DataFrame | None) -> pl.DataFrame:
    """p50/p95 per edge in seconds, estimated from its gap sketch (:func:`logmine.sketch.summarise`):
    each within :data:`GAP_ALPHA` of the exact lower quantile, 0 where that gap is 0."""
    schema = {"src": pl.String, "dst": pl.String, "gap_p50_s": pl.Float64, "gap_p95_s": pl.Float64}
    if gaps is None or gaps.height == 0:
        return pl.DataFrame(schema=schema)
    q = sketch.summarise(gaps, GAP_KEYS, (0.5, 0.95), GAP_ALPHA, exact_max=0)
    return q.select(*GAP_KEYS, (pl.col("p50") / US).alias("gap_p50_s"), (pl.col("p95") / US).alias("gap_p95_s"))
