"""What the ingest stage hands a file's reader and gets back: :class:`FileTask` and
:class:`FileResult`, both picklable, so a file is read here, in a worker process or in a Ray task
(see :mod:`logmine.stages.ingest.core`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from logmine.stages.ingest.writer import FileReport


@dataclass(frozen=True)
class FileTask:
    """One input file to read: everything :func:`read_file` needs, all picklable (no transaction)."""

    path: str
    fmt: str | None
    """The forced format, or None to detect it."""
    key: str
    """The file's partition key (:func:`source_key`)."""
    user_key: bytes
    files: dict[str, str]
    """Table -> the Parquet file to write it to (``Transaction.new_file``), inside the workspace."""
    known_size: int | None = None
    """Size and sha256 of the file's ``sources`` row, when it has one and ``--force`` is off."""
    known_sha: str | None = None
    threads: bool | None = None
    """:attr:`IngestConfig.threads`."""
    split: bool | None = None
    """:attr:`IngestConfig.split`."""
    rest_files: dict[str, str] = field(default_factory=dict)
    """Table -> the Parquet file of the part a worker process reads, when the file is split."""
    companions: tuple[tuple[str, int | None, str | None], ...] = ()
    """``(path, size, sha256)`` of each file the reader reads with this one (its ``sources`` row's
    figures, None when it had none): the file is skipped only when these are unchanged too."""
    known_format: str | None = None
    """The format of the file's ``sources`` row (``unknown`` when no reader recognised it)."""
    group_key: str | None = None
    """The partition key of a group of small files this file would lead (None: it is read alone);
    ``group_files``: table -> the group's Parquet file."""
    group_files: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class FileResult:
    """What :func:`read_file` did: the report, the files it wrote, the ``sources`` row or the reject."""

    report: FileReport
    size: int
    files: dict[str, str] = field(default_factory=dict)
    """Table -> written Parquet file; tables not named got no rows."""
    source: dict[str, Any] | None = None
    reject: str | None = None
    """A file-level reject's reason (the file could not be read or recognised); an unrecognised
    file has its ``source`` row too."""
    rest_files: dict[str, str] = field(default_factory=dict)
    """Table -> written Parquet file of the part a worker process read (partition key + REST_SUFFIX)."""
    group: str | None = None
    """The partition holding the file's rows when it was read in a group of small files (``files``
    then names the group's Parquet files on its first member only)."""
