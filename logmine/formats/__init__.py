"""Format readers, one module per input format, and auto-detection.

Each reader module defines ``NAME``, ``sniff(path, head) -> bool`` and
``read(path) -> Iterator[Batch]``; :mod:`logmine.formats.registry` lists them. Detection tries
them in :data:`FORMAT_NAMES` order (most specific first) on the first non-empty lines of a file.
"""

from __future__ import annotations

import functools
import importlib
from pathlib import Path
from types import ModuleType

from typing import TYPE_CHECKING, Any

from logmine.formats._otel_logs import companion
from logmine.formats.registry import FORMAT_NAMES, MODULES

if TYPE_CHECKING:
    from logmine.formats._base import Batch, RecordError, count_lines

__all__ = [
    "FORMAT_NAMES", "Batch", "RecordError", "available_readers", "companion", "companion_files", "count_lines", "detect_format", "get_reader",
]


def get_reader(name: str) -> ModuleType:
    """The reader module for format ``name`` (one of :data:`FORMAT_NAMES`)."""
    return importlib.import_module(f"logmine.formats.{MODULES[name]}")


@functools.cache
def available_readers() -> dict[str, ModuleType]:
    """The readers whose modules are importable, in detection order (looked up once: detection
    asks for every file of a run)."""
    out = {}
    for name in FORMAT_NAMES:
        try:
            out[name] = get_reader(name)
        except ModuleNotFoundError:
            continue
    return out


def detect_format(path: Path) -> str | None:
    """The format of ``path`` from its first lines, or None when no reader claims it."""
    if path.suffix.lower() == ".zip":
        return "kave"
    from logmine.formats._base import head_lines  # the readers' base pulls in Polars: not at `logmine --help`

    head = head_lines(path)
    if not head:
        return None
    for name, reader in available_readers().items():
        if reader.sniff(path, head):
            return name
    return None


def __getattr__(name: str) -> Any:
    """``Batch``, ``RecordError`` and ``count_lines`` of the readers' base, imported on first use (with Polars)."""
    if name in ("Batch", "RecordError", "count_lines"):
        from logmine.formats import _base

        return getattr(_base, name)
    raise AttributeError(f"module 'logmine.formats' has no attribute {name!r}")


def companion_files(path: Path, fmt: str | None = None) -> list[Path]:
    """The existing files a reader reads together with ``path``: an OTel spans file's log records
    file (``x.jsonl`` / ``x.logs.jsonl``) and back. ``fmt``: the forced format, else detected."""
    other = companion(path)
    if other is None or not other.is_file():
        return []
    return [other] if (fmt or detect_format(path)) == "otel" else []
