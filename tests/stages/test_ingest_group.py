"""Small native files read together (one Polars parse for several files) give each file exactly
what reading it alone per line gives: its rows, its rejects, its line numbers and its partition."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ingest_helpers import big_native_dir, table_contents
from polars.testing import assert_frame_equal
from test_ingest import BAD_LINES
from test_ingest_fast import _collect, _line

import logmine
from logmine import early
from logmine.formats import native
from logmine.formats.native import fast as _native_fast
from logmine.stages.ingest import schedule as _ingest_schedule
from logmine.stages.ingest import IngestConfig, source_key
from logmine.stages.ingest import worker as _ingest_worker
from logmine.workspace import Workspace

_file = st.tuples(st.lists(_line, max_size=12), st.sampled_from([b"\n", b"\r\n"]), st.booleans())


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(files=st.lists(_file, min_size=1, max_size=5))
def test_files_read_together_equal_each_read_per_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      files: list[tuple[list[bytes], bytes, bool]]) -> None:
    monkeypatch.setattr(_native_fast, "MIN_FAST_LINES", 2)
    contents = [newline.join(lines) + (newline if final and lines else b"") for lines, newline, final in files]
    together = native.read_files(contents)
    assert len(together) == len(contents)
    for i, (content, batch) in enumerate(zip(contents, together, strict=True)):
        path = tmp_path / f"f{i}.jsonl"
        path.write_bytes(content)
        alone = _collect(native.read_per_line(path))
        grouped = _collect([batch])
        assert_frame_equal(grouped[0], alone[0])
        assert_frame_equal(grouped[1], alone[1])
        assert grouped[2] == alone[2]
        assert grouped[3:] == alone[3:]
        assert batch.bytes_read == len(content)


def _tables(root: Path) -> dict[str, pl.DataFrame]:
    """The tables in a canonical order (files' rows in another order across partitions are the same rows)."""
    return {t: table_contents(root, t) for t in ("events", "llm_requests", "rejects", "sources")}


def _assert_partitions_hold_their_files(root: Path) -> dict[str, list[str]]:
    """Each ``sources.partition`` names the partition holding exactly its files' rows; partition -> files."""
    ws = Workspace.open(root)
    sources = ws.read("sources").filter(pl.col("source_format") == "native")
    members: dict[str, list[str]] = {}
    for path, partition in sources.select("path", "partition").iter_rows():
        members.setdefault(partition, []).append(path)
    parts = ws.partitions("events")
    assert set(parts) == set(members)
    for partition, files in members.items():
        assert set(pl.read_parquet(parts[partition])["source_file"].unique().to_list()) == set(files)
    return members


@pytest.mark.parametrize("worker", [False, True], ids=["here", "worker-too"])
def test_ingest_of_small_files_together_equals_one_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, worker: bool) -> None:
    logs = big_native_dir(tmp_path / "logs", files=6, lines=300)
    sent: list[int] = []
    if worker:  # groups of about two files, every other one read by the run's worker process
        monkeypatch.setattr(early, "PRESTART_BYTES", 0)
        monkeypatch.setattr(_ingest_schedule, "cores", lambda: 2)
        monkeypatch.setattr(native, "GROUP_BYTES", 2 * (logs / "day0.jsonl").stat().st_size + 1)
        submit = _ingest_worker.Worker.submit

        def counted(self: _ingest_worker.Worker, job: object, nbytes: int = 0) -> object:
            sent.append(nbytes)
            self.ready.wait(timeout=120)  # started: it owes nothing more, so it takes the next group
            return submit(self, job, nbytes)  # type: ignore[arg-type]

        monkeypatch.setattr(_ingest_worker.Worker, "submit", counted)
        monkeypatch.setattr(_ingest_worker, "START_BYTES", 0)
    (logs / "day1.jsonl").write_bytes((logs / "day1.jsonl").read_bytes() + b"".join(raw + b"\n" for raw, _ in BAD_LINES))
    (logs / "day2.jsonl").write_bytes((logs / "day2.jsonl").read_bytes().rstrip(b"\n"))  # no final newline
    (logs / "notes.txt").write_bytes(b"not a log\n")  # no reader: a file-level reject amid the group
    monkeypatch.setenv("LOGMINE_USER_KEY", "k-group")
    together = logmine.ingest(logs, tmp_path / "together")
    monkeypatch.setattr(early, "PRESTART_BYTES", 1 << 40)  # no worker for the per-line runs
    monkeypatch.setenv("LOGMINE_NATIVE_FAST", "0")  # the per-line reader, one file at a time
    alone = logmine.ingest(logs, tmp_path / "alone")
    same = {"seconds": 0, "workspace": ""}
    assert bool(sent) == worker
    assert together.summary() | same == alone.summary() | same
    a, b = _tables(tmp_path / "together"), _tables(tmp_path / "alone")
    for table in a:
        assert_frame_equal(a[table], b[table], check_row_order=True)
    native_files = sorted(str(p) for p in logs.glob("*.jsonl"))
    groups = _assert_partitions_hold_their_files(tmp_path / "together")
    assert len(groups) < len(native_files) and sorted(f for files in groups.values() for f in files) == native_files
    assert a["rejects"].filter(pl.col("source_file") == str(logs / "day1.jsonl")).height >= len(BAD_LINES)
    assert sorted(_assert_partitions_hold_their_files(tmp_path / "alone")) == sorted(source_key(p) for p in native_files)
    monkeypatch.delenv("LOGMINE_NATIVE_FAST")
    again = logmine.ingest(logs, tmp_path / "together")
    assert again.summary()["files_skipped"] == len(native_files) + 1


def test_a_grouped_file_read_again_leaves_its_group(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A changed file of a group is read again, and the rest of its group keeps its rows; without
    groups (the pipeline's ingest) every grouped file moves to a partition of its own."""
    logs = big_native_dir(tmp_path / "logs", files=5, lines=200)
    monkeypatch.setenv("LOGMINE_USER_KEY", "k-group")
    ws = tmp_path / "ws"
    logmine.ingest(logs, ws)
    (first,) = _assert_partitions_hold_their_files(ws).values()  # one group of five
    (logs / "day3.jsonl").write_bytes((logs / "day3.jsonl").read_bytes() + (logs / "day0.jsonl").read_bytes())
    report = logmine.ingest(logs, ws)
    assert [f.status for f in report.files].count("ingested") == 1
    groups = _assert_partitions_hold_their_files(ws)
    assert sorted(map(len, groups.values())) == [1, 4] and len(first) == 5
    logmine.ingest(logs, tmp_path / "fresh")
    a, b = _tables(ws), _tables(tmp_path / "fresh")
    for table in a:
        assert_frame_equal(a[table], b[table], check_row_order=True)
    report = logmine.ingest(logs, ws, IngestConfig(group=False))
    assert [f.status for f in report.files].count("ingested") == 4  # the four still grouped
    assert sorted(_assert_partitions_hold_their_files(ws)) == sorted(source_key(str(p)) for p in logs.glob("*.jsonl"))
    a = _tables(ws)
    for table in a:
        assert_frame_equal(a[table], b[table], check_row_order=True)
