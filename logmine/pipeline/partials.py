"""Where the pipeline steps keep their partition state and read their per-partition partials.

Each step stores one row per partition in ``pipeline_partitions`` (one workspace partition per
stage): the partition's *fingerprint*, a hash of its input files' content hashes and of the
stage's settings, and the run that computed it. Planning, writing that state and dropping gone
partitions is :mod:`logmine.partitions`' store (the heatmap stage keeps its ``heatmap_days`` with
the same functions); this module names the pipeline's state table (:data:`STATE`) and the
``pipeline_inputs`` table, and reads the steps' stored partials.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from logmine import partitions
from logmine.partitions import PartitionPlan, StateTable
from logmine.workspace import Transaction, Workspace

STATE_TABLE = "pipeline_partitions"
STATE_SCHEMA: dict[str, pl.DataType] = {
    "stage": pl.String(), "partition": pl.String(), "fingerprint": pl.String(), "run_id": pl.String(),
    "computed_at": pl.Datetime("us", "UTC"),
}
STATE = StateTable(STATE_TABLE, STATE_SCHEMA, key="partition", by_stage=True)
"""The pipeline steps' state table: every stage's rows, one workspace partition per stage."""
INPUTS_TABLE = "pipeline_inputs"
INPUTS_SCHEMA: dict[str, pl.DataType] = {
    "partition": pl.String(), "input": pl.String(), "path": pl.String(), "format": pl.String(), "sha256": pl.String(),
}


def plan(ws: Workspace, stage: str, fingerprints: Mapping[str, str], marker_table: str) -> PartitionPlan:
    """Compare ``fingerprints`` (partition -> hash) with the stored ones of ``stage``.

    ``marker_table`` is a table every computed partition has a partition in (its partials).
    """
    return partitions.plan(ws, STATE, stage, fingerprints, marker_table)


def write_state(txn: Transaction, stage: str, p: PartitionPlan, run_id: str) -> None:
    """Record the fingerprints of the stage's partitions (same transaction as its partials)."""
    partitions.write_state(txn, STATE, stage, p, {key: {"run_id": run_id} for key in p.compute})


def stored_frame(ws: Workspace, table: str, partition: str) -> pl.DataFrame | None:
    """One stored partial, or None."""
    files = partitions.partition_files(ws, table, [partition])
    return pl.read_parquet(files[0]) if files else None
