"""Nightly runs add partitions by merging partials; the result equals a full recomputation."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from pipeline_data import RESULT_TABLES, assert_same_tables, canon, write_day, write_pipeline
from polars.testing import assert_frame_equal

from logmine.pipeline import run_pipeline
from logmine.stages.flows.core import FlowsConfig, compute_flows
from logmine.stages.heatmap import HeatmapConfig, heatmap
from logmine.stages.templates.prompts import mine_prompts
from logmine.workspace import Workspace

DAYS = ["2026-11-26", "2026-11-27", "2026-11-28"]
def _logs(root: Path, days: list[str]) -> None:
    for i, day in enumerate(days):
        write_day(root / "logs", day, seed=i)


@pytest.fixture(scope="module")
def nightly(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """Day by day (--date) into one workspace, and all days at once into another."""
    root = tmp_path_factory.mktemp("nightly")
    _logs(root, DAYS)
    inc = write_pipeline(root, "inc", "ws_inc")
    records = [run_pipeline(inc, date=day) for day in DAYS]
    full = write_pipeline(root, "full", "ws_full")
    return {"root": root, "records": records, "full": run_pipeline(full), "inc": inc}


def test_each_night_computes_only_its_partition(nightly) -> None:
    for day, rec in zip(DAYS, nightly["records"], strict=True):
        for stage in ("flows", "templates"):
            assert rec.stages[stage]["partitions"]["computed"] == [day]
        assert rec.stages["heatmap"]["partitions"]["computed"] == [day]
    assert nightly["records"][2].stages["flows"]["partitions"]["reused"] == 2


def test_incremental_equals_full_recomputation(nightly) -> None:
    root = nightly["root"]
    assert_same_tables(root / "ws_inc", root / "ws_full")


def test_merged_counts_equal_the_one_shot_stages(nightly, tmp_path: Path) -> None:
    ws = Workspace.open(nightly["root"] / "ws_full")
    # flows: additive columns equal the one-shot stage (its p50/p95 are exact, ours from histograms)
    pipe = {n: ws.read(f"flows_{n}") for n in ("dfg", "activities", "ngrams", "variants", "cooccurrence")}
    one = compute_flows(ws.scan("events"), FlowsConfig(patterns=False)).tables()
    cols = ["src", "dst", "count", "sessions", "gap_mean_s", "gap_min_s", "gap_max_s", "weighted_count"]
    assert_frame_equal(canon(pipe["dfg"].select(cols)), canon(one["flows_dfg"].select(cols)), rel_tol=1e-9)
    for name in ("activities", "ngrams", "variants", "cooccurrence"):
        assert_frame_equal(canon(pipe[name]), canon(one[f"flows_{name}"]), rel_tol=1e-9)
    # heatmap: the stage's own one-shot run over the whole workspace
    tables = {n: ws.read(n) for n in ("heatmap_by_type", "heatmap_by_model_type", "heatmap_latency_time")}
    result = heatmap(ws, HeatmapConfig(html=False, png=False, recompute=True))
    for name, df in tables.items():
        assert_frame_equal(canon(df), canon(result.tables[name]), rel_tol=1e-9)
    # templates: one single-process prompt-miner run over every request, partitions in date order
    req = ws.read("llm_requests").filter(pl.col("prompt").is_not_null()).sort("ts", "request_id")
    whole = mine_prompts(req.to_dicts())
    mined = ws.read("templates")
    assert dict(zip(mined["template_id"], mined["n_requests"], strict=True)) == whole.counts
    assert dict(zip(mined["template_id"], mined["template"], strict=True)) == whole.templates
    assigned = dict(ws.read("request_templates").select("request_id", "template_id").iter_rows())
    assert [assigned[r] for r in req["request_id"]] == whole.assignments


def test_changed_partition_is_recomputed_and_still_equals_full(nightly, tmp_path: Path) -> None:
    root = nightly["root"]
    write_day(root / "logs", DAYS[1], seed=99, bad_lines=0)  # the 27th's file is replaced
    rec = run_pipeline(nightly["inc"])
    assert rec.stages["flows"]["partitions"]["computed"] == [DAYS[1]]
    assert rec.stages["templates"]["partitions"]["computed"] == [DAYS[1]]
    assert rec.status == "ok" and rec.exit_code == 0 and rec.counts["files_ingested"] == 1
    fresh = write_pipeline(root, "fresh", "ws_fresh")
    run_pipeline(fresh)
    assert_same_tables(root / "ws_inc", root / "ws_fresh")


def test_retention_drops_old_partitions_and_equals_a_run_over_the_window(tmp_path: Path) -> None:
    _logs(tmp_path, DAYS)
    keep = "\n[retention]\ndays = 2\nruns = 2\n[stages.flows]\npatterns = true\nmin_support = 0.2\n"
    path = write_pipeline(tmp_path, "kept", "ws", extra=keep)
    for day in DAYS:
        run_pipeline(path, date=day)
    ws = Workspace.open(tmp_path / "ws")
    assert sorted(ws.read("pipeline_inputs")["partition"].unique()) == DAYS[1:]
    assert set(ws.read("flows_partial_meta")["partition"]) == set(DAYS[1:])
    assert ws.read("events").select(pl.col("ts").min()).item().date().isoformat() >= DAYS[1]
    assert ws.read("runs").height == 2 and len(list((tmp_path / "ws" / "runs").glob("*.json"))) == 2
    one_shot = compute_flows(ws.scan("events"), FlowsConfig(min_support=0.2)).patterns  # the window's events, mined once
    assert_frame_equal(canon(ws.read("flows_patterns")), canon(one_shot))
    assert ws.read("flows_patterns").height > 0
    # the same window computed from scratch
    (tmp_path / "logs" / DAYS[0]).rename(tmp_path / "old")
    fresh = write_pipeline(tmp_path, "fresh", "ws_fresh", extra=keep)
    run_pipeline(fresh)
    assert_same_tables(tmp_path / "ws", tmp_path / "ws_fresh", [t for t in RESULT_TABLES if not t.startswith("heatmap")] + ["flows_patterns"])


KILLER = r"""
import os, signal, sys
from logmine import workspace
target, calls = int(sys.argv[2]), [0]
original = workspace.Workspace._commit
def commit(self, tables):
    calls[0] += 1
    if calls[0] == target:  # files of this commit written, manifest not yet: die here
        os.kill(os.getpid(), signal.SIGKILL)
    return original(self, tables)
