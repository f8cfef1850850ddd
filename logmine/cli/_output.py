"""Output helpers shared by the commands: stdout carries data (a table or JSON), stderr the rest."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from enum import Enum
from typing import Any

from rich.console import Console
from rich.table import Table


class OutputFormat(str, Enum):
    table = "table"
    json = "json"


stdout = Console(soft_wrap=True)
stderr = Console(stderr=True)


def emit_json(obj: Any) -> None:
    """Write ``obj`` as JSON on stdout (one document, for jq)."""
    sys.stdout.write(json.dumps(obj, indent=2, default=str, ensure_ascii=False) + "\n")


def emit_table(title: str, rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None) -> None:
    """Write ``rows`` as a rich table on stdout."""
    columns = list(columns or (rows[0].keys() if rows else []))
    table = Table(title=title, title_justify="left")
    for col in columns:
        table.add_column(col, justify="right" if rows and isinstance(rows[0].get(col), (int, float)) else "left")
    for row in rows:
        table.add_row(*(_cell(row.get(c)) for c in columns))
    stdout.print(table)


def emit_mapping(title: str, data: Mapping[str, Any]) -> None:
    """A two-column key/value table."""
    emit_table(title, [{"": k, "value": v} for k, v in data.items() if not isinstance(v, (list, dict))], ["", "value"])


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:,.3f}" if abs(value) < 1000 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


@contextmanager
def progress_bar(quiet: bool) -> Iterator[Callable[[str, int, int], None]]:
    """A stage progress callback backed by a rich progress bar on stderr.

    Off with ``quiet`` or when stderr is not a terminal; the callback then does nothing.
    """
    if quiet or not stderr.is_terminal:
        yield lambda description, done, total: None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=stderr, transient=True) as bar:
        tasks: dict[str, Any] = {}

        def update(description: str, done: int, total: int) -> None:
            stage = description.split(" ", 1)[0]
            if stage not in tasks:
                tasks[stage] = bar.add_task(description, total=total)
            bar.update(tasks[stage], completed=done, total=total, description=description)

        yield update
