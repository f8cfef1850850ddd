"""One writer per log format; :data:`WRITERS` maps the format name to its writer class."""

from __future__ import annotations

from logmine.sample.writers._base import Writer
from logmine.sample.writers.continue_dev import ContinueDevWriter
from logmine.sample.writers.continue_llm import ContinueLlmWriter
from logmine.sample.writers.jetbrains import JetBrainsWriter
from logmine.sample.writers.kave import KaveWriter
from logmine.sample.writers.native import NativeWriter
from logmine.sample.writers.otel import OtelWriter
from logmine.sample.writers.tabby import TabbyWriter

WRITERS: dict[str, type[Writer]] = {
    w.NAME: w
    for w in (NativeWriter, ContinueDevWriter, ContinueLlmWriter, TabbyWriter, JetBrainsWriter, KaveWriter, OtelWriter)
}
"""Format name (as ``--format`` takes it) -> writer, in the order files are generated."""

__all__ = ["WRITERS", "Writer"]
