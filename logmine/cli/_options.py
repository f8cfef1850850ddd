"""Options shared by several commands, as typer ``Annotated`` aliases."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from logmine.cli._output import OutputFormat
from logmine.errors import OptionError

WorkspaceArg = Annotated[Path, typer.Argument(help="The workspace directory (made by `logmine ingest -o`).", show_default=False)]
OutOption = Annotated[Path, typer.Option("--out", "-o", help="The workspace directory to write.", show_default=False)]
FormatOption = Annotated[OutputFormat, typer.Option("--format", "-f", help="Report as a table or as JSON on stdout.")]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")]
WorkersOption = Annotated[
    int | None,
    typer.Option("--workers", help="Processes making prompt skeletons while templates are mined (0: none; the same templates "
                 "whatever the number). Default: one per core, at most 4, from 20,000 requests up.", show_default=False),
]


def check_workers(workers: int | None) -> int | None:
    """``--workers`` as given, refused below 0."""
    if workers is not None and workers < 0:
        raise OptionError("--workers", workers, "0 or more")
    return workers
