"""The `logmine` command line. Commands are thin: they parse options and call the library.

Heavy libraries (torch, transformers, sentence-transformers) are imported inside commands,
so `logmine --help` stays fast.
"""

from __future__ import annotations

import logging
import os
import sys

import typer

from logmine.errors import LogmineError
from logmine.early import for_ingest

for_ingest(sys.argv[1:])  # before the commands' modules import Polars

app = typer.Typer(
    name="logmine",
    help="Mine IDE and code-assistant logs: action flows, token latency heatmaps, prompt templates and compressed template packs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        from logmine import __version__

        typer.echo(f"logmine {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Show the version and exit."),
) -> None:
    """Mine IDE and code-assistant logs: action flows, token latency heatmaps, prompt templates and compressed packs."""


def _register() -> None:
    from logmine.cli import ingest

    app.command("ingest")(ingest.ingest)
    # Command groups added by later stages register themselves here.
    for module in ("sample", "flows", "heatmap", "templates", "compress", "pack", "serving", "run", "report"):
        try:
            mod = __import__(f"logmine.cli.{module}", fromlist=["register"])
        except ModuleNotFoundError as exc:
            if exc.name != f"logmine.cli.{module}":
                raise
            continue
        mod.register(app)


_register()


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app, turning a LogmineError into `Error: ...` and exit code 1."""
    logging.basicConfig(level=os.environ.get("LOGMINE_LOG_LEVEL", "WARNING"), format="%(levelname)s %(name)s: %(message)s")
    try:
        app(args=argv, standalone_mode=False)
    except LogmineError as exc:
        if os.environ.get("LOGMINE_DEBUG"):
            raise
        typer.echo(f"Error: {exc}", err=True)
        sys.exit(1)
    except typer.Abort:
        typer.echo("Aborted.", err=True)
        sys.exit(130)
    except Exception as exc:  # click usage errors arrive here in non-standalone mode
        import click
        from typer._click import exceptions as vendored  # typer vendors click: its errors are not click's

        if isinstance(exc, (click.exceptions.Exit, typer.Exit)):
            sys.exit(exc.exit_code)
        if isinstance(exc, (click.ClickException, vendored.ClickException)):
            typer.echo(f"Error: {exc.format_message()}", err=True)
            sys.exit(1 if not isinstance(exc, (click.UsageError, vendored.UsageError)) else 2)
        raise
