"""The partition plan shared by the heatmap stage and the pipeline steps."""

from __future__ import annotations

from logmine.partitions import PartitionPlan, compare


def test_compare_computes_changed_and_missing_partitions() -> None:
    fingerprints = {"2026-01-03": "c", "2026-01-01": "a", "2026-01-02": "b2"}
    stored = {"2026-01-01": "a", "2026-01-02": "b", "2026-01-03": "c"}
    have = {"2026-01-01", "2026-01-02"}  # 01-03's partial is missing
    assert compare(fingerprints, stored, have) == (["2026-01-02", "2026-01-03"], ["2026-01-01"])


def test_compare_recompute_takes_every_partition() -> None:
    assert compare({"b": "1", "a": "1"}, {"a": "1", "b": "1"}, {"a", "b"}, recompute=True) == (["a", "b"], [])


def test_plan_kept_and_json() -> None:
    plan = PartitionPlan(compute=["c"], reused=["b", "a"], gone=["z"], fingerprints={"a": "1", "b": "1", "c": "2"})
    assert plan.kept == ["a", "b", "c"]
    assert plan.stored == {}
    assert plan.to_json() == {"computed": ["c"], "reused": 2, "dropped": ["z"]}
