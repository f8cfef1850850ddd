"""Incremental state: which partitions of a stage to compute, reuse or drop, and where that is kept.

A stage that keeps one partial per workspace partition (a day of the heatmap, a partition of
the nightly pipeline's flows or templates) fingerprints each partition's input and compares
the fingerprints with the stored ones: a partition is computed when its fingerprint changed or
its partial is missing, reused otherwise, and a stored one with no input left is gone
(:func:`compare`, :class:`PartitionPlan`).

This module is also the one store of those fingerprints. A stage keeps them in a *state table*
(:class:`StateTable`): one row per partition with the partition's key, its ``fingerprint``, when
it was computed (``computed_at``) and whatever figures the stage adds. Two state tables exist,
each a public table whose columns stay as they are:

- ``pipeline_partitions`` (the nightly pipeline's flows and templates steps, in
  :mod:`logmine.pipeline.partials`): ``stage, partition, fingerprint, run_id, computed_at``,
  the rows of every stage in one table, one workspace partition per stage (``by_stage``);
- ``heatmap_days`` (the heatmap stage, whether run as ``logmine heatmap`` or as the pipeline's
  heatmap step, in :mod:`logmine.stages.heatmap.store`): ``day, fingerprint``, the day's
  ``requests, measured, tokens, alpha`` and ``computed_at``; the whole table is the heatmap's.

They stay two tables because that is the least change: ``heatmap_days`` is written by the
one-shot heatmap command with no pipeline around it and read by people and the report for its
per-day figures, and ``pipeline_partitions`` is written by steps that share one run id. What
they share is the code: :func:`read_state` reads a stage's rows, :func:`plan` compares them with
this run's fingerprints, :func:`write_state` writes the rows after the run (the computed
partitions' new rows, the others' rows as stored, the gone ones' rows removed) in the same
transaction as the partials, and :func:`drop_partitions` drops the gone partitions' partials.
Because state and partials commit together, a run killed at any point leaves both consistent,
and the next run computes exactly what is still missing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from logmine.workspace import Transaction, Workspace

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PartitionPlan:
    """A stage's partitions: to compute, reused as stored, and gone."""

    compute: list[str]
    """Partitions whose fingerprint changed or whose partial is missing, sorted."""
    reused: list[str]
    """Partitions whose stored partial is still good, sorted."""
    gone: list[str]
    """Stored partitions with no input left (their partials are dropped), sorted."""
    fingerprints: dict[str, str]
    """Partition -> fingerprint of its input in this run."""
    stored: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Partition -> its state-table row as stored before this run (every stored row of the stage)."""

    @property
    def kept(self) -> list[str]:
        """The partitions that have a partial after this run (computed or reused), sorted."""
        return sorted(self.compute + self.reused)

    def to_json(self) -> dict[str, object]:
        return {"computed": self.compute, "reused": len(self.reused), "dropped": self.gone}


def compare(
    fingerprints: Mapping[str, str], stored: Mapping[str, str], have: Collection[str], recompute: bool = False,
) -> tuple[list[str], list[str]]:
    """``(compute, reused)``: the partitions of ``fingerprints`` whose stored fingerprint differs,
    whose partial is not in ``have`` (or all of them, with ``recompute``), and the rest; sorted."""
    compute = [p for p in sorted(fingerprints) if recompute or stored.get(p) != fingerprints[p] or p not in have]
    todo = set(compute)
    reused = [p for p in sorted(fingerprints) if p not in todo]
    return compute, reused


# -- the store ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class StateTable:
    """A workspace table of partition fingerprints: which table, its columns, and its layout."""

    name: str
    """The workspace table."""
    schema: Mapping[str, pl.DataType]
    """Its columns: at least ``key``, ``fingerprint`` and ``computed_at`` (and ``stage`` when ``by_stage``)."""
    key: str = "partition"
    """The column that names the partition."""
    by_stage: bool = False
    """The rows of several stages in one table, one workspace partition per stage (in a ``stage``
    column); else the whole table holds one stage's rows."""


def read_state(ws: Workspace, state: StateTable, stage: str) -> dict[str, dict[str, Any]]:
    """Partition -> its stored row, for every partition of ``stage`` in ``state``."""
    if not ws.has_table(state.name):
        return {}
    if state.by_stage:
        path = ws.partitions(state.name).get(stage)
        if path is None:
            return {}
        rows = pl.read_parquet(path)
    else:
        rows = ws.read(state.name)
    return {row[state.key]: row for row in rows.iter_rows(named=True)}


def plan(
    ws: Workspace, state: StateTable, stage: str, fingerprints: Mapping[str, str], marker_table: str,
    recompute: bool = False, in_scope: Callable[[str], bool] | None = None,
) -> PartitionPlan:
    """Compare ``fingerprints`` (partition -> hash) with the stage's stored ones.

    ``marker_table`` is a table every computed partition has a partition in (its partials): one
    without it is computed again. Partitions ``in_scope`` rejects (default: none) are left as
    they are, neither computed nor gone: a stored day outside a heatmap window stays stored.
    """
    stored = read_state(ws, state, stage)
    have = set(ws.partitions(marker_table)) if ws.has_table(marker_table) else set()
    compute, reused = compare(fingerprints, {p: row["fingerprint"] for p, row in stored.items()}, have, recompute)
    scope = in_scope or (lambda _: True)
    gone = sorted(p for p in set(stored) | have if p not in fingerprints and scope(p))
    log.info("%s: %d partitions to compute, %d reused, %d gone", stage, len(compute), len(reused), len(gone))
    return PartitionPlan(compute, reused, gone, dict(fingerprints), stored)


def write_state(
    txn: Transaction, state: StateTable, stage: str, p: PartitionPlan, figures: Mapping[str, Mapping[str, Any]] | None = None,
) -> pl.DataFrame:
    """Write the stage's rows after this run, in ``txn`` (the transaction of its partials).

    Each computed partition gets a new row: its key, this run's fingerprint, ``computed_at`` now
    and ``figures[partition]`` (the stage's own columns); a gone partition's row is removed, and
    every other stored row is kept as it was. Returns the rows written, sorted by partition.
    """
    figures = figures or {}
    now = datetime.now(UTC)
    replaced = set(p.compute) | set(p.gone)
    rows = [row for key, row in p.stored.items() if key not in replaced]
    for key in p.compute:
        row = {state.key: key, "fingerprint": p.fingerprints[key], "computed_at": now, **figures.get(key, {})}
        rows.append({"stage": stage, **row} if state.by_stage else row)
    df = pl.DataFrame(rows, schema=dict(state.schema)).sort(state.key)
    txn.ensure_table(state.name, state.schema)
    if state.by_stage:
        txn.put_partition(state.name, stage, df)
    else:
        txn.replace_table(state.name, df)
    return df


def drop_partitions(txn: Transaction, tables: Iterable[str], partitions: Iterable[str]) -> None:
    """Drop these partitions (the gone ones) from each of ``tables`` (a stage's partials)."""
    keys = list(partitions)
    for table in tables:
        for key in keys:
            txn.drop_partition(table, key)


def partition_files(ws: Workspace, table: str, keys: Iterable[str]) -> list[str]:
    """The Parquet files of ``table``'s partitions ``keys``, in that order (those that exist), as
    strings (engine tasks take them)."""
    if not ws.has_table(table):
        return []
    parts: dict[str, Path] = ws.partitions(table)
    return [str(parts[k]) for k in keys if k in parts]
