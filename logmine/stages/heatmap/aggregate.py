"""Token-level latency heatmaps: which kinds of generated tokens are slow, where, for which model.

Shape (pure core, I/O at the edges):

* :func:`measure` — requests -> one row per generated token (latency, token type from a real
  parse, position) plus one accounting row per request (measured or skipped, and why).
* :func:`sketch_partial` — token rows -> a log-bucket sketch per (day, hour, model, language,
  token type, position bucket); the *partial* of one day.
* :func:`merge_partials` + :func:`finalize` — sum the partials of any set of days (counts add up
  exactly) and compute every aggregate (count, mean, p50, p95, p99) from the merged sketch. A
  group of at most :data:`~logmine.sketch.EXACT_MAX` tokens keeps its latencies in the sketch and
  gets exact interpolated quantiles (``exact`` true); a token type is ranked by how slow it is only
  with :attr:`HeatmapConfig.min_rank_tokens` tokens or more (``ranked``), so a few rare tokens never
  top the table.

:func:`logmine.stages.heatmap.stage.heatmap` runs this against a workspace.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

import polars as pl

from logmine.language import normalise_language
from logmine.sketch import DEFAULT_ALPHA, DEFAULT_QUANTILES, EXACT_MAX, merge_frames, sketch_frame, summarise
from logmine.stages.heatmap.labels import label_tokens
from logmine.stages.heatmap.tokens import timeline

log = logging.getLogger(__name__)

ProgressFn = Callable[[str, int, int], None]

LABELS_VERSION = 1
"""Bump when token splitting or labelling changes: every stored day is then recomputed."""
POSITION_BUCKETS = ((1, 1, "1"), (2, 4, "2-4"), (5, 16, "5-16"), (17, 64, "17-64"), (65, None, "65+"))
SKETCH_KEYS = ("day", "hour", "model", "language", "token_type", "position_bucket", "granularity")
"""The finest grain kept per day; every aggregate is a roll-up of these keys."""
VIEWS: dict[str, tuple[str, ...]] = {
    "heatmap_by_type": ("token_type",),
    "heatmap_by_type_position": ("token_type", "position_bucket"),
    "heatmap_by_model_type": ("model", "token_type"),
    "heatmap_by_language_type": ("language", "token_type"),
    "heatmap_by_hour_model": ("hour", "model"),
}
"""Aggregate tables and their keys."""
FIRST_TOKEN_VIEWS = ("heatmap_by_type_position",)
"""Views that always count each request's first token (in its own position bucket, ``1``).
The others leave it out unless ``include_first_token``: its latency is the time to first token,
which measures the prompt, not the token; ``heatmap_ttft`` reports it per model."""
UNKNOWN = "unknown"
MIN_RANK_TOKENS = 30
"""A token type needs this many tokens to be ranked by latency (and get a heat)."""

TOKEN_SCHEMA: dict[str, pl.DataType] = {
    "request_id": pl.String(), "day": pl.String(), "hour": pl.Int8(), "model": pl.String(), "language": pl.String(),
    "kind": pl.String(), "position": pl.Int32(), "position_bucket": pl.String(), "token": pl.String(),
    "latency_us": pl.Float64(), "token_type": pl.String(), "node_type": pl.String(), "granularity": pl.String(),
    "tokens_from": pl.String(),
}
REQUEST_SCHEMA: dict[str, pl.DataType] = {
    "request_id": pl.String(), "day": pl.String(), "model": pl.String(), "language": pl.String(),
    "language_source": pl.String(), "kind": pl.String(), "status": pl.String(), "skip_reason": pl.String(),
    "granularity": pl.String(), "tokens_from": pl.String(), "pieces": pl.Int32(), "tokens": pl.Int32(),
    "issues": pl.List(pl.String()), "parse_error": pl.Boolean(),
}
DAYS_SCHEMA: dict[str, pl.DataType] = {
    "day": pl.String(), "fingerprint": pl.String(), "requests": pl.Int64(), "measured": pl.Int64(),
    "tokens": pl.Int64(), "alpha": pl.Float64(), "computed_at": pl.Datetime("us", "UTC"),
}
SKETCH_SCHEMA: dict[str, pl.DataType] = {
    "day": pl.String(), "hour": pl.Int8(), "model": pl.String(), "language": pl.String(), "token_type": pl.String(),
    "position_bucket": pl.String(), "granularity": pl.String(), "bucket": pl.Int32(), "count": pl.Int64(),
    "sum": pl.Float64(), "values": pl.List(pl.Float64()),
}
INPUT_COLUMNS = ("request_id", "ts", "kind", "model", "language", "file_path", "prefix", "suffix", "prompt",
                  "completion", "token_times_ms", "token_texts")


def _no_progress(description: str, done: int, total: int) -> None:
    return None


@dataclass(frozen=True)
class HeatmapConfig:
    """Options of the heatmap stage."""

    since: date | None = None
    """First day (UTC, inclusive) of the window; None: from the first request."""
    until: date | None = None
    """Last day (UTC, inclusive) of the window; None: up to the last request."""
    model: str | None = None
    """Only this model in the aggregates and pages (the stored sketch keeps every model)."""
    language: str | None = None
    """Only this language in the aggregates and pages."""
    out_dir: Path | None = None
    """Where the PNGs and index.html go; None: ``<workspace>/heatmap``."""
    html: bool = True
    """Write ``index.html`` (the interactive page)."""
    png: bool = True
    """Write one PNG per heatmap."""
    alpha: float = DEFAULT_ALPHA
    """Relative accuracy of the quantile sketches."""
    recompute: bool = False
    """Recompute every day in the window even when its requests did not change."""
    keep_tokens: bool = True
    """Store every measured token in ``heatmap_tokens`` (needed for the slow-tokens view)."""
    slow_examples: int = 12
    """How many completions the slow-tokens view shows."""
    chunk_fraction: float = 0.5
    """A request is chunk-granular when more than this fraction of its streamed pieces hold several tokens."""
    include_first_token: bool = False
    """Count each request's first token (time to first token) in every view, not only type x position."""
    exact_max: int = EXACT_MAX
    """Groups of at most this many tokens get exact quantiles (their latencies are kept in the sketch)."""
    min_rank_tokens: int = MIN_RANK_TOKENS
    """A token type with fewer tokens is listed after the ranked ones, without a heat."""


