"""Running the `logmine` CLI in-process in a test."""

from __future__ import annotations

import pytest

from logmine.cli import main


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``logmine ARGS`` in this process: the exit code, stdout and stderr."""
    try:
        main(list(args))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err
