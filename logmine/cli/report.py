"""`logmine report`: one self-contained HTML page for a workspace."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from logmine.cli._options import FormatOption, WorkspaceArg
from logmine.cli._output import OutputFormat, emit_json, emit_mapping


def report(
    workspace: WorkspaceArg,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Where to write the page (default: OUT/report/index.html).",
                                                show_default=False)] = None,
    run_id: Annotated[str | None, typer.Option("--run", help="Show this run's record (default: the latest).", show_default=False)] = None,
    pack: Annotated[Path | None, typer.Option("--pack", help="The published pack to read redaction counts from "
                                                            "(default: where the last run published it, else OUT/pack).",
                                              show_default=False)] = None,
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """Write one self-contained HTML report for a workspace: OUT/report/index.html.

    Ingest accounting, flows, heatmaps, templates, compression and validation on one page that
    opens without a network; every number links to the workspace query it came from.

    Example: logmine report out/ && xdg-open out/report/index.html
    """
    from logmine.report import write_report
    from logmine.workspace import Workspace

    result = write_report(Workspace.open(workspace), out=output, run_id=run_id, pack_dir=pack)
    if fmt is OutputFormat.json:
        emit_json(result.to_json())
        return
    emit_mapping("report", {"file": str(result.path), "sections with data": ", ".join(result.present) or "none",
                            "sections missing": ", ".join(result.missing) or "none", "charts": result.charts})


def register(app: typer.Typer) -> None:
    app.command("report")(report)
