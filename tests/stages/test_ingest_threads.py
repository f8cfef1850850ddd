"""Ingest with and without threads: the same workspace; the choice follows the spare cores."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from ingest_helpers import assert_same_tables, event, request, write_lines
from test_ingest import BAD_LINES

import logmine
from logmine.formats.native import fast as _native_fast
from logmine.early import INGEST_POOLS
from logmine.stages.ingest import threads as _ingest_threads
from logmine.stages.ingest.core import IngestConfig


@pytest.mark.parametrize("chunk_bytes", [700, 1 << 20], ids=["many-chunks", "one-chunk"])
def test_threads_on_and_off_make_the_same_workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk_bytes: int) -> None:
    lines = [event(i) if i % 3 else request(i) for i in range(300)] + [raw for raw, _ in BAD_LINES] + [event(999)]
    write_lines(tmp_path / "logs" / "a.jsonl", lines)
    monkeypatch.setenv("LOGMINE_NATIVE_FAST", "1")
    monkeypatch.setattr(_native_fast.read, "__defaults__", (chunk_bytes, _native_fast.WORKERS))
    serial = logmine.ingest(tmp_path / "logs", tmp_path / "serial", IngestConfig(threads=False))
    threaded = logmine.ingest(tmp_path / "logs", tmp_path / "threaded", IngestConfig(threads=True))
    assert serial.lines_rejected == threaded.lines_rejected == len(BAD_LINES)
    assert_same_tables(tmp_path / "serial", tmp_path / "threaded")


@pytest.mark.parametrize(("spare", "expected"), [(0.0, False), (1.4, False), (1.5, True), (16.0, True)])
def test_threads_only_when_cores_are_spare(spare: float, expected: bool) -> None:
    assert _ingest_threads.use_threads(spare) is expected


def test_runnable_others_is_a_count_or_unknown() -> None:
    others = _ingest_threads.runnable_others(samples=2, interval=0.0)
    assert others is None or others >= 0


@pytest.mark.parametrize(("argv", "user", "expected"), [(["ingest", "x"], None, 1), (["ingest"], "2", 2), (["templates"], None, None)])
def test_ingest_gets_one_thread_pools_before_polars_loads(argv: list[str], user: str | None, expected: int | None) -> None:
    """Through the CLI's import, as ``logmine ingest`` runs: Polars sizes its pool when it loads."""
    env = {k: v for k, v in os.environ.items() if k not in INGEST_POOLS}
    if user is not None:
        env["POLARS_MAX_THREADS"] = user
    code = ("import sys; sys.argv = ['logmine', *sys.argv[1:]]; import logmine.cli, os, polars; "
            "print(polars.thread_pool_size(), os.environ.get('OPENBLAS_NUM_THREADS'))")
    out = subprocess.run([sys.executable, "-c", code, *argv], env=env, capture_output=True, text=True, check=True).stdout.split()
    if expected is None:
        assert out[1] == "None" and int(out[0]) >= 1
    else:
        assert int(out[0]) == expected and out[1] == "1"
