"""Ingest: log files of any supported format -> the workspace's ``events``, ``llm_requests``,
``rejects`` and ``sources`` tables.

Each source file is one partition of every table, so a nightly run re-reads only new or
changed files (same path, size and sha256: skipped) and a changed file replaces its rows.
Everything is written in one workspace transaction: a killed run leaves the previous
workspace as it was.
"""

from __future__ import annotations

import hashlib
import logging
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

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
"""``progress(description, done, total)``; the default does nothing."""


def _no_progress(description: str, done: int, total: int) -> None:
    return None


@dataclass(frozen=True)
class IngestConfig:
    """Options of the ingest stage."""

    input_format: str | None = None
    """Force one format for every file instead of detecting it per file."""
    force: bool = False
    """Re-ingest files even when their size and hash are unchanged."""


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


def collect_files(paths: Sequence[Path | str]) -> list[Path]:
    """Every file under ``paths`` (directories walked recursively, hidden entries skipped), sorted."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise InputPathError(path)
        if path.is_file():
            out.append(path)
            continue
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            out.extend(Path(root) / f for f in sorted(files) if not f.startswith("."))
    return sorted(dict.fromkeys(out))


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def source_key(path: str) -> str:
    """The partition key of a source file: a short hash of its path."""
    return hashlib.blake2b(path.encode(), digest_size=8).hexdigest()


def pseudonymise(values: pl.Series, key: bytes) -> pl.Series:
    """Replace user ids by a keyed hash: the same user maps to the same id, the key never leaves."""
    uniques = [v for v in values.unique().to_list() if v is not None]
    mapping = {v: "u_" + hashlib.blake2b(v.encode(), key=key[:64], digest_size=8).hexdigest() for v in uniques}
    return values.replace_strict(mapping, default=None, return_dtype=pl.String()) if mapping else values


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
    files = collect_files(paths)
    started = time.perf_counter()
    ws = Workspace.create(out)
    report = IngestReport(workspace=str(ws.root))
    with ws.lock():
        ws = ws.reload()  # another run may have committed while we waited
        known = _known_sources(ws)
        key = ws.secret_key()
        txn = ws.transaction()
        for table, schema in _TABLES.items():
            txn.ensure_table(table, schema)
        sources = dict(known)
        for index, path in enumerate(files):
            progress(f"ingest {path.name}", index, len(files))
            result, row = _ingest_file(txn, path, known.get(str(path)), config, key)
            report.files.append(result)
            if row is not None:
                sources[str(path)] = row
        progress("ingest", len(files), len(files))
        txn.replace_table("sources", conform(pl.DataFrame(list(sources.values()), schema=SOURCES_SCHEMA), SOURCES_SCHEMA))
        txn.commit()
    report.rejects_by_reason = _rejects_by_reason(ws, [f.path for f in report.files if f.status != "skipped"])
    report.seconds = time.perf_counter() - started
    return report


_TABLES = {"events": EVENTS_SCHEMA, "llm_requests": LLM_REQUESTS_SCHEMA, "rejects": REJECTS_SCHEMA, "sources": SOURCES_SCHEMA}


def _known_sources(ws: Workspace) -> dict[str, dict[str, Any]]:
    if not ws.has_table("sources"):
        return {}
    return {row["path"]: row for row in ws.read("sources").to_dicts()}


def _ingest_file(
    txn: Transaction, path: Path, known: dict[str, Any] | None, config: IngestConfig, key: bytes
) -> tuple[FileReport, dict[str, Any] | None]:
    name = str(path)
    try:
        size = path.stat().st_size
        sha = file_sha256(path)
    except OSError as exc:
        return _reject_file(txn, name, None, f"{REJECT_UNREADABLE_FILE}: {exc.strerror or exc}")
    if known and not config.force and known["sha256"] == sha and known["size_bytes"] == size:
        return FileReport(name, known["source_format"], "skipped"), None
    try:
        fmt = config.input_format or detect_format(path)
    except (OSError, EOFError, ValueError) as exc:
        return _reject_file(txn, name, None, f"{REJECT_UNREADABLE_FILE}: {exc}")
    if fmt is None:
        return _reject_file(txn, name, None, f"{REJECT_UNRECOGNISED_FILE}: no reader recognises this file; use --input-format")
    writer = _PartitionWriter(txn, source_key(name), name, fmt, sha[:12], key)
    try:
        for batch in get_reader(fmt).read(path):
            writer.add(batch)
    except (OSError, EOFError, ValueError) as exc:  # a truncated .gz, an unreadable zip: the file, not a line
        writer.abort()
        return _reject_file(txn, name, fmt, f"{REJECT_UNREADABLE_FILE}: {exc}")
    report = writer.finish()
    row = {
        "path": name, "sha256": sha, "size_bytes": size, "source_format": fmt, "lines_read": report.lines_read,
        "lines_accepted": report.lines_accepted, "lines_rejected": report.lines_rejected, "ingested_at": datetime.now(UTC),
    }
    return report, row


def _reject_file(txn: Transaction, name: str, fmt: str | None, reason: str) -> tuple[FileReport, dict[str, Any] | None]:
    """A file-level reject: one rejects row with source_line 0; the file's old rows are dropped."""
    log.warning("%s: %s", name, reason)
    key = source_key(name)
    for table in ("events", "llm_requests"):
        txn.drop_partition(table, key)
    rejects = pl.DataFrame([Reject(0, reason, "").row(name, fmt or "unknown")], schema=REJECTS_SCHEMA)
    txn.put_partition("rejects", key, rejects)
    return FileReport(name, fmt, "rejected"), None


