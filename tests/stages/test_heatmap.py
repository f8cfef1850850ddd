"""The heatmap stage against a workspace: planted latencies, exact attribution, accounting, merging."""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal
from heatmap_helpers import HAND_LABELLED, arrival_times, make_workspace, native_request, planted_records, write_jsonl
from typer.testing import CliRunner

import logmine
from logmine.cli import app
from logmine.errors import OptionError, WorkspaceError
from logmine.records import LLM_REQUESTS_SCHEMA, conform
from logmine.sketch import DEFAULT_ALPHA
from logmine.stages.heatmap import HeatmapConfig, heatmap, measure
from logmine.stages.heatmap.aggregate import position_bucket
from logmine.stages.ingest.core import ingest
from logmine.workspace import Workspace

QUIET = HeatmapConfig(html=False, png=False)


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_workspace(tmp_path_factory.mktemp("planted"), planted_records(240))


def test_planted_string_tokens_come_out_on_top(planted: Path) -> None:
    result = logmine.heatmap(planted, QUIET)
    by_type = result.by_type
    assert by_type["token_type"][0] == "string" and by_type["heat"][0] == 5
    means = dict(zip(by_type["token_type"], by_type["mean_us"]))
    others = [means[t] for t in ("identifier", "keyword", "operator", "punctuation", "number")]
    assert 4.5 < means["string"] / max(others) and means["string"] / min(others) < 5.5
    per_model = result.tables["heatmap_by_model_type"]
    for model in ("fast-model", "slow-model"):
        rows = per_model.filter(pl.col("model") == model).sort("mean_us", descending=True)
        assert rows["token_type"][0] == "string"
    assert result.requests == result.measured == 240 and result.skipped == {}


def test_quantiles_within_one_percent_of_exact(planted: Path) -> None:
    result = heatmap(planted, QUIET)
    tokens = Workspace.open(planted).read("heatmap_tokens").filter(pl.col("position") > 1)
    assert not result.by_type["exact"].any(), "every type of the planted logs has more than EXACT_MAX tokens"
    for row in result.by_type.iter_rows(named=True):
        values = np.sort(tokens.filter(pl.col("token_type") == row["token_type"])["latency_us"].to_numpy())
        assert row["count"] == len(values)
        assert row["mean_us"] == pytest.approx(values.mean(), rel=1e-9)
        for q, col in ((0.5, "p50_us"), (0.95, "p95_us"), (0.99, "p99_us")):
            exact = values[int(np.floor(q * (len(values) - 1)))]
            assert abs(row[col] - exact) <= DEFAULT_ALPHA * exact * (1 + 1e-9)


def test_small_groups_get_exact_quantiles_across_days(tmp_path: Path) -> None:
    """Three requests on three days: the time to first token of 4.2 / 5.9 / 27.0 ms, merged from
    three day partitions, gets DuckDB's quantile_cont, not the sketch's 5.8 ms for p95 and p99."""
    records = [native_request(["x", " =", " 1"], arrival_times([ttft, 1.0, 1.0]), request_id=f"r{day}", language="python",
                              ts=f"2025-03-0{day}T10:00:00Z", model="m")
               for day, ttft in ((1, 4.2), (2, 5.9), (3, 27.0))]
    root = make_workspace(tmp_path, records)
    result = heatmap(root, QUIET)
    assert len(result.days_computed) == 3
    [ttft] = result.ttft_rows()
    with Workspace.open(root).connect() as con:
        want = con.execute("SELECT quantile_cont(latency_us, [0.5, 0.95, 0.99]) FROM heatmap_tokens WHERE position = 1").fetchone()[0]
    assert (ttft["requests"], ttft["exact"]) == (3, "yes")
    assert [ttft["p50 (ms)"], ttft["p95 (ms)"], ttft["p99 (ms)"]] == [round(v / 1000, 1) for v in want] == [5.9, 24.9, 26.6]
    again = heatmap(root, QUIET)  # reused day partitions merge to the same exact quantiles
    assert again.days_reused == result.days_computed and again.ttft_rows() == result.ttft_rows()


