"""The pipeline steps that call a stage as a whole: ingest, retention, compress, validate, queries.

The incremental analysis steps (flows, heatmap, templates) live in their own modules.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import uuid
from collections import Counter
from pathlib import Path
from typing import Any

import polars as pl

from logmine import models
from logmine.errors import LogmineError
from logmine.jobs import ValidateOptions, export_pack, validate_options, validation_line, validation_summary
from logmine.pipeline import partials as store
from logmine.pipeline.context import RunContext
from logmine.pipeline.inputs import InputFile, fingerprint
from logmine.pipeline.spec import (
    CompressStage,
    IngestStage,
    PipelineFileError,
    ValidateStage,
)
from logmine.serving_layer import serving_module
from logmine.stages.compress import CompressConfig, ExportConfig
from logmine.stages.ingest import IngestConfig, source_key
from logmine.stages.ingest import ingest as run_ingest
from logmine.workspace import Workspace

log = logging.getLogger(__name__)


def ensure_workspace(root: Any) -> Workspace:
    """Open the workspace at ``root``, committing an empty one first if there is none."""
    ws = Workspace.create(root)
    if not (ws.root / "manifest.json").is_file():
        with ws.lock(wait=True):
            ws = ws.reload()
            if not (ws.root / "manifest.json").is_file():
                ws.transaction().commit()
    return Workspace.open(root)


# -- ingest ------------------------------------------------------------------------------------------
def ingest(ctx: RunContext, stage: IngestStage, files: list[InputFile]) -> dict[str, Any]:
    """Ingest this run's files (grouped by forced format) on the run's engine, one task per file;
    unchanged files are skipped by the stage."""
    groups: dict[str | None, list[str]] = {}
    for f in files:
        groups.setdefault(f.format, []).append(f.path)
    totals: Counter[str] = Counter()
    rejects: Counter[str] = Counter()
    for fmt, paths in sorted(groups.items(), key=lambda kv: kv[0] or ""):
        report = run_ingest(paths, ctx.root, IngestConfig(input_format=fmt, force=stage.force, group=False), progress=ctx.progress,
                            engine=ctx.engine)
        summary = report.summary()
        for warning in report.warnings:
            log.warning("ingest: %s", warning)
        for key in ("files_ingested", "files_skipped", "files_rejected", "lines_read", "lines_accepted", "lines_rejected", "events", "llm_requests"):
            totals[key] += int(summary[key])
        rejects.update(summary["rejects_by_reason"])
    return {**{k: totals[k] for k in ("files_ingested", "files_skipped", "files_rejected", "lines_read", "lines_accepted",
                                      "lines_rejected", "events", "llm_requests")}, "rejects_by_reason": dict(sorted(rejects.items()))}


def input_fingerprints(ctx: RunContext) -> dict[str, str]:
    """Partition -> hash of its files' paths and content hashes, for partitions with ingested files."""
    ws = ctx.workspace()
    known: dict[str, str] = {}
    if ws.has_table("sources"):
        known = dict(ws.read("sources").select("path", "sha256").iter_rows())
    out = {}
    for key, files in ctx.partitions.items():
        shas = [(f.path, known.get(f.path)) for f in files]
        if any(sha for _, sha in shas):
            out[key] = fingerprint(sorted(shas))
    return out


# -- retention and the partition -> file map ----------------------------------------------------------
def update_inputs(ctx: RunContext, window_start: str | None) -> dict[str, Any]:
    """Rewrite ``pipeline_inputs``; drop every row of files whose partition aged out of the window."""
    ws = ctx.workspace()
    dropped_files: list[str] = []
    with ws.lock():
        ws = ws.reload()
        known = dict(ws.read("sources").select("path", "sha256").iter_rows()) if ws.has_table("sources") else {}
        txn = ws.transaction()
        if window_start and ws.has_table(store.INPUTS_TABLE):
            old = ws.read(store.INPUTS_TABLE).filter(pl.col("partition") < window_start)
            dropped_files = sorted(set(old["path"].to_list()))
            for path in dropped_files:
                for table in ("events", "llm_requests", "rejects"):
                    txn.drop_partition(table, source_key(path))
            if dropped_files and ws.has_table("sources"):
                txn.replace_table("sources", ws.read("sources").filter(~pl.col("path").is_in(dropped_files)))
        rows = [{"partition": f.partition, "input": f.input, "path": f.path, "format": f.format, "sha256": known.get(f.path)}
                for files in ctx.partitions.values() for f in files]
        txn.replace_table(store.INPUTS_TABLE, pl.DataFrame(rows, schema=store.INPUTS_SCHEMA))
        txn.commit()
    return {"window_start": window_start, "files_dropped": len(dropped_files)}


