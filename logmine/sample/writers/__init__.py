"""One writer per log format, in the module the format registry names
(:mod:`logmine.formats.registry`); :data:`WRITERS` maps the format name to its writer class."""

from __future__ import annotations

import importlib

from logmine.formats.registry import FORMATS
from logmine.sample.writers._base import Writer


def _writer(module: str, name: str) -> type[Writer]:
    mod = importlib.import_module(f"logmine.sample.writers.{module}")
    found = [c for c in vars(mod).values() if isinstance(c, type) and issubclass(c, Writer) and c is not Writer and c.NAME == name]
    if len(found) != 1:
        raise ImportError(f"logmine.sample.writers.{module} must define one Writer with NAME = {name!r}")
    return found[0]


WRITERS: dict[str, type[Writer]] = {f.name: _writer(f.module, f.name) for f in FORMATS if f.sample}
"""Format name (as ``--format`` takes it) -> writer, in the order files are generated."""

__all__ = ["WRITERS", "Writer"]
