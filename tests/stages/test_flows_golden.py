"""Golden test: flows over the committed sample_logs/native, asserted whole against
tests/cases/flows/sample_native.json (regenerate on purpose with LOGMINE_REGEN_GOLDEN=1 and
review the diff), against pm4py, and against what the sample generator planted (truth.json)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import polars as pl
import pytest
from test_flows import pm4py_frame, quiet_pm4py

from logmine.stages.flows.core import FlowsConfig
from logmine.stages.flows.core import flows as run_flows
from logmine.stages.ingest.core import ingest
from logmine.workspace import Workspace

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_logs" / "native"
GOLDEN = ROOT / "tests" / "cases" / "flows" / "sample_native.json"
CONFIG = FlowsConfig(min_support=0.75, max_pattern_length=3)

pytestmark = pytest.mark.skipif(not SAMPLE.is_dir(), reason="sample_logs/native is not in this checkout")


@pytest.fixture(scope="module")
def result(tmp_path_factory: pytest.TempPathFactory):  # noqa: ANN201
    ws = tmp_path_factory.mktemp("golden") / "ws"
    ingest([SAMPLE], ws)
    return ws, run_flows(ws, CONFIG)


def _golden(result) -> dict:  # noqa: ANN001
    def rows(df: pl.DataFrame, cols: list[str]) -> list[list]:
        return [list(r) for r in df.select(cols).rows()]

    return {
        "summary": {k: result.summary[k] for k in ("events", "sessions", "actions", "edges", "transitions", "variants", "ngrams", "patterns", "outcomes")},
        "dfg": rows(result.dfg, ["src", "dst", "count", "sessions", "gap_mean_s", "gap_p50_s", "gap_p95_s"]),
        "activities": rows(result.activities, ["action", "events", "sessions", "starts", "ends"]),
        "variants": rows(result.variants.with_columns(pl.col("variant").list.head(6)), ["variant", "length", "sessions"]),
        "patterns": rows(result.patterns.filter(pl.col("length") >= 2).head(40), ["pattern", "sessions"]),
        "outcomes": rows(result.outcomes.filter(pl.col("outcomes") >= 5), ["context", "accepted", "rejected"]),
        "trigrams": rows(result.ngrams.filter(pl.col("n") == 3).head(20), ["ngram", "count", "sessions"]),
    }


def test_flows_on_sample_logs_match_golden(result) -> None:  # noqa: ANN001
    got = json.loads(json.dumps(_golden(result[1])))
    if os.environ.get("LOGMINE_REGEN_GOLDEN"):
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n")
    assert got == json.loads(GOLDEN.read_text())


def test_sample_dfg_equals_pm4py(result) -> None:  # noqa: ANN001
    pm4py = quiet_pm4py()
    ws, res = result
    frame = pm4py_frame(Workspace.open(ws).read("events"), CONFIG.idle_gap_s)
    dfg, starts, ends = pm4py.discover_dfg(frame)
    perf, _, _ = pm4py.discover_performance_dfg(frame)
    ours = {(r["src"], r["dst"]): r for r in res.dfg.to_dicts()}
    assert {k: r["count"] for k, r in ours.items()} == {k: int(v) for k, v in dfg.items()}
    assert {k: r["gap_p50_s"] for k, r in ours.items()} == {k: float(v["median"]) for k, v in perf.items()}
    assert dict(res.activities.filter(pl.col("starts") > 0).select("action", "starts").iter_rows()) == {k: int(v) for k, v in starts.items()}
    assert dict(res.activities.filter(pl.col("ends") > 0).select("action", "ends").iter_rows()) == {k: int(v) for k, v in ends.items()}


def test_planted_acceptance_pattern_comes_out_on_top(result) -> None:  # noqa: ANN001
    planted = json.loads((ROOT / "sample_logs" / "truth.json").read_text())["acceptance"]["pattern"]["after"]
    raises = result[1].outcomes.filter((pl.col("outcomes") >= 5) & (pl.col("n") == len(planted))).sort("lift", descending=True)
    assert raises["context"][0].to_list() == planted
    assert raises["lift"][0] > 1.5