@dataclass
class HeatmapResult:
    """What :func:`heatmap` computed: the aggregate tables and the accounting of every request."""

    workspace: str
    tables: dict[str, pl.DataFrame]
    """``heatmap_by_*`` and ``heatmap_latency_time`` for the window and filters."""
    requests: int = 0
    measured: int = 0
    tokens: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    issues: dict[str, int] = field(default_factory=dict)
    granularity: dict[str, int] = field(default_factory=dict)
    language_sources: dict[str, int] = field(default_factory=dict)
    days_computed: list[str] = field(default_factory=list)
    days_reused: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def by_type(self) -> pl.DataFrame:
        return self.tables["heatmap_by_type"]

    def table_rows(self) -> list[dict[str, Any]]:
        """The table a user reads first: token type, mean and p95 latency (µs), frequency (the n of
        the quantile), heat (none for a type with too few tokens to rank), whether the quantiles are exact."""
        return [
            {"token type": r["token_type"], "mean latency (µs)": _round(r["mean_us"]), "p95 (µs)": _round(r["p95_us"]),
             "frequency": r["count"], "heat (1-5)": r["heat"], "exact": quantile_method(r["exact"])}
            for r in self.by_type.iter_rows(named=True)
        ]

    def summary(self) -> dict[str, Any]:
        return {
            "workspace": self.workspace, "requests": self.requests, "measured": self.measured, "tokens": self.tokens,
            "skipped": dict(sorted(self.skipped.items())), "issues": dict(sorted(self.issues.items())),
            "granularity": dict(sorted(self.granularity.items())), "language_sources": dict(sorted(self.language_sources.items())),
            "days_computed": self.days_computed, "days_reused": self.days_reused, "files": self.files,
            "seconds": round(self.seconds, 3),
        }

    def to_json(self) -> dict[str, Any]:
        return {**self.summary(), "by_type": self.table_rows(),
                "ttft": self.ttft_rows(),
                "tables": {name: df.to_dicts() for name, df in self.tables.items() if name != "heatmap_latency_time"}}

    def ttft_rows(self) -> list[dict[str, Any]]:
        """Time to first token per model (ms)."""
        return [
            {"model": r["model"], "requests": r["count"], "mean (ms)": _round(_ms(r["mean_us"])), "p50 (ms)": _round(_ms(r["p50_us"])),
             "p95 (ms)": _round(_ms(r["p95_us"])), "p99 (ms)": _round(_ms(r["p99_us"])), "exact": quantile_method(r["exact"])}
            for r in self.tables["heatmap_ttft"].iter_rows(named=True)
        ]


