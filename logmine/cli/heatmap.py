"""`logmine heatmap`: token-level latency heatmaps (tables, PNGs and a self-contained HTML page)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from logmine.cli._options import FormatOption, QuietOption, WorkspaceArg
from logmine.cli._output import OutputFormat, emit_json, emit_table, progress_bar, stderr

TABLE_COLUMNS = ["token type", "mean latency (µs)", "p95 (µs)", "frequency", "heat (1-5)", "exact"]


def heatmap(
    out: WorkspaceArg,
    since: Annotated[str | None, typer.Option("--since", help="First UTC day of the window (YYYY-MM-DD, inclusive).")] = None,
    until: Annotated[str | None, typer.Option("--until", help="Last UTC day of the window (YYYY-MM-DD, inclusive).")] = None,
    model: Annotated[str | None, typer.Option("--model", help="Only this model in the aggregates and pages.")] = None,
    language: Annotated[str | None, typer.Option("--language", help="Only this language in the aggregates and pages.")] = None,
    no_html: Annotated[bool, typer.Option("--no-html", help="Do not write OUT/heatmap/index.html.")] = False,
    no_png: Annotated[bool, typer.Option("--no-png", help="Do not write the PNG heatmaps.")] = False,
    recompute: Annotated[bool, typer.Option("--recompute", help="Recompute every day in the window, even unchanged ones.")] = False,
    fmt: FormatOption = OutputFormat.table,
    quiet: QuietOption = False,
) -> None:
    """Which generated tokens are slow: latency per token type, position, model, language and hour.

    Writes the heatmap_* tables into the workspace OUT, PNGs and index.html under OUT/heatmap/.
    Only days whose requests changed since the last run are recomputed; the rest are merged.
    Groups of up to 100 tokens get exact quantiles, larger ones a sketch's (within 1 %); a token
    type is ranked as slow only with 30 tokens or more.

    Example: logmine heatmap ws/ --since 2025-01-01 --model starcoder2-3b
    """
    from logmine.stages.heatmap import HeatmapConfig, parse_day
    from logmine.stages.heatmap import heatmap as run_heatmap

    config = HeatmapConfig(
        since=parse_day(since, "--since"), until=parse_day(until, "--until"), model=model, language=language,
        html=not no_html, png=not no_png, recompute=recompute,
    )
    with progress_bar(quiet) as progress:
        result = run_heatmap(Path(out), config, progress=progress)
    if fmt is OutputFormat.json:
        emit_json(result.to_json())
        return
    later = int(result.by_type["count"].sum() or 0)
    emit_table(f"token latency by type ({later:,} tokens after each request's first, {result.measured:,} requests)",
               result.table_rows(), TABLE_COLUMNS)
    if result.ttft_rows():  # exactness as a note, not a column: the table stays readable in 80 columns
        emit_table("time to first token by model", result.ttft_rows(), [k for k in result.ttft_rows()[0] if k != "exact"])
    stderr.print(f"quantiles of groups of at most {config.exact_max} tokens are exact (interpolated), larger groups' come from "
                 "a sketch (±1 %); n is the frequency or requests column")
    unranked = [r["token_type"] for r in result.by_type.iter_rows(named=True) if not r["ranked"]]
    if unranked:
        stderr.print(f"not ranked (under {config.min_rank_tokens} tokens, listed last, no heat): " + ", ".join(unranked))
    if result.granularity:
        stderr.print("requests by timing granularity: " + ", ".join(f"{k} {v}" for k, v in sorted(result.granularity.items())))
    if result.skipped:
        stderr.print("skipped requests: " + ", ".join(f"{k} {v}" for k, v in sorted(result.skipped.items())))
    if result.issues:
        stderr.print("handled: " + ", ".join(f"{k} {v}" for k, v in sorted(result.issues.items())))
    if not quiet:
        for path in result.files:
            stderr.print(f"wrote {path}")


def register(app: typer.Typer) -> None:
    app.command("heatmap")(heatmap)
