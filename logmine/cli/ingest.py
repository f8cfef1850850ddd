"""`logmine ingest`: read IDE logs into a workspace."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from logmine.cli._options import FormatOption, OutOption, QuietOption
from logmine.cli._output import (
    OutputFormat,
    emit_json,
    emit_mapping,
    emit_table,
    progress_bar,
)
from logmine.formats.registry import FORMATS

INPUT_FORMATS = ", ".join(f.name for f in FORMATS)


def ingest(
    logs: Annotated[list[Path], typer.Argument(help="Log files or directories (walked recursively; .gz and .zst read too).", show_default=False)],
    out: OutOption,
    input_format: Annotated[str | None, typer.Option("--input-format", help=f"Skip detection and read every file as this format: {INPUT_FORMATS}.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Re-ingest files even when unchanged.")] = False,
    wait: Annotated[bool, typer.Option("--wait", help="Wait for another run holding the workspace lock.")] = False,
    fmt: FormatOption = OutputFormat.table,
    quiet: QuietOption = False,
) -> None:
    """Ingest IDE logs into the workspace OUT (Parquet tables + OUT/logmine.duckdb).

    Every line is accounted for: bad lines go to the rejects table with file, line and reason.
    Unchanged files are skipped on the next run; changed files replace their rows.

    Example: logmine ingest ~/.continue/dev_data ~/.tabby/events -o ws/
    """
    from logmine.stages.ingest import IngestConfig
    from logmine.stages.ingest import ingest as run_ingest

    with progress_bar(quiet) as progress:
        report = run_ingest(logs, out, IngestConfig(input_format=input_format, force=force, wait=wait), progress=progress)
    for warning in report.warnings:
        typer.echo(f"Warning: {warning}", err=True)
    if fmt is OutputFormat.json:
        emit_json(report.to_json())
        return
    summary = report.summary()
    emit_mapping(f"ingest -> {report.workspace}", summary)
    if summary["rejects_by_reason"]:
        emit_table("rejected lines by reason", [{"reason": k, "lines": v} for k, v in summary["rejects_by_reason"].items()])
