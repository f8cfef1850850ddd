"""The workspace: atomic commits, crash points, leftovers of killed runs, moved directories, locks."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import polars as pl
import pytest

from logmine.errors import FormatVersionError, WorkspaceError, WorkspaceLockedError
from logmine.workspace import CRASH_ENV, CRASH_POINTS, MANIFEST_NAME, Workspace

ROOT = Path(__file__).resolve().parent.parent


def _commit(root: Path, rows: list[int]) -> None:
    ws = Workspace.create(root)
    with ws.lock():
        txn = ws.reload().transaction()
        txn.replace_table("numbers", pl.DataFrame({"n": rows}))
        txn.commit()


def _duckdb_numbers(root: Path) -> list[int]:
    con = duckdb.connect(str(root / "logmine.duckdb"), read_only=True)
    try:
        return [r[0] for r in con.execute("SELECT n FROM numbers ORDER BY n").fetchall()]
    finally:
        con.close()


COMMIT = """
import sys
import polars as pl
from logmine.workspace import Workspace
ws = Workspace.create(sys.argv[1])
with ws.lock():
    txn = ws.reload().transaction()
    txn.replace_table("numbers", pl.DataFrame({"n": [int(x) for x in sys.argv[2:]]}))
    txn.commit()
"""


@pytest.mark.parametrize("point", CRASH_POINTS)
def test_a_commit_killed_at_any_point_leaves_a_queryable_workspace(tmp_path: Path, point: str) -> None:
    root = tmp_path / "ws"
    _commit(root, [1, 2])
    env = {**os.environ, CRASH_ENV: point}
    proc = subprocess.run([sys.executable, "-c", COMMIT, str(root), "3", "4", "5"], env=env, cwd=ROOT, capture_output=True)
    assert proc.returncode == 70, proc.stderr.decode()[-2000:]
    # The DuckDB file as left behind still answers, with the old or the new rows, never a mix.
    assert _duckdb_numbers(root) == ([1, 2] if point != "after-duckdb" else [3, 4, 5])
    expected = [1, 2] if point == "before-manifest" else [3, 4, 5]
    ws = Workspace.open(root)  # rebuilds the views when the manifest is newer than the DuckDB file
    assert sorted(ws.read("numbers")["n"]) == expected
    assert _duckdb_numbers(root) == expected
    _commit(root, [6])  # the next commit completes and collects what the killed one left behind
    assert _duckdb_numbers(root) == [6]
    live = {rel for e in Workspace.open(root).tables.values() for rel in [*e.partitions.values(), e.schema_file] if rel}
    on_disk = {str(p.relative_to(root)) for p in (root / "data").rglob("*") if p.is_file()}
    assert on_disk == live
    assert not list(root.glob(".*.tmp"))


def test_a_first_run_killed_before_its_commit_does_not_block_the_next(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    env = {**os.environ, CRASH_ENV: "before-manifest"}
    proc = subprocess.run([sys.executable, "-c", COMMIT, str(root), "1"], env=env, cwd=ROOT, capture_output=True)
    assert proc.returncode == 70
    (root / f".{MANIFEST_NAME}.deadbeef.tmp").write_text("{")  # as if killed while writing the manifest
    with pytest.raises(WorkspaceError, match="no manifest.json"):
        Workspace.open(root)
    _commit(root, [7])
    assert _duckdb_numbers(root) == [7]


def test_a_moved_workspace_rebuilds_its_views(tmp_path: Path) -> None:
    _commit(tmp_path / "a", [1, 2, 3])
    shutil.move(tmp_path / "a", tmp_path / "b")
    ws = Workspace.open(tmp_path / "b")
    con = ws.connect()
    try:
        assert con.execute("SELECT sum(n) FROM numbers").fetchone()[0] == 6
        assert con.execute("SELECT root FROM _logmine_meta").fetchone()[0] == str((tmp_path / "b").resolve())
    finally:
        con.close()


def test_partition_keys_that_sanitise_alike_stay_apart(tmp_path: Path) -> None:
    ws = Workspace.create(tmp_path / "ws")
    with ws.lock():
        txn = ws.transaction()
        txn.put_partition("t", "a/b", pl.DataFrame({"k": ["a/b"]}))
        txn.put_partition("t", "a_b", pl.DataFrame({"k": ["a_b"]}))
        txn.put_partition("t", "x" * 200, pl.DataFrame({"k": ["long"]}))
        txn.commit()
    assert sorted(Workspace.open(tmp_path / "ws").read("t")["k"]) == ["a/b", "a_b", "long"]


def test_a_non_workspace_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(WorkspaceError, match="non-empty directory that is not a logmine workspace"):
        Workspace.create(tmp_path)
    with pytest.raises(WorkspaceError, match="exists and is not a directory"):
        Workspace.create(tmp_path / "notes.txt")


def test_the_lock_keeps_a_second_writer_out(tmp_path: Path) -> None:
    _commit(tmp_path / "ws", [1])
    ws = Workspace.open(tmp_path / "ws")
    with ws.lock(), pytest.raises(WorkspaceLockedError, match="locked by another logmine run"), ws.lock():
        pass


def test_a_newer_workspace_format_is_refused(tmp_path: Path) -> None:
    _commit(tmp_path / "ws", [1])
    manifest = json.loads((tmp_path / "ws" / MANIFEST_NAME).read_text())
    (tmp_path / "ws" / MANIFEST_NAME).write_text(json.dumps({**manifest, "format_version": 99}))
    with pytest.raises(FormatVersionError, match="format 99 is newer than supported 1; upgrade logmine"):
        Workspace.open(tmp_path / "ws")


def test_a_table_that_gains_columns_gets_a_new_schema_file_and_old_partitions_read_on(tmp_path: Path) -> None:
    ws = Workspace.create(tmp_path / "ws")
    old = {"reason": pl.String(), "raw": pl.String()}
    with ws.lock():
        txn = ws.transaction()
        txn.ensure_table("rejects", old)
        txn.put_partition("rejects", "a", pl.DataFrame({"reason": ["wrong_type: x"], "raw": ["{}"]}))
        txn.commit()
    ws = Workspace.open(tmp_path / "ws")
    with ws.lock():
        txn = ws.transaction()
        txn.ensure_table("rejects", {**old, "detail": pl.String()})
        txn.put_partition("rejects", "b", pl.DataFrame({"reason": ["wrong_type"], "raw": ["[]"], "detail": ["y"]}))
        txn.commit()
    ws = Workspace.open(tmp_path / "ws")
    assert pl.read_parquet_schema(ws.root / ws.tables["rejects"].schema_file).keys() == {"reason", "raw", "detail"}
    rows = ws.connect().execute("SELECT reason, detail FROM rejects ORDER BY raw").fetchall()
    assert rows == [("wrong_type", "y"), ("wrong_type: x", None)]
