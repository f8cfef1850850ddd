"""The ingest stage's writing side: the background reader and the
per-file Parquet writer that checks every reader's line accounting (see :mod:`logmine.stages.ingest.core`)."""

from __future__ import annotations

import functools
import queue
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from logmine.formats import Batch
from logmine.pseudonyms import Pseudonyms, scrub_user_bytes, scrub_users
from logmine.records import (
    EVENTS_SCHEMA,
    IDE_LOG_SCHEMA,
    LLM_REQUESTS_SCHEMA,
    REJECTS_SCHEMA,
    Reject,
    conform,
)
from logmine.workspace import PARQUET_OPTIONS

if TYPE_CHECKING:
    from logmine.stages.templates import MineConfig

T = TypeVar("T")


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
    ide_log: int = 0


def prefetch(items: Iterator[T], depth: int = 2) -> Iterator[T]:
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


@dataclass(frozen=True)
class Prepared:
    """A batch ready to write (:meth:`PartitionWriter.prepare`): non-empty Arrow tables and the counts."""

    tables: list[tuple[str, pa.Table]]
    lines_read: int
    lines_accepted: int
    lines_rejected: int
    events: int
    requests: int
    bytes_read: int
    ide_log: int = 0


WRITTEN_TABLES = ("events", "llm_requests", "rejects", "ide_log")
"""The tables an ingested file has a partition of (``sources`` is one row per file, kept by the driver)."""


