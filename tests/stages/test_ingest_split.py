"""A native file read in two processes: the same rows, in the same order, as read in one."""

from __future__ import annotations

import functools
import logging
import os
import time
from pathlib import Path

import polars as pl
import pytest
from ingest_helpers import big_native_dir, write_lines
from polars.testing import assert_frame_equal
from test_ingest import BAD_LINES

import logmine
from logmine import early
from logmine.stages.ingest import reading as _ingest_reading
from logmine.stages.ingest import schedule as _ingest_schedule
from logmine.stages.ingest import split as _ingest_split
from logmine.stages.ingest import worker as _ingest_worker
from logmine.stages.ingest import core as ingest
from logmine.stages.ingest.core import IngestConfig
from logmine.workspace import Workspace

ROW_TABLES = ("events", "llm_requests", "rejects")


@pytest.fixture(autouse=True)
def _fast_reader_and_one_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGMINE_NATIVE_FAST", "1")  # inherited by the worker process
    monkeypatch.setenv("LOGMINE_USER_KEY", "split-test-key")  # pseudonyms comparable across workspaces


def _rows(root: Path, table: str) -> pl.DataFrame:
    """A table's rows in the order its view gives them (partitions in key order)."""
    return Workspace.open(root).read(table)


def _assert_same_rows(a: Path, b: Path) -> None:
    for table in ROW_TABLES:
        assert_frame_equal(_rows(a, table), _rows(b, table), check_row_order=True)
    assert_frame_equal(_rows(a, "sources").drop("ingested_at", "partition"), _rows(b, "sources").drop("ingested_at", "partition"))


def _one_file(tmp_path: Path) -> Path:
    logs = big_native_dir(tmp_path / "logs", files=1, lines=3000)
    path = logs / "day0.jsonl"
    path.write_bytes(path.read_bytes() + b"".join(raw + b"\n" for raw, _ in BAD_LINES))
    return logs


