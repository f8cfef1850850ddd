"""A big plain native file read in two processes: the first part here, the rest in the run's
worker process (:mod:`logmine.stages.ingest.worker`).

Each process reads its part one chunk at a time, in step with its writer, into its own Parquet
files: the rest becomes a second partition of the file (key :data:`REST_SUFFIX`), which sorts
right after the first, so the tables hold the same rows in the same order as one partition would.
Threads in one process share the GIL and cost CPU; two processes each read as cheaply as one
thread, so on a machine with two free cores the file takes about half the time. The worker counts
the lines before its part itself, to number its lines.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from logmine.formats import native
from logmine.stages.ingest.writer import FileReport, PartitionWriter

log = logging.getLogger(__name__)

REST_SUFFIX = "~2"
"""Appended to a file's partition key for the part the worker reads."""
FIRST_SHARE = 0.52
"""The share of a file read here when the worker has nothing else to do: the worker also counts the
lines before its part, and this process hashes the file; at 0.5 the worker finished ~0.5 s after
this process (5M bench file)."""
SPLIT_MAX_SHARE = 0.9
"""A file whose share here would be more than this is read here whole: the worker is busy enough."""
COUNT_BLOCK = 8 << 20


@dataclass(frozen=True)
class Part:
    """Bytes ``[start, stop)`` of a plain native file and the Parquet files to write them to."""

    path: str
    start: int
    stop: int | None
    key: str
    """The file's partition key (row ids are built from it, as for the whole file)."""
    user_key: bytes
    files: dict[str, str]


def split_point(path: Path, size: int, share: float = FIRST_SHARE) -> int | None:
    """The offset of the first line starting at or after ``share`` of the file; None when none does."""
    with open(path, "rb") as fh:
        fh.seek(int(size * share))
        while block := fh.read(1 << 16):
            nl = block.find(b"\n")
            if nl >= 0:
                offset = fh.tell() - len(block) + nl + 1
                return offset if offset < size else None
    return None


def splittable(path: Path, fmt: str) -> bool:
    """Whether a file can be read in two parts: a plain native file (not compressed, the vectorised reader on)."""
    return fmt == "native" and path.suffix.lower() not in {".gz", ".zst", ".zstd"} and os.environ.get("LOGMINE_NATIVE_FAST") != "0"


def share_here(size: int, owed: int, here: float | None = None, there: float | None = None) -> float:
    """The share of a file of ``size`` bytes to read here so that both processes finish together,
    when the worker still has ``owed`` bytes of earlier work to do and the two read ``here`` and
    ``there`` bytes a second (:data:`FIRST_SHARE` of the file and the debt's half until both are known)."""
    if not size:
        return 1.0
    if not here or not there:
        return FIRST_SHARE + owed / (2 * size)
    return here * (owed + size) / (size * (here + there))


def plan_split(path: Path, size: int, share: float, key: str, user_key: bytes, files: dict[str, str]) -> Part | None:
    """The part the worker should read when ``share`` of the file is read here; None when it is
    read whole (``share`` above :data:`SPLIT_MAX_SHARE`, no line starts after it, or ``files``
    names no Parquet files for the rest)."""
    if not files or share > SPLIT_MAX_SHARE:
        return None
    start = split_point(path, size, share)
    return None if start is None else Part(str(path), start, None, key, user_key, files)


def lines_before(path: Path, offset: int) -> int:
    """Newlines in the first ``offset`` bytes of ``path`` (read into one reused buffer: a fresh
    block each time costs a page fault per 4 KiB)."""
    count, left, buffer = 0, offset, bytearray(COUNT_BLOCK)
    data, newline = np.frombuffer(buffer, np.uint8), np.empty(COUNT_BLOCK, bool)  # numpy: 3x faster than bytes.count
    with open(path, "rb", buffering=0) as fh:
        while left > 0 and (n := fh.readinto(memoryview(buffer)[:min(COUNT_BLOCK, left)])):
            count += int(np.count_nonzero(np.equal(data[:n], 10, out=newline[:n])))
            left -= n
    return count


def write_part(part: Part, on_bytes: Callable[[int], None] | None = None) -> tuple[FileReport, dict[str, Path]]:
    """Read ``part`` one chunk at a time and write its Parquet files; the report and the files written."""
    path = Path(part.path)
    first = 1 + (lines_before(path, part.start) if part.start else 0)
    writer = PartitionWriter({t: Path(f) for t, f in part.files.items()}, part.key, part.path, "native", part.user_key)
    try:
        for batch in native.read_span(path, part.start, part.stop, first):
            writer.add(batch)
            if on_bytes is not None:
                on_bytes(batch.bytes_read)
    except BaseException:
        writer.abort()
        raise
    return writer.finish()


