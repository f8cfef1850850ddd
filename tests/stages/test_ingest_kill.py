"""`logmine ingest` killed at any moment (SIGKILL, or os._exit at the commit's crash points)
leaves the previous workspace valid and queryable, and the next run completes it: its tables
then equal those of a clean run."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from ingest_helpers import assert_same_tables, big_native_dir, duckdb_counts, event, write_lines

import logmine
from logmine.workspace import CRASH_ENV, CRASH_POINTS, Workspace

ROOT = Path(__file__).resolve().parents[2]


def _command(logs: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "logmine", "ingest", str(logs), "-o", str(out), "-q", "--format", "json"]


def _scenario(tmp_path: Path, files: int, lines: int) -> tuple[Path, Path, Path, dict[str, int], dict[str, int]]:
    """A previous workspace (v1 of the logs), the logs now (v2: one file changed, one added), and a
    clean workspace of v2; with the row counts of both."""
    logs = big_native_dir(tmp_path / "logs", files, lines)
    previous = tmp_path / "previous"
    logmine.ingest(logs, previous)
    write_lines(logs / "day0.jsonl", [event(i, user="changed") for i in range(lines // 2)])
    big_native_dir(tmp_path / "more", 1, lines, seed=7)
    shutil.move(tmp_path / "more" / "day0.jsonl", logs / "new.jsonl")
    clean = tmp_path / "clean"
    logmine.ingest(logs, clean)
    return logs, previous, clean, duckdb_counts(previous), duckdb_counts(clean)


def _check_killed(ws: Path, logs: Path, clean: Path, allowed: list[dict[str, int]]) -> None:
    assert duckdb_counts(ws) in allowed  # the DuckDB file left behind answers, old state or new
    Workspace.open(ws)  # and the workspace opens (rebuilding its views if they lag the manifest)
    assert duckdb_counts(ws) in allowed
    logmine.ingest(logs, ws)  # the next run completes the work
    assert_same_tables(ws, clean)
    assert duckdb_counts(ws) == allowed[-1]


def test_ingest_killed_at_each_commit_point_then_rerun_equals_a_clean_run(tmp_path: Path) -> None:
    logs, previous, clean, old, new = _scenario(tmp_path, files=3, lines=4000)
    for point in CRASH_POINTS:
        ws = tmp_path / f"ws-{point}"
        shutil.copytree(previous, ws)
        env = {**os.environ, CRASH_ENV: point}
        proc = subprocess.run(_command(logs, ws), env=env, cwd=ROOT, capture_output=True, timeout=300)
        assert proc.returncode == 70, proc.stderr.decode()[-2000:]
        left = duckdb_counts(ws)
        assert left == (new if point == "after-duckdb" else old)
        _check_killed(ws, logs, clean, [old, new])


def _random_kills(tmp_path: Path, files: int, lines: int, kills: int, seed: int) -> None:
    logs, previous, clean, old, new = _scenario(tmp_path, files, lines)
    started = time.perf_counter()
    subprocess.run(_command(logs, tmp_path / "timing"), cwd=ROOT, capture_output=True, check=True, timeout=300)
    duration = time.perf_counter() - started
    rng = random.Random(seed)
    outcomes: list[int] = []
    for k in range(kills):
        ws = tmp_path / f"ws-{k}"
        shutil.copytree(previous, ws)
        proc = subprocess.Popen(_command(logs, ws), cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0.3, 1.0) * duration)
        proc.send_signal(signal.SIGKILL)
        outcomes.append(proc.wait(timeout=60))
        _check_killed(ws, logs, clean, [old, new])
    assert -signal.SIGKILL in outcomes  # at least one run really died mid-way
    print(f"killed runs: {outcomes.count(-signal.SIGKILL)} of {kills}, run time {duration:.2f} s")


def test_ingest_sigkilled_at_random_moments_then_rerun_equals_a_clean_run(tmp_path: Path) -> None:
    _random_kills(tmp_path, files=3, lines=6000, kills=3, seed=1)


@pytest.mark.slow
def test_ingest_sigkilled_many_times_on_a_larger_input(tmp_path: Path) -> None:
    _random_kills(tmp_path, files=4, lines=40_000, kills=12, seed=2)
