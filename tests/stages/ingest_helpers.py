"""Helpers shared by the ingest tests: native lines, and table contents compared as values."""

from __future__ import annotations

import random
from pathlib import Path

import orjson
import polars as pl
from polars.testing import assert_frame_equal

from logmine.workspace import Workspace

TABLES = ("events", "llm_requests", "rejects", "sources")
_ORDER = {
    "events": ["source_file", "source_line", "event_id"],
    "llm_requests": ["source_file", "source_line", "request_id"],
    "rejects": ["source_file", "source_line", "reason"],
    "sources": ["path"],
}


def event(i: int, user: str = "alice", **extra: object) -> bytes:
    obj = {"type": "event", "ts": f"2025-03-03T10:{i // 60 % 60:02d}:{i % 60:02d}.{i % 1000:03d}Z", "action": "file.save",
           "session_id": f"s{i % 7}", "user_id": user, "ide": "vscode", "file_path": f"src/m{i % 13}.py",
           "language": "python", "duration_ms": float(i % 500), **extra}
    return orjson.dumps(obj)


def request(i: int, user: str = "bob", **extra: object) -> bytes:
    obj = {"type": "llm_request", "ts": 1741000000000 + i * 1000, "kind": "completion", "session_id": f"s{i % 7}",
           "user_id": user, "model": "m", "prefix": "def f(x):\n    return", "completion": " x + 1", "accepted": i % 2 == 0,
           "ttft_ms": 100.0 + i % 7, "total_ms": 250.5, "prompt_tokens": 40, "completion_tokens": 3,
           "token_times_ms": [100.0, 180.0, 250.5], "token_texts": [" x", " +", " 1"], **extra}
    return orjson.dumps(obj)


def write_lines(path: Path, lines: list[bytes]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    return path


def big_native_dir(root: Path, files: int, lines: int, seed: int = 0) -> Path:
    """``files`` native files of ``lines`` lines each, about 1 % of them bad."""
    rng = random.Random(seed)
    for f in range(files):
        out = []
        for i in range(lines):
            roll = rng.random()
            if roll < 0.005:
                out.append(b'{"type":"event","ts":')  # truncated
            elif roll < 0.01:
                out.append(event(i, duration_ms=-1.0))  # absurd latency
            elif roll < 0.2:
                out.append(request(f * lines + i, user=f"user{rng.randrange(50)}"))
            else:
                out.append(event(f * lines + i, user=f"user{rng.randrange(50)}"))
        write_lines(root / f"day{f}.jsonl", out)
    return root


def table_contents(root: Path, table: str) -> pl.DataFrame:
    """A table's rows in a canonical order (``sources`` without its ``ingested_at`` time and ``partition`` name)."""
    df = Workspace.open(root).read(table)
    if table == "sources":
        df = df.drop("ingested_at", "partition")  # the time and the partition name are the run's
    return df.sort(_ORDER[table])


def assert_same_tables(a: Path, b: Path, tables: tuple[str, ...] = TABLES) -> None:
    for table in tables:
        assert_frame_equal(table_contents(a, table), table_contents(b, table), check_row_order=True)


def duckdb_counts(root: Path) -> dict[str, int]:
    """Row counts of the four views, read straight from OUT/logmine.duckdb as a user would."""
    import duckdb

    con = duckdb.connect(str(root / "logmine.duckdb"), read_only=True)
    try:
        return {t: con.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in TABLES}  # type: ignore[index]
    finally:
        con.close()