# -- compress / export ------------------------------------------------------------------------------
def compress(ctx: RunContext, stage: CompressStage) -> dict[str, Any]:
    """Compress the mined templates, the generator judging what ships as in `logmine compress`, and
    publish the pack (atomically) where the pipeline says; the summary says whether it was validated."""
    ws = ctx.workspace()
    if not ws.has_table("templates") or ws.scan("templates").select(pl.len()).collect().item() == 0:
        return {"skipped": "no templates"}
    options, skipped = _validate_options(ctx, stage)
    embedder, count_tokens, token_ids = _models(ctx, stage)
    staging = ws.root / EXPORT_DIR
    _clean_leftovers(staging)
    config = ExportConfig(compress=CompressConfig(lossy=stage.lossy), pack_dir=staging,
                          **({"tokenizer_name": stage.tokenizer} if stage.tokenizer else {}),
                          **({"embedding_model_name": stage.embedding_model} if stage.embedding_model else {}))
    result, not_validated = export_pack(ws, embedder, count_tokens, config, options, skipped, ctx.progress, token_ids,
                                        ctx.models.get("generator"))
    summary = {**result.summary(), **validation_summary(result.validation, not_validated)}
    summary["note"] = validation_line(summary)
    if not_validated is not None:
        log.warning("compress: the pack is not validated: %s", not_validated)
    summary["published"] = str(publish(staging, ctx.pipeline.pack_dir))
    return summary


def _validate_options(ctx: RunContext, stage: CompressStage) -> tuple[ValidateOptions | None, str | None]:
    """The stage's ``validate`` keys read by the rule `logmine compress` uses."""
    model = None
    if stage.model is not None:
        path = ctx.pipeline.resolve(stage.model)
        if not path.is_dir():
            raise PipelineFileError(ctx.pipeline.path, f"key 'stages.compress.model': {path} is not a local model directory "
                                    "(logmine never downloads models)")
        model = str(path)
    off = "stages.compress.validate = false" if stage.validate_ is False else None
    requests = None if isinstance(stage.validate_, (str, bool)) else stage.validate_
    return validate_options(requests, off, stage.validate_tokens, stage.validate_threshold, model, stage.device,
                            ask="set validate = {requests} in [stages.compress]")


EXPORT_DIR = Path("export") / "pack"
"""Where the export stage writes the pack inside the workspace; :func:`publish` copies it out."""


def _clean_leftovers(staging: Path) -> None:
    """Temporary and moved-aside pack directories a killed export left beside ``staging``."""
    if staging.parent.is_dir():
        for path in staging.parent.glob(f".{staging.name}.*"):
            if path.name.endswith((".tmp", ".old")):
                shutil.rmtree(path, ignore_errors=True)


