"""`logmine ingest` on the command line: reports on stdout, `Error: ...` on stderr and the exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import run_cli
from typer.testing import CliRunner

from logmine.cli import app
from logmine.formats import FORMAT_NAMES
from logmine.workspace import Workspace

ROOT = Path(__file__).resolve().parents[2]
EVENT = b'{"type":"event","ts":"2025-03-03T10:00:00Z","action":"file.save","user_id":"alice"}\n'


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "a.jsonl").write_bytes(EVENT * 3 + b"{oops\n")
    return tmp_path / "logs"


def test_json_report_on_stdout(capsys: pytest.CaptureFixture[str], logs: Path, tmp_path: Path) -> None:
    code, out, err = run_cli(capsys, "ingest", str(logs), "-o", str(tmp_path / "ws"), "--format", "json")
    assert (code, err) == (0, "")
    report = json.loads(out)
    assert {k: report[k] for k in ("files_ingested", "lines_read", "lines_accepted", "lines_rejected", "events")} == {
        "files_ingested": 1, "lines_read": 4, "lines_accepted": 3, "lines_rejected": 1, "events": 3}
    assert report["rejects_by_reason"] == {"malformed_json": 1}
    assert report["files"][0]["path"] == str(logs / "a.jsonl")
    assert Workspace.open(tmp_path / "ws").read("events").height == 3


def test_table_report_lists_rejects_by_reason(capsys: pytest.CaptureFixture[str], logs: Path, tmp_path: Path) -> None:
    code, out, err = run_cli(capsys, "ingest", str(logs), "-o", str(tmp_path / "ws"), "-q")
    assert (code, err) == (0, "")
    assert f"ingest -> {tmp_path / 'ws'}" in out
    assert "rejected lines by reason" in out and "malformed_json" in out
    code, out, _ = run_cli(capsys, "ingest", str(logs), "-o", str(tmp_path / "ws"), "-q", "-f", "json")
    assert json.loads(out)["files_skipped"] == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["{tmp}/nope", "-o", "{tmp}/ws"], "Error: {tmp}/nope: does not exist\n"),
        (["{logs}", "-o", "{tmp}/ws", "--input-format", "yaml"],
         "Error: invalid value for --input-format: 'yaml' (one of " + ", ".join(FORMAT_NAMES) + ")\n"),
        (["{logs}", "-o", "{logs}/a.jsonl"], "Error: {logs}/a.jsonl exists and is not a directory\n"),
        (["{logs}", "-o", "{logs}"],
         "Error: {logs} is a non-empty directory that is not a logmine workspace; choose another -o\n"),
    ],
    ids=["missing-input", "bad-input-format", "out-is-a-file", "out-not-a-workspace"],
)
def test_bad_path_or_option_is_an_error_with_exit_1(capsys: pytest.CaptureFixture[str], logs: Path, tmp_path: Path,
                                                    args: list[str], message: str) -> None:
    fill = {"tmp": str(tmp_path), "logs": str(logs)}
    code, out, err = run_cli(capsys, "ingest", *(a.format(**fill) for a in args))
    assert (code, out, err) == (1, "", message.format(**fill))


def test_a_locked_workspace_is_an_error_with_exit_1(capsys: pytest.CaptureFixture[str], logs: Path, tmp_path: Path) -> None:
    run_cli(capsys, "ingest", str(logs), "-o", str(tmp_path / "ws"), "-q")
    with Workspace.open(tmp_path / "ws").lock():
        code, out, err = run_cli(capsys, "ingest", str(logs), "-o", str(tmp_path / "ws"), "-q")
    assert (code, out) == (1, "")
    assert err == f"Error: workspace {tmp_path / 'ws'} is locked by another logmine run; wait for it or use --wait\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["{logs}"], "Error: Missing option '--out' / '-o'.\n"),
        (["{logs}", "-o", "{tmp}/ws", "--forse"], "Error: No such option: --forse (Possible options: --force, --format)\n"),
        (["{logs}", "-o", "{tmp}/ws", "--format", "xml"],
         "Error: Invalid value for '--format' / '-f': Value error, 'xml' is not one of 'table', 'json'.\n"),
    ],
    ids=["missing-out", "unknown-option", "bad-format"],
)
def test_usage_errors_are_reported_by_click_with_exit_2(capsys: pytest.CaptureFixture[str], logs: Path, tmp_path: Path,
                                                        args: list[str], message: str) -> None:
    fill = {"tmp": str(tmp_path), "logs": str(logs)}
    code, out, err = run_cli(capsys, "ingest", *(a.format(**fill) for a in args))
    assert (code, out, err) == (2, "", message)


def test_the_installed_entry_point_reports_errors_the_same_way(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "logmine", "ingest", str(tmp_path / "nope"), "-o", str(tmp_path / "ws")],
                          capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", f"Error: {tmp_path / 'nope'}: does not exist\n")


def test_help_has_an_example() -> None:
    result = CliRunner().invoke(app, ["ingest", "--help"], catch_exceptions=False)
    assert result.exit_code == 0
    assert "Example: logmine ingest" in result.output and "--wait" in result.output
