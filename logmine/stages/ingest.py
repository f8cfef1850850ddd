"""Ingest: log files of any supported format -> the workspace's ``events``, ``llm_requests``,
``rejects`` and ``sources`` tables.

* Every input line is accounted for: per file ``lines_read = lines_accepted + lines_rejected``,
  and each rejected line is one ``rejects`` row (file, 1-based line, format, reason).
* A file that cannot be read or whose format no reader recognises is one ``rejects`` row with
  ``source_line = 0`` (meaning "the whole file") and a logged warning; the run goes on. Such a file
  has no ``sources`` row, so it is tried again on the next run.
* Incremental: each source file is one partition of every table, keyed by a hash of its path. A
  file whose size and sha256 match its ``sources`` row is skipped; a changed file is read again and
  its partitions replace the old ones. Running twice on the same input leaves every table equal.
* Atomic: the whole run is one workspace transaction; a run killed at any moment leaves the
  previous workspace as it was (see :mod:`logmine.workspace`).
* Rows without an id of their own get ``<path key>:<line>:<index in line>``, stable across runs.
* User ids are replaced by a keyed hash (:func:`pseudonymise`), in rejected lines' text too
  (:func:`scrub_users`); the key stays in the workspace config (or ``LOGMINE_USER_KEY``), never
  in a table.
"""

from __future__ import annotations

import contextlib
import fnmatch
import gc
import hashlib
import logging
import os
import time
import zipfile
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from logmine.errors import InputPathError, OptionError
from logmine.formats import FORMAT_NAMES, detect_format, get_reader
from logmine.records import (
    EVENTS_SCHEMA,
    LLM_REQUESTS_SCHEMA,
    REJECT_UNREADABLE_FILE,
    REJECT_UNRECOGNISED_FILE,
    REJECTS_SCHEMA,
    SOURCES_SCHEMA,
    Reject,
    conform,
)
from logmine.stages._ingest_writer import (  # pseudonym, pseudonymise, scrub_users: public, used by other stages
    FileReport,
    PartitionWriter,
    prefetch,
    pseudonym,
    pseudonymise,
    scrub_users,
)
from logmine.workspace import Transaction, Workspace

log = logging.getLogger(__name__)

ProgressFn = Callable[[str, int, int], None]
"""``progress(description, done, total)`` in input bytes; the default does nothing."""

def _no_progress(description: str, done: int, total: int) -> None:
    return None


@dataclass(frozen=True)
class IngestConfig:
    """Options of the ingest stage."""

    input_format: str | None = None
    """Force one format for every file instead of detecting it per file."""
    force: bool = False
    """Re-ingest files even when their size and hash are unchanged."""
    wait: bool = False
    """Wait for another run's lock on the workspace instead of failing."""


@dataclass
class IngestReport:
    """The outcome of :func:`ingest`: totals, per-file results and rejects by reason."""

    workspace: str
    files: list[FileReport] = field(default_factory=list)
    rejects_by_reason: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

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
            "rejects_by_reason": dict(sorted(self.rejects_by_reason.items())),
            "seconds": round(self.seconds, 3),
        }

    def to_json(self) -> dict[str, Any]:
        return {**self.summary(), "files": [asdict(f) for f in self.files]}


def collect_files(paths: Sequence[Path | str], exclude: Path | None = None, unreadable: list[Path] | None = None) -> list[Path]:
    """Every file under ``paths`` (directories walked recursively, hidden entries skipped), sorted.

    Files under ``exclude`` (the workspace itself) are left out; directories that cannot be
    listed are appended to ``unreadable`` when it is given.
    """
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise InputPathError(path)
        if path.is_file():
            out.append(path)
            continue
        if not path.is_dir():
            raise InputPathError(path, "is neither a file nor a directory")

        def failed(exc: OSError) -> None:
            log.warning("%s: cannot list directory (%s)", exc.filename, exc.strerror)
            if unreadable is not None:
                unreadable.append(Path(exc.filename))

        ignore = _ignore_patterns(path)
        for root, dirs, files in os.walk(path, onerror=failed):
            rel = Path(root).relative_to(path)
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not _ignored(rel / d, ignore))
            out.extend(Path(root) / f for f in sorted(files) if not f.startswith(".") and not _ignored(rel / f, ignore))
    if exclude is not None:
        inside = exclude.resolve()
        out = [p for p in out if not p.resolve().is_relative_to(inside)]
    return sorted(dict.fromkeys(out))