class PartitionWriter:
    """Streams one source file's batches into its Parquet files, checking the accounting.

    ``paths`` names the file of each table (from :meth:`Transaction.new_file`); a table is written
    only when the file has rows for it. The writer never touches the transaction, so it runs in a
    worker process or a Ray task; the driver adopts the files :meth:`finish` returns.
    """

    def __init__(self, paths: dict[str, Path], key: str, name: str, fmt: str, user_key: bytes) -> None:
        self.paths, self.key, self.name, self.fmt, self.user_key = paths, key, name, fmt, user_key
        self.writers: dict[str, tuple[pq.ParquetWriter, Path]] = {}
        self.buffered: dict[str, list[pa.Table]] = {}
        self._sizes: dict[str, list[int]] = {}  # a table's buffered rows and bytes (a slice's nbytes walks its buffers: counted once)
        self.report = FileReport(name, fmt, "ingested")

    @functools.cached_property
    def users(self) -> Pseudonyms:
        """The file's user-id pseudonyms, made at the first rows (a group's files share their lead's)."""
        return Pseudonyms(self.user_key)

    def add(self, batch: Batch) -> None:
        self.write(self.prepare(batch))

    def prepare(self, batch: Batch) -> Prepared:
        """The batch's rows as the Arrow tables to write (ids filled, users pseudonymised), and its counts.

        Call it in one thread at a time (it keeps the pseudonym cache); :meth:`write` may run in
        another, so that building the next batch's tables overlaps writing this one's.
        """
        events = self._frame(batch.events, EVENTS_SCHEMA, "event_id")
        requests = self._frame(batch.requests, LLM_REQUESTS_SCHEMA, "request_id")
        # Arrow string views as Polars holds them (a conversion to large strings copied every text);
        # the files do not store the Arrow schema, so readers see plain Parquet strings
        ide_log = self._frame(batch.ide_log, IDE_LOG_SCHEMA, "entry_id")
        if ide_log.height:
            ide_log = with_templates(ide_log)
        frames = (("events", events), ("llm_requests", requests), ("ide_log", ide_log))
        tables = [(name, df.to_arrow(compat_level=pl.CompatLevel.newest())) for name, df in frames if df.height]
        if batch.rejects:
            tables.append(("rejects", self.rejects(batch.rejects)))
        return Prepared(tables, batch.lines_read, batch.lines_accepted, len(batch.rejects), events.height, requests.height,
                        batch.bytes_read, ide_log.height)

    def rejects(self, rejects: Sequence[Reject]) -> pa.Table:
        """The ``rejects`` rows of this file's rejected lines, user ids scrubbed from their text."""
        return _rejects_table([r.row(self.name, self.fmt) for r in rejects], self.user_key)

    def write(self, prepared: Prepared) -> None:
        r = self.report
        r.lines_read += prepared.lines_read
        r.lines_accepted += prepared.lines_accepted
        r.lines_rejected += prepared.lines_rejected
        r.events += prepared.events
        r.requests += prepared.requests
        r.ide_log += prepared.ide_log
        for table, arrow in prepared.tables:
            self._write(table, arrow)

    def _frame(self, rows: list[dict[str, Any]] | pl.DataFrame, schema: dict[str, pl.DataType], id_col: str) -> pl.DataFrame:
        if isinstance(rows, pl.DataFrame):
            df = conform(rows, schema)
        elif rows:
            df = pl.DataFrame(rows, schema=schema, strict=False)
        else:
            return pl.DataFrame(schema=schema)
        return _finish(df, schema, id_col, self.fmt, pl.lit(self.name), self._positional_ids, self.users)

    def _positional_ids(self, df: pl.DataFrame) -> pl.Expr:
        """``<path key>:<line>:<n>``, n counting the rows a line produced (0 when one row per line)."""
        line = df["source_line"].to_numpy()
        if len(line) < 2 or bool(np.all(line[1:] > line[:-1])):  # one row per line (format: less CPU than concat_str)
            return pl.format("{}:{}:0", pl.lit(self.key), pl.col("source_line"))
        index = pl.int_range(pl.len()).over("source_line").cast(pl.String)
        return pl.concat_str(pl.lit(self.key + ":"), pl.col("source_line").cast(pl.String), pl.lit(":"), index)

    def _write(self, table: str, arrow: pa.Table) -> None:
        """Buffer ``arrow``; write the table's buffered rows as one row group once there are enough."""
        buffered = self.buffered.setdefault(table, [])
        if buffered and arrow.schema != buffered[0].schema:
            arrow = arrow.cast(buffered[0].schema)
        elif table in self.writers and arrow.schema != self.writers[table][0].schema:
            arrow = arrow.cast(self.writers[table][0].schema)
        buffered.append(arrow)
        size = self._sizes.setdefault(table, [0, 0])
        size[0] += arrow.num_rows
        size[1] += arrow.nbytes
        if size[0] >= ROW_GROUP_ROWS or size[1] >= ROW_GROUP_BYTES:
            self._flush(table)

    def _flush(self, table: str) -> None:
        buffered = self.buffered.get(table)
        if buffered:
            if table not in self.writers:  # opened at the first row group: a small file's table is written at finish
                path = self.paths[table]
                self.writers[table] = (pq.ParquetWriter(path, buffered[0].schema, **_writer_options(buffered[0].schema.names)), path)
            self.writers[table][0].write_table(pa.concat_tables(buffered))
            buffered.clear()
            self._sizes.pop(table, None)

    def abort(self) -> None:
        for writer, path in self.writers.values():
            writer.close()
            path.unlink(missing_ok=True)
        self.writers.clear()
        self.buffered.clear()
        self._sizes.clear()

    def finish(self) -> tuple[FileReport, dict[str, Path]]:
        """Close the files; the report and the file of each table that got rows (the others have none)."""
        r = self.report
        if r.lines_read != r.lines_accepted + r.lines_rejected:
            self.abort()
            raise AssertionError(f"{self.name}: reader {self.fmt} broke the line accounting: {r}")
        written = {}
        for table, buffered in self.buffered.items():
            if table in self.writers:
                self._flush(table)
                self.writers[table][0].close()
            elif buffered:  # one row group in all: written whole (a writer object costs more than the rows, for a small file)
                data = buffered[0] if len(buffered) == 1 else pa.concat_tables(buffered)
                pq.write_table(data, self.paths[table], **_writer_options(data.schema.names))
            else:
                continue
            written[table] = self.paths[table]
        self.writers.clear()
        self.buffered.clear()
        self._sizes.clear()
        return r, written


