"""`logmine run`: run a declarative nightly pipeline (pipelines/*.toml)."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer

from logmine.cli._options import FormatOption, QuietOption
from logmine.cli._output import OutputFormat, emit_json, emit_mapping, emit_table, progress_bar


class EngineName(str, Enum):
    local = "local"
    ray = "ray"


def run(
    pipeline: Annotated[Path, typer.Argument(help="The pipeline file (TOML), e.g. pipelines/nightly.toml.", show_default=False)],
    date: Annotated[str | None, typer.Option("--date", help="Process this date's partition only (YYYY-MM-DD); "
                                                          "default: every new or changed partition.", show_default=False)] = None,
    engine: Annotated[EngineName | None, typer.Option("--engine", help="Where partitions run (default: the file's [engine]).",
                                                      show_default=False)] = None,
    ray_address: Annotated[str | None, typer.Option("--ray-address", help="A running Ray cluster (ray://host:10001 or auto); "
                                                                        "default: start Ray here.", show_default=False)] = None,
    workers: Annotated[int | None, typer.Option("--workers", help="Local processes, or CPUs of a Ray started here.",
                                                show_default=False)] = None,
    wait: Annotated[bool, typer.Option("--wait", help="If another run holds the workspace, wait for it instead of exiting.")] = False,
    fmt: FormatOption = OutputFormat.table,
    quiet: QuietOption = False,
) -> None:
    """Run a nightly pipeline incrementally: ingest, flows, heatmaps, templates, pack, run record, report.

    Only new or changed date partitions are computed; their partials are merged with the stored ones.

    Exit codes: 0 ok; 2 partial (the run finished but some input lines or files were rejected;
    see the run record's rejects); 1 failed (the workspace keeps its last good state).

    Example: logmine run pipelines/nightly.toml --date 2026-11-28 --engine ray
    """
    from logmine.pipeline import load_pipeline, run_pipeline, with_engine

    pipe = load_pipeline(pipeline)
    config = with_engine(pipe, engine.value if engine else None, ray_address, workers)
    with progress_bar(quiet) as progress:
        rec = run_pipeline(pipe, date=date, engine=config, wait=wait, progress=progress)
    doc = rec.to_json()
    if fmt is OutputFormat.json:
        emit_json(doc)
    else:
        _tables(doc)
    if rec.exit_code:
        raise typer.Exit(rec.exit_code)


def _tables(doc: dict[str, Any]) -> None:
    counts = doc["counts"]
    emit_mapping(f"run {doc['run_id']} ({doc['pipeline']})", {
        "status": doc["status"], "exit code": doc["exit_code"], "date": doc["date"] or "all new or changed",
        "engine": doc["engine"].get("engine"), "workers": doc["engine"].get("workers"), "files ingested": counts.get("files_ingested", 0),
        "lines read": counts.get("lines_read", 0), "lines rejected": counts.get("lines_rejected", 0), "seconds": doc["seconds"],
        "workspace": doc["workspace"],
    })
    rows = []
    for stage, info in doc["stages"].items():
        parts = info.get("partitions") or {}
        note = info.get("skipped") or info.get("file") or info.get("note") or ""
        rows.append({"stage": stage, "seconds": info.get("seconds"), "computed": len(parts.get("computed", [])) if parts else None,
                     "reused": parts.get("reused") if parts else None, "note": note})
    emit_table("stages", rows, ["stage", "seconds", "computed", "reused", "note"])
    if doc["rejects"]:
        emit_table("rejected lines by reason", [{"reason": k, "lines": v} for k, v in doc["rejects"].items()])


def register(app: typer.Typer) -> None:
    app.command("run")(run)
