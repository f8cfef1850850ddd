"""Run a pipeline: lock, find the partitions, run the stages, record the run.

Order: ingest the run's files -> retention and the partition map -> flows, heatmap, templates
(only new or changed partitions; partials merged with the stored ones) -> compress/export
(publishes the pack atomically) -> serving validation -> extra queries -> report. Each stage
commits its own workspace transaction, so a run killed at any point leaves the last committed
workspace and pack; the next run recomputes only what is still missing.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import time
import traceback
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from logmine.engine import EngineConfig, make_engine
from logmine.errors import (
    InputPathError,
    LogmineError,
    OptionError,
    WorkspaceLockedError,
)
from logmine.pipeline import flows_step, heatmap_step, record, steps, templates_step
from logmine.pipeline.context import ProgressFn, RunContext
from logmine.pipeline.inputs import InputFile, partitions, window_start
from logmine.pipeline.spec import Pipeline, load_pipeline
from logmine.report import write_report
from logmine.workspace import Workspace

log = logging.getLogger(__name__)

RUN_LOCK = ".run.lock"


@contextlib.contextmanager
def run_lock(root: Path, wait: bool) -> Iterator[None]:
    """One pipeline run per workspace; ``wait`` blocks until the other run ends."""
    fh = open(root / RUN_LOCK, "a+")
    try:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if not wait:
                raise WorkspaceLockedError(root) from None
            log.warning("workspace %s is locked by another run; waiting", root)
            fcntl.flock(fh, fcntl.LOCK_EX)
        yield
    finally:
        fh.close()


def _date(value: str | None) -> str | None:
    if value is None:
        return None
    from datetime import date

    try:
        return date.fromisoformat(value).isoformat()
    except ValueError:
        raise OptionError("--date", value, "a date like 2026-11-28") from None


def run_pipeline(
    pipeline: Pipeline | Path | str,
    date: str | None = None,
    engine: EngineConfig | None = None,
    wait: bool = False,
    progress: ProgressFn = lambda d, a, b: None,
    models: dict[str, Any] | None = None,
) -> record.RunRecord:
    """Run ``pipeline`` (for one ``date`` partition, or every new or changed one); return its record.

    ``engine`` overrides the file's ``[engine]``. A :class:`~logmine.errors.LogmineError` from a
    stage is recorded (status ``failed``) and raised again.
    """
    pipe = pipeline if isinstance(pipeline, Pipeline) else load_pipeline(pipeline)
    spec = pipe.spec
    day = _date(date)
    engine = engine or EngineConfig(spec.engine.kind, spec.engine.workers, spec.engine.ray_address)
    ws = steps.ensure_workspace(pipe.workspace)
    with run_lock(ws.root, wait):
        interrupted = record.mark_interrupted(ws.root)
        rec = record.RunRecord(record.new_run_id(), spec.name, str(pipe.path), pipe.digest, str(ws.root), day,
                               {"engine": engine.kind, "workers": engine.workers}, resumed_after=interrupted)
        record.save_file(ws.root, rec)
        try:
            with make_engine(engine) as eng:
                rec.engine = eng.describe()
                ctx = RunContext(pipe, rec.run_id, eng, {}, date=day, progress=progress, models=dict(models or {}))
                _stages(ctx, rec)
                _engine_stats(ctx, rec)
            status, code = ("partial", record.EXIT_PARTIAL) if _rejected(rec) else ("ok", record.EXIT_OK)
            rec.finish(status, code)
        except BaseException as exc:
            _fail(pipe, ws.root, rec, exc)
            raise
        _save(pipe, ws.root, rec)
        if spec.stages.report.enabled:  # after the record is saved, so the page shows this run
            try:
                _timed(rec, "report", lambda: _report(ctx, rec))
            except BaseException as exc:
                _fail(pipe, ws.root, rec, exc)
                raise
            rec.seconds = round(time.perf_counter() - rec._t0, 3)
            _save(pipe, ws.root, rec)
    return rec


def _stages(ctx: RunContext, rec: record.RunRecord) -> None:
    spec = ctx.pipeline.spec
    found = partitions(ctx.pipeline)
    end = ctx.date or (max(found) if found else None)
    start = window_start(end, spec.retention.days) if end else None
    ctx.window_start = start
    ctx.partitions = {k: v for k, v in found.items() if (start is None or k >= start) and (ctx.date is None or k <= ctx.date)}
    todo: list[InputFile] = [f for k, files in ctx.partitions.items() if ctx.date is None or k == ctx.date for f in files]
    rec.inputs = {"partitions_found": len(found), "partitions_in_window": len(ctx.partitions), "window_start": start,
                  "files_this_run": len(todo), "partitions_this_run": sorted({f.partition for f in todo})}
    if (ctx.date is not None and ctx.date not in found) or not found:
        globs = [str(ctx.pipeline.resolve(p)).replace("{date}", ctx.date or "{date}") for i in spec.inputs for p in i.paths]
        raise InputPathError(ctx.pipeline.path, f"no input files{' for ' + ctx.date if ctx.date else ''}: nothing matches "
                             + ", ".join(globs))
    if spec.stages.ingest.enabled:
        rec.counts = _timed(rec, "ingest", lambda: steps.ingest(ctx, spec.stages.ingest, todo))
        rec.rejects = dict(rec.counts.get("rejects_by_reason", {}))
    rec.inputs["retention"] = steps.update_inputs(ctx, start)
    ctx.input_fingerprints = steps.input_fingerprints(ctx)
    ws = ctx.workspace()
    analysis: list[tuple[str, bool, Callable[[], dict[str, Any]]]] = [
        ("flows", spec.stages.flows.enabled and ws.has_table("events"), lambda: flows_step.run(ctx, spec.stages.flows)),
        ("heatmap", spec.stages.heatmap.enabled and ws.has_table("llm_requests"), lambda: heatmap_step.run(ctx, spec.stages.heatmap)),
        ("templates", spec.stages.templates.enabled and ws.has_table("llm_requests"), lambda: templates_step.run(ctx, spec.stages.templates)),
        ("compress", spec.stages.compress.enabled, lambda: steps.compress(ctx, spec.stages.compress)),
        ("validate", spec.stages.validate_.enabled, lambda: steps.validate(ctx, spec.stages.validate_)),
        ("queries", bool(spec.queries), lambda: steps.queries(ctx)),
    ]
    for name, enabled, fn in analysis:
        if enabled:
            _timed(rec, name, fn)


def _timed(rec: record.RunRecord, name: str, fn: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    started = time.perf_counter()
    out = fn() or {}
    rec.stages[name] = {**out, "seconds": round(time.perf_counter() - started, 3)}
    log.info("stage %s done in %.2f s", name, rec.stages[name]["seconds"])
    return out


def _report(ctx: RunContext, rec: record.RunRecord) -> dict[str, Any]:
    result = write_report(ctx.root, run_id=rec.run_id, pack_dir=ctx.pipeline.pack_dir)
    return {"file": str(result.path), "sections_missing": result.missing, "charts": result.charts}


def _engine_stats(ctx: RunContext, rec: record.RunRecord) -> None:
    """Attach each engine map's task timings to its stage (label "<stage> ...")."""
    for s in ctx.engine.stats:
        stage = s.label.split(" ", 1)[0]
        if stage in rec.stages:
            rec.stages[stage].setdefault("engine", []).append(s.to_json())