def _finish(df: pl.DataFrame, schema: dict[str, pl.DataType], id_col: str, fmt: str, source_file: pl.Expr,
            positional_ids: Callable[[pl.DataFrame], pl.Expr], users: Pseudonyms) -> pl.DataFrame:
    """A reader's rows as the table stores them: format and file, ids filled, weight 1 when unset, users pseudonymised."""
    columns = [pl.lit(fmt).alias("source_format"), source_file.alias("source_file")]
    if df[id_col].null_count():
        columns.append(pl.coalesce(pl.col(id_col), positional_ids(df)).alias(id_col))
    if "weight" in df.columns:
        columns.append(pl.col("weight").fill_null(1))
    df = df.with_columns(columns)
    if "user_id" in df.columns and df["user_id"].null_count() < df.height:
        df = df.with_columns(users(df["user_id"]))
    return df.select(list(schema))


def prepare_together(writers: Sequence[PartitionWriter], batch: Batch, firsts: Sequence[int]) -> list[Prepared] | None:
    """What :meth:`PartitionWriter.prepare` gives each file, for small files read as one chunk
    (``batch``, lines numbered through the chunk; file i has lines ``firsts[i] + 1 .. firsts[i + 1]``):
    each table is built once for all the files and cut into one Arrow slice per file. None when
    a line gave several rows (ids then count rows within a file's line: use ``prepare`` per file)."""
    if batch.ide_log:
        return None
    lead, n = writers[0], len(writers)
    starts = np.asarray(firsts, np.int64)
    tables: list[list[tuple[str, pa.Table]]] = [[] for _ in writers]
    rows_of: dict[str, np.ndarray] = {}
    for table, rows, schema, id_col in (("events", batch.events, EVENTS_SCHEMA, "event_id"),
                                        ("llm_requests", batch.requests, LLM_REQUESTS_SCHEMA, "request_id")):
        rows_of[table] = np.zeros(n, np.int64)
        if not isinstance(rows, pl.DataFrame) or not rows.height:
            continue
        lines = rows["source_line"].to_numpy()
        if len(lines) > 1 and not bool(np.all(lines[1:] > lines[:-1])):
            return None
        bounds = np.searchsorted(lines, starts + 1)  # each file's first row, then the row count
        sizes = np.diff(bounds)
        file_of = pl.Series(np.repeat(np.arange(n), sizes))
        names = pl.Series([w.name for w in writers], dtype=pl.String).gather(file_of)
        keys = pl.Series([w.key for w in writers], dtype=pl.String).gather(file_of)
        df = conform(rows, schema).with_columns(source_line=pl.Series(lines - starts[:-1][file_of.to_numpy()], dtype=pl.Int64))
        df = _finish(df, schema, id_col, lead.fmt, pl.lit(names), functools.partial(_ids_of_lines, keys), lead.users)
        arrow = df.to_arrow(compat_level=pl.CompatLevel.newest())
        for i in np.flatnonzero(sizes).tolist():
            tables[i].append((table, arrow.slice(int(bounds[i]), int(sizes[i]))))
        rows_of[table] = sizes
    rejected = np.zeros(n, np.int64)
    if batch.rejects:  # one table for the group's rejects, cut per file as the rows are
        at = np.searchsorted(starts, [r.source_line for r in batch.rejects], side="left") - 1  # the file of each
        rows = [replace(r, source_line=r.source_line - int(starts[i])).row(writers[i].name, writers[i].fmt)
                for r, i in zip(batch.rejects, at.tolist(), strict=True)]
        order = np.argsort(at, kind="stable")
        arrow = _rejects_table([rows[j] for j in order.tolist()], lead.user_key)
        rejected = np.bincount(at, minlength=n)
        bounds = np.concatenate([[0], np.cumsum(rejected)])
        for i in np.flatnonzero(rejected).tolist():
            tables[i].append(("rejects", arrow.slice(int(bounds[i]), int(rejected[i]))))
    prepared = []
    for i in range(n):
        lines = int(starts[i + 1] - starts[i])
        prepared.append(Prepared(tables[i], lines, lines - int(rejected[i]), int(rejected[i]), int(rows_of["events"][i]),
                                 int(rows_of["llm_requests"][i]), 0))
    return prepared


