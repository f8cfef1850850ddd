"""Reading one input file (or a group of small native files) into its Parquet files: what a
task of the ingest stage does, here, in the run's worker process or on an engine's workers (see
:mod:`logmine.stages.ingest.core`)."""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import logging
import os
import time
import zipfile
import zlib
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from logmine.formats import Batch, count_lines, detect_format, get_reader, native
from logmine.hashing import file_sha256
from logmine.records import (
    REJECT_UNREADABLE_FILE,
    REJECT_UNRECOGNISED_FILE,
)
from logmine.stages.ingest import worker as workers
from logmine.stages.ingest.report import file_size
from logmine.stages.ingest.split import (
    FIRST_SHARE,
    Part,
    plan_split,
    share_here,
    splittable,
    write_part,
)
from logmine.stages.ingest.tasks import FileResult, FileTask
from logmine.stages.ingest.threads import cores, use_threads
from logmine.stages.ingest.writer import (
    FileReport,
    PartitionWriter,
    Prepared,
    prefetch,
    prepare_together,
)

log = logging.getLogger(__name__)


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
    return _read_started(started, on_bytes)[0]()


def _read_started(started: _Started, on_bytes: Callable[[int], None]) -> tuple[Callable[[], FileResult], Callable[[], bool]]:
    """Read a started file, or its first part when it is split (the rest goes to the run's
    worker): the call giving the file's result (waiting for the worker's part) and the one saying
    whether it would wait."""
    task, path, before, sha, fmt = started.task, started.path, started.before, started.sha, started.fmt
    # two processes even on a busy machine: each gets its share of the cores, as the other work's do
    wanted = task.split if task.split is not None else task.threads is None and before.st_size >= SPLIT_MIN_BYTES and cores() >= 2
    worker = (workers.current() or workers.start()) if wanted and splittable(path, fmt) else None
    share = 1.0 if worker is None else FIRST_SHARE if task.split is True else share_here(
        before.st_size, worker.owed(), worker.here.rate(), worker.pace.rate())
    rest = None if worker is None else plan_split(path, before.st_size, share, task.key, task.user_key, task.rest_files)
    handle = None if rest is None or worker is None else worker.submit(functools.partial(write_part, rest), before.st_size - rest.start)
    # a split file's part is read in step (both processes hold the cores): threads only hash it, so
    # no sampling of spare cores (40 ms) is needed, and the hash runs where a process waits
    big = before.st_size >= THREADS_MIN_BYTES and rest is None
    threads = task.threads if task.threads is not None else IN_STEP_MAX_BYTES <= before.st_size and (not big or use_threads())
    hashed: Future[str] | None = None
    if not sha and threads:  # hashed in a thread while the file is read
        hashing = ThreadPoolExecutor(1, thread_name_prefix="logmine-sha256")
        hashed = hashing.submit(file_sha256, path)
        hashing.shutdown(wait=False)
    writer = PartitionWriter({t: Path(f) for t, f in task.files.items()}, task.key, task.path, fmt, task.user_key)
    begun = time.perf_counter()
    try:
        batches = _batches(fmt, path, threads and rest is None, None if rest is None else rest.start)
        prepared_batches = (writer.prepare(batch) for batch in batches)
        # in threads: the reader and writer.prepare run in the prefetch thread, Parquet is written in this one
        for prepared in prefetch(prepared_batches) if threads and rest is None else prepared_batches:
            writer.write(prepared)
            on_bytes(prepared.bytes_read)
        report, written = writer.finish()
        if rest is not None and worker is not None:
            worker.here.add(rest.start, time.perf_counter() - begun)
    except _FILE_ERRORS as exc:  # a truncated .gz, a corrupt zip or .zst: the file, not a line
        writer.abort()
        result = _file_reject(task, before.st_size, fmt, f"{REJECT_UNREADABLE_FILE}: {_describe(exc)}")
        return (lambda: result), (lambda: True)  # the worker's part, if any, is never adopted: the workspace collects its files

    def finish() -> FileResult:
        rest_written: dict[str, Path] = {}
        if rest is not None and handle is not None:
            rest_report, rest_written = _rest_result(handle, rest, on_bytes)
            for name in ("lines_read", "lines_accepted", "lines_rejected", "events", "requests", "ide_log"):
                setattr(report, name, getattr(report, name) + getattr(rest_report, name))
        digest = sha or (hashed.result() if hashed is not None else file_sha256(path))
        after = path.stat()
        if (after.st_size, after.st_mtime_ns) != (before.st_size, before.st_mtime_ns):
            digest = _CHANGED
        return FileResult(report, before.st_size, {t: str(p) for t, p in written.items()}, _source_row(task, digest, before.st_size, fmt, report),
                          rest_files={t: str(p) for t, p in rest_written.items()})

    return finish, (lambda: True) if handle is None else handle.done


