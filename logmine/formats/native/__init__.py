"""logmine's own JSONL (format ``native``): one record a line, ``"type": "event"`` or
``"type": "llm_request"``; see :mod:`logmine.formats.native.records` for the records and the
per-line reader, :mod:`logmine.formats.native.fast` for the vectorised one.

The face of the format: the registry's ``NAME``, ``sniff`` and ``read``, and :func:`read_span`
for ingest's split of a big file.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

from logmine.formats._base import Batch
from logmine.formats.native import fast
from logmine.formats.native.records import BATCH_LINES, NAME, NativeEvent, NativeRequest, add_line, read_per_line, sniff

__all__ = ["BATCH_LINES", "GROUP_BYTES", "NAME", "NativeEvent", "NativeRequest", "SMALL_FILE_BYTES", "add_line", "groupable", "read",
           "read_files", "read_per_line", "read_span", "read_together", "sniff"]


SMALL_FILE_BYTES = 1 << 20
"""Below this size the per-line reader is as fast as the vectorised one (which has fixed costs) on
a file read alone; ingest reads runs of such files together instead (:func:`read_together`)."""
GROUP_BYTES = fast.CHUNK_BYTES
"""At most this many bytes of small files are read together by :func:`read_files`."""


def read(path: Path, workers: int | None = None) -> Iterator[Batch]:
    """Read ``path`` with the vectorised reader, or per line for small files.

    ``LOGMINE_NATIVE_FAST=0`` forces the per-line reader, ``=1`` the vectorised one; both yield
    the same rows. ``workers``: chunks the vectorised reader checks at once in threads (0: one at
    a time, in step with the caller; None: its default).
    """
    choice = os.environ.get("LOGMINE_NATIVE_FAST", "")
    if choice == "0" or (choice != "1" and path.stat().st_size < SMALL_FILE_BYTES):
        return read_per_line(path)
    return fast.read(path) if workers is None else fast.read(path, workers=workers)


def read_span(path: Path, start: int, stop: int, first_line: int) -> Iterator[Batch]:
    """The vectorised reader over bytes ``[start, stop)`` of ``path`` (line-aligned), numbering
    lines from ``first_line``, one chunk at a time: one part of a big file read in two processes."""
    return fast.read(path, workers=0, span=(start, stop, first_line))


def groupable(path: Path, size: int) -> bool:
    """Whether a file may be read with others by :func:`read_files`: a plain (not compressed) file
    under :data:`SMALL_FILE_BYTES`, unless ``LOGMINE_NATIVE_FAST=0`` asks for the per-line reader."""
    return size < SMALL_FILE_BYTES and path.suffix.lower() not in {".gz", ".zst", ".zstd"} and os.environ.get("LOGMINE_NATIVE_FAST") != "0"


def read_together(contents: list[bytes]) -> tuple[Batch, list[int]]:
    """:func:`read_files` before the cut: one batch for all the files, lines numbered through
    them, and the lines before each file (then the total)."""
    return fast.read_together(contents)


def read_files(contents: list[bytes]) -> list[Batch]:
    """Several small files' whole contents checked as one chunk by the vectorised reader: one batch
    per file, with the rows, rejects and line accounting it would give that file alone, lines
    numbered from 1 in each file. A Polars parse has fixed costs that a few hundred KB do not repay."""
    return fast.read_files(contents)
