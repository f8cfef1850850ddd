"""The flows stage, partition by partition: each date's sessions give a partial, partials sum.

A partition's events are those of its input files (read from their Parquet partitions in the
engine's workers). :func:`flows_partition` sessionizes them and returns the flows stage's
additive counts (:func:`logmine.stages.flows.core.compute_partial`); the step stores each partial
as partitions of the ``flows_partial_*`` tables, merges all stored partials by summing
(:func:`logmine.stages.flows.core.merge_partials`) and writes the ``flows_*`` tables the flows stage
writes. Gap p50/p95 come from the mergeable gap sketches (:mod:`logmine.sketch`). Sessions are
cut at partition boundaries; sequential patterns (optional) are not additive and are mined over
all retained events each run.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, fields
from typing import Any

import polars as pl

from logmine import partitions
from logmine.pipeline import partials as store
from logmine.pipeline.context import RunContext
from logmine.pipeline.spec import FlowsStage
from logmine.records import EVENTS_SCHEMA
from logmine.stages import flows

log = logging.getLogger(__name__)

STAGE = "flows"
VERSION = 2
"""Bump when the partial's content changes: every partition is recomputed (2: gap sketches, not quarter-octave histograms)."""
FRAMES = ("activities", "dfg", "gaps", "ngrams", "variants", "window_actions", "window_pairs", "outcomes")
SCALARS = ("sessions", "events", "windows")
META = "flows_partial_meta"
SESSIONS = "flows_sessions"
META_SCHEMA: dict[str, pl.DataType] = {"partition": pl.String(), "sessions": pl.Int64(), "events": pl.Int64(), "windows": pl.Int64()}


def table(name: str) -> str:
    return f"flows_partial_{name}"


def config_of(stage: FlowsStage) -> flows.FlowsConfig:
    return flows.FlowsConfig(
        idle_gap_s=stage.idle_gap_s or None, ngram_lengths=(stage.ngram_min, stage.ngram_max),
        ngram_min_sessions=stage.ngram_min_sessions, window_events=stage.window_events, window_seconds=stage.window_seconds,
        min_support=stage.min_support, max_pattern_length=stage.max_pattern_length, patterns=stage.patterns,
        outcome_max_n=stage.outcome_max_n, exact_quantiles=False, graph_edges=stage.graph_edges,
    )


def _events(files: list[str]) -> pl.LazyFrame:
    return pl.scan_parquet(files) if files else pl.DataFrame(schema=EVENTS_SCHEMA).lazy()


def flows_partition(task: tuple[list[str], flows.FlowsConfig]) -> dict[str, Any]:
    """The partial of one partition: its events' Parquet files in, additive counts out."""
    files, config = task
    seq, info = flows.sequence(flows.filter_events(_events(files), config), config)
    part = flows.compute_partial(seq, config)
    out: dict[str, Any] = {f.name: getattr(part, f.name) for f in fields(part)}
    out["sessions_table"] = flows.sessions_table(seq, info) if seq.height else None
    return out


def partial_of(d: dict[str, Any]) -> flows.FlowsPartial:
    return flows.FlowsPartial(**{k: d[k] for k in (*SCALARS, *FRAMES)})


def _load(ws: Any, partition: str) -> flows.FlowsPartial | None:
    meta = store.stored_frame(ws, META, partition)
    if meta is None or meta.height == 0 or meta["events"][0] == 0:
        return None
    d: dict[str, Any] = {k: int(meta[k][0]) for k in SCALARS}
    for name in FRAMES:
        d[name] = store.stored_frame(ws, table(name), partition)
    return partial_of(d)


def run(ctx: RunContext, stage: FlowsStage) -> dict[str, Any]:
    """Compute the changed partitions, merge with the stored ones, write the flows tables."""
    config = config_of(stage)
    config.check()
    settings = {k: v for k, v in asdict(config).items() if k not in ("graph_edges",)}
    fps = ctx.stage_fingerprints(STAGE, settings, VERSION)
    ws = ctx.workspace()
    with ws.lock():
        ws = ws.reload()
        p = store.plan(ws, STAGE, fps, META)
        tasks = [(partitions.partition_files(ws, "events", ctx.source_keys(key)), config) for key in p.compute]
        results = ctx.engine.map(flows_partition, tasks, label="flows partitions")
        txn = ws.transaction()
        new: dict[str, flows.FlowsPartial] = {}
        for key, res in zip(p.compute, results, strict=True):
            new[key] = _store(txn, key, res)
        partitions.drop_partitions(txn, [META, SESSIONS, *(table(n) for n in FRAMES)], p.gone)
        stale = set(ws.partitions(SESSIONS)) - set(p.kept) if ws.has_table(SESSIONS) else set()
        for key in stale:
            txn.drop_partition(SESSIONS, key)  # e.g. the one-shot stage's "all"
        partials = [new[k] if k in new else _load(ws, k) for k in p.kept]
        nonempty = [x for x in partials if x is not None and x.events]
        summary: dict[str, Any] = {"partitions": p.to_json(), "events": sum(x.events for x in nonempty),
                                   "sessions": sum(x.sessions for x in nonempty)}
        if nonempty:
            merged = flows.merge_partials(nonempty)
            tables = flows.finalize(merged, config)
            for name, df in tables.items():
                txn.replace_table(f"flows_{name}", df)
            txn.replace_table("flows_patterns", _patterns(ws, ctx, p.kept, config))
            summary.update(edges=tables["dfg"].height, transitions=int(tables["dfg"]["count"].sum()), ngrams=tables["ngrams"].height)
        store.write_state(txn, STAGE, p, ctx.run_id)
        txn.commit()
    if nonempty:
        _pictures(ws, tables, config, summary)
    return summary


def _store(txn: Any, key: str, res: dict[str, Any]) -> flows.FlowsPartial:
    txn.ensure_table(META, META_SCHEMA)
    txn.put_partition(META, key, pl.DataFrame([{"partition": key, **{k: res[k] for k in SCALARS}}], schema=META_SCHEMA))
    for name in FRAMES:
        if res["events"]:
            txn.put_partition(table(name), key, res[name])
        else:
            txn.drop_partition(table(name), key)
    sessions = res["sessions_table"]
    if sessions is not None:
        txn.put_partition(SESSIONS, key, sessions.with_columns(pl.lit(key).alias("partition")))
    else:
        txn.drop_partition(SESSIONS, key)
    return partial_of(res)


def _patterns(ws: Any, ctx: RunContext, kept: list[str], config: flows.FlowsConfig) -> pl.DataFrame:
    """Sequential patterns over every retained event (not additive: the one recomputed part)."""
    keys = [k for p in kept for k in ctx.source_keys(p)]
    lf = flows.filter_events(_events(partitions.partition_files(ws, "events", keys)), config)
    seq, _ = flows.sequence(lf if config.patterns else lf.head(0), config)
    return flows.mine_patterns(seq, config)


def _pictures(ws: Any, tables: dict[str, pl.DataFrame], config: flows.FlowsConfig, summary: dict[str, Any]) -> None:
    out_dir = ws.root / "flows"
    files = flows.write_pictures(out_dir, tables["dfg"], tables["activities"], config.graph_edges)
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2, default=str))
    summary["files"] = files