IGNORE_FILE = ".logmineignore"
"""A file in an input directory listing glob patterns (one a line, # comments) of files to skip."""


def _ignore_patterns(directory: Path) -> list[str]:
    path = directory / IGNORE_FILE
    if not path.is_file():
        return []
    lines = (line.strip() for line in path.read_text(encoding="utf-8", errors="replace").splitlines())
    return [line.rstrip("/") for line in lines if line and not line.startswith("#")]


def _ignored(rel: Path, patterns: list[str]) -> bool:
    """True when ``rel`` (relative to the input directory) or its name matches an ignore pattern."""
    return any(rel.match(p) or fnmatch.fnmatch(rel.as_posix(), p) for p in patterns)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def source_key(path: str) -> str:
    """The partition key of a source file: a short hash of its path."""
    return hashlib.blake2b(path.encode(), digest_size=8).hexdigest()


def ingest(
    paths: Sequence[Path | str] | Path | str,
    out: Path | str,
    config: IngestConfig | None = None,
    progress: ProgressFn = _no_progress,
) -> IngestReport:
    """Ingest log files into the workspace at ``out`` (created if needed) and return the report."""
    config = config or IngestConfig()
    if config.input_format is not None and config.input_format not in FORMAT_NAMES:
        raise OptionError("--input-format", config.input_format, "one of " + ", ".join(FORMAT_NAMES))
    if isinstance(paths, (str, Path)):
        paths = [paths]
    unreadable: list[Path] = []
    files = collect_files(paths, exclude=Path(out), unreadable=unreadable)
    started = time.perf_counter()
    ws = Workspace.create(out)
    report = IngestReport(workspace=str(ws.root))
    with ws.lock(wait=config.wait), _no_cyclic_gc():
        ws = ws.reload()  # another run may have committed while we waited
        known = _known_sources(ws)
        key = ws.secret_key()
        txn = ws.transaction()
        for table, schema in _TABLES.items():
            txn.ensure_table(table, schema)
        sources = dict(known)
        meter = _Meter(progress, files)
        for path in unreadable:
            report.files.append(_reject_file(txn, str(path), None, f"{REJECT_UNREADABLE_FILE}: cannot list directory")[0])
            sources.pop(str(path), None)
        for path in files:
            result, row = _ingest_file(txn, path, known.get(str(path)), config, key, meter)
            report.files.append(result)
            if row is not None:
                sources[str(path)] = row
            elif result.status == "rejected":
                sources.pop(str(path), None)
        meter.finish()
        rows = [sources[name] for name in sorted(sources)]
        txn.replace_table("sources", conform(pl.DataFrame(rows, schema=SOURCES_SCHEMA), SOURCES_SCHEMA))
        txn.commit()
    report.rejects_by_reason = _rejects_by_reason(ws, [f.path for f in report.files if f.status != "skipped"])
    report.seconds = time.perf_counter() - started
    return report