def _rest_result(handle: workers.Handle[tuple[FileReport, dict[str, Path]]], part: Part,
                 on_bytes: Callable[[int], None]) -> tuple[FileReport, dict[str, Path]]:
    """The worker's part of a split file; read here should the worker fail it (a bug, or it was killed)."""
    try:
        done = handle.result()
    except workers.WorkerError as exc:
        log.warning("%s: %s; reading that part here", part.path, exc)
        return write_part(part, on_bytes)
    on_bytes(Path(part.path).stat().st_size - part.start if part.stop is None else part.stop - part.start)
    return done


def _source_row(task: FileTask, sha: str, size: int, fmt: str, report: FileReport, partition: str | None = None) -> dict[str, Any]:
    return {
        "path": task.path, "sha256": sha, "size_bytes": size, "source_format": fmt, "lines_read": report.lines_read,
        "lines_accepted": report.lines_accepted, "lines_rejected": report.lines_rejected, "ingested_at": datetime.now(UTC),
        "partition": partition or task.key,
    }


def _groupable(started: _Started) -> bool:
    """A small native file, unless threads or a split were asked for (they are for one file alone)."""
    task = started.task
    size = started.before.st_size
    return (started.fmt == native.NAME and task.threads is not True and task.split is not True and size < THREADS_MIN_BYTES
            and native.groupable(started.path, size))


def _read_small(group: list[FileResult | _Started]) -> Callable[[], list[FileResult]]:
    """Small plain native files read together (:func:`native.read_together`: one Polars parse for
    them all) and their tables built; what it returns writes them and gives the group's results
    (settled files pass through as they are). Each file keeps its own line numbers, rejects,
    ``sources`` row and checks, as :func:`read_file` would give it; their rows go to one Parquet
    file per table, the group's partition (:attr:`FileTask.group_key` of its first file: a few
    hundred KB a file, one file per table each cost more than its rows), or each to its own
    partition when the tasks have no group files or a line gave several rows."""
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
    grouped = prepared is not None and len(started) > 1 and all(it.task.group_key for it in started)
    if prepared is None:  # a line gave several rows: each file on its own
        prepared = [w.prepare(b) for w, b in zip(writers, native.read_files(list(contents.values())), strict=True)]

    def write() -> list[FileResult]:
        if grouped:
            for i, result in zip(contents, _write_group(started, list(contents.values()), prepared), strict=True):
                results[i] = result
        else:
            for i, item, content, writer, ready in zip(contents, started, contents.values(), writers, prepared, strict=True):
                results[i] = _write_small(item, content, writer, ready)
        return [results[i] for i in range(len(group))]

    return write


def _read_small_now(group: list[FileResult | _Started]) -> list[FileResult]:
    """:func:`_read_small`, written at once (the worker's job for a group)."""
    return _read_small(group)()


def _write_small(item: _Started, content: bytes, writer: PartitionWriter, prepared: Prepared) -> FileResult:
    writer.write(prepared)
    sha = _content_sha(item, content)
    report, written = writer.finish()
    return FileResult(report, item.before.st_size, {t: str(p) for t, p in written.items()},
                      _source_row(item.task, sha, item.before.st_size, item.fmt, report))


def _content_sha(item: _Started, content: bytes) -> str:
    """The sha256 of a small file's bytes as read, or :data:`_CHANGED` when the file changed since
    it was stat'ed (or was not read whole)."""
    before, after = item.before, item.path.stat()
    if (after.st_size, after.st_mtime_ns, len(content)) != (before.st_size, before.st_mtime_ns, before.st_size):
        return _CHANGED
    return item.sha or hashlib.sha256(content).hexdigest()


def _write_group(started: list[_Started], contents: list[bytes], prepared: list[Prepared]) -> list[FileResult]:
    """The group's rows in its first file's group partition; each file's result (the files on the first)."""
    lead = started[0].task
    key = lead.group_key
    assert key is not None
    writer = PartitionWriter({t: Path(f) for t, f in lead.group_files.items()}, key, lead.path, started[0].fmt, lead.user_key)
    for ready in prepared:
        writer.write(ready)
    _, written = writer.finish()
    results = []
    for n, (item, content, ready) in enumerate(zip(started, contents, prepared, strict=True)):
        before = item.before
        report = FileReport(item.task.path, item.fmt, "ingested", ready.lines_read, ready.lines_accepted, ready.lines_rejected,
                            ready.events, ready.requests, ready.ide_log)
        files = {t: str(p) for t, p in written.items()} if n == 0 else {}
        results.append(FileResult(report, before.st_size, files, _source_row(item.task, _content_sha(item, content), before.st_size, item.fmt,
                                                                             report, key), group=key))
    return results


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


SPLIT_MIN_BYTES = 16 << 20
"""Smaller files are read whole, here or (in groups, when under :data:`native.SMALL_FILE_BYTES`) by
the worker; from this size on, a plain native file is read in two parts when the worker has
less than about the file left to do (:func:`logmine.stages.ingest.split.share_here`)."""


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