class _PartitionWriter:
    """Streams one source file's batches into its Parquet partitions, checking the accounting."""

    def __init__(self, txn: Transaction, key: str, name: str, fmt: str, sha: str, user_key: bytes) -> None:
        self.txn, self.key, self.name, self.fmt, self.sha, self.user_key = txn, key, name, fmt, sha, user_key
        self.writers: dict[str, tuple[pq.ParquetWriter, Path]] = {}
        self.report = FileReport(name, fmt, "ingested")

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
            self._write("rejects", pl.DataFrame([r.row(self.name, self.fmt) for r in batch.rejects], schema=REJECTS_SCHEMA))

    def _frame(self, rows: list[dict[str, Any]] | pl.DataFrame, schema: dict[str, pl.DataType], id_col: str) -> pl.DataFrame:
        if isinstance(rows, pl.DataFrame):
            df = conform(rows, schema)
        elif rows:
            df = pl.DataFrame(rows, schema=schema, strict=False)
        else:
            return pl.DataFrame(schema=schema)
        positional = pl.concat_str(pl.lit(self.sha + ":"), pl.col("source_line").cast(pl.String), pl.lit(":"),
                                   pl.int_range(pl.len()).over("source_line").cast(pl.String))
        df = df.with_columns(
            pl.coalesce(pl.col(id_col), positional).alias(id_col),
            pl.lit(self.fmt).alias("source_format"),
            pl.lit(self.name).alias("source_file"),
        )
        if "weight" in df.columns:
            df = df.with_columns(pl.col("weight").fill_null(1))
        if df["user_id"].null_count() < df.height:
            df = df.with_columns(pseudonymise(df["user_id"], self.user_key).alias("user_id"))
        return df.select(list(schema))

    def _write(self, table: str, df: pl.DataFrame) -> None:
        if df.height == 0:
            return
        arrow = df.to_arrow()
        if table not in self.writers:
            path = self.txn.new_file(table, self.key)
            opts = {"compression": PARQUET_OPTIONS["compression"], "compression_level": PARQUET_OPTIONS["compression_level"]}
            self.writers[table] = (pq.ParquetWriter(path, arrow.schema, **opts), path)
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
