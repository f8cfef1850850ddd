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

import fnmatch
import hashlib
import json
import logging
import os
import queue
import re
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import polars as pl
import pyarrow.parquet as pq

from logmine.errors import InputPathError, OptionError
from logmine.formats import FORMAT_NAMES, Batch, detect_format, get_reader
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
from logmine.workspace import PARQUET_OPTIONS, Transaction, Workspace

log = logging.getLogger(__name__)

ProgressFn = Callable[[str, int, int], None]
"""``progress(description, done, total)`` in input bytes; the default does nothing."""

T = TypeVar("T")


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
class FileReport:
    """What happened to one input file."""

    path: str
    source_format: str | None
    status: str  # ingested | skipped | rejected
    lines_read: int = 0
    lines_accepted: int = 0
    lines_rejected: int = 0
    events: int = 0
    requests: int = 0


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


def pseudonym(user: str, key: bytes) -> str:
    """The keyed hash that stands for ``user`` in every table."""
    return "u_" + hashlib.blake2b(user.encode(), key=key[:64], digest_size=8).hexdigest()


def pseudonymise(values: pl.Series, key: bytes, cache: dict[str, str] | None = None) -> pl.Series:
    """Replace user ids by a keyed hash: the same user maps to the same id, the key never leaves.

    ``cache`` (raw id -> hashed id) saves re-hashing users seen in earlier batches.
    """
    cache = {} if cache is None else cache
    for value in values.unique().to_list():
        if value is not None and value not in cache:
            cache[value] = pseudonym(value, key)
    if values.null_count() == len(values):
        return values
    return values.replace_strict(cache, default=None, return_dtype=pl.String())


_USER_FIELD = re.compile(r'"(?:user_id|userId|user|username|user_name|login|enduser\.id|user\.id)"\s*:\s*"((?:[^"\\]|\\.)*)("|$)')


def scrub_users(raw: str, key: bytes) -> str:
    """A rejected line's text with the values of user-id fields replaced by their pseudonyms.

    Rejected lines are kept verbatim for diagnosis, but a user id must not reach any table.
    """
    def replace(match: re.Match[str]) -> str:
        value = match.group(1)
        try:
            user = json.loads(f'"{value}"')
        except ValueError:
            user = value
        start, end = match.span(1)
        return match.group(0)[: start - match.start()] + pseudonym(user, key) + match.group(0)[end - match.start():]

    return _USER_FIELD.sub(replace, raw) if "user" in raw or "login" in raw else raw


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
    with ws.lock(wait=config.wait):
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
    except (OSError, EOFError, ValueError) as exc:
        meter.end(_size(path))
        return _reject_file(txn, name, None, f"{REJECT_UNREADABLE_FILE}: {_describe(exc)}")
    if fmt is None:
        meter.end(before.st_size)
        reason = "the file is empty" if before.st_size == 0 else "no reader recognises this file; use --input-format"
        return _reject_file(txn, name, None, f"{REJECT_UNRECOGNISED_FILE}: {reason}")
    with ThreadPoolExecutor(1, thread_name_prefix="logmine-sha256") as pool:
        hashed: Future[str] | None = None if sha else pool.submit(file_sha256, path)
        writer = _PartitionWriter(txn, source_key(name), name, fmt, key)
        try:
            for batch in _prefetch(get_reader(fmt).read(path)):
                writer.add(batch)
                meter.add(batch.bytes_read)
            sha = sha or hashed.result()  # type: ignore[union-attr]
            after = path.stat()
        except (OSError, EOFError, ValueError) as exc:  # a truncated .gz, an unreadable zip: the file, not a line
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


def _prefetch(items: Iterator[T], depth: int = 2) -> Iterator[T]:
    """Iterate ``items`` in a background thread, ``depth`` ahead, so reading overlaps writing.

    Parsing (Polars) and writing (Arrow) both release the GIL, so on two cores they run together.
    An exception in the reader is raised here; leaving early stops and closes the reader.
    """
    done = object()
    q: queue.Queue[tuple[object, BaseException | None]] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item: tuple[object, BaseException | None]) -> bool:
        while not stop.is_set():
            try:
                q.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put((item, None)):
                    return
            put((done, None))
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer
            put((done, exc))
        finally:
            close = getattr(items, "close", None)
            if close is not None:
                close()

    thread = threading.Thread(target=produce, name="logmine-ingest-read", daemon=True)
    thread.start()
    try:
        while True:
            item, exc = q.get()
            if item is done:
                if exc is not None:
                    raise exc
                return
            yield item  # type: ignore[misc]
    finally:
        stop.set()
        thread.join()