@contextlib.contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """Pause Python's cycle collector: parsing makes millions of short-lived dicts and lists, none
    in cycles, and the collector's passes over them cost several percent of the run."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


_TABLES = {"events": EVENTS_SCHEMA, "llm_requests": LLM_REQUESTS_SCHEMA, "rejects": REJECTS_SCHEMA, "sources": SOURCES_SCHEMA}


def _known_sources(ws: Workspace) -> dict[str, dict[str, Any]]:
    if not ws.has_table("sources"):
        return {}
    return {row["path"]: row for row in ws.read("sources").to_dicts()}


class _Meter:
    """Reports progress in input bytes over all files; readers that do not tell count at file end."""

    def __init__(self, progress: ProgressFn, files: Sequence[Path]) -> None:
        self.progress = progress
        self.total = sum(_size(p) for p in files)
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


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _ingest_file(
    txn: Transaction, path: Path, known: dict[str, Any] | None, config: IngestConfig, key: bytes, meter: _Meter
) -> tuple[FileReport, dict[str, Any] | None]:
    name = str(path)
    meter.start(path)
    try:
        before = path.stat()
        sha: str | None = None
        if known and not config.force and known["size_bytes"] == before.st_size:
            sha = file_sha256(path)
            if known["sha256"] == sha:
                meter.end(before.st_size)
                return FileReport(name, known["source_format"], "skipped"), None
        fmt = config.input_format or detect_format(path)
    except _FILE_ERRORS as exc:
        meter.end(_size(path))
        return _reject_file(txn, name, None, f"{REJECT_UNREADABLE_FILE}: {_describe(exc)}")
    if fmt is None:
        meter.end(before.st_size)
        reason = "the file is empty" if before.st_size == 0 else "no reader recognises this file; use --input-format"
        return _reject_file(txn, name, None, f"{REJECT_UNRECOGNISED_FILE}: {reason}")
    with ThreadPoolExecutor(1, thread_name_prefix="logmine-sha256") as pool:
        hashed: Future[str] | None = None if sha else pool.submit(file_sha256, path)
        writer = PartitionWriter(txn, source_key(name), name, fmt, key)
        try:
            for batch in prefetch(get_reader(fmt).read(path)):
                writer.add(batch)
                meter.add(batch.bytes_read)
            sha = sha or hashed.result()  # type: ignore[union-attr]
            after = path.stat()
        except _FILE_ERRORS as exc:  # a truncated .gz, a corrupt zip or .zst: the file, not a line
            writer.abort()
            meter.end(before.st_size)
            return _reject_file(txn, name, fmt, f"{REJECT_UNREADABLE_FILE}: {_describe(exc)}")
    if (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns):
        log.warning("%s changed while it was read; it will be read again on the next run", name)
        sha = "changed-while-read"
    report = writer.finish()
    meter.end(before.st_size)
    row = {
        "path": name, "sha256": sha, "size_bytes": before.st_size, "source_format": fmt, "lines_read": report.lines_read,
        "lines_accepted": report.lines_accepted, "lines_rejected": report.lines_rejected, "ingested_at": datetime.now(UTC),
    }
    return report, row


def _file_errors() -> tuple[type[BaseException], ...]:
    errors: list[type[BaseException]] = [OSError, EOFError, ValueError, zlib.error, zipfile.BadZipFile]
    try:
        import zstandard

        errors.append(zstandard.ZstdError)
    except ImportError:  # pragma: no cover - zstandard is a dependency
        pass
    return tuple(errors)


_FILE_ERRORS = _file_errors()
"""What reading a file raises when the file itself is bad (not one of its lines)."""


def _describe(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return str(exc) or type(exc).__name__


def _reject_file(txn: Transaction, name: str, fmt: str | None, reason: str) -> tuple[FileReport, None]:
    """A file-level reject: one rejects row with source_line 0; the file's old rows are dropped."""
    log.warning("%s: %s", name, reason)
    key = source_key(name)
    for table in ("events", "llm_requests"):
        txn.drop_partition(table, key)
    rejects = pl.DataFrame([Reject(0, reason, "").row(name, fmt or "unknown")], schema=REJECTS_SCHEMA)
    txn.put_partition("rejects", key, rejects)
    return FileReport(name, fmt, "rejected"), None


def _rejects_by_reason(ws: Workspace, names: Iterable[str]) -> dict[str, int]:
    names = list(names)
    if not names or not ws.has_table("rejects"):
        return {}
    df = (
        ws.scan("rejects")
        .filter(pl.col("source_file").is_in(names))
        .group_by(pl.col("reason").str.split(":").list.first().alias("reason"))
        .len()
        .collect()
    )
    return {row["reason"]: int(row["len"]) for row in df.to_dicts()}
