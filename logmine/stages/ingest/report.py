"""What an ingest run reports: :class:`IngestReport` (totals, files, rejects by reason) and the
progress :class:`Meter` (see :mod:`logmine.stages.ingest.core`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from logmine.stages.ingest.writer import FileReport
from logmine.workspace import Workspace

ProgressFn = Callable[[str, int, int], None]
"""``progress(description, done, total)`` in input bytes; the default does nothing."""


@dataclass
class IngestReport:
    """The outcome of :func:`ingest`: totals, per-file results and rejects by reason."""

    workspace: str
    files: list[FileReport] = field(default_factory=list)
    rejects_by_reason: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)
    """Things a person should look at, such as a forced format that read none of a file's lines."""

    def total(self, key: str) -> int:
        return sum(getattr(f, key) for f in self.files)

    @property
    def lines_read(self) -> int:
        return self.total("lines_read")

    @property
    def lines_accepted(self) -> int:
        return self.total("lines_accepted")

    @property
    def lines_rejected(self) -> int:
        return self.total("lines_rejected")

    def summary(self) -> dict[str, Any]:
        status = Counter(f.status for f in self.files)
        return {
            "workspace": self.workspace,
            "files_ingested": status["ingested"],
            "files_skipped": status["skipped"],
            "files_rejected": status["rejected"],
            "lines_read": self.lines_read,
            "lines_accepted": self.lines_accepted,
            "lines_rejected": self.lines_rejected,
            "events": self.total("events"),
            "llm_requests": self.total("requests"),
            "ide_log": self.total("ide_log"),
            "rejects_by_reason": dict(sorted(self.rejects_by_reason.items())),
            "warnings": list(self.warnings),
            "seconds": round(self.seconds, 3),
        }

    def to_json(self) -> dict[str, Any]:
        return {**self.summary(), "files": [asdict(f) for f in self.files]}


class Meter:
    """Reports progress in input bytes over all files; readers that do not tell count at file end."""

    def __init__(self, progress: ProgressFn, files: Sequence[Path]) -> None:
        self.progress = progress
        self.total = sum(file_size(p) for p in files)
        self.done = 0
        self.file_done = 0
        self.name = ""

    def start(self, path: Path) -> None:
        self.name, self.file_done = path.name, 0
        self.progress(f"ingest {self.name}", self.done, self.total)

    def add(self, nbytes: int) -> None:
        if nbytes:
            self.file_done += nbytes
            self.progress(f"ingest {self.name}", self.done + self.file_done, self.total)

    def end(self, size: int) -> None:
        self.done += size
        self.progress(f"ingest {self.name}", self.done, self.total)

    def finish(self) -> None:
        self.progress("ingest", self.total, self.total)


def file_size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def rejects_by_reason(ws: Workspace, names: Iterable[str]) -> dict[str, int]:
    names = list(names)
    if not names or not ws.has_table("rejects"):
        return {}
    # file by file: partitions written before a column was added lack it; "code: detail" was the old reason
    scans = [pl.scan_parquet(f).select("source_file", "reason") for f in ws.files("rejects")]
    if not scans:
        return {}
    df = (
        pl.concat(scans)
        .filter(pl.col("source_file").is_in(names))
        .group_by(pl.col("reason").str.split(":").list.first().alias("reason"))
        .len()
        .collect()
    )
    return {row["reason"]: int(row["len"]) for row in df.to_dicts()}
