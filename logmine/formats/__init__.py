"""Format readers, one module per input format, and auto-detection.

Each reader module defines ``NAME``, ``sniff(path, head) -> bool`` and
``read(path) -> Iterator[Batch]``. Detection tries them in ``DETECTION_ORDER`` (most specific
first) on the first non-empty lines of a file.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

from logmine.formats._base import Batch, RecordError, count_lines, head_lines

__all__ = ["Batch", "RecordError", "FORMAT_NAMES", "count_lines", "get_reader", "detect_format"]

# name -> module (relative to this package). Most specific first.
_MODULES = {
    "otel": "otel",
    "kave": "kave",
    "jetbrains": "jetbrains",
    "tabby": "tabby",
    "continue-llm": "continue_llm",
    "continue": "continue_dev",
    "native": "native",
}
FORMAT_NAMES = tuple(_MODULES)


def get_reader(name: str) -> ModuleType:
    """The reader module for format ``name`` (one of :data:`FORMAT_NAMES`)."""
    return importlib.import_module(f"logmine.formats.{_MODULES[name]}")


def available_readers() -> dict[str, ModuleType]:
    """The readers whose modules are importable, in detection order."""
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
    head = head_lines(path)
    if not head:
        return None
    for name, reader in available_readers().items():
        if reader.sniff(path, head):
            return name
    return None