def quantile_method(exact: bool | None) -> str:
    """Whether a row's quantiles are exact, for tables a person reads: ``yes``, or the sketch's ``±1 %``."""
    return "yes" if exact else "±1 %"


def _ms(us: float | None) -> float | None:
    return None if us is None else us / 1000.0


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 1)


# -- the pure core ---------------------------------------------------------------------------------
def position_bucket(position: int) -> str:
    """``1``, ``2-4``, ``5-16``, ``17-64`` or ``65+`` for a 1-based token position."""
    for lo, hi, name in POSITION_BUCKETS:
        if position >= lo and (hi is None or position <= hi):
            return name
    raise ValueError(f"token positions start at 1, got {position}")


def measure(requests: pl.DataFrame, chunk_fraction: float = 0.5) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Token rows (:data:`TOKEN_SCHEMA`) and request rows (:data:`REQUEST_SCHEMA`) for ``requests``.

    ``requests`` has the ``llm_requests`` columns (missing ones are taken as null).
    """
    cols = {c: (requests[c] if c in requests.columns else pl.Series(c, [None] * requests.height)) for c in INPUT_COLUMNS}
    tok: dict[str, list[Any]] = {name: [] for name in TOKEN_SCHEMA}
    req: dict[str, list[Any]] = {name: [] for name in REQUEST_SCHEMA}
    for row in zip(*(cols[c].to_list() for c in INPUT_COLUMNS)):
        _measure_one(dict(zip(INPUT_COLUMNS, row)), chunk_fraction, tok, req)
    tokens = pl.DataFrame(tok, schema=TOKEN_SCHEMA).with_columns(_position_bucket_expr().alias("position_bucket"))
    return tokens, pl.DataFrame(req, schema=REQUEST_SCHEMA)


def _position_bucket_expr() -> pl.Expr:
    pos = pl.col("position")
    expr = pl.when(pos < 1).then(None)
    for lo, hi, name in POSITION_BUCKETS:
        expr = expr.when(pos <= hi).then(pl.lit(name)) if hi is not None else expr.otherwise(pl.lit(name))
    return expr


def _measure_one(r: dict[str, Any], chunk_fraction: float, tok: dict[str, list[Any]], req: dict[str, list[Any]]) -> None:
    ts: datetime | None = r["ts"]
    day = ts.strftime("%Y-%m-%d") if ts else UNKNOWN
    model = r["model"] or UNKNOWN
    tl = timeline(r["token_texts"], r["token_times_ms"], r["completion"], chunk_fraction)
    if tl.skip_reason is not None:
        labels = None
        language = normalise_language(r["language"]) or UNKNOWN
    else:
        labels = label_tokens(tl.tokens, r["prefix"], r["kind"], r["language"], r["file_path"], r["prompt"], r["suffix"])
        language = labels.language or normalise_language(r["language"]) or ("prose" if labels.language_source == "prose" else UNKNOWN)
    req["request_id"].append(r["request_id"])
    req["day"].append(day)
    req["model"].append(model)
    req["language"].append(language)
    req["language_source"].append(labels.language_source if labels else None)
    req["kind"].append(r["kind"])
    req["status"].append("skipped" if labels is None else "measured")
    req["skip_reason"].append(tl.skip_reason)
    req["granularity"].append(tl.granularity)
    req["tokens_from"].append(tl.tokens_from)
    req["pieces"].append(tl.pieces)
    req["tokens"].append(len(tl.tokens))
    req["issues"].append(list(tl.issues))
    req["parse_error"].append(labels.parse_error if labels else None)
    if labels is None:
        return
    n = len(tl.tokens)
    hour = ts.hour if ts else None
    for name, value in (("request_id", r["request_id"]), ("day", day), ("hour", hour), ("model", model),
                        ("language", language), ("kind", r["kind"]), ("granularity", tl.granularity),
                        ("tokens_from", tl.tokens_from)):
        tok[name].extend([value] * n)
    tok["position"].extend(range(1, n + 1))
    tok["position_bucket"].extend([None] * n)  # filled in by measure(), vectorised
    tok["token"].extend(tl.tokens)
    tok["latency_us"].extend(ms * 1000.0 for ms in tl.latency_ms)
    tok["token_type"].extend(labels.token_types)
    tok["node_type"].extend(labels.node_types)


def sketch_partial(tokens: pl.DataFrame | pl.LazyFrame, alpha: float = DEFAULT_ALPHA, exact_max: int = EXACT_MAX) -> pl.DataFrame:
    """The sketch of ``tokens`` (one row per :data:`SKETCH_KEYS` + bucket), ready to store."""
    lf = sketch_frame(tokens.lazy().with_columns(pl.col("hour").fill_null(-1)), SKETCH_KEYS, "latency_us", alpha, exact_max)
    return lf.collect().cast(SKETCH_SCHEMA).select(list(SKETCH_SCHEMA)).sort(list(SKETCH_KEYS) + ["bucket"])  # type: ignore[arg-type]


def merge_partials(partials: Sequence[pl.DataFrame | pl.LazyFrame], exact_max: int = EXACT_MAX) -> pl.LazyFrame:
    """Merge day sketches: counts and sums add up per key and bucket (latencies kept for small groups)."""
    if not partials:
        return pl.DataFrame(schema=SKETCH_SCHEMA).lazy()
    return merge_frames(partials, SKETCH_KEYS, exact_max)


def finalize(sketch: pl.LazyFrame | pl.DataFrame, alpha: float = DEFAULT_ALPHA, include_first_token: bool = False,
             exact_max: int = EXACT_MAX, min_rank_tokens: int = MIN_RANK_TOKENS) -> dict[str, pl.DataFrame]:
    """Every aggregate table from a (merged) sketch."""
    names = ("mean", "p50", "p95", "p99")
    sketch = sketch.lazy()
    first = pl.col("position_bucket") == "1"
    later = sketch if include_first_token else sketch.filter(~first)
    tables: dict[str, pl.DataFrame] = {}
    for name, keys in VIEWS.items():
        table = summarise(sketch if name in FIRST_TOKEN_VIEWS else later, keys, DEFAULT_QUANTILES, alpha, "_us", exact_max)
        tables[name] = table.select(*keys, "count", *[f"{n}_us" for n in names], "exact")
    tables["heatmap_ttft"] = summarise(sketch.filter(first), ["model"], DEFAULT_QUANTILES, alpha, "_us", exact_max).select(
        "model", "count", *[f"{n}_us" for n in names], "exact")
    by_type = tables["heatmap_by_type"].with_columns((pl.col("count") >= min_rank_tokens).alias("ranked"))
    total = by_type["count"].sum() or 1
    chunked = (
        later.group_by("token_type")
        .agg((pl.col("count").filter(pl.col("granularity") == "chunk").sum() / pl.col("count").sum()).alias("chunk_share"))
        .collect()
    )
    ranked_mean = pl.when(pl.col("ranked")).then(pl.col("mean_us"))
    tables["heatmap_by_type"] = (
        by_type.join(chunked, on="token_type", how="left")
        .with_columns((pl.col("count") / total).alias("share"), heat_expr(ranked_mean).alias("heat"))
        .sort("ranked", "mean_us", "token_type", descending=[True, True, False], nulls_last=True)
    )
    tables["heatmap_latency_time"] = (
        sketch.lazy().group_by("day", "hour", "bucket").agg(pl.col("count").sum()).sort("day", "hour", "bucket").collect()
    )
    return tables


def heat_expr(column: str | pl.Expr) -> pl.Expr:
    """1 (coolest) .. 5 (hottest): where a value sits between the column's min and max, on a log
    scale; null where the value is null."""
    v = (pl.col(column) if isinstance(column, str) else column).clip(lower_bound=1e-3).log()
    lo, hi = v.min(), v.max()
    scaled = pl.when(v.is_null()).then(None).when(hi > lo).then((v - lo) / (hi - lo)).otherwise(0.5)
    return (1 + (scaled * 4).round(0)).cast(pl.Int8)



__all__ = ["HeatmapConfig", "HeatmapResult", "finalize", "measure", "merge_partials", "sketch_partial"]
