"""The heatmap stage with its day partitions computed by the engine.

The heatmap stage already keeps one sketch per UTC day and a fingerprint per day
(:mod:`logmine.stages.heatmap.store`); this step uses that plan, measures the changed days as
engine tasks (:func:`heatmap_day`: the day's requests read from the ``llm_requests`` Parquet
files in the worker; token rows, request rows and the day's sketch back as Arrow), then writes
exactly what :func:`logmine.stages.heatmap.heatmap` writes: stored days' sketches and the new
ones summed, every aggregate computed from the merged sketch.
"""

from __future__ import annotations

import logging
from collections import Counter
from datetime import date
from typing import Any

import polars as pl

from logmine.pipeline.context import RunContext
from logmine.pipeline.spec import HeatmapStage
from logmine.stages import heatmap as hm

log = logging.getLogger(__name__)


def config_of(stage: HeatmapStage, since: str | None) -> hm.HeatmapConfig:
    return hm.HeatmapConfig(
        since=date.fromisoformat(since) if since else None, alpha=stage.alpha, chunk_fraction=stage.chunk_fraction,
        keep_tokens=stage.keep_tokens, html=stage.html, png=stage.png, slow_examples=stage.slow_examples,
    )


def heatmap_day(task: tuple[list[str], str, float, float]) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """``(sketch, tokens, requests)`` of one UTC day, from the llm_requests Parquet files."""
    files, day, alpha, chunk_fraction = task
    lf = pl.scan_parquet(files)
    names = lf.collect_schema().names()
    requests = (
        lf.select([c for c in hm.INPUT_COLUMNS if c in names])
        .filter(pl.col("ts").is_not_null())
        .filter(pl.col("ts").dt.convert_time_zone("UTC").dt.strftime("%Y-%m-%d") == day)
        .collect()
    )
    tokens, rows = hm.measure(requests, chunk_fraction)
    return hm.sketch_partial(tokens, alpha), tokens, rows


def run(ctx: RunContext, stage: HeatmapStage) -> dict[str, Any]:
    config = config_of(stage, ctx.window_start)
    ws = ctx.workspace()
    if not ws.has_table("llm_requests"):
        return {"skipped": "no llm_requests table"}
    with ws.lock():
        ws = ws.reload()
        plan = hm.plan_days(ws, config, hm.LABELS_VERSION)
        files = [str(p) for p in ws.files("llm_requests")]
        tasks = [(files, day, config.alpha, config.chunk_fraction) for day in plan.compute]
        results = ctx.engine.map(heatmap_day, tasks, label="heatmap days") if files else []
        txn = ws.transaction()
        hm.ensure_tables(txn)
        partials: list[pl.LazyFrame | pl.DataFrame] = hm.stored_partials(ws, plan.reused)
        figures = {}
        for day, (sketch, tokens, requests) in zip(plan.compute, results, strict=True):
            figures[day] = hm.put_day(txn, day, sketch, tokens if config.keep_tokens else None, requests, config.alpha)
            partials.append(sketch)
        hm.write_days(txn, plan, figures)
        tables = hm.finalize(hm.merge_partials(partials), config.alpha)
        for name, df in tables.items():
            txn.replace_table(name, df)
        txn.commit()
    result = hm.HeatmapResult(str(ws.root), tables, days_computed=plan.compute, days_reused=plan.reused)
    _account(result, hm.read_requests(ws, plan.kept, config))
    if config.html or config.png:
        examples = hm.slow_examples(ws, plan.kept, config) if config.html else None
        result.files = [str(p) for p in hm.render(result, ws.root / "heatmap", config, examples)]
    summary = result.summary()
    return {"partitions": plan.to_json(),
            **{k: summary[k] for k in ("requests", "measured", "tokens", "skipped", "files")}}


def _account(result: hm.HeatmapResult, requests: pl.DataFrame) -> None:
    """The request accounting the heatmap stage reports (requests, measured, tokens, skipped)."""
    result.requests = requests.height
    measured = requests.filter(pl.col("status") == "measured")
    result.measured = measured.height
    result.tokens = int(measured["tokens"].sum() or 0)
    result.skipped = dict(Counter(requests["skip_reason"].drop_nulls().to_list()))
