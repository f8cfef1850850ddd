"""Which partitions a stage must (re)compute, and where stages keep their per-partition partials.

Each stage stores one row per partition in ``pipeline_partitions`` (one workspace partition per
stage): the partition's *fingerprint*, a hash of its input files' content hashes and of the
stage's settings. A partition is computed when its fingerprint changed or its partial is
missing, reused otherwise; a stored partition with no input left (deleted files, or aged out
by retention) is *gone* and its partials are dropped. Because the fingerprint row is written in
the same transaction as the partials, a run killed at any point leaves both consistent, and the
next run computes exactly what is still missing.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from logmine.partitions import PartitionPlan, compare
from logmine.workspace import Transaction, Workspace

log = logging.getLogger(__name__)

STATE_TABLE = "pipeline_partitions"
STATE_SCHEMA: dict[str, pl.DataType] = {
    "stage": pl.String(), "partition": pl.String(), "fingerprint": pl.String(), "run_id": pl.String(),
    "computed_at": pl.Datetime("us", "UTC"),
}
INPUTS_TABLE = "pipeline_inputs"
INPUTS_SCHEMA: dict[str, pl.DataType] = {
    "partition": pl.String(), "input": pl.String(), "path": pl.String(), "format": pl.String(), "sha256": pl.String(),
}


def plan(ws: Workspace, stage: str, fingerprints: Mapping[str, str], marker_table: str) -> PartitionPlan:
    """Compare ``fingerprints`` (partition -> hash) with the stored ones of ``stage``.

    ``marker_table`` is a table every computed partition has a partition in (its partials).
    """
    stored: dict[str, tuple[str, str, datetime]] = {}
    parts = ws.partitions(STATE_TABLE) if ws.has_table(STATE_TABLE) else {}
    if stage in parts:
        for row in pl.read_parquet(parts[stage]).iter_rows(named=True):
            stored[row["partition"]] = (row["fingerprint"], row["run_id"], row["computed_at"])
    have = set(ws.partitions(marker_table)) if ws.has_table(marker_table) else set()
    compute, reused = compare(fingerprints, {p: s[0] for p, s in stored.items()}, have)
    gone = sorted(p for p in set(stored) | have if p not in fingerprints)
    log.info("%s: %d partitions to compute, %d reused, %d gone", stage, len(compute), len(reused), len(gone))
    return PartitionPlan(compute, reused, gone, dict(fingerprints), stored)


def write_state(txn: Transaction, stage: str, p: PartitionPlan, run_id: str) -> None:
    """Record the fingerprints of the stage's partitions (same transaction as its partials)."""
    now = datetime.now(UTC)
    rows = [
        {"stage": stage, "partition": key, "fingerprint": p.fingerprints[key],
         "run_id": run_id if key in p.compute else p.stored[key][1],
         "computed_at": now if key in p.compute else p.stored[key][2]}
        for key in p.kept
    ]
    txn.ensure_table(STATE_TABLE, STATE_SCHEMA)
    txn.put_partition(STATE_TABLE, stage, pl.DataFrame(rows, schema=STATE_SCHEMA))


def stored_frame(ws: Workspace, table: str, partition: str) -> pl.DataFrame | None:
    """One stored partial, or None."""
    if not ws.has_table(table):
        return None
    path = ws.partitions(table).get(partition)
    return pl.read_parquet(path) if path is not None else None


def partition_files(ws: Workspace, table: str, keys: list[str]) -> list[str]:
    """The Parquet files of ``table`` for the given partition keys (those that exist)."""
    if not ws.has_table(table):
        return []
    parts: dict[str, Path] = ws.partitions(table)
    return [str(parts[k]) for k in keys if k in parts]


def drop(txn: Transaction, tables: list[str], partitions: list[str]) -> None:
    for table in tables:
        for key in partitions:
            txn.drop_partition(table, key)