def test_split_file_gives_the_rows_of_one_read_in_order(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    logs = _one_file(tmp_path)
    whole = logmine.ingest(logs, tmp_path / "whole", IngestConfig(threads=False, split=False))
    with caplog.at_level(logging.WARNING, logger="logmine.stages.ingest"):
        split = logmine.ingest(logs, tmp_path / "split", IngestConfig(split=True))
    assert caplog.messages == []  # the worker process did its part (no fallback)
    assert split.summary()["lines_rejected"] == whole.summary()["lines_rejected"] > len(BAD_LINES)
    assert sorted(Workspace.open(tmp_path / "split").partitions("events")) == [
        ingest.source_key(str(logs / "day0.jsonl")), ingest.source_key(str(logs / "day0.jsonl")) + _ingest_split.REST_SUFFIX,
    ]
    _assert_same_rows(tmp_path / "whole", tmp_path / "split")


def test_a_file_read_again_whole_or_rejected_keeps_no_part_of_the_split(tmp_path: Path) -> None:
    logs = _one_file(tmp_path)
    ws = tmp_path / "ws"
    logmine.ingest(logs, ws, IngestConfig(split=True))
    logmine.ingest(logs, ws, IngestConfig(split=False, force=True))
    logmine.ingest(logs, tmp_path / "fresh", IngestConfig(split=False))
    _assert_same_rows(tmp_path / "fresh", ws)
    logmine.ingest(logs, ws, IngestConfig(split=True, force=True))
    (logs / "day0.jsonl").write_bytes(b"\x00\x01 not a log\n")
    report = logmine.ingest(logs, ws, IngestConfig(split=True))  # no reader recognises it: a file-level reject
    assert report.summary()["files_rejected"] == 1
    assert _rows(ws, "events").height == _rows(ws, "llm_requests").height == 0
    assert sorted(Workspace.open(ws).partitions("rejects")) == [ingest.source_key(str(logs / "day0.jsonl"))]


def test_a_failed_worker_process_is_read_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    logs = _one_file(tmp_path)

    def fail(self: _ingest_worker.Handle[object]) -> None:
        raise _ingest_worker.WorkerError(-9, "killed")

    logmine.ingest(logs, tmp_path / "whole", IngestConfig(threads=False, split=False))
    monkeypatch.setattr(_ingest_worker.Handle, "result", fail)
    logmine.ingest(logs, tmp_path / "split", IngestConfig(split=True))
    _assert_same_rows(tmp_path / "whole", tmp_path / "split")


@pytest.mark.parametrize(("share", "expected"), [(0.0, 4), (0.5, 9), (0.99, None)], ids=["start", "middle", "last-line"])
def test_split_point_is_the_start_of_a_line(tmp_path: Path, share: float, expected: int | None) -> None:
    path = write_lines(tmp_path / "a.jsonl", [b"{a}", b"{bb}", b"{c}"])  # lines start at 0, 4, 9
    assert _ingest_split.split_point(path, path.stat().st_size, share) == expected
    assert _ingest_split.lines_before(path, 9) == 2


def test_a_span_reads_only_its_lines_numbered_from_its_first(tmp_path: Path) -> None:
    from logmine.formats.native import fast as _native_fast

    lines = [b'{"type":"event","ts":"2025-01-01T00:00:0%dZ","action":"a%d"}' % (i, i) for i in range(6)]
    path = write_lines(tmp_path / "a.jsonl", lines)
    start = sum(len(x) + 1 for x in lines[:2])
    stop = start + sum(len(x) + 1 for x in lines[2:5])
    batches = list(_native_fast.read(path, chunk_bytes=64, workers=0, span=(start, stop, 3)))
    events = pl.concat([b.events for b in batches if isinstance(b.events, pl.DataFrame) and b.events.height])
    assert events["action"].to_list() == ["a2", "a3", "a4"]
    assert events["source_line"].to_list() == [3, 4, 5]
    assert sum(b.bytes_read for b in batches) == stop - start


def test_the_worker_stops_when_the_reading_process_dies(tmp_path: Path) -> None:
    fifo = tmp_path / "never-written.jsonl"
    os.mkfifo(fifo)  # the worker blocks opening it, as if busy reading
    files = {t: str(tmp_path / f"{t}.parquet") for t in ingest.WRITTEN_TABLES}
    worker = _ingest_worker.Worker()
    worker.submit(functools.partial(_ingest_split.write_part, _ingest_split.Part(str(fifo), 0, None, "k", b"user-key", files)))
    try:
        assert worker.ready.wait(timeout=120)
        worker.proc.stdin.close()  # type: ignore[union-attr] - what this process dying does
        assert worker.proc.wait(timeout=120) == 3
    finally:
        worker.kill()


def test_what_the_worker_owes_counts_the_job_under_way_as_partly_done() -> None:
    worker = _ingest_worker.Worker()
    try:
        assert worker.ready.wait(timeout=120)
        worker.submit(functools.partial(time.sleep, 0.2), 2_000_000).result()  # its pace is known from now on
        worker.submit(functools.partial(time.sleep, 1.0), 10_000_000)
        time.sleep(0.3)
        owed = worker.owed()
        assert 1_000_000 <= owed < 10_000_000  # less what it has read by its pace, never under a tenth
        worker.submit(functools.partial(time.sleep, 0.0), 5_000_000)
        assert worker.owed() >= owed + 5_000_000 - 2_000_000  # a job not begun counts whole (the one under way read on meanwhile)
    finally:
        worker.kill()


@pytest.mark.parametrize(("n_cores", "busy", "expected"), [(2, True, 2), (2, False, 2), (1, False, 1)])
def test_a_big_file_is_split_on_two_cores_busy_or_not(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                       n_cores: int, busy: bool, expected: int) -> None:
    """Under load two processes get two shares of the cores (one hog: 14.8-15.8 s against 17.0-17.4 s
    one chunk at a time on the bench file), so only a one-core machine reads a big file in one."""
    logs = _one_file(tmp_path)
    monkeypatch.setattr(_ingest_reading, "THREADS_MIN_BYTES", 1)
    monkeypatch.setattr(_ingest_reading, "SPLIT_MIN_BYTES", 1)
    monkeypatch.setattr(_ingest_worker, "START_BYTES", 0)  # a worker still starting owes nothing: this file is small
    monkeypatch.setattr(_ingest_reading, "cores", lambda: n_cores)
    monkeypatch.setattr(_ingest_schedule, "cores", lambda: n_cores)
    monkeypatch.setattr(_ingest_reading, "use_threads", lambda: not busy)
    logmine.ingest(logs, tmp_path / "ws")
    assert len(Workspace.open(tmp_path / "ws").partitions("events")) == expected


def test_ingest_starts_its_worker_before_the_cli_imports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``logmine ingest`` on enough bytes starts the worker from its command line; the run's Worker adopts it."""
    logs = _one_file(tmp_path)
    for name in early.INGEST_POOLS:
        monkeypatch.delenv(name, raising=False)  # restored after: for_ingest sets them in this process
    monkeypatch.setattr(early, "cores", lambda: 2)
    early.for_ingest(["templates", str(logs)])
    early.for_ingest(["ingest", str(logs), "-o", str(tmp_path / "ws")])  # under PRESTART_BYTES
    assert early.take_worker() is None
    big_ws = tmp_path / "big-ws"
    big_ws.mkdir()
    (big_ws / "data.parquet").write_bytes(b"x" * (2 << 20))
    monkeypatch.setattr(early, "PRESTART_BYTES", 1 << 20)  # the logs are under it, the workspace over it
    early.for_ingest(["ingest", str(logs), "-o", str(big_ws), "-f", "json"])
    assert early.take_worker() is None  # the workspace named by -o is no input
    (tmp_path / "idea.log").write_bytes(b"x" * (2 << 20))
    early.for_ingest(["ingest", str(tmp_path / "idea.log"), "-o", str(tmp_path / "ws")])
    (tmp_path / "spans.jsonl").write_bytes(b"x" * (2 << 20))
    early.for_ingest(["ingest", str(tmp_path / "spans.jsonl"), "--input-format", "otel", "-o", str(tmp_path / "ws")])
    assert early.take_worker() is None  # no file the worker could take: the run would not use it
    monkeypatch.setattr(early, "PRESTART_BYTES", 1)
    early.for_ingest(["ingest", str(logs), "-o", str(tmp_path / "ws")])
    worker = _ingest_worker.Worker()
    try:
        assert early.take_worker() is None  # taken by the Worker
        files = {t: str(tmp_path / f"{t}.parquet") for t in ingest.WRITTEN_TABLES}
        path = logs / "day0.jsonl"
        report, written = worker.submit(functools.partial(_ingest_split.write_part, _ingest_split.Part(str(path), 0, None, "k", b"u", files))).result()
        assert report.lines_read == len(path.read_bytes().splitlines()) and "events" in written
    finally:
        worker.close()