def test_a_type_with_few_tokens_is_not_ranked_slow(tmp_path: Path) -> None:
    """Two very slow tokens of their own type never top the table: ranking needs min_rank_tokens tokens."""
    records = [native_request(["x", " =", " 1", " +", " y"], arrival_times([50.0, 2.0, 2.0, 2.0, 2.0]), request_id=f"ok{i}",
                              language="python") for i in range(20)]
    records.append(native_request(["fun", " @@", " @@"], arrival_times([50.0, 900.0, 900.0]), request_id="slow", language="python"))
    result = heatmap(make_workspace(tmp_path, records), HeatmapConfig(html=False, png=False, min_rank_tokens=30))
    rows = result.by_type.select("token_type", "count", "ranked", "heat").rows()
    ranked = [r for r in rows if r[2]]
    assert ranked and all(r[1] >= 30 for r in ranked) and rows[: len(ranked)] == ranked, rows
    slowest = max(result.by_type.iter_rows(named=True), key=lambda r: r["mean_us"])
    assert slowest["count"] < 30 and not slowest["ranked"] and slowest["heat"] is None
    assert result.by_type["token_type"][0] != slowest["token_type"] and result.by_type["heat"][0] is not None


def test_tables_written_and_sketch_partitioned_by_day(planted: Path) -> None:
    heatmap(planted, QUIET)
    ws = Workspace.open(planted)
    for name in ("heatmap_by_type", "heatmap_by_type_position", "heatmap_by_model_type", "heatmap_by_language_type",
                 "heatmap_by_hour_model", "heatmap_latency_time", "heatmap_tokens", "heatmap_requests", "heatmap_days"):
        assert ws.read(name).height > 0, name
    assert sorted(ws.partitions("heatmap_sketch")) == ["2025-03-01", "2025-03-02"]
    with ws.connect() as con:
        assert con.execute("SELECT count(*) FROM heatmap_by_type").fetchone()[0] == 7
    positions = ws.read("heatmap_by_type_position")["position_bucket"].unique().to_list()
    assert set(positions) <= {"1", "2-4", "5-16", "17-64", "65+"}


def test_exact_attribution_on_hand_made_records(tmp_path: Path) -> None:
    records, expected = [], []
    for i, (language, (prefix, tokens)) in enumerate(sorted(HAND_LABELLED.items())):
        gaps = [100.0 + i] + [float(j % 7 + 1) for j in range(1, len(tokens))]
        records.append(native_request([t for t, _ in tokens], arrival_times(gaps), language=language, prefix=prefix,
                                      request_id=f"hand-{language}"))
        expected += [(f"hand-{language}", j + 1, t, kind, gap * 1000.0) for j, ((t, kind), gap) in enumerate(zip(tokens, gaps))]
    heatmap(make_workspace(tmp_path, records), QUIET)
    got = Workspace.open(tmp_path / "ws").read("heatmap_tokens").sort("request_id", "position")
    rows = list(zip(got["request_id"], got["position"], got["token"], got["token_type"], got["latency_us"]))
    assert [r[:4] for r in rows] == [e[:4] for e in sorted(expected)]
    assert np.allclose([r[4] for r in rows], [e[4] for e in sorted(expected)], rtol=1e-9, atol=1e-3)


