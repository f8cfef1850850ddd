"""The heatmap stage's workspace side: which days to (re)compute, and the day partitions.

Every ``heatmap_sketch``, ``heatmap_tokens`` and ``heatmap_requests`` partition holds one UTC
day. ``heatmap_days`` keeps a fingerprint of each day's requests (a hash of the columns the
stage reads, plus the labeller version and sketch settings) and the day's figures; a day is
recomputed only when that fingerprint changes, so a nightly run measures the new day and
merges the stored ones. ``heatmap_days`` is a state table of :mod:`logmine.partitions`' store
(:data:`DAYS`): planning, writing it and dropping gone days go through that store, as the
pipeline steps' ``pipeline_partitions`` do.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from logmine import partitions
from logmine.language import normalise_language
from logmine.partitions import PartitionPlan, StateTable
from logmine.stages.heatmap.aggregate import (
    INPUT_COLUMNS,
    DAYS_SCHEMA,
    REQUEST_SCHEMA,
    SKETCH_SCHEMA,
    TOKEN_SCHEMA,
    HeatmapConfig,
)
from logmine.workspace import Transaction, Workspace

STAGE = "heatmap"
DAYS = StateTable("heatmap_days", DAYS_SCHEMA, key="day")
"""The heatmap's state table: a row per day (fingerprint, requests, measured, tokens, alpha, computed_at)."""
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

    def in_window(day: str) -> bool:  # stored days outside the window are neither recomputed nor gone
        return (not config.since or day >= config.since.isoformat()) and (not config.until or day <= config.until.isoformat())

    return partitions.plan(ws, DAYS, STAGE, fingerprints, "heatmap_sketch", recompute=config.recompute, in_scope=in_window)


def ensure_tables(txn: Transaction) -> None:
    for name, schema in {**_TABLES, DAYS.name: DAYS.schema}.items():
        txn.ensure_table(name, schema)


def read_day(ws: Workspace, day: str) -> pl.DataFrame:
    """The requests of one UTC day, with the columns the stage reads."""
    return _requests(ws).filter(_day() == day).collect()


def stored_partials(ws: Workspace, days: list[str]) -> list[pl.LazyFrame | pl.DataFrame]:
    return [pl.scan_parquet(path) for path in partitions.partition_files(ws, "heatmap_sketch", days)]


def put_day(
    txn: Transaction, day: str, sketch: pl.DataFrame, tokens: pl.DataFrame | None, requests: pl.DataFrame,
    alpha: float,
) -> dict[str, Any]:
    """Write one day's partitions; return its figures for ``heatmap_days`` (requests, measured, tokens, alpha)."""
    txn.put_partition("heatmap_sketch", day, sketch)
    if tokens is not None:
        txn.put_partition("heatmap_tokens", day, tokens)
    else:
        txn.drop_partition("heatmap_tokens", day)
    txn.put_partition("heatmap_requests", day, requests)
    measured = requests.filter(pl.col("status") == "measured")
    return {"requests": requests.height, "measured": measured.height, "tokens": int(measured["tokens"].sum() or 0), "alpha": alpha}


def write_days(txn: Transaction, plan: PartitionPlan, figures: dict[str, dict[str, Any]]) -> None:
    """Drop the gone days' partitions and write ``heatmap_days``: the computed days' rows with
    their ``figures`` (from :func:`put_day`), the other stored days' rows as they were."""
    partitions.drop_partitions(txn, _TABLES, plan.gone)
    partitions.write_state(txn, DAYS, STAGE, plan, figures)


def _scan_days(ws: Workspace, table: str, days: list[str]) -> pl.LazyFrame | None:
    files = partitions.partition_files(ws, table, days)
    return pl.scan_parquet(files) if files else None


def filtered(lf: pl.LazyFrame, config: HeatmapConfig) -> pl.LazyFrame:
    """Rows of ``config.model`` and ``config.language`` only (when set): the requests a run reads
    and the merged sketch the aggregates come from."""
    if config.model:
        lf = lf.filter(pl.col("model") == config.model)
    if config.language:
        lf = lf.filter(pl.col("language") == (normalise_language(config.language) or config.language))
    return lf


def read_requests(ws: Workspace, days: list[str], config: HeatmapConfig) -> pl.DataFrame:
    """The window's request accounting rows (filtered like the aggregates)."""
    lf = _scan_days(ws, "heatmap_requests", days)
    return filtered(lf, config).collect() if lf is not None else pl.DataFrame(schema=REQUEST_SCHEMA)


def slow_examples(ws: Workspace, days: list[str], config: HeatmapConfig) -> pl.DataFrame:
    """Token rows of the ``config.slow_examples`` completions whose later tokens are slowest on average.

    The first token (time to first token) is left out of the ranking: it would dominate it.
    """
    lf = _scan_days(ws, "heatmap_tokens", days)
    if lf is None or config.slow_examples <= 0:
        return pl.DataFrame(schema=TOKEN_SCHEMA)
    lf = filtered(lf, config)
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