def publish(pack: Path, dest: Path, keep: int = 2) -> Path:
    """Publish ``pack`` at ``dest`` so that readers of ``dest`` always see a whole pack.

    The pack is copied to a version directory beside ``dest`` (``.NAME.<manifest hash>``), then
    ``dest`` (a symlink) is switched to it with one atomic rename; the newest ``keep`` versions
    stay. A run killed at any point leaves ``dest`` pointing at the previous whole version.
    """
    digest = hashlib.blake2b((pack / "manifest.json").read_bytes(), digest_size=8).hexdigest()
    dest.parent.mkdir(parents=True, exist_ok=True)
    version = dest.parent / f".{dest.name}.v-{digest}"
    if not version.is_dir():
        tmp = dest.parent / f".{dest.name}.{uuid.uuid4().hex[:8]}.copying"  # not *.tmp: a workspace removes those
        shutil.copytree(pack, tmp)
        os.replace(tmp, version)
    link = dest.parent / f".{dest.name}.{uuid.uuid4().hex[:8]}.link"
    os.symlink(version.name, link)
    if dest.is_dir() and not dest.is_symlink():  # first publish over a plain directory: move it aside once
        log.warning("%s is a directory; replacing it by a symlink to versioned packs", dest)
        os.replace(dest, dest.parent / f".{dest.name}.{uuid.uuid4().hex[:8]}.old")
    _swap(link, dest)
    versions = sorted(dest.parent.glob(f".{dest.name}.v-*"), key=lambda p: p.stat().st_mtime)
    for old in [v for v in versions if v.name != version.name][: max(0, len(versions) - keep)]:
        shutil.rmtree(old, ignore_errors=True)
    for stale in dest.parent.glob(f".{dest.name}.*.copying"):
        shutil.rmtree(stale, ignore_errors=True)
    return dest


def _swap(link: Path, dest: Path) -> None:
    """Point ``dest`` at ``link``'s target: one rename, atomic for readers."""
    os.replace(link, dest)


def _models(ctx: RunContext, stage: CompressStage) -> tuple[Any, Any, Any]:
    if "embedder" in ctx.models and "count_tokens" in ctx.models:
        return ctx.models["embedder"], ctx.models["count_tokens"], ctx.models.get("token_ids")
    embedder, _ = models.embedder_for(True, stage.embedding_model)
    count_tokens, token_ids, _ = models.tokenizer_for(stage.tokenizer)
    return embedder, count_tokens, token_ids


# -- serving validation -----------------------------------------------------------------------------
def validate(ctx: RunContext, stage: ValidateStage) -> dict[str, Any]:
    pack = ctx.pipeline.pack_dir
    if not (pack / "pack.json").is_file():
        return {"skipped": f"no pack at {pack}"}
    cli = serving_module("cli", "run (validate stage)")
    doc = cli.run_validate(pack, ctx.root, stage.per_template, stage.max_tokens, stage.model, stage.device, 0, True, False, ctx.progress)
    return {"total": doc.get("total"), "written": doc.get("written")}


# -- extra DuckDB queries ---------------------------------------------------------------------------
QUERIES_TABLE = "pipeline_queries"
"""name, title, file and SQL of each ``[[queries]]`` entry (the report shows them)."""

def queries(ctx: RunContext) -> dict[str, Any]:
    """Run each ``[[queries]]`` SQL file over the workspace views; store its rows as ``query_<name>``."""
    specs = ctx.pipeline.spec.queries
    if not specs:
        return {}
    import duckdb

    ws = ctx.workspace()
    frames, meta = {}, []
    con = ws.connect(read_only=True)
    try:
        for q in specs:
            path = ctx.pipeline.resolve(q.file)
            if not path.is_file():
                raise PipelineFileError(ctx.pipeline.path, f"key 'queries.{q.name}.file': {path} does not exist")
            sql = path.read_text(encoding="utf-8")
            meta.append({"name": q.name, "title": q.title or q.name.replace("_", " "), "file": str(path), "sql": sql})
            try:
                frames[q.name] = pl.from_arrow(con.sql(sql).to_arrow_table())
            except duckdb.Error as exc:
                raise LogmineError(f"{path}: query {q.name!r} failed: {exc}") from None
    finally:
        con.close()
    with ws.lock():
        ws = ws.reload()
        txn = ws.transaction()
        for name, df in frames.items():
            txn.replace_table(f"query_{name}", df)  # type: ignore[arg-type]
        txn.replace_table(QUERIES_TABLE, pl.DataFrame(meta, schema={"name": pl.String, "title": pl.String, "file": pl.String, "sql": pl.String}))
        txn.commit()
    return {name: {"rows": df.height} for name, df in frames.items()}  # type: ignore[union-attr]