def test_awkward_records_are_handled_and_counted(tmp_path: Path) -> None:
    ok = ["x", " =", " 1"]
    records = [
        native_request(ok, [10.0, 20.0, 30.0], request_id="ok", language="python"),
        native_request(["fun", " main", "()"], [10.0, 20.0, 30.0], request_id="kotlin", language="kotlin"),
        native_request([], [], request_id="empty", completion=""),
        native_request(ok, None, request_id="no-times", language="python"),
        native_request(ok, [10.0], request_id="short", language="python"),
        native_request(ok, [10.0, 20.0, 30.0, 40.0, 50.0], request_id="long", language="python"),
        native_request(ok, [30.0, 20.0, 40.0], request_id="backwards", language="python"),
        native_request(["Sure", ",", " yes", "."], [300.0, 310.0, 320.0, 330.0], request_id="chat", kind="chat"),
        native_request(None, [100.0, 120.0], request_id="split", language="go", completion="x := compute(a, b)"),
        native_request(["zz", " qq"], [5.0, 6.0], request_id="unknown", language=None),
    ]
    result = heatmap(make_workspace(tmp_path, records), QUIET)
    assert (result.requests, result.measured) == (10, 8)
    assert result.skipped == {"empty_completion": 1, "no_token_times": 1}
    assert result.issues == {"times_shorter_than_tokens": 1, "times_longer_than_tokens": 1, "non_monotonic_times": 1}
    assert result.granularity == {"token": 7, "chunk": 1}
    assert result.language_sources == {"record": 5, "unsupported": 1, "prose": 1, "none": 1}
    requests = Workspace.open(tmp_path / "ws").read("heatmap_requests")
    by_id = {r["request_id"]: r for r in requests.iter_rows(named=True)}
    assert by_id["short"]["tokens"] == 1 and by_id["split"]["tokens_from"] == "completion"
    assert by_id["kotlin"]["language"] == "kotlin" and by_id["chat"]["language"] == "prose"
    types = set(result.by_type["token_type"])
    assert {"prose", "error"} <= types
    tokens = Workspace.open(tmp_path / "ws").read("heatmap_tokens").filter(pl.col("position") > 1)
    expected = tokens.group_by("token_type").agg((pl.col("granularity") == "chunk").mean().alias("want"))
    joined = result.by_type.join(expected, on="token_type")
    assert joined.height == result.by_type.height and joined["chunk_share"].to_list() == joined["want"].to_list()
    assert joined.filter(pl.col("token_type") == "identifier")["chunk_share"][0] > 0


def test_rows_written_by_a_transaction_with_nulls_and_missing_columns(tmp_path: Path) -> None:
    rows = pl.DataFrame({
        "request_id": ["a", "b"], "ts": [datetime(2025, 1, 2, 3, tzinfo=UTC)] * 2, "kind": ["completion", "edit"],
        "language": ["python", None], "completion": ["x = 1", None],
        "token_texts": [["x", " =", " 1"], None], "token_times_ms": [[5.0, None, 9.0], [1.0]],
    })
    ws = Workspace.create(tmp_path / "ws")
    with ws.lock():
        txn = ws.transaction()
        txn.put_partition("llm_requests", "manual", conform(rows, LLM_REQUESTS_SCHEMA))
        txn.commit()
    result = heatmap(ws, QUIET)
    assert result.measured == 1 and result.skipped == {"empty_completion": 1} and result.issues == {"null_times": 1}
    tokens, requests = measure(rows.drop("model", "prefix", strict=False))
    assert tokens["latency_us"].to_list() == [5000.0, 0.0, 4000.0] and requests.height == 2


def test_a_new_day_is_computed_and_the_old_ones_reused(tmp_path: Path) -> None:
    records = planted_records(60, days=2)
    root = make_workspace(tmp_path, records)
    first = heatmap(root, QUIET)
    assert first.days_computed == ["2025-03-01", "2025-03-02"] and first.days_reused == []
    again = heatmap(root, QUIET)
    assert again.days_computed == []
    assert_frame_equal(again.by_type, first.by_type, check_exact=False, rel_tol=1e-12)
    new_day = [dict(r, ts="2025-03-05T08:00:00Z", request_id=f"n{i}") for i, r in enumerate(planted_records(20, seed=3))]
    ingest([write_jsonl(tmp_path / "logs" / "day5.jsonl", new_day)], root)
    merged = heatmap(root, QUIET)
    assert merged.days_computed == ["2025-03-05"] and merged.days_reused == ["2025-03-01", "2025-03-02"]
    full = heatmap(root, HeatmapConfig(html=False, png=False, recompute=True))
    assert full.days_computed == ["2025-03-01", "2025-03-02", "2025-03-05"]
    for name in ("heatmap_by_type", "heatmap_by_type_position", "heatmap_by_hour_model"):
        assert_frame_equal(merged.tables[name], full.tables[name], check_exact=False, rel_tol=1e-12)
    assert merged.requests == 80


