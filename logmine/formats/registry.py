"""The one registry of input formats: adding a format means its reader module here, its sample
writer in :mod:`logmine.sample.writers` (same module name), its tests and one line below.

Pure data, cheap to import (the CLI's help texts list the names).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Format:
    """An input format."""

    name: str
    """As ``--input-format`` and ``logmine sample --format`` take it."""
    module: str
    """The reader module under :mod:`logmine.formats` and the writer module under
    :mod:`logmine.sample.writers`."""
    detect_rank: int
    """Detection tries readers by rank, most specific first."""
    sample: bool = True
    """Whether ``logmine sample`` writes it."""


FORMATS: tuple[Format, ...] = (
    Format("native", "native", detect_rank=7),
    Format("continue", "continue_dev", detect_rank=6),
    Format("continue-llm", "continue_llm", detect_rank=5),
    Format("continue-prompt-log", "continue_prompt_log", detect_rank=0, sample=False),  # its text first: a JSON sniff never claims a prompt that quotes JSON
    Format("tabby", "tabby", detect_rank=4),
    Format("jetbrains", "jetbrains", detect_rank=3),
    Format("kave", "kave", detect_rank=2),
    Format("otel", "otel", detect_rank=1),
    Format("ide-log", "ide_log", detect_rank=8, sample=False),  # last: any text log with a timestamp-and-level header
)
"""Every format, in the order ``logmine sample`` writes them."""

FORMAT_NAMES: tuple[str, ...] = tuple(f.name for f in sorted(FORMATS, key=lambda f: f.detect_rank))
"""The format names in detection order."""

SAMPLE_FORMATS: tuple[str, ...] = tuple(f.name for f in FORMATS if f.sample)
"""The formats ``logmine sample`` writes, in its order."""

MODULES: dict[str, str] = {f.name: f.module for f in FORMATS}
"""Format name -> module name (reader and sample writer)."""

__all__ = ["FORMATS", "FORMAT_NAMES", "MODULES", "SAMPLE_FORMATS", "Format"]
