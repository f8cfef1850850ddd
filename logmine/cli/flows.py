"""`logmine flows`: how actions follow each other (DFG, n-grams, patterns, co-occurrence, outcomes)."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Annotated, Any

import typer

from logmine.cli._options import FormatOption, QuietOption, WorkspaceArg
from logmine.cli._output import OutputFormat, emit_json, emit_mapping, emit_table, progress_bar, stderr
from logmine.errors import OptionError

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str, option: str) -> float | None:
    """``30m``, ``90s``, ``1.5h``, ``2d`` or plain seconds; ``0``/``none`` means never split."""
    value = text.strip().lower()
    if value in {"0", "none", "off"}:
        return None
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([smhd]?)", value)
    if not match:
        raise OptionError(option, text, "a duration such as 30m, 90s, 2h, 1d, or 0 to never split")
    return float(match.group(1)) * _UNITS[match.group(2) or "s"]


def parse_time(text: str | None, option: str, end_of_day: bool = False) -> datetime | None:
    """An ISO 8601 date or time (UTC unless it says otherwise); a bare date for --until includes that day."""
    if text is None:
        return None
    try:
        value = datetime.fromisoformat(text)
    except ValueError as exc:
        raise OptionError(option, text, "an ISO 8601 date or time, e.g. 2025-01-31 or 2025-01-31T12:00") from exc
    value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    if end_of_day and re.fullmatch(r"\d{4}-\d{2}-\d{2}", text.strip()):
        value += timedelta(days=1)
    return value


def _text(value: Any, most: int = 12) -> Any:
    """Lists of actions as arrows, long ones cut: "a → b → … (+40 more)"."""
    if isinstance(value, list):
        shown = " → ".join(str(v) for v in value[:most])
        return shown + (f" → … (+{len(value) - most} more)" if len(value) > most else "")
    return value


def _show(title: str, rows: list[dict[str, Any]]) -> None:
    if rows:
        emit_table(title, [{k: _text(v) for k, v in row.items()} for row in rows])


def flows(
    workspace: WorkspaceArg,
    idle_gap: Annotated[str, typer.Option("--idle-gap", help="Split sessions at idle gaps longer than this (30m, 90s, 2h; 0: never).")] = "30m",
    since: Annotated[str | None, typer.Option("--since", help="Only events at or after this UTC date/time (ISO 8601).")] = None,
    until: Annotated[str | None, typer.Option("--until", help="Only events before this UTC time; a bare date includes that day.")] = None,
    user: Annotated[list[str] | None, typer.Option("--user", help="Only this user (raw or pseudonymised id); repeatable.")] = None,
    ide: Annotated[list[str] | None, typer.Option("--ide", help="Only this IDE; repeatable.")] = None,
    model: Annotated[list[str] | None, typer.Option("--model", help="Only sessions that used this model; repeatable.")] = None,
    window_events: Annotated[int, typer.Option("--window-events", help="Co-occurrence window in events from the anchor (0: no event limit).")] = 5,
    window_seconds: Annotated[float | None, typer.Option("--window-seconds", help="Co-occurrence window in seconds after the anchor.")] = None,
    min_support: Annotated[float, typer.Option("--min-support", help="Sequential patterns: least share of sessions (0-1].")] = 0.01,
    max_length: Annotated[int, typer.Option("--max-length", help="Sequential patterns: most actions in a pattern.")] = 4,
    min_sessions: Annotated[int, typer.Option("--min-sessions", help="Sequential patterns: least number of sessions, whatever --min-support says.")] = 2,
    max_gap: Annotated[int | None, typer.Option("--max-gap", help="Sequential patterns: consecutive actions at most this many events apart.")] = None,
    no_patterns: Annotated[bool, typer.Option("--no-patterns", help="Skip sequential pattern mining.")] = False,
    graph_edges: Annotated[int, typer.Option("--graph-edges", help="Most edges drawn in OUT/flows/dfg.{dot,mmd,svg}.")] = 60,
    top: Annotated[int, typer.Option("--top", help="Rows shown per table.")] = 10,
    fmt: FormatOption = OutputFormat.table,
    quiet: QuietOption = False,
) -> None:
    """Mine action flows: directly-follows graph, n-grams, co-occurrence, sequential patterns, outcomes, variants.

    Writes the flows_* tables into the workspace, and OUT/flows/dfg.dot, dfg.mmd (and dfg.svg
    when Graphviz is installed) with summary.json.

    Example: logmine flows ws/ --idle-gap 30m --since 2025-01-01 --min-support 0.02 --format json
    """
    from logmine.stages.flows import FlowsConfig
    from logmine.stages.flows import flows as run_flows

    config = FlowsConfig(
        idle_gap_s=parse_duration(idle_gap, "--idle-gap"),
        since=parse_time(since, "--since"),
        until=parse_time(until, "--until", end_of_day=True),
        users=tuple(user or ()), ides=tuple(ide or ()), models=tuple(model or ()),
        window_events=window_events or None, window_seconds=window_seconds,
        min_support=min_support, max_pattern_length=max_length, min_pattern_sessions=min_sessions, max_gap=max_gap,
        patterns=not no_patterns,
        graph_edges=graph_edges,
    )
    if top < 0:
        raise OptionError("--top", top, "not negative")
    with progress_bar(quiet) as progress:
        result = run_flows(Path(workspace), config, progress=progress)
    heads = result.top(top)
    if fmt is OutputFormat.json:
        emit_json({"summary": result.summary, "files": result.files, "top": heads})
        return
    emit_mapping(f"flows -> {result.summary.get('workspace', workspace)}", {k: v for k, v in result.summary.items() if k != "config"})
    _show("directly-follows steps", heads["dfg"])
    _show("n-grams", heads["ngrams"])
    _show("sequential patterns", heads["patterns"])
    _show("co-occurring actions (highest lift, >= 5 windows)", heads["cooccurrence"])
    _show("before a completion: raises acceptance (>= 5 outcomes)", heads["outcomes_raise"])
    _show("before a completion: lowers acceptance (>= 5 outcomes)", heads["outcomes_lower"])
    _show("variants", heads["variants"])
    if not quiet:
        for path in result.files.values():
            stderr.print(f"wrote {path}")


def register(app: typer.Typer) -> None:
    app.command("flows")(flows)