workspace.Workspace._commit = commit
from logmine.pipeline import run_pipeline
run_pipeline(sys.argv[1])
"""


@pytest.mark.parametrize("commit", [
    pytest.param(2, id="during-ingest", marks=pytest.mark.slow),
    pytest.param(4, id="before-heatmap"),
    pytest.param(7, id="before-run-record", marks=pytest.mark.slow),
])
def test_killed_run_leaves_a_good_workspace_and_the_next_run_resumes(tmp_path: Path, commit: int) -> None:
    _logs(tmp_path, DAYS[:2])
    path = write_pipeline(tmp_path, "killed", "ws")
    proc = subprocess.run([sys.executable, "-c", KILLER, str(path), str(commit)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == -9, proc.stderr[-2000:]
    Workspace.open(tmp_path / "ws")  # the last committed state opens and its views work
    [record] = [json.loads(p.read_text()) for p in (tmp_path / "ws" / "runs").glob("*.json")]
    assert record["status"] == "running"
    rec = run_pipeline(path)
    assert rec.resumed_after == [record["run_id"]]
    assert json.loads((tmp_path / "ws" / "runs" / f"{record['run_id']}.json").read_text())["status"] == "interrupted"
    fresh = write_pipeline(tmp_path, "fresh", "ws_fresh")
    run_pipeline(fresh)
    assert_same_tables(tmp_path / "ws", tmp_path / "ws_fresh")


PACK_KILLER = r"""
import os, signal, sys
sys.path.insert(0, sys.argv[3])
from pipeline_data import FAKE_MODELS
point = sys.argv[2]
if point == "inside-write-pack":  # the new pack written beside the old one, the swap not yet done
    import logmine.pack as pack
    real, calls = os.replace, [0]
    def replace(src, dst):
        calls[0] += 1
        if calls[0] == 2:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(src, dst)
    pack.os = type(sys)("os_proxy"); pack.os.__dict__.update(os.__dict__); pack.os.replace = replace
    pack._exchange = lambda a, b: os.kill(os.getpid(), signal.SIGKILL)  # killed at the atomic swap itself
else:  # "before-publish-swap": the new version copied beside the published pack, not yet switched to
    from logmine.pipeline import steps
    steps._swap = lambda link, dest: os.kill(os.getpid(), signal.SIGKILL)
from logmine.pipeline import run_pipeline
run_pipeline(sys.argv[1], models=FAKE_MODELS)
"""


def test_killed_publish_leaves_the_published_pack_whole_and_the_next_run_replaces_it(tmp_path: Path) -> None:
    from pipeline_data import FAKE_MODELS

    from logmine.pack import load_pack

    write_day(tmp_path / "logs", DAYS[0])
    path = write_pipeline(tmp_path, "pack", "ws", extra='\n[stages.compress]\nenabled = true\n[publish]\npack = "srv/pack"\n')
    run_pipeline(path, models=FAKE_MODELS)
    published = tmp_path / "srv" / "pack"
    first = load_pack(published)  # verifies every file against the manifest
    assert published.is_symlink()
    write_day(tmp_path / "logs", DAYS[1], seed=5)
    tests_dir = str(Path(__file__).parent)
    for point in ("inside-write-pack", "before-publish-swap"):
        proc = subprocess.run([sys.executable, "-c", PACK_KILLER, str(path), point, tests_dir], capture_output=True, text=True, timeout=300)
        assert proc.returncode == -9, proc.stderr[-2000:]
        assert load_pack(published) == first, point
    rec = run_pipeline(path, models=FAKE_MODELS)
    second = load_pack(published)
    assert second.totals.requests > first.totals.requests
    assert rec.stages["compress"]["published"] == str(published)
    assert len(list((tmp_path / "srv").glob(".pack.v-*"))) == 2  # this version and the one before
