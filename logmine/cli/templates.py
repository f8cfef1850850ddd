"""`logmine templates` (prompt templates of a workspace) and `logmine mine` (templates of any log file)."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from logmine.cli._options import FormatOption, QuietOption, WorkspaceArg
from logmine.cli._output import OutputFormat, emit_json, emit_mapping, emit_table, progress_bar
from logmine.errors import InputPathError, OptionError

MaskRulesOption = Annotated[
    str | None,
    typer.Option("--mask-rules", help='Masking rules, added before the defaults: a JSON file, or the JSON inline: '
                 '\'[{"pattern": "req-[0-9]+", "mask_with": "REQ"}]\' (or {"rules": [...], "replace_defaults": true}).',
                 show_default=False),
]


def _threshold(name: str, value: float, low: float) -> float:
    if not low <= value <= 1:
        raise OptionError(name, value, f"a number from {low:g} to 1")
    return value


def templates(
    out: WorkspaceArg,
    edit_threshold: Annotated[float, typer.Option("--edit-threshold", help="Least normalised edit similarity to merge two templates.")] = 0.9,
    semantic_threshold: Annotated[float, typer.Option("--semantic-threshold", help="Least embedding cosine to merge two templates.")] = 0.9,
    embedding_model: Annotated[Path | None, typer.Option("--embedding-model", help="A local sentence-transformers model directory (default: the bundled all-MiniLM-L6-v2).", show_default=False)] = None,
    no_embeddings: Annotated[bool, typer.Option("--no-embeddings", help="Merge on edit similarity alone (no model is loaded).")] = False,
    mask_rules: MaskRulesOption = None,
    fmt: FormatOption = OutputFormat.table,
    quiet: QuietOption = False,
) -> None:
    """Mine the prompt templates of the workspace OUT and merge near-duplicates into families.

    Writes the tables templates, template_families and request_templates, adds template_id to
    the llm_requests view, and caches embeddings in embedding_cache.

    Example: logmine templates ws/ --edit-threshold 0.85 --no-embeddings
    """
    from logmine.stages.dedup import DedupConfig
    from logmine.stages.templates_prompts import PROMPT_CONFIG
    from logmine.stages.templates_workspace import TemplatesConfig, run

    dedup = DedupConfig(edit_threshold=_threshold("--edit-threshold", edit_threshold, 0.0),
                        semantic_threshold=_threshold("--semantic-threshold", semantic_threshold, -1.0))
    if embedding_model is not None and not embedding_model.is_dir():
        raise InputPathError(embedding_model, "is not a model directory (logmine never downloads models)")
    config = TemplatesConfig(mine=_mine_config(PROMPT_CONFIG, mask_rules), dedup=dedup, embeddings=not no_embeddings,
                             embedding_model=str(embedding_model) if embedding_model else None)
    with progress_bar(quiet) as progress:
        report = run(out, config, progress=progress)
    if fmt is OutputFormat.json:
        emit_json({**report.summary(), "top": report.top})
        return
    emit_mapping(f"templates -> {report.workspace}", report.summary())
    rows = [{"requests": t["n_requests"], "share": t["share"], "template": escape(_one_line(t["template"])), "id": t["template_id"]} for t in report.top]
    emit_table("top templates", rows, ["requests", "share", "template", "id"])


def mine(
    file: Annotated[Path, typer.Argument(help="A text log, one record a line ('-' for stdin).", show_default=False)],
    mask_rules: MaskRulesOption = None,
    typed_masks: Annotated[bool, typer.Option("--typed-masks", help="Write masked values as <NAME> (the rule's mask_with) instead of <*>.")] = False,
    limit: Annotated[int, typer.Option("--limit", help="Show at most this many templates (0: all).")] = 50,
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """Mine the templates of a free-text log (idea.log, syslog, ...) and print them by frequency.

    Example: logmine mine ~/.cache/JetBrains/IntelliJIdea2024.3/log/idea.log --limit 20
    """
    from logmine.stages.templates import MineConfig, mine_templates

    if limit < 0:
        raise OptionError("--limit", limit, "0 or more")
    config = replace(_mine_config(MineConfig(), mask_rules), typed_masks=typed_masks)
    if str(file) == "-":
        result = mine_templates((line.rstrip("\n") for line in sys.stdin), config)
    else:
        if not file.is_file():
            raise InputPathError(file)
        with open(file, encoding="utf-8", errors="replace") as fh:
            result = mine_templates((line.rstrip("\n") for line in fh), config)
    total = max(len(result.assignments), 1)
    rows = [{"lines": n, "share": round(n / total, 4), "template": result.templates[t], "id": t} for t, n in result.counts.items()]
    rows.sort(key=lambda r: (-r["lines"], r["id"]))
    shown = rows[:limit] if limit else rows
    if fmt is OutputFormat.json:
        emit_json({"lines": len(result.assignments), "templates": len(rows), "top": shown})
        return
    shown = [{**r, "template": escape(r["template"])} for r in shown]  # a template is data, not rich markup
    emit_table(f"{len(rows):,} templates in {len(result.assignments):,} lines", shown, ["lines", "share", "template", "id"])


def _mine_config(base, mask_rules: str | None):  # noqa: ANN001, ANN202 - MineConfig imported lazily
    if mask_rules is None:
        return base
    from logmine.masking import load_rules

    return replace(base, mask_rules=load_rules(mask_rules))


def _one_line(text: str, width: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def register(app: typer.Typer) -> None:
    app.command("templates")(templates)
    app.command("mine")(mine)