def _fail(pipe: Pipeline, root: Path, rec: record.RunRecord, exc: BaseException) -> None:
    rec.finish("failed", record.EXIT_FAILED, f"{type(exc).__name__}: {exc}")
    if not isinstance(exc, LogmineError):
        rec.counts["traceback"] = traceback.format_exc(limit=8)
    _save(pipe, root, rec)


def _rejected(rec: record.RunRecord) -> bool:
    return bool(rec.counts.get("lines_rejected") or rec.counts.get("files_rejected"))


def _save(pipe: Pipeline, root: Path, rec: record.RunRecord) -> None:
    """Write the runs table row, the record file and the metrics."""
    ws = None
    try:
        ws = Workspace.open(root)
        record.save_table(ws, rec, pipe.spec.retention.runs)
    except LogmineError as exc:
        log.error("could not add run %s to the runs table: %s", rec.run_id, exc)
    record.save_file(root, rec)  # after the table: a file still "running" means no row was committed
    if pipe.spec.metrics.enabled:
        record.write_metrics(pipe.metrics_file, rec, record.last_success(ws, rec))


def with_engine(pipeline: Pipeline, kind: str | None, address: str | None, workers: int | None) -> EngineConfig:
    """The file's engine with the command line's overrides."""
    e = pipeline.spec.engine
    cfg = EngineConfig(e.kind, e.workers, e.ray_address)
    if kind is not None:
        if kind not in ("local", "ray"):
            raise OptionError("--engine", kind, "local or ray")
        cfg = replace(cfg, kind=kind, ray_address=None if kind == "local" else cfg.ray_address)  # type: ignore[arg-type]
    if address is not None:
        cfg = replace(cfg, ray_address=address)
    if workers is not None:
        cfg = replace(cfg, workers=workers)
    return cfg


__all__ = ["load_pipeline", "run_lock", "run_pipeline", "with_engine"]
