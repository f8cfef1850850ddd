"""Pipeline files, input discovery, the `logmine run` command, exit codes, lock, records, metrics."""

from __future__ import annotations

import json
import re
import shutil
import threading
import time
from pathlib import Path

import pytest
from pipeline_data import write_day, write_pipeline
from typer.testing import CliRunner

from logmine.cli import app
from logmine.errors import WorkspaceLockedError
from logmine.pipeline import PipelineFileError, load_pipeline, run_pipeline
from logmine.pipeline.inputs import partitions
from logmine.pipeline.runner import run_lock
from logmine.pipeline.steps import ensure_workspace
from logmine.workspace import Workspace

REPO = Path(__file__).resolve().parents[1]
runner = CliRunner()


def cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """Run the real entry point: exit code, stdout, stderr."""
    from logmine.cli import main

    try:
        main(args)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def _pipe(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "p.toml"
    path.write_text(body)
    return path


BASE = 'name = "x"\nworkspace = "ws"\n[[inputs]]\nname = "a"\npaths = ["logs/{date}/*.jsonl"]\n'


@pytest.mark.parametrize(("body", "message"), [
    (BASE + "[stages.flows]\nidle_gap = 5\n", "unknown key 'stages.flows.idle_gap'"),
    ("colour = 1\n" + BASE, "unknown key 'colour'"),
    (BASE + "colour = 1\n", "unknown key 'inputs[0].colour'"),
    (BASE + "[engine]\nkind = \"spark\"\n", "key 'engine.kind': Input should be 'local' or 'ray' (got 'spark')"),
    (BASE + "[retention]\ndays = 0\n", "key 'retention.days'"),
    ('name = "x"\nworkspace = "w"\n[[inputs]]\nname = "a"\npaths = ["logs/*.jsonl"]\n', "must hold the placeholder {date} exactly once"),
    (BASE.replace('"a"\n', '"a"\nformat = "syslog"\n'), "unknown format 'syslog'"),
    ('workspace = "w"\n[[inputs]]\nname = "a"\npaths = ["l/{date}"]\n', "missing key 'name'"),
    (BASE + "[[queries]]\nname = \"Bad Name\"\nfile = \"q.sql\"\n", "key 'queries[0].name'"),
    ("name = \n", "invalid TOML"),
    (BASE + "[stages.compress]\nvalidate_threshold = 1.5\n",
     "key 'stages.compress.validate_threshold': Input should be less than or equal to 1 (got 1.5)"),
    (BASE + "[stages.compress]\nvalidate = 0\n",
     "key 'stages.compress.validate': Value error, must be \"auto\", false, or a number of requests per template (at least 1) (got 0)"),
    (BASE + "[stages.compress]\nvalidate = true\n", "key 'stages.compress.validate': Value error, must be \"auto\""),
    (BASE + "[stages.compress]\nvalidate_tokens = 0\n", "key 'stages.compress.validate_tokens': Input should be greater than or equal to 1"),
    (BASE + "[stages.compress]\nno_validate = true\n", "unknown key 'stages.compress.no_validate'"),
], ids=["unknown-stage-key", "unknown-top-key", "unknown-input-key", "bad-engine", "bad-retention", "no-date", "bad-format", "missing-name",
        "bad-query-name", "toml-syntax", "bad-validate-threshold", "validate-zero", "validate-true", "bad-validate-tokens", "no-validate-key"])
def test_bad_pipeline_files_name_the_file_and_key(tmp_path: Path, body: str, message: str) -> None:
    path = _pipe(tmp_path, body)
    with pytest.raises(PipelineFileError) as err:
        load_pipeline(path)
    assert str(err.value).startswith(f"{path}: ")
    assert message in str(err.value)


def test_bad_pipeline_file_is_an_error_line_and_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _pipe(tmp_path, BASE + "[stages.flows]\nidle_gap = 5\n")
    code, out, err = cli(["run", str(path)], capsys)
    assert (code, out) == (1, "")
    assert err == f"Error: {path}: unknown key 'stages.flows.idle_gap'\n"


def test_discovery_reads_dates_from_paths_in_any_layout(tmp_path: Path) -> None:
    for rel in ("logs/2026/11/27/a.log", "logs/2026/11/28/b.log", "logs/2026/11/28/sub/c.log", "logs/2026/13/01/x.log",
                "logs/latest/y.log", "flat/tabby-2026-11-28.jsonl", "flat/tabby-notadate.jsonl"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("{}\n")
    body = ('name = "x"\nworkspace = "ws"\n[[inputs]]\nname = "j"\npaths = ["logs/{date}/**/*.log"]\ndate_format = "%Y/%m/%d"\n'
            '[[inputs]]\nname = "t"\npaths = ["flat/tabby-{date}.jsonl"]\nformat = "tabby"\n')
    parts = partitions(load_pipeline(_pipe(tmp_path, body)))
    assert {k: [(Path(f.path).name, f.input, f.format) for f in v] for k, v in parts.items()} == {
        "2026-11-27": [("a.log", "j", None)],
        "2026-11-28": [("tabby-2026-11-28.jsonl", "t", "tabby"), ("b.log", "j", None), ("c.log", "j", None)],  # by path
    }


def test_cli_run_exit_codes_partial_then_ok_then_json(tmp_path: Path) -> None:
    write_day(tmp_path / "logs", "2026-11-27", bad_lines=2)
    path = write_pipeline(tmp_path)
    first = runner.invoke(app, ["run", str(path), "--quiet"], catch_exceptions=False)
    assert first.exit_code == 2, first.output
    assert "partial" in first.output and "malformed_json" in first.output
    second = runner.invoke(app, ["run", str(path), "--format", "json", "--quiet"], catch_exceptions=False)
    assert second.exit_code == 0
    doc = json.loads(second.stdout)
    assert doc["status"] == "ok" and doc["exit_code"] == 0 and doc["counts"]["files_skipped"] == 1
    assert doc["stages"]["flows"]["partitions"] == {"computed": [], "reused": 1, "dropped": []}
    assert set(doc["versions"]) >= {"logmine", "polars", "duckdb", "pyarrow", "python"}
    ws = Workspace.open(tmp_path / "ws")
    runs = ws.read("runs").sort("started_at")
    assert runs["status"].to_list() == ["partial", "ok"] and runs["exit_code"].to_list() == [2, 0]
    assert json.loads(runs["record"][1])["run_id"] == doc["run_id"]
    assert json.loads((tmp_path / "ws" / "runs" / f"{doc['run_id']}.json").read_text())["status"] == "ok"


def test_bad_date_and_failed_stage_exit_1_and_are_recorded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_day(tmp_path / "logs", "2026-11-27")
    path = write_pipeline(tmp_path, extra='\n[[queries]]\nname = "broken"\nfile = "broken.sql"\n')
    (tmp_path / "broken.sql").write_text("SELECT no_such_column FROM events")
    code, _, err = cli(["run", str(path), "--date", "28/11/2026"], capsys)
    assert code == 1 and err == "Error: invalid value for --date: '28/11/2026' (a date like 2026-11-28)\n"
    code, _, err = cli(["run", str(path), "--quiet"], capsys)
    assert code == 1
    assert re.match(r"Error: .*broken\.sql: query 'broken' failed: .*no_such_column", err)
    [rec] = [json.loads(p.read_text()) for p in (tmp_path / "ws" / "runs").glob("*.json")]
    assert rec["status"] == "failed" and rec["exit_code"] == 1 and "broken" in rec["error"]
    assert rec["stages"]["flows"]["partitions"]["computed"] == ["2026-11-27"]  # stages before the failure committed
    prom = (tmp_path / "ws" / "metrics" / "logmine.prom").read_text()
    assert 'logmine_run_exit_code{pipeline="test"} 1' in prom and 'logmine_run_success{pipeline="test"} 0' in prom


def test_no_input_for_the_date_fails_and_names_the_globs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_day(tmp_path / "logs", "2026-11-27")
    path = write_pipeline(tmp_path)
    code, _, err = cli(["run", str(path), "--date", "2026-11-28", "--quiet"], capsys)
    assert code == 1
    assert err == f"Error: {path}: no input files for 2026-11-28: nothing matches {tmp_path}/logs/2026-11-28/native/*.jsonl\n"


def test_metrics_textfile_is_valid_exposition(tmp_path: Path) -> None:
    write_day(tmp_path / "logs", "2026-11-27")
    rec = run_pipeline(write_pipeline(tmp_path, extra='\n[metrics]\ntextfile = "prom/logmine.prom"\n'))
    text = (tmp_path / "prom" / "logmine.prom").read_text()
    sample = re.compile(r'^[a-z_]+(\{([a-z_]+="[^"]*",?)+\})? -?[0-9.e+]+$')
    for line in text.splitlines():
        assert line.startswith("# HELP ") or line.startswith("# TYPE ") or sample.match(line), line
    assert f'logmine_ingest_lines{{pipeline="test",outcome="rejected"}} {rec.counts["lines_rejected"]}' in text
    assert 'logmine_stage_partitions{pipeline="test",stage="flows",state="computed"} 1' in text
    assert not list((tmp_path / "prom").glob(".*.tmp"))


def test_second_run_exits_with_a_clear_message_or_waits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_day(tmp_path / "logs", "2026-11-27")
    path = write_pipeline(tmp_path)
    ws = ensure_workspace(tmp_path / "ws")
    with run_lock(ws.root, wait=False):
        with pytest.raises(WorkspaceLockedError, match="locked by another logmine run; wait for it or use --wait"):
            run_pipeline(path)
        code, _, err = cli(["run", str(path)], capsys)
        assert code == 1 and err == f"Error: workspace {ws.root} is locked by another logmine run; wait for it or use --wait\n"
    holder_done = threading.Event()

    def hold() -> None:
        with run_lock(ws.root, wait=False):
            time.sleep(1.0)
        holder_done.set()

    t = threading.Thread(target=hold)
    t.start()
    time.sleep(0.2)
    rec = run_pipeline(path, wait=True)
    assert holder_done.is_set() and rec.exit_code in (0, 2)
    t.join()


def test_shipped_pipelines_validate_and_nightly_runs_as_written(tmp_path: Path) -> None:
    for path in sorted((REPO / "pipelines").glob("*.toml")):
        pipe = load_pipeline(path)
        for q in pipe.spec.queries:
            assert pipe.resolve(q.file).is_file(), q.file
    shutil.copytree(REPO / "pipelines", tmp_path / "pipelines")
    write_day(tmp_path / "logs", "2026-11-28")
    rec = run_pipeline(tmp_path / "pipelines" / "nightly.toml", date="2026-11-28")
    assert {k: v for k, v in rec.stages["queries"].items() if k != "seconds"} == {
        "rejects_by_file": {"rows": 1}, "acceptance_by_model": {"rows": 2}}
    ws = Workspace.open(tmp_path / "out" / "nightly")
    assert ws.read("query_rejects_by_file")["lines"].to_list() == [1]
    assert (tmp_path / "out" / "nightly" / "metrics" / "logmine.prom").is_file()
    assert (tmp_path / "out" / "nightly" / "report" / "index.html").is_file()


def test_command_line_engine_options_override_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from logmine.engine import EngineConfig
    from logmine.pipeline import with_engine

    pipe = load_pipeline(_pipe(tmp_path, BASE + '[engine]\nkind = "ray"\nworkers = 3\nray_address = "auto"\n'))
    assert with_engine(pipe, None, None, None) == EngineConfig("ray", 3, "auto")
    assert with_engine(pipe, "local", None, None) == EngineConfig("local", 3, None)
    assert with_engine(pipe, "ray", "ray://head:10001", 8) == EngineConfig("ray", 8, "ray://head:10001")
    code, _, err = cli(["run", str(tmp_path / "p.toml"), "--engine", "spark"], capsys)
    assert code == 2 and "'spark' is not one of 'local', 'ray'" in err


def test_run_times_are_kept_to_the_microsecond() -> None:
    """Two runs started within one second still sort in the order they ran (runs sort by started_at)."""
    from logmine.pipeline.record import RunRecord

    rec = RunRecord("r", "p", "p.toml", "d", "ws", None, {})
    rec.finish("ok", 0)
    for stamp in (rec.started_at, rec.finished_at):
        assert stamp is not None and re.search(r"T\d{2}:\d{2}:\d{2}\.\d{6}\+00:00$", stamp), stamp
    assert rec.row()["started_at"] <= rec.row()["finished_at"]
