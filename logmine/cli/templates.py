"""`logmine templates` (prompt templates of a workspace) and `logmine mine` (templates of any log file)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from logmine.cli._options import FormatOption, QuietOption, WorkersOption, WorkspaceArg, check_workers
from logmine.cli._output import OutputFormat, emit_json, emit_mapping, emit_table, progress_bar
from logmine.errors import InputPathError, OptionError

if TYPE_CHECKING:
    from logmine.stages.templates import MineResult

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
    workers: WorkersOption = None,
    fmt: FormatOption = OutputFormat.table,
    quiet: QuietOption = False,
) -> None:
    """Mine the prompt templates of the workspace OUT and merge near-duplicates into families.

    Writes the tables templates, template_families and request_templates, adds template_id to
    the llm_requests view, and caches embeddings in embedding_cache.

    Two templates merge when both thresholds hold and their model sentinels and chat turns come in
    the same order. Two used at the same time whose static text differs by a swapped word or phrase
    stay two templates, unless three or more words are swapped at that place (a value); one that
    replaced the other (a new version) merges.

    Example: logmine templates ws/ --edit-threshold 0.85 --no-embeddings
    """
    from logmine.stages.templates import DedupConfig
    from logmine.stages.templates import PROMPT_CONFIG
    from logmine.stages.templates import TemplatesConfig, run

    dedup = DedupConfig(edit_threshold=_threshold("--edit-threshold", edit_threshold, 0.0),
                        semantic_threshold=_threshold("--semantic-threshold", semantic_threshold, -1.0))
    if embedding_model is not None and not embedding_model.is_dir():
        raise InputPathError(embedding_model, "is not a model directory (logmine never downloads models)")
    config = TemplatesConfig(mine=_mine_config(PROMPT_CONFIG, mask_rules), dedup=dedup, embeddings=not no_embeddings,
                             embedding_model=str(embedding_model) if embedding_model else None, workers=check_workers(workers))
    with progress_bar(quiet) as progress:
        report = run(out, config, progress=progress)
    if fmt is OutputFormat.json:
        emit_json({**report.summary(), "top": report.top})
        return
    emit_mapping(f"templates -> {report.workspace}", report.summary())
    rows = [{"requests": t["n_requests"], "share": t["share"], "template": escape(_one_line(t["template"])), "id": t["template_id"]} for t in report.top]
    emit_table("top templates", rows, ["requests", "share", "template", "id"])


def mine(
    path: Annotated[Path, typer.Argument(help="A text log (.gz, .zst too), a directory of them, or '-' for stdin.", show_default=False)],
    mask_rules: MaskRulesOption = None,
    typed_masks: Annotated[bool, typer.Option("--typed-masks", help="Write masked values as <NAME> (the rule's mask_with) instead of <*>.")] = False,
    limit: Annotated[int, typer.Option("--limit", help="Show at most this many templates (0: all).")] = 50,
    fmt: FormatOption = OutputFormat.table,
) -> None:
    """Mine the templates of free-text logs (idea.log, log4j/logback, Python logging, syslog, ...).

    The header of each file (timestamp, thread, level, logger, ...) is found without being told
    and cut off: templates are mined from the messages. A log of JSON lines (pino, structlog,
    Docker's json-file, ...) gives its message and field keys instead. A line without header (a stack
    frame, the rest of a multi-line message) belongs to the entry above it; the entry carries the
    exception type of its stack trace. With --format json every entry comes out with its header
    fields as columns (rows).

    Example: logmine mine ~/.cache/JetBrains/IntelliJIdea2024.3/log/idea.log --limit 20
    """
    from logmine.stages.templates import MineConfig, TemplateMiner

    if limit < 0:
        raise OptionError("--limit", limit, "0 or more")
    config = replace(_mine_config(MineConfig(), mask_rules), typed_masks=typed_masks)
    sources = _text_sources(path)
    miner = TemplateMiner(config)
    rows: list[dict[str, object]] = []
    headers: list[dict[str, object]] = []
    lines = 0
    for name, text in sources:
        found = _FileEntries(text)
        header = found.header
        headers.append({"file": name, "header": header.name if header else None,
                        "fields": list(header.fields) if header else [], "coverage": header.coverage if header else 0.0})
        for entry in found.entries:
            miner.add(entry.message)
            if fmt is OutputFormat.json:
                rows.append({"file": name, "line": entry.line, "lines": entry.lines, **entry.fields,
                             "message": entry.message, "exception": entry.exception})
        lines += found.lines
    result = miner.result()
    _emit_mined(result, rows, headers, lines, limit, fmt)


class _FileEntries:
    """The header and entries of one text source, counting its physical lines."""

    def __init__(self, text: Iterable[str]) -> None:
        from logmine.formats.ide_log import header_and_entries

        self.lines = 0
        self.header, self.entries = header_and_entries(self._count(text))

    def _count(self, text: Iterable[str]) -> Iterator[str]:
        for line in text:
            self.lines += 1
            yield line


def _text_sources(path: Path) -> list[tuple[str, Iterable[str]]]:
    """``(name, lines)`` of each text log ``path`` names: stdin, a file, or the files of a directory
    (binary ones skipped with a warning); a binary file given by name is an error."""
    from logmine.formats.ide_log import looks_binary, text_lines
    from logmine.stages.ingest import collect_files

    if str(path) == "-":
        return [("-", (line.rstrip("\r\n") for line in sys.stdin))]
    if path.is_dir():
        files = [f for f in collect_files([path]) if not _skip_binary(f, looks_binary)]
    elif path.is_file():
        if looks_binary(path):
            raise InputPathError(path, "is a binary file, not a text log")
        files = [path]
    else:
        raise InputPathError(path)
    return [(str(f), text_lines(f)) for f in files]


def _skip_binary(path: Path, looks_binary: Callable[[Path], bool]) -> bool:
    try:
        binary = looks_binary(path)
    except (OSError, EOFError, ValueError) as exc:
        typer.echo(f"skipped {path}: cannot be read ({exc})", err=True)
        return True
    if binary:
        typer.echo(f"skipped {path}: a binary file, not a text log", err=True)
    return binary


def _emit_mined(result: MineResult, rows: list[dict[str, object]], headers: list[dict[str, object]], lines: int, limit: int,
                fmt: OutputFormat) -> None:
    entries = len(result.assignments)
    total = max(entries, 1)
    exceptions: dict[str, dict[str, int]] = {}
    for row, tid in zip(rows, result.assignments if rows else (), strict=True):
        row["template_id"] = tid
        if row["exception"]:
            counts = exceptions.setdefault(tid, {})
            counts[str(row["exception"])] = counts.get(str(row["exception"]), 0) + 1
    top = [{"entries": n, "share": round(n / total, 4), "template": result.templates[t], "id": t} for t, n in result.counts.items()]
    top.sort(key=lambda r: (-r["entries"], r["id"]))
    shown = top[:limit] if limit else top
    if fmt is OutputFormat.json:
        for r in shown:
            r["exceptions"] = exceptions.get(str(r["id"]), {})
        emit_json({"files": len(headers), "lines": lines, "entries": entries, "templates": len(top), "headers": headers,
                   "top": shown, "rows": rows})
        return
    names = sorted({str(h["header"]) for h in headers if h["header"]})
    header = "; ".join(names) if names else "none"
    shown = [{**r, "template": escape(str(r["template"]))} for r in shown]  # a template is data, not rich markup
    emit_table(f"{len(top):,} templates in {entries:,} entries ({lines:,} lines; header: {escape(header)})", shown,
               ["entries", "share", "template", "id"])


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
