"""Options shared by several commands, as typer ``Annotated`` aliases."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from logmine.cli._output import OutputFormat

WorkspaceArg = Annotated[Path, typer.Argument(help="The workspace directory (made by `logmine ingest -o`).", show_default=False)]
OutOption = Annotated[Path, typer.Option("--out", "-o", help="The workspace directory to write.", show_default=False)]
FormatOption = Annotated[OutputFormat, typer.Option("--format", "-f", help="Report as a table or as JSON on stdout.")]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")]
