"""Small native files read together (one Polars parse for several files) give each file exactly
what reading it alone per line gives: its rows, its rejects, its line numbers and its partition."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ingest_helpers import big_native_dir
from polars.testing import assert_frame_equal
from test_ingest import BAD_LINES
from test_ingest_fast import _collect, _line

import logmine
from logmine.formats import native
from logmine.formats.native import fast as _native_fast
from logmine.stages.ingest import schedule as _ingest_schedule
from logmine.stages.ingest import source_key
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
    ws = Workspace.open(root)
    tables = {t: ws.read(t) for t in ("events", "llm_requests", "rejects")}
    tables["sources"] = ws.read("sources").drop("ingested_at")
    return tables


@pytest.mark.parametrize("worker", [False, True], ids=["here", "worker-too"])
def test_ingest_of_small_files_together_equals_one_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, worker: bool) -> None:
    logs = big_native_dir(tmp_path / "logs", files=6, lines=300)
    sent: list[int] = []
    if worker:  # groups of about two files, every other one read by the run's worker process
        monkeypatch.setattr(_ingest_schedule, "PRESTART_BYTES", 0)
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
    monkeypatch.setenv("LOGMINE_NATIVE_FAST", "0")  # the per-line reader, one file at a time
    alone = logmine.ingest(logs, tmp_path / "alone")
    monkeypatch.setattr(_ingest_schedule, "PRESTART_BYTES", 1 << 40)  # no worker for the per-line run
    same = {"seconds": 0, "workspace": ""}
    assert bool(sent) == worker
    assert together.summary() | same == alone.summary() | same
    a, b = _tables(tmp_path / "together"), _tables(tmp_path / "alone")
    for table in a:
        assert_frame_equal(a[table], b[table], check_row_order=True)
    ws = Workspace.open(tmp_path / "together")
    native_files = sorted(str(p) for p in logs.glob("*.jsonl"))
    assert sorted(ws.partitions("events")) == sorted(source_key(p) for p in native_files)  # one partition per file
    assert [pl.read_parquet(f)["source_file"].n_unique() for f in ws.files("events")] == [1] * len(native_files)
    assert a["rejects"].filter(pl.col("source_file") == str(logs / "day1.jsonl")).height >= len(BAD_LINES)
    monkeypatch.delenv("LOGMINE_NATIVE_FAST")
    again = logmine.ingest(logs, tmp_path / "together")
    assert again.summary()["files_skipped"] == len(native_files) + 1
