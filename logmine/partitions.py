"""The plan of an incremental stage: which of its partitions to compute, reuse or drop.

A stage that keeps one partial per workspace partition (a day of the heatmap, a partition of
the nightly pipeline's flows or templates) fingerprints each partition's input and compares
the fingerprints with the stored ones: a partition is computed when its fingerprint changed or
its partial is missing, reused otherwise, and a stored one with no input left is gone.
The heatmap stage (:mod:`logmine.stages.heatmap.store`) and the pipeline steps
(:mod:`logmine.pipeline.partials`) both plan with this type.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime


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
    stored: dict[str, tuple[str, str, datetime]] = field(default_factory=dict)
    """Partition -> (fingerprint, run_id, computed_at) as stored before this run, where the stage keeps them."""

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
