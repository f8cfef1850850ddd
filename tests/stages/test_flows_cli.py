"""`logmine flows` on a real workspace: tables, DuckDB views, pictures and the CLI."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import orjson
import polars as pl
import pytest
from test_flows import make_events
from typer.testing import CliRunner

import logmine
from logmine.cli import app
from logmine.stages.flows.core import TABLES, FlowsConfig, compute_flows
from logmine.stages.flows.core import flows as run_flows
from logmine.stages.flows.render import to_dot, to_mermaid
from logmine.stages.ingest.core import ingest
from logmine.workspace import Workspace


def write_native(events: pl.DataFrame, path: Path) -> None:
    """Events as logmine native JSONL (epoch-ms timestamps)."""
    with open(path, "wb") as fh:
        for row in events.sort("ts").to_dicts():
            rec = {"type": "event", "ts": row["ts"].timestamp() * 1000, "action": row["action"], "session_id": row["session_id"],
                   "user_id": row["user_id"], "ide": row["ide"], "attrs": json.loads(row["attrs"]) if row["attrs"] else None}
            fh.write(orjson.dumps({k: v for k, v in rec.items() if v is not None}) + b"\n")


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("flows")
    events = make_events(n_sessions=50, seed=21)
    logs = root / "logs"
    logs.mkdir()
    write_native(events.filter(pl.col("source_file") == "a.jsonl"), logs / "a.jsonl")
    write_native(events.filter(pl.col("source_file") == "b.jsonl"), logs / "b.jsonl")
    ingest([logs], root / "ws")
    return root / "ws"


def test_flows_writes_tables_views_and_pictures(workspace: Path) -> None:
    result = logmine.flows(workspace, FlowsConfig(min_support=0.05))
    ws = Workspace.open(workspace)
    expected = compute_flows(ws.scan("events"), FlowsConfig(min_support=0.05))
    for name in TABLES:
        assert ws.read(name).equals(expected.tables()[name]), name
    with ws.connect() as con:
        rows = con.execute("SELECT sum(count) FROM flows_dfg").fetchone()[0]
        assert rows == result.summary["transitions"] == ws.read("flows_dfg")["count"].sum()
        assert con.execute("SELECT count(*) FROM flows_patterns WHERE support < 0.05").fetchone()[0] == 0
    dot = (workspace / "flows" / "dfg.dot").read_text()
    assert dot == to_dot(result.dfg, result.activities) and dot.startswith("digraph flows {")
    assert (workspace / "flows" / "dfg.mmd").read_text() == to_mermaid(result.dfg, result.activities)
    assert json.loads((workspace / "flows" / "summary.json").read_text())["events"] == result.summary["events"]


def test_user_filter_accepts_raw_ids(workspace: Path) -> None:
    raw = run_flows(workspace, FlowsConfig(users=("user1",), patterns=False))
    stored = Workspace.open(workspace).read("events").filter(pl.col("user_id").str.starts_with("u_"))["user_id"].unique().to_list()
    assert raw.summary["events"] > 0 and len(stored) == 4
    assert raw.sessions["user_id"].unique().to_list() == [raw.sessions["user_id"][0]]


def test_pictures_quote_odd_names() -> None:
    dfg = pl.DataFrame({"src": ['say "hi"'], "dst": ["a\\b <c>"], "count": [3], "gap_mean_s": [1.5]})
    acts = pl.DataFrame({"action": ['say "hi"', "a\\b <c>"], "events": [3, 3]})
    assert '"say \\"hi\\"" -> "a\\\\b <c>"' in to_dot(dfg, acts)
    mermaid = to_mermaid(dfg, acts)
    assert 'n1["say #quot;hi#quot;<br/>3"]' in mermaid and 'n0["a\\b #lt;c#gt;<br/>3"]' in mermaid
    assert '  n1 -->|"3 · 1.5s"| n0' in mermaid


def _have_dot() -> bool:
    if shutil.which("dot"):
        return True
    try:
        subprocess.run(["apt-get", "install", "-y", "graphviz"], check=True, capture_output=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return False
    return shutil.which("dot") is not None


def test_svg_when_graphviz_is_installed(workspace: Path) -> None:
    if not _have_dot():
        pytest.skip("Graphviz `dot` is not installed and apt-get could not install it")
    result = run_flows(workspace, FlowsConfig(patterns=False))
    svg = Path(result.files["svg"]).read_text()
    assert svg.lstrip().startswith(("<?xml", "<svg")) and "</svg>" in svg
    assert "file.open" in svg


def test_cli_json(workspace: Path) -> None:
    res = CliRunner().invoke(app, ["flows", str(workspace), "--format", "json", "--top", "3", "--min-support", "0.1", "--quiet"],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["summary"]["config"]["min_support"] == 0.1 and doc["summary"]["config"]["idle_gap_s"] == 1800
    assert len(doc["top"]["dfg"]) == 3 and set(doc["files"]) >= {"dot", "mermaid", "summary"}
    dfg = Workspace.open(workspace).read("flows_dfg")
    assert doc["top"]["dfg"][0]["count"] == dfg["count"].max()


def test_cli_table(workspace: Path) -> None:
    res = CliRunner().invoke(app, ["flows", str(workspace), "--idle-gap", "0", "--window-seconds", "60", "--since", "2025-03-02",
                                   "--until", "2025-03-04", "--no-patterns", "-q"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert "directly-follows steps" in res.stdout and "variants" in res.stdout
    config = json.loads((workspace / "flows" / "summary.json").read_text())["config"]
    assert (config["idle_gap_s"], config["window_seconds"], config["patterns"]) == (None, 60.0, False)
    assert config["since"] == "2025-03-02T00:00:00+00:00" and config["until"] == "2025-03-05T00:00:00+00:00"


@pytest.mark.parametrize(("args", "message"), [
    (["--idle-gap", "soon"], "Error: invalid value for --idle-gap: 'soon'"),
    (["--since", "yesterday"], "Error: invalid value for --since: 'yesterday'"),
    (["--min-support", "0"], "Error: invalid value for --min-support: 0.0"),
    (["--max-gap", "0"], "Error: invalid value for --max-gap: 0"),
    (["--window-events", "0"], "Error: invalid value for --window-events: None"),
], ids=["idle-gap", "since", "min-support", "max-gap", "no-window"])
def test_cli_rejects_bad_options(workspace: Path, args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    from logmine.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["flows", str(workspace), *args, "-q"])
    assert exc.value.code == 1
    assert capsys.readouterr().err.startswith(message)


def test_cli_missing_workspace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from logmine.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["flows", str(tmp_path / "nope"), "-q"])
    assert exc.value.code == 1
    assert "is not a logmine workspace" in capsys.readouterr().err
