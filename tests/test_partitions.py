"""The partition plan and state store shared by the heatmap stage and the pipeline steps."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from logmine.partitions import (
    PartitionPlan,
    StateTable,
    compare,
    drop_partitions,
    partition_files,
    plan,
    read_state,
    write_state,
)
from logmine.workspace import Workspace


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


# -- the store: one way to read, plan, write and drop a stage's state ---------------------------

STATE = StateTable("state", {"stage": pl.String(), "partition": pl.String(), "fingerprint": pl.String(),
                             "run_id": pl.String(), "computed_at": pl.Datetime("us", "UTC")}, by_stage=True)
DAYS = StateTable("days", {"day": pl.String(), "fingerprint": pl.String(), "rows": pl.Int64(),
                           "computed_at": pl.Datetime("us", "UTC")}, key="day")


def _run(ws: Workspace, state: StateTable, stage: str, fps: dict[str, str], figures: dict[str, dict] | None = None,
         **kw: object) -> tuple[PartitionPlan, pl.DataFrame]:
    """One incremental run: plan, write each computed partition's partial, drop the gone ones, write the state."""
    with ws.lock():
        ws = ws.reload()
        p = plan(ws, state, stage, fps, f"{stage}_partial", **kw)
        txn = ws.transaction()
        for key in p.compute:
            txn.put_partition(f"{stage}_partial", key, pl.DataFrame({"v": [fps[key]]}))
        drop_partitions(txn, [f"{stage}_partial"], p.gone)
        rows = write_state(txn, state, stage, p, figures if figures is not None else {k: {"run_id": "r"} for k in p.compute})
        txn.commit()
    return p, rows


def test_store_plans_and_keeps_each_stages_rows(tmp_path: Path) -> None:
    ws = Workspace.create(tmp_path / "ws")
    first, _ = _run(ws, STATE, "flows", {"d1": "a", "d2": "b"}, {"d1": {"run_id": "r1"}, "d2": {"run_id": "r1"}})
    assert (first.compute, first.reused, first.gone, first.stored) == (["d1", "d2"], [], [], {})
    _run(ws, STATE, "templates", {"d1": "x"}, {"d1": {"run_id": "r1"}})
    before = read_state(Workspace.open(ws.root), STATE, "flows")
    p, rows = _run(ws, STATE, "flows", {"d2": "b2", "d3": "c"}, {"d2": {"run_id": "r2"}, "d3": {"run_id": "r2"}})
    assert (p.compute, p.reused, p.gone) == (["d2", "d3"], [], ["d1"])
    assert p.stored == before
    assert rows["partition"].to_list() == ["d2", "d3"] and rows["run_id"].to_list() == ["r2", "r2"]
    assert rows["fingerprint"].to_list() == ["b2", "c"] and set(rows["stage"]) == {"flows"}
    p, rows = _run(ws, STATE, "flows", {"d2": "b2", "d3": "c"}, {})
    assert (p.compute, p.reused, p.gone) == ([], ["d2", "d3"], [])
    after = read_state(Workspace.open(ws.root), STATE, "flows")
    assert after == p.stored  # reused rows are kept as stored: fingerprint, run id, computed_at
    ws = Workspace.open(ws.root)
    assert set(ws.partitions("state")) == {"flows", "templates"}
    assert read_state(ws, STATE, "templates")["d1"]["fingerprint"] == "x"
    assert set(ws.partitions("flows_partial")) == {"d2", "d3"}
    assert partition_files(ws, "flows_partial", ["d3", "d1", "d2"]) == [str(ws.partitions("flows_partial")[k]) for k in ("d3", "d2")]
    assert partition_files(ws, "no_such_table", ["d1"]) == []


def test_store_recomputes_a_missing_partial_and_drops_an_orphan(tmp_path: Path) -> None:
    ws = Workspace.create(tmp_path / "ws")
    _run(ws, STATE, "flows", {"d1": "a", "d2": "b"})
    with ws.lock():
        txn = ws.reload().transaction()
        txn.drop_partition("flows_partial", "d1")  # d1's partial is lost
        txn.put_partition("flows_partial", "d9", pl.DataFrame({"v": ["?"]}))  # a partial with no state row nor input
        txn.commit()
    p, _ = _run(ws, STATE, "flows", {"d1": "a", "d2": "b"})
    assert (p.compute, p.reused, p.gone) == (["d1"], ["d2"], ["d9"])
    assert set(Workspace.open(ws.root).partitions("flows_partial")) == {"d1", "d2"}


def test_store_of_a_whole_table_keeps_rows_out_of_scope(tmp_path: Path) -> None:
    ws = Workspace.create(tmp_path / "ws")
    _run(ws, DAYS, "days", {"2026-01-01": "a", "2026-01-02": "b"}, {"2026-01-01": {"rows": 1}, "2026-01-02": {"rows": 2}})
    # a run over 01-02.. only: 01-01 is out of scope (kept), 01-02 changed, 01-03 new
    p, rows = _run(ws, DAYS, "days", {"2026-01-02": "b2", "2026-01-03": "c"}, {"2026-01-02": {"rows": 5}, "2026-01-03": {"rows": 3}},
                   in_scope=lambda day: day >= "2026-01-02")
    assert (p.compute, p.reused, p.gone) == (["2026-01-02", "2026-01-03"], [], [])
    assert rows.select("day", "fingerprint", "rows").rows() == [("2026-01-01", "a", 1), ("2026-01-02", "b2", 5), ("2026-01-03", "c", 3)]
    assert Workspace.open(ws.root).read("days").equals(rows)
    p, _ = _run(ws, DAYS, "days", {"2026-01-03": "c"}, {}, recompute=True)
    assert (p.compute, p.reused, p.gone) == (["2026-01-03"], [], ["2026-01-01", "2026-01-02"])
    assert Workspace.open(ws.root).read("days")["day"].to_list() == ["2026-01-03"]
