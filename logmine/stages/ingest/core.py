"""Ingest: log files of any supported format -> the workspace's ``events``, ``llm_requests``,
``ide_log``, ``rejects`` and ``sources`` tables.

* Every input line is accounted for: per file ``lines_read = lines_accepted + lines_rejected``,
  and each rejected line is one ``rejects`` row (file, 1-based line, format, reason code, detail,
  and the line itself: :class:`logmine.records.Reject`).
* A file that cannot be read or whose format no reader recognises is one ``rejects`` row with
  ``source_line = 0`` (meaning "the whole file") and a logged warning; the run goes on. A file no
  reader recognises also gets a ``sources`` row (``source_format`` ``unknown``) with its lines
  counted as read and rejected, so the accounting holds for every file the run saw; a file that
  cannot be read has no ``sources`` row and is tried again on the next run.
* Incremental: each source file is one partition of every table, keyed by a hash of its path (a
  big file read in two processes is two: :mod:`logmine.stages.ingest.split`). A
  file whose size and sha256 match its ``sources`` row, and whose format (forced or detected) is the
  one it was read as, is skipped; a changed file is read again and
  its partitions replace the old ones. Running twice on the same input leaves every table equal.
* Atomic: the whole run is one workspace transaction; a run killed at any moment leaves the
  previous workspace as it was (see :mod:`logmine.workspace`).
* Companions: a file whose reader reads another with it (an OTel spans file ``x.jsonl`` and its
  GenAI log records ``x.logs.jsonl``, joined by span id: :mod:`logmine.formats.otel`) is ingested
  with it, even when only one was named, and read again when the other changed, appeared or went;
  each still is its own partition, and each request a row of exactly one of them.
* Rows without an id of their own get ``<path key>:<line>:<index in line>``, stable across runs.
* User ids are replaced by a keyed hash (:func:`logmine.pseudonyms.pseudonymise`), in rejected lines' text too
  (:func:`logmine.pseudonyms.scrub_users`); the key stays in the workspace config (or ``LOGMINE_USER_KEY``), never
  in a table.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import hashlib
import logging
import os
import time
import zipfile
import zlib
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from logmine.engine import Engine
from logmine.errors import InputPathError, OptionError
from logmine.formats import FORMAT_NAMES, Batch, count_lines, detect_format, get_reader, native
from logmine.hashing import file_sha256
from logmine.records import (
    EVENTS_SCHEMA,
    IDE_LOG_SCHEMA,
    LLM_REQUESTS_SCHEMA,
    REJECT_UNREADABLE_FILE,
    REJECT_UNRECOGNISED_FILE,
    REJECTS_SCHEMA,
    SOURCES_SCHEMA,
    Reject,
    conform,
)
from logmine.stages.ingest.inputs import IGNORE_FILE, collect_files, companions_of, with_companions
from logmine.stages.ingest.split import REST_SUFFIX, keep, plan_split, rest_result, run_workers, worker_for
from logmine.stages.ingest.report import IngestReport, Meter, ProgressFn, file_size, rejects_by_reason
from logmine.stages.ingest.tasks import FileResult, FileTask
from logmine.stages.ingest.threads import cores, use_threads
from logmine.stages.ingest.writer import (
    WRITTEN_TABLES,
    FileReport,
    PartitionWriter,
    Prepared,
    prefetch,
    prepare_together,
)
from logmine.workspace import Transaction, Workspace

log = logging.getLogger(__name__)


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
    threads: bool | None = None
    """Spread a big file over threads (read, check, write at once); None: when cores are spare for
    them at the start of the file (:mod:`logmine.stages.ingest.threads`)."""
    split: bool | None = None
    """Read a plain native file of ``THREADS_MIN_BYTES`` or more in two processes, each in step
    (:mod:`logmine.stages.ingest.split`); None: when ``threads`` is None, the machine has two cores
    or more and the files are read here (not on an engine's workers), busy or not: under load two
    processes get two shares of the cores, as the other work's processes do."""


def source_key(path: str) -> str:
    """The partition key of a source file: a short hash of its path."""
    return hashlib.blake2b(path.encode(), digest_size=8).hexdigest()


def ingest(
    paths: Sequence[Path | str] | Path | str,
    out: Path | str,
    config: IngestConfig | None = None,
    progress: ProgressFn = _no_progress,
    engine: Engine | None = None,
) -> IngestReport:
    """Ingest log files into the workspace at ``out`` (created if needed) and return the report.

    ``engine`` reads the files in parallel (:mod:`logmine.engine`: a process pool or Ray tasks),
    one :func:`read_file` task per file; None (or a serial engine) reads them one after another
    here, with progress per batch. Either way the tasks write Parquet files into the workspace's
    ``data/`` folder and this process adopts them and commits one transaction, so the run stays
    atomic and the tables are the same. With Ray on a cluster, the input files and the workspace
    must be on storage every node sees at the same paths (the tasks write there directly); the
    user-id key travels with each task.
    """
    config = config or IngestConfig()
    if config.input_format is not None and config.input_format not in FORMAT_NAMES:
        raise OptionError("--input-format", config.input_format, "one of " + ", ".join(FORMAT_NAMES))
    if isinstance(paths, (str, Path)):
        paths = [paths]
    unreadable: list[Path] = []
    files = with_companions(collect_files(paths, exclude=Path(out), unreadable=unreadable), config.input_format)
    started = time.perf_counter()
    ws = Workspace.create(out)
    if not files and not unreadable:
        named = ", ".join(str(p) for p in paths)
        raise InputPathError(named, f"no files found to ingest (hidden files and {IGNORE_FILE} patterns are skipped)")
    report = IngestReport(workspace=str(ws.root))
    with ws.lock(wait=config.wait), _no_cyclic_gc(), run_workers():
        ws = ws.reload()  # another run may have committed while we waited
        known = _known_sources(ws)
        key = ws.secret_key()
        txn = ws.transaction()
        for table, schema in _TABLES.items():
            txn.ensure_table(table, schema)
        sources = dict(known)
        meter = Meter(progress, files)
        for path in unreadable:
            report.files.append(_reject_file(txn, str(path), None, f"{REJECT_UNREADABLE_FILE}: cannot list directory")[0])
            sources.pop(str(path), None)
        tasks = [_task(txn, path, known, config, key) for path in files]
        for task, result in zip(tasks, _read_all(tasks, engine, meter), strict=True):
            report.files.append(_adopt(txn, task, result))
            if result.source is not None:
                sources[task.path] = result.source
            elif result.reject is not None:
                sources.pop(task.path, None)
        meter.finish()
        report.warnings = _wrong_format(report, config.input_format)  # raises, writing nothing, when no line was read
        rows = [sources[name] for name in sorted(sources)]
        txn.replace_table("sources", conform(pl.DataFrame(rows, schema=SOURCES_SCHEMA), SOURCES_SCHEMA))
        txn.commit()
    report.rejects_by_reason = rejects_by_reason(ws, [f.path for f in report.files if f.status != "skipped"])
    report.seconds = time.perf_counter() - started
    return report


def _task(txn: Transaction, path: Path, known: dict[str, dict[str, Any]], config: IngestConfig, key: bytes) -> FileTask:
    name, skey = str(path), source_key(str(path))
    files = {table: str(txn.new_file(table, skey)) for table in WRITTEN_TABLES}
    rest = {table: str(txn.new_file(table, skey + REST_SUFFIX)) for table in WRITTEN_TABLES}
    row = known.get(name)
    size, sha, fmt = (row["size_bytes"], row["sha256"], row["source_format"]) if row and not config.force else (None, None, None)
    companions = tuple((str(p), *_known_state(known.get(str(p)))) for p in companions_of(path, known, config.input_format))
    return FileTask(name, config.input_format, skey, key, files, size, sha, config.threads, config.split, rest, companions, fmt)


def _known_state(row: dict[str, Any] | None) -> tuple[int | None, str | None]:
    return (row["size_bytes"], row["sha256"]) if row else (None, None)


def _read_all(tasks: list[FileTask], engine: Engine | None, meter: Meter) -> Iterator[FileResult]:
    """Each task's result in order: here with progress per batch, or on the engine with progress per file."""
    if engine is None or (engine.kind == "local" and engine.workers == 1):
        yield from _read_here(tasks, meter)  # ingest() holds the cycle collector off
        return
    tasks = [t if t.split is not None else dataclasses.replace(t, split=False) for t in tasks]  # the engine's workers share the cores
    for task, result in zip(tasks, engine.map(read_file, tasks, label="ingest"), strict=True):
        meter.start(Path(task.path))
        meter.end(result.size)
        yield result


def _read_here(tasks: list[FileTask], meter: Meter) -> Iterator[FileResult]:
    """Each task's result in order, read in this process; runs of small native files are read
    together (:func:`_read_small`), up to :data:`native.GROUP_BYTES` at a time, and one group's
    Parquet files are written in a thread while the next group is parsed (both release the GIL)."""
    group: list[FileResult | _Started] = []
    size = 0
    with ThreadPoolExecutor(1, thread_name_prefix="logmine-parquet") as pool:
        writes = _Writes(pool)
        for task in tasks:
            started = _start(task)
            if isinstance(started, _Started) and _groupable(started):
                if size + started.before.st_size > native.GROUP_BYTES:
                    yield from _metered(writes.submit(_read_small(group)), meter)
                    group, size = [], 0
                group.append(started)
                size += started.before.st_size
                continue
            if isinstance(started, FileResult) and group:  # settled: it waits for the group, to keep the order
                group.append(started)
                continue
            yield from _metered(writes.submit(_read_small(group)) + writes.wait(), meter)
            group, size = [], 0
            if isinstance(started, FileResult):
                yield from _metered([started], meter)
                continue
            meter.start(Path(task.path))
            result = read_file(task, meter.add)
            meter.end(result.size)
            yield result
        yield from _metered(writes.submit(_read_small(group)) + writes.wait(), meter)


class _Writes:
    """One group's writing at a time, in a thread (:func:`_read_here`)."""

    def __init__(self, pool: ThreadPoolExecutor) -> None:
        self.pool = pool
        self.pending: Future[list[FileResult]] | None = None

    def submit(self, write: Callable[[], list[FileResult]]) -> list[FileResult]:
        """Start ``write``; the results of the group before it, once written."""
        done = self.wait()
        self.pending = self.pool.submit(write)
        return done

    def wait(self) -> list[FileResult]:
        """The results of the group being written (none when none is)."""
        pending, self.pending = self.pending, None
        return [] if pending is None else pending.result()


def _groupable(started: _Started) -> bool:
    """A small native file, unless threads or a split were asked for (they are for one file alone)."""
    task = started.task
    size = started.before.st_size
    return (started.fmt == native.NAME and task.threads is not True and task.split is not True and size < THREADS_MIN_BYTES
            and native.groupable(started.path, size))


def _metered(results: list[FileResult], meter: Meter) -> Iterator[FileResult]:
    for result in results:
        meter.start(Path(result.report.path))
        meter.end(result.size)
        yield result


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


_TABLES = {"events": EVENTS_SCHEMA, "llm_requests": LLM_REQUESTS_SCHEMA, "ide_log": IDE_LOG_SCHEMA, "rejects": REJECTS_SCHEMA,
           "sources": SOURCES_SCHEMA}


def _known_sources(ws: Workspace) -> dict[str, dict[str, Any]]:
    if not ws.has_table("sources"):
        return {}
    return {row["path"]: row for row in ws.read("sources").to_dicts()}


def read_file(task: FileTask, on_bytes: Callable[[int], None] | None = None) -> FileResult:
    """Read one input file into its Parquet files; pure apart from reading the file and writing ``task.files``.

    Runs in this process, a worker process or a Ray task (see :func:`ingest`). A file-level failure
    is returned as ``reject`` (nothing written); a reader breaking the line accounting raises.
    """
    with _no_cyclic_gc():
        return _read_file(task, on_bytes or _no_bytes)


def _no_bytes(nbytes: int) -> None:
    return None


def _start(task: FileTask) -> FileResult | _Started:
    """A file's first steps: its size, its sha256 when the size is the known one, its format; the
    result when these settle it (skipped, unrecognised or unreadable)."""
    path = Path(task.path)
    try:
        before = path.stat()
        sha: str | None = None
        if task.known_size is not None and task.known_size == before.st_size:
            sha = file_sha256(path)
        fmt = task.fmt or detect_format(path)
        if sha is not None and task.known_sha == sha and (fmt or UNKNOWN_FORMAT) == task.known_format and _companions_unchanged(task):
            return FileResult(FileReport(task.path, fmt, "skipped"), before.st_size)
        if fmt is None:
            return _unrecognised(task, path, before, sha)
    except _FILE_ERRORS as exc:
        return _file_reject(task, file_size(path), None, f"{REJECT_UNREADABLE_FILE}: {_describe(exc)}")
    return _Started(task, path, before, sha, fmt)


@dataclass(frozen=True)
class _Started:
    """A file to read (:func:`_start`): its stat before reading, its sha256 if known yet, its format."""

    task: FileTask
    path: Path
    before: os.stat_result
    sha: str | None
    fmt: str


def _read_file(task: FileTask, on_bytes: Callable[[int], None]) -> FileResult:
    started = _start(task)
    if isinstance(started, FileResult):
        return started
    path, before, sha, fmt = started.path, started.before, started.sha, started.fmt
    big = before.st_size >= THREADS_MIN_BYTES
    threads = task.threads if task.threads is not None else IN_STEP_MAX_BYTES <= before.st_size and (not big or use_threads())
    # two processes even on a busy machine: each gets its share of the cores, as the other work's do
    wanted = task.split if task.split is not None else task.threads is None and big and cores() >= 2
    rest = plan_split(path, fmt, before.st_size, wanted, task.key, task.user_key, task.rest_files)
    worker = None if rest is None else worker_for(rest)
    with ThreadPoolExecutor(1, thread_name_prefix="logmine-sha256") as pool:
        hashed: Future[str] | None = None if sha or not threads else pool.submit(file_sha256, path)
        writer = PartitionWriter({t: Path(f) for t, f in task.files.items()}, task.key, task.path, fmt, task.user_key)
        try:
            batches = _batches(fmt, path, threads and rest is None, None if rest is None else rest.start)
            prepared_batches = (writer.prepare(batch) for batch in batches)
            # in threads: the reader and writer.prepare run in the prefetch thread, Parquet is written in this one
            for prepared in prefetch(prepared_batches) if threads and rest is None else prepared_batches:
                writer.write(prepared)
                on_bytes(prepared.bytes_read)
            rest_done = None if rest is None else rest_result(worker, rest, on_bytes)  # type: ignore[arg-type]
            if worker is not None:
                keep(worker)  # its part is done: it waits for the next big file
                worker = None
            sha = sha or (hashed.result() if hashed is not None else file_sha256(path))
            after = path.stat()
        except _FILE_ERRORS as exc:  # a truncated .gz, a corrupt zip or .zst: the file, not a line
            writer.abort()
            return _file_reject(task, before.st_size, fmt, f"{REJECT_UNREADABLE_FILE}: {_describe(exc)}")
        finally:
            if worker is not None:  # left while it was busy
                worker.kill()
    if (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns):
        sha = _CHANGED
    report, written = writer.finish()
    rest_written: dict[str, Path] = {}
    if rest_done is not None:
        rest_report, rest_written = rest_done
        for name in ("lines_read", "lines_accepted", "lines_rejected", "events", "requests", "ide_log"):
            setattr(report, name, getattr(report, name) + getattr(rest_report, name))
    return FileResult(report, before.st_size, {t: str(p) for t, p in written.items()}, _source_row(task, sha, before.st_size, fmt, report),
                      rest_files={t: str(p) for t, p in rest_written.items()})


def _source_row(task: FileTask, sha: str, size: int, fmt: str, report: FileReport) -> dict[str, Any]:
    return {
        "path": task.path, "sha256": sha, "size_bytes": size, "source_format": fmt, "lines_read": report.lines_read,
        "lines_accepted": report.lines_accepted, "lines_rejected": report.lines_rejected, "ingested_at": datetime.now(UTC),
    }


def _read_small(group: list[FileResult | _Started]) -> Callable[[], list[FileResult]]:
    """Small plain native files read together (:func:`native.read_together`: one Polars parse for
    them all) and their tables built; what it returns writes them, each still to its own
    partition, with its own line numbers, rejects, ``sources`` row and checks, as :func:`read_file`
    would, and gives the group's results (settled files pass through as they are)."""
    contents: dict[int, bytes] = {}
    results: dict[int, FileResult] = {}
    for i, item in enumerate(group):
        if isinstance(item, FileResult):
            results[i] = item
            continue
        try:
            contents[i] = item.path.read_bytes()
        except _FILE_ERRORS as exc:
            results[i] = _file_reject(item.task, item.before.st_size, item.fmt, f"{REJECT_UNREADABLE_FILE}: {_describe(exc)}")
    started = [item for item in (group[i] for i in contents) if isinstance(item, _Started)]
    writers = [PartitionWriter({t: Path(f) for t, f in it.task.files.items()}, it.task.key, it.task.path, it.fmt, it.task.user_key)
               for it in started]
    batch, firsts = native.read_together(list(contents.values()))
    prepared = prepare_together(writers, batch, firsts) if writers else []
    if prepared is None:  # a line gave several rows: each file on its own
        prepared = [w.prepare(b) for w, b in zip(writers, native.read_files(list(contents.values())), strict=True)]

    def write() -> list[FileResult]:
        for i, item, content, writer, ready in zip(contents, started, contents.values(), writers, prepared, strict=True):
            results[i] = _write_small(item, content, writer, ready)
        return [results[i] for i in range(len(group))]

    return write


def _write_small(item: _Started, content: bytes, writer: PartitionWriter, prepared: Prepared) -> FileResult:
    task, before = item.task, item.before
    writer.write(prepared)
    sha = item.sha or hashlib.sha256(content).hexdigest()
    after = item.path.stat()
    if (after.st_size, after.st_mtime_ns, len(content)) != (before.st_size, before.st_mtime_ns, before.st_size):
        sha = _CHANGED
    report, written = writer.finish()
    return FileResult(report, before.st_size, {t: str(p) for t, p in written.items()}, _source_row(task, sha, before.st_size, item.fmt, report))


def _companions_unchanged(task: FileTask) -> bool:
    """True when every companion file is as its ``sources`` row says (absent when it had none)."""
    for name, size, sha in task.companions:
        path = Path(name)
        if not path.is_file():
            if size is not None:
                return False
            continue
        if size is None or path.stat().st_size != size or file_sha256(path) != sha:
            return False
    return True


_CHANGED = "changed-while-read"
THREADS_MIN_BYTES = 64 << 20
"""Smaller files are read with threads without asking whether cores are spare (sampling takes ~40 ms)."""
IN_STEP_MAX_BYTES = 4 << 20
"""Smaller files are read, hashed and written in step, in this thread: for a file of a few hundred
KB, starting and joining the hashing and prefetch threads cost more than they overlap."""


def _batches(fmt: str, path: Path, threads: bool, stop: int | None = None) -> Iterator[Batch]:
    """The file's batches (up to byte ``stop`` of a split file); the native reader checks one chunk
    at a time unless ``threads``."""
    if stop is not None:
        return native.read_span(path, 0, stop, 1)
    reader = get_reader(fmt)
    if fmt == "native" and not threads:
        return reader.read(path, workers=0)
    return reader.read(path)


def _file_reject(task: FileTask, size: int, fmt: str | None, reason: str) -> FileResult:
    return FileResult(FileReport(task.path, fmt, "rejected"), size, reject=reason)


UNKNOWN_FORMAT = "unknown"
"""``source_format`` of a file no reader recognises (in ``sources`` and ``rejects``)."""


def _unrecognised(task: FileTask, path: Path, before: os.stat_result, sha: str | None) -> FileResult:
    """A file no reader claims: one file-level reject, and a ``sources`` row counting its lines as rejected."""
    lines = count_lines(path)
    sha = sha or file_sha256(path)
    reason = "the file is empty" if lines == 0 else "no reader recognises this file; use --input-format"
    report = FileReport(task.path, None, "rejected", lines_read=lines, lines_rejected=lines)
    row = {
        "path": task.path, "sha256": sha, "size_bytes": before.st_size, "source_format": UNKNOWN_FORMAT, "lines_read": lines,
        "lines_accepted": 0, "lines_rejected": lines, "ingested_at": datetime.now(UTC),
    }
    return FileResult(report, before.st_size, source=row, reject=f"{REJECT_UNRECOGNISED_FILE}: {reason}")


def _adopt(txn: Transaction, task: FileTask, result: FileResult) -> FileReport:
    """Put one file's result into the transaction (in the driver, in file order)."""
    if result.reject is not None:
        report = _reject_file(txn, task.path, result.report.source_format, result.reject)[0]
        return result.report if result.source is not None else report
    if result.source is not None:
        if result.source["sha256"] == _CHANGED:
            log.warning("%s changed while it was read; it will be read again on the next run", task.path)
        for table in WRITTEN_TABLES:
            for key, files in ((task.key, result.files), (task.key + REST_SUFFIX, result.rest_files)):
                if table in files:
                    txn.put_file(table, key, Path(files[table]))
                else:
                    txn.drop_partition(table, key)
    return result.report


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
    for table in ("events", "llm_requests", "ide_log"):
        txn.drop_partition(table, key)
    for table in WRITTEN_TABLES:
        txn.drop_partition(table, key + REST_SUFFIX)
    rejects = pl.DataFrame([Reject(0, reason, "").row(name, fmt or UNKNOWN_FORMAT)], schema=REJECTS_SCHEMA)
    txn.put_partition("rejects", key, rejects)
    return FileReport(name, fmt, "rejected"), None


def _wrong_format(report: IngestReport, forced: str | None) -> list[str]:
    """One warning per file that the forced format read none of whose lines, when detection would
    read it as another format; :class:`OptionError` instead when the run accepted no line at all."""
    if forced is None:
        return []
    found = []
    for f in report.files:
        if f.status == "ingested" and f.lines_read and not f.lines_accepted:
            with contextlib.suppress(*_FILE_ERRORS):
                detected = detect_format(Path(f.path))
                if detected is not None and detected != forced:
                    found.append((f, detected))
    if found and not report.lines_accepted:
        f, detected = found[0]
        more = f" and {len(found) - 1} more file{'s' * (len(found) > 2)}" if len(found) > 1 else ""
        raise OptionError("--input-format", forced, f"it rejected all {f.lines_read} lines of {f.path}{more}; "
                          f"format detection reads that file as {detected}: drop --input-format or pass --input-format {detected}")
    return [f"--input-format {forced} rejected all {f.lines_read} lines of {f.path}; format detection reads it as {detected}"
            for f, detected in found]