def test_window_and_filters(tmp_path: Path) -> None:
    root = make_workspace(tmp_path, planted_records(60, days=2))
    heatmap(root, QUIET)
    tokens = Workspace.open(root).read("heatmap_tokens").filter(pl.col("position") > 1)
    day2 = heatmap(root, HeatmapConfig(since=date(2025, 3, 2), html=False, png=False))
    assert day2.by_type["count"].sum() == tokens.filter(pl.col("day") == "2025-03-02").height
    assert day2.days_computed == [] and day2.days_reused == ["2025-03-02"]
    go = heatmap(root, HeatmapConfig(language="golang", model="fast-model", html=False, png=False))
    expected = tokens.filter((pl.col("language") == "go") & (pl.col("model") == "fast-model")).height
    assert go.by_type["count"].sum() == expected > 0
    assert set(go.tables["heatmap_by_language_type"]["language"]) == {"go"}
    nothing = heatmap(root, HeatmapConfig(until=date(2025, 2, 1), html=False, png=False))
    assert nothing.by_type.height == 0 and nothing.requests == 0


def test_bad_options() -> None:
    with pytest.raises(OptionError, match="--since"):
        heatmap("unused", HeatmapConfig(since=date(2025, 2, 2), until=date(2025, 2, 1)))


def test_position_buckets() -> None:
    assert [position_bucket(i) for i in (1, 2, 4, 5, 16, 17, 64, 65, 1000)] == ["1", "2-4", "2-4", "5-16", "5-16", "17-64", "17-64", "65+", "65+"]
    with pytest.raises(ValueError):
        position_bucket(0)


# -- the CLI -------------------------------------------------------------------------------------
runner = CliRunner()


def test_cli_table_and_json(planted: Path) -> None:
    table = runner.invoke(app, ["heatmap", str(planted), "--no-html", "--no-png", "--quiet"], catch_exceptions=False)
    assert table.exit_code == 0
    result = heatmap(planted, QUIET)
    lines = table.stdout.splitlines()
    later = result.tokens - result.measured
    assert lines[0] == f"token latency by type ({later:,} tokens after each request's first, 240 requests)"
    assert [c.strip() for c in lines[2].strip("┃").split("┃")] == ["token type", "mean latency (µs)", "p95 (µs)", "frequency", "heat (1-5)",
                                                                 "exact"]
    end = lines.index("time to first token by model") - 1
    body = [[c.strip() for c in line.strip("│").split("│")] for line in lines[4:end]]
    assert body == [[r["token type"], f"{r['mean latency (µs)']:,.0f}", f"{r['p95 (µs)']:,.0f}", f"{r['frequency']:,}",
                     str(r["heat (1-5)"]), r["exact"]] for r in result.table_rows()]
    out = runner.invoke(app, ["heatmap", str(planted), "--no-html", "--no-png", "--format", "json"], catch_exceptions=False)
    data = json.loads(out.stdout)
    assert data["requests"] == 240 and data["by_type"][0]["token type"] == "string"
    assert list(data["by_type"][0]) == ["token type", "mean latency (µs)", "p95 (µs)", "frequency", "heat (1-5)", "exact"]
    assert set(data["tables"]) == {"heatmap_by_type", "heatmap_by_type_position", "heatmap_by_model_type",
                                   "heatmap_by_language_type", "heatmap_by_hour_model", "heatmap_ttft"}
    assert [r["model"] for r in data["ttft"]] == ["fast-model", "slow-model"]
    assert sum(r["requests"] for r in data["ttft"]) == 240


