"""The heatmap stage's workspace side: which days to (re)compute, and the day partitions.

Every ``heatmap_sketch``, ``heatmap_tokens`` and ``heatmap_requests`` partition holds one UTC
day. ``heatmap_days`` keeps a fingerprint of each day's requests (a hash of the columns the
stage reads, plus the labeller version and sketch settings); a day is recomputed only when
that fingerprint changes, so a nightly run measures the new day and merges the stored ones.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

import polars as pl

from logmine.language import normalise_language
from logmine.partitions import PartitionPlan, compare
from logmine.stages.heatmap.aggregate import (
    INPUT_COLUMNS,
    DAYS_SCHEMA,
    REQUEST_SCHEMA,
    SKETCH_SCHEMA,
    TOKEN_SCHEMA,
    HeatmapConfig,
)
from logmine.workspace import Transaction, Workspace

log = logging.getLogger(__name__)

_TABLES = {"heatmap_sketch": SKETCH_SCHEMA, "heatmap_tokens": TOKEN_SCHEMA, "heatmap_requests": REQUEST_SCHEMA}
_HASH_MOD = 1_000_000_007


def _day() -> pl.Expr:
    return pl.col("ts").dt.convert_time_zone("UTC").dt.strftime("%Y-%m-%d")


def _requests(ws: Workspace) -> pl.LazyFrame:
    lf = ws.scan("llm_requests")
    names = lf.collect_schema().names()
    return lf.select([c for c in INPUT_COLUMNS if c in names]).filter(pl.col("ts").is_not_null())


def _in_window(days: pl.Expr | str, config: HeatmapConfig) -> Any:
    expr = pl.col(days) if isinstance(days, str) else days
    cond = pl.lit(True)
    if config.since:
        cond = cond & (expr >= config.since.isoformat())
    if config.until:
        cond = cond & (expr <= config.until.isoformat())
    return cond


def plan_days(ws: Workspace, config: HeatmapConfig, version: int) -> PartitionPlan:
    """Fingerprint each day of the window and compare with the stored fingerprints."""
    lf = _requests(ws).with_columns(_day().alias("_day")).filter(_in_window("_day", config))
    cols = [c for c in lf.collect_schema().names() if c != "_day"]
    fp = (
        lf.group_by("_day")
        .agg(pl.len().alias("n"), (pl.struct(cols).hash(seed=0) % _HASH_MOD).sum().alias("h"))
        .sort("_day")
        .collect()
    )
    settings = f"v{version}:a{config.alpha}:c{config.chunk_fraction}:e{config.exact_max}"
    fingerprints = {row["_day"]: f"{settings}:{row['n']}:{row['h']}" for row in fp.iter_rows(named=True)}
    stored: dict[str, str] = {}
    if ws.has_table("heatmap_days"):
        stored = dict(ws.scan("heatmap_days").select("day", "fingerprint").collect().iter_rows())
    have = set(ws.partitions("heatmap_sketch")) if ws.has_table("heatmap_sketch") else set()
    compute, reused = compare(fingerprints, stored, have, recompute=config.recompute)
    in_window = [d for d in stored if (not config.since or d >= config.since.isoformat()) and (not config.until or d <= config.until.isoformat())]
    gone = sorted(d for d in in_window if d not in fingerprints)
    log.info("heatmap: %d days to compute, %d reused, %d gone", len(compute), len(reused), len(gone))
    return PartitionPlan(compute, reused, gone, fingerprints)


def ensure_tables(txn: Transaction) -> None:
    for name, schema in {**_TABLES, "heatmap_days": DAYS_SCHEMA}.items():
        txn.ensure_table(name, schema)


def read_day(ws: Workspace, day: str) -> pl.DataFrame:
    """The requests of one UTC day, with the columns the stage reads."""
    return _requests(ws).filter(_day() == day).collect()


def stored_partials(ws: Workspace, days: list[str]) -> list[pl.LazyFrame | pl.DataFrame]:
    parts = ws.partitions("heatmap_sketch") if ws.has_table("heatmap_sketch") else {}
    return [pl.scan_parquet(parts[d]) for d in days]


def put_day(
    txn: Transaction, day: str, sketch: pl.DataFrame, tokens: pl.DataFrame | None, requests: pl.DataFrame,
    fingerprint: str, alpha: float,
) -> dict[str, Any]:
    """Write one day's partitions; return its ``heatmap_days`` row."""
    txn.put_partition("heatmap_sketch", day, sketch)
    if tokens is not None:
        txn.put_partition("heatmap_tokens", day, tokens)
    else:
        txn.drop_partition("heatmap_tokens", day)
    txn.put_partition("heatmap_requests", day, requests)
    measured = requests.filter(pl.col("status") == "measured")
    return {"day": day, "fingerprint": fingerprint, "requests": requests.height, "measured": measured.height,
            "tokens": int(measured["tokens"].sum() or 0), "alpha": alpha, "computed_at": datetime.now(UTC)}