def _rejects_table(rows: list[dict[str, Any]], user_key: bytes) -> pa.Table:
    """``rejects`` rows (:meth:`Reject.row`) as their table, user ids scrubbed from the lines' text."""
    for row in rows:
        row["raw"] = scrub_users(str(row["raw"]), user_key)
        if row["raw_full"] is not None:
            row["raw_full"] = scrub_user_bytes(row["raw_full"], user_key)  # type: ignore[arg-type]
    return pl.DataFrame(rows, schema=REJECTS_SCHEMA).to_arrow()


def _ids_of_lines(keys: pl.Series, df: pl.DataFrame) -> pl.Expr:
    """``<path key>:<line>:0``, each row's file key given (one row per line)."""
    return pl.format("{}:{}:0", pl.lit(keys), pl.col("source_line"))


def with_templates(ide_log: pl.DataFrame, config: MineConfig | None = None) -> pl.DataFrame:
    """``ide_log`` rows with ``template_id`` and ``template`` mined from the first line of each
    message, over all the rows given (a file's entries: the reader yields them in one batch)."""
    from logmine.stages.templates import MineConfig, mine_templates  # only IDE logs need the miner: not at every ingest's start

    heads = [m.split("\n", 1)[0] if m else "" for m in ide_log["message"].to_list()]
    result = mine_templates(heads, config or MineConfig())
    return ide_log.with_columns(pl.Series("template_id", result.assignments, pl.String()),
                                pl.Series("template", [result.templates[t] for t in result.assignments], pl.String()))


ROW_GROUP_ROWS = 131_072
"""Rows buffered per table before they are written as one row group: fewer, larger row groups took
12-16 % less CPU to write (and 7 % fewer bytes) on the bench data than one per 8 MiB chunk."""
ROW_GROUP_BYTES = 64 << 20
"""...or this many bytes of Arrow data, whichever comes first (bounds the memory wide rows take)."""
STREAM_ZSTD_LEVEL = 1
"""zstd level of the ingested tables: on the bench data, writing at 1 took 5 % less CPU than at 3 for 2 % more bytes."""
_DICTIONARY_COLUMNS = frozenset({"session_id", "user_id", "ide", "action", "file_path", "language", "kind", "model",
                                 "source_format", "source_file", "reason", "level", "category", "thread", "exception",
                                 "template_id", "template"})
"""Columns with few distinct values; dictionary-encoding the others (prompts, ids) only costs time."""
_STATISTICS = frozenset({"ts", "source_line", "lines", "ingested_at", "duration_ms", "ttft_ms", "total_ms", "prompt_tokens",
                         "completion_tokens", "accepted", "weight"})
"""Columns that get min/max statistics: times and numbers (time ranges prune row groups). Every
string column spreads over each row group (or is one value per file), so its statistics prune
little; computing them took ~20 % of the Parquet CPU on the bench data (1.7 ms a chunk for the
low-cardinality ones alone)."""
_DELTA_COLUMNS = frozenset({"source_line", "prompt_tokens", "completion_tokens"})
"""Integer columns written DELTA_BINARY_PACKED (smaller and cheaper than plain for line numbers)."""
DATA_PAGE_BYTES = 8 << 20
"""Target data page size: fewer, larger pages than the 1 MiB default (with DELTA_COLUMNS: ~3 % less Parquet CPU)."""


def _writer_options(columns: Sequence[str]) -> dict[str, Any]:
    return {
        "compression": PARQUET_OPTIONS["compression"], "compression_level": STREAM_ZSTD_LEVEL,
        "use_dictionary": [c for c in columns if c in _DICTIONARY_COLUMNS],
        "write_statistics": [c for c in columns if c in _STATISTICS],
        "column_encoding": {c: "DELTA_BINARY_PACKED" for c in columns if c in _DELTA_COLUMNS},
        "data_page_size": DATA_PAGE_BYTES,
        "store_schema": False,  # the Parquet types say it all; a stored Arrow schema would name string views
    }