class _PartitionWriter:
    """Streams one source file's batches into its Parquet partitions, checking the accounting."""

    def __init__(self, txn: Transaction, key: str, name: str, fmt: str, user_key: bytes) -> None:
        self.txn, self.key, self.name, self.fmt, self.user_key = txn, key, name, fmt, user_key
        self.writers: dict[str, tuple[pq.ParquetWriter, Path]] = {}
        self.report = FileReport(name, fmt, "ingested")
        self.users: dict[str, str] = {}

    def add(self, batch: Batch) -> None:
        self.report.lines_read += batch.lines_read
        self.report.lines_accepted += batch.lines_accepted
        self.report.lines_rejected += len(batch.rejects)
        events = self._frame(batch.events, EVENTS_SCHEMA, "event_id")
        requests = self._frame(batch.requests, LLM_REQUESTS_SCHEMA, "request_id")
        self.report.events += events.height
        self.report.requests += requests.height
        self._write("events", events)
        self._write("llm_requests", requests)
        if batch.rejects:
            rows = [r.row(self.name, self.fmt) for r in batch.rejects]
            for row in rows:
                row["raw"] = scrub_users(str(row["raw"]), self.user_key)
            self._write("rejects", pl.DataFrame(rows, schema=REJECTS_SCHEMA))

    def _frame(self, rows: list[dict[str, Any]] | pl.DataFrame, schema: dict[str, pl.DataType], id_col: str) -> pl.DataFrame:
        if isinstance(rows, pl.DataFrame):
            df = conform(rows, schema)
        elif rows:
            df = pl.DataFrame(rows, schema=schema, strict=False)
        else:
            return pl.DataFrame(schema=schema)
        columns = [pl.lit(self.fmt).alias("source_format"), pl.lit(self.name).alias("source_file")]
        if df[id_col].null_count():
            columns.append(pl.coalesce(pl.col(id_col), self._positional_ids(df)).alias(id_col))
        if "weight" in df.columns:
            columns.append(pl.col("weight").fill_null(1))
        df = df.with_columns(columns)
        if df["user_id"].null_count() < df.height:
            df = df.with_columns(pseudonymise(df["user_id"], self.user_key, self.users).alias("user_id"))
        if len(self.users) > 1_000_000:  # bound the cache on pathological inputs
            self.users.clear()
        return df.select(list(schema))

    def _positional_ids(self, df: pl.DataFrame) -> pl.Expr:
        """``<path key>:<line>:<n>``, n counting the rows a line produced (0 when one row per line)."""
        line = df["source_line"]
        unique = line.is_sorted() and not (line.diff() == 0).any()
        index = pl.lit("0") if unique else pl.int_range(pl.len()).over("source_line").cast(pl.String)
        return pl.concat_str(pl.lit(self.key + ":"), pl.col("source_line").cast(pl.String), pl.lit(":"), index)

    def _write(self, table: str, df: pl.DataFrame) -> None:
        if df.height == 0:
            return
        arrow = df.to_arrow()
        if table not in self.writers:
            path = self.txn.new_file(table, self.key)
            self.writers[table] = (pq.ParquetWriter(path, arrow.schema, **_writer_options(arrow.schema.names)), path)
        writer, _ = self.writers[table]
        writer.write_table(arrow.cast(writer.schema) if arrow.schema != writer.schema else arrow)

    def abort(self) -> None:
        for writer, path in self.writers.values():
            writer.close()
            path.unlink(missing_ok=True)
        self.writers.clear()

    def finish(self) -> FileReport:
        r = self.report
        if r.lines_read != r.lines_accepted + r.lines_rejected:
            raise AssertionError(f"{self.name}: reader {self.fmt} broke the line accounting: {r}")
        for table in ("events", "llm_requests", "rejects"):
            if table in self.writers:
                writer, path = self.writers[table]
                writer.close()
                self.txn.put_file(table, self.key, path)
            else:
                self.txn.drop_partition(table, self.key)
        return r


_DICTIONARY_COLUMNS = frozenset({"session_id", "user_id", "ide", "action", "file_path", "language", "kind", "model",
                                 "source_format", "source_file", "reason"})
"""Columns with few distinct values; dictionary-encoding the others (prompts, ids) only costs time."""
_NO_STATISTICS = frozenset({"prompt", "prefix", "suffix", "completion", "attrs", "token_times_ms", "token_texts", "raw"})
"""Long text and list columns: min/max statistics on them are useless for pruning."""


def _writer_options(columns: Sequence[str]) -> dict[str, Any]:
    return {
        "compression": PARQUET_OPTIONS["compression"], "compression_level": PARQUET_OPTIONS["compression_level"],
        "use_dictionary": [c for c in columns if c in _DICTIONARY_COLUMNS],
        "write_statistics": [c for c in columns if c not in _NO_STATISTICS],
    }


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