def write_days(txn: Transaction, ws: Workspace, rows: list[dict[str, Any]], gone: list[str]) -> None:
    """Drop the gone days' partitions and rewrite ``heatmap_days`` with the new rows."""
    for day in gone:
        for table in _TABLES:
            txn.drop_partition(table, day)
    replaced = {r["day"] for r in rows} | set(gone)
    old = ws.read("heatmap_days").filter(~pl.col("day").is_in(list(replaced))) if ws.has_table("heatmap_days") else None
    new = pl.DataFrame(rows, schema=DAYS_SCHEMA)
    days = pl.concat([old.cast(DAYS_SCHEMA), new]) if old is not None else new  # type: ignore[arg-type]
    txn.replace_table("heatmap_days", days.sort("day"))


def _scan_days(ws: Workspace, table: str, days: list[str]) -> pl.LazyFrame | None:
    parts = ws.partitions(table) if ws.has_table(table) else {}
    files = [parts[d] for d in days if d in parts]
    return pl.scan_parquet(files) if files else None


def _filter(lf: pl.LazyFrame, config: HeatmapConfig) -> pl.LazyFrame:
    if config.model:
        lf = lf.filter(pl.col("model") == config.model)
    if config.language:
        lf = lf.filter(pl.col("language") == (normalise_language(config.language) or config.language))
    return lf


def read_requests(ws: Workspace, days: list[str], config: HeatmapConfig) -> pl.DataFrame:
    """The window's request accounting rows (filtered like the aggregates)."""
    lf = _scan_days(ws, "heatmap_requests", days)
    return _filter(lf, config).collect() if lf is not None else pl.DataFrame(schema=REQUEST_SCHEMA)


def slow_examples(ws: Workspace, days: list[str], config: HeatmapConfig) -> pl.DataFrame:
    """Token rows of the ``config.slow_examples`` completions whose later tokens are slowest on average.

    The first token (time to first token) is left out of the ranking: it would dominate it.
    """
    lf = _scan_days(ws, "heatmap_tokens", days)
    if lf is None or config.slow_examples <= 0:
        return pl.DataFrame(schema=TOKEN_SCHEMA)
    lf = _filter(lf, config)
    top = (
        lf.filter(pl.col("position") > 1)
        .group_by("request_id")
        .agg(pl.col("latency_us").mean().alias("_mean"), pl.len().alias("_n"))
        .filter(pl.col("_n") >= 3)
        .sort("_mean", "request_id", descending=[True, False])
        .head(config.slow_examples)
        .collect()
    )
    order = {rid: i for i, rid in enumerate(top["request_id"].to_list())}
    rows = lf.filter(pl.col("request_id").is_in(list(order))).collect()
    return rows.with_columns(pl.col("request_id").replace_strict(order, return_dtype=pl.Int32).alias("_rank")).sort(
        "_rank", "position").drop("_rank")
