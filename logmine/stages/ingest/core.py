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
import hashlib
import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from logmine.engine import Engine
from logmine.errors import InputPathError, OptionError
from logmine.formats import FORMAT_NAMES, detect_format
from logmine.records import (
    EVENTS_SCHEMA,
    IDE_LOG_SCHEMA,
    LLM_REQUESTS_SCHEMA,
    REJECT_UNREADABLE_FILE,
    REJECTS_SCHEMA,
    SOURCES_SCHEMA,
    Reject,
    conform,
)
from logmine.stages.ingest import worker as workers
from logmine.stages.ingest.inputs import (
    IGNORE_FILE,
    collect_files,
    companions_of,
    with_companions,
)
from logmine.stages.ingest.reading import (
    _CHANGED,
    _FILE_ERRORS,
    UNKNOWN_FORMAT,
    _no_cyclic_gc,
    read_file,
)
from logmine.stages.ingest.report import (
    IngestReport,
    Meter,
    ProgressFn,
    rejects_by_reason,
)
from logmine.stages.ingest.schedule import _read_here
from logmine.stages.ingest.split import REST_SUFFIX
from logmine.stages.ingest.tasks import FileResult, FileTask
from logmine.stages.ingest.writer import (
    WRITTEN_TABLES,
    FileReport,
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
    group: bool = True
    """Keep the rows of small native files read together in one partition per group (a file of a
    few hundred KB costs more as its own Parquet files than its rows do); ``sources.partition``
    names each file's. A grouped file read again leaves its group (the group's files are
    rewritten without its rows). Off: one partition per file, and a file found in a group is read
    again on its own (the pipeline needs each file's rows in its own partition)."""


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
    with ws.lock(wait=config.wait), _no_cyclic_gc(), workers.run():
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
        leaving: dict[str, set[str]] = {}
        for task, result in zip(tasks, _read_all(tasks, engine, meter), strict=True):
            report.files.append(_adopt(txn, task, result))
            old = (known.get(task.path) or {}).get("partition")
            if result.report.status != "skipped" and old not in (None, task.key):
                leaving.setdefault(old, set()).add(task.path)
            if result.source is not None:
                sources[task.path] = result.source
            elif result.reject is not None:
                sources.pop(task.path, None)
        meter.finish()
        report.warnings = _wrong_format(report, config.input_format)  # raises, writing nothing, when no line was read
        _leave_groups(ws, txn, known, leaving)
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
    grouped_before = row is not None and row.get("partition") not in (None, skey)
    again = config.force or (grouped_before and not config.group)  # without groups, a grouped file moves to its own partition
    size, sha, fmt = (row["size_bytes"], row["sha256"], row["source_format"]) if row and not again else (None, None, None)
    companions = tuple((str(p), *_known_state(known.get(str(p)))) for p in companions_of(path, known, config.input_format))
    group_key = f"{skey}-{txn.token}" if config.group else None  # unique to this run: an old group of the same files is another
    group_files = {table: str(txn.new_file(table, group_key)) for table in WRITTEN_TABLES} if group_key else {}
    return FileTask(name, config.input_format, skey, key, files, size, sha, config.threads, config.split, rest, companions, fmt,
                    group_key, group_files)


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


_TABLES = {"events": EVENTS_SCHEMA, "llm_requests": LLM_REQUESTS_SCHEMA, "ide_log": IDE_LOG_SCHEMA, "rejects": REJECTS_SCHEMA,
           "sources": SOURCES_SCHEMA}


def _known_sources(ws: Workspace) -> dict[str, dict[str, Any]]:
    if not ws.has_table("sources"):
        return {}
    return {row["path"]: row for row in ws.read("sources").to_dicts()}


def _adopt(txn: Transaction, task: FileTask, result: FileResult) -> FileReport:
    """Put one file's result into the transaction (in the driver, in file order)."""
    if result.reject is not None:
        report = _reject_file(txn, task.path, result.report.source_format, result.reject)[0]
        return result.report if result.source is not None else report
    if result.source is not None:
        if result.source["sha256"] == _CHANGED:
            log.warning("%s changed while it was read; it will be read again on the next run", task.path)
        own = {} if result.group else result.files
        for table in WRITTEN_TABLES:
            for key, files in ((task.key, own), (task.key + REST_SUFFIX, result.rest_files)):
                if table in files:
                    txn.put_file(table, key, Path(files[table]))
                else:
                    txn.drop_partition(table, key)
            if result.group and table in result.files:  # the group's first file brings the group's files
                txn.put_file(table, result.group, Path(result.files[table]))
    return result.report


def _leave_groups(ws: Workspace, txn: Transaction, known: dict[str, dict[str, Any]], leaving: dict[str, set[str]]) -> None:
    """Files of earlier groups read again (or rejected) in this run leave them: a group all of
    whose files left is dropped, the others' files are rewritten without the leavers' rows."""
    for group, gone in sorted(leaving.items()):
        members = {path for path, row in known.items() if row.get("partition") == group}
        for table in WRITTEN_TABLES:
            rel = ws.tables[table].partitions.get(group) if table in ws.tables else None
            if rel is None:
                continue
            rows = pl.DataFrame() if members <= gone else pl.read_parquet(ws.root / rel).filter(~pl.col("source_file").is_in(sorted(gone)))
            if rows.height:
                txn.put_partition(table, group, rows)
            else:
                txn.drop_partition(table, group)


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