def test_cli_errors(tmp_path: Path, planted: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from logmine.cli import main

    nope = tmp_path / "nope"
    for args, message in [
        ([str(nope)], f"Error: {nope} is not a logmine workspace (no manifest.json); run `logmine ingest LOGS -o {nope}` first"),
        ([str(planted), "--since", "yesterday"], "Error: invalid value for --since: 'yesterday' (a date like 2025-01-31)"),
        ([str(planted), "--since", "2025-03-02", "--until", "2025-03-01"],
         "Error: invalid value for --since: '2025-03-02' (must not be after --until 2025-03-01)"),
    ]:
        with pytest.raises(SystemExit) as exit_info:
            main(["heatmap", *args, "--no-html", "--no-png"])
        assert exit_info.value.code == 1
        captured = capsys.readouterr()
        assert (captured.out, captured.err) == ("", message + "\n")
    with pytest.raises(WorkspaceError, match="is not a logmine workspace"):
        heatmap(nope, QUIET)


def test_logmine_sample_planted_strings_come_out_on_top(tmp_path: Path) -> None:
    sample = pytest.importorskip("logmine.sample")
    sample.generate(tmp_path / "logs", sample.SampleConfig(events=3000, seed=0))
    truth = json.loads((tmp_path / "logs" / "truth.json").read_text())
    assert truth["token_latency"]["kind_factor"]["STRING"] == 5.0
    ingest([tmp_path / "logs"], tmp_path / "ws")
    result = heatmap(tmp_path / "ws", QUIET)
    assert result.measured > 100
    assert result.by_type["token_type"][0] == "string" and result.by_type["heat"][0] == 5


def test_changed_and_removed_days(tmp_path: Path) -> None:
    records = planted_records(40, days=2)
    root = make_workspace(tmp_path, records)
    heatmap(root, QUIET)
    day2 = [i for i, r in enumerate(records) if r["ts"].startswith("2025-03-02")]
    changed = [dict(r, token_times_ms=[t * 2 for t in r["token_times_ms"]]) if i == day2[0] else r for i, r in enumerate(records)]
    ingest([write_jsonl(tmp_path / "logs" / "logs.jsonl", changed)], root)
    again = heatmap(root, QUIET)
    assert again.days_computed == ["2025-03-02"] and again.days_reused == ["2025-03-01"]
    only_day1 = [r for r in records if r["ts"].startswith("2025-03-01")]
    ingest([write_jsonl(tmp_path / "logs" / "logs.jsonl", only_day1)], root)
    gone = heatmap(root, QUIET)
    ws = Workspace.open(root)
    assert gone.days_computed == [] and gone.days_reused == ["2025-03-01"]
    assert sorted(ws.partitions("heatmap_sketch")) == sorted(ws.partitions("heatmap_tokens")) == ["2025-03-01"]
    assert ws.read("heatmap_days")["day"].to_list() == ["2025-03-01"]
    assert gone.requests == len(only_day1)


def test_page_for_an_empty_window() -> None:
    from logmine.stages.heatmap import finalize, merge_partials
    from logmine.stages.heatmap.render import chart_specs, page_html

    config = HeatmapConfig()
    result = logmine.HeatmapResult("ws", finalize(merge_partials([])))
    assert chart_specs(result, config.alpha) == {}
    page = page_html(result, {}, None, config, bundle="window.vegaEmbed = () => Promise.resolve();")
    assert "No measured tokens in this window." in page and 'data-charts="0"' in page


def test_first_tokens_are_time_to_first_token(planted: Path) -> None:
    default = heatmap(planted, QUIET)
    tokens = Workspace.open(planted).read("heatmap_tokens")
    assert default.by_type["count"].sum() == tokens.height - default.measured
    ttft = default.tables["heatmap_ttft"]
    firsts = tokens.filter(pl.col("position") == 1)
    assert dict(zip(ttft["model"], ttft["count"])) == dict(firsts.group_by("model").len().iter_rows())
    first_col = default.tables["heatmap_by_type_position"].filter(pl.col("position_bucket") == "1")["count"].sum()
    assert first_col == default.measured
    everything = heatmap(planted, HeatmapConfig(html=False, png=False, include_first_token=True))
    assert everything.by_type["count"].sum() == tokens.height
