"""`logmine sample`: write realistic synthetic logs in every supported format."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from logmine.cli._options import QuietOption
from logmine.cli._output import (
    OutputFormat,
    emit_json,
    emit_mapping,
    emit_table,
    progress_bar,
)
from logmine.formats.registry import SAMPLE_FORMATS

LOG_FORMATS = ", ".join(SAMPLE_FORMATS)


def sample(
    out_dir: Annotated[Path, typer.Argument(help="Directory for the logs and truth.json (created if needed).", show_default=False)],
    events: Annotated[int, typer.Option("--events", "-n", help="Simulated events in all (editor actions and assistant requests), "
                                                                 "split evenly over the formats.")] = 10_000,
    seed: Annotated[int, typer.Option("--seed", help="Random seed; the same seed gives byte-identical files.")] = 0,
    formats: Annotated[list[str] | None, typer.Option(
        "--format", help=f"Log format to write; repeat it or separate by commas (default: all): {LOG_FORMATS}.",
        show_default=False)] = None,
    code_dir: Annotated[Path | None, typer.Option(
        "--code-dir", help="Source files to fill prompts with (default: a frozen corpus of Python code, logmine's own 0.1.0 package).", show_default=False)] = None,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace the logs of an earlier run in OUT_DIR.")] = False,
    report: Annotated[OutputFormat, typer.Option(
        "--report", "--format-output",
        help="Report as a table or as JSON on stdout (not --format: that one picks the log formats).")] = OutputFormat.table,
    quiet: QuietOption = False,
) -> None:
    """Write synthetic IDE and code-assistant logs in every supported format, plus OUT_DIR/truth.json
    with what was planted (templates, token latency factors, acceptance pattern, secrets, malformed lines).

    Example: logmine sample demo-logs/ --events 20000 --seed 1 --format native --format tabby
    """
    from logmine.sample import FORMATS, SampleConfig, generate

    chosen = tuple(dict.fromkeys(name.strip() for value in formats or [] for name in value.split(",") if name.strip()))
    config = SampleConfig(events=events, seed=seed, formats=chosen or FORMATS, code_dir=code_dir, overwrite=overwrite)
    with progress_bar(quiet) as progress:
        result = generate(out_dir, config, progress=progress)
    if report is OutputFormat.json:
        emit_json(result.to_json())
        return
    emit_mapping(f"sample -> {result.out_dir}", result.summary())
    columns = ["format", "files", "lines", "malformed", "bytes", "events", "requests"]
    emit_table("by format", [{"format": f.name, **vars(f)} for f in result.formats], columns)


def register(app: typer.Typer) -> None:
    app.command("sample")(sample)
