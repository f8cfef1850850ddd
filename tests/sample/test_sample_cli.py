"""`logmine sample` through the real app."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from logmine.cli import app, main

runner = CliRunner()


def test_sample_json_report(tmp_path: Path) -> None:
    out = tmp_path / "logs"
    result = runner.invoke(app, ["sample", str(out), "--events", "300", "--seed", "2", "--format", "native",
                                 "--format", "tabby,otel", "--report", "json", "-q"], catch_exceptions=False)
    assert result.exit_code == 0
    report = json.loads(result.stdout)
    assert [f["name"] for f in report["formats"]] == ["native", "tabby", "otel"]
    assert report["events"] == 300 and report["seed"] == 2
    assert report["files"] == sum(f["files"] for f in report["formats"])
    assert sorted(p.name for p in out.iterdir()) == [".logmineignore", "native", "otel", "tabby", "truth.json"]
    truth = json.loads((out / "truth.json").read_text())
    assert truth["generator"]["command"] == "logmine sample OUT_DIR --events 300 --seed 2 --format native --format tabby --format otel"


def test_sample_table_report(tmp_path: Path) -> None:
    result = runner.invoke(app, ["sample", str(tmp_path / "t"), "-n", "200", "--format", "jetbrains"], catch_exceptions=False)
    assert result.exit_code == 0
    assert "sample -> " in result.stdout and "jetbrains" in result.stdout


@pytest.mark.parametrize(("args", "message"), [
    (["--format", "syslog"], "Error: invalid value for --format: 'syslog' (one or more of native, continue, continue-llm, "
                             "tabby, jetbrains, kave, otel)"),
    (["--events", "0"], "Error: invalid value for --events: 0 (a positive number of events)"),
], ids=["unknown-format", "no-events"])
def test_sample_bad_options(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["sample", str(tmp_path / "x"), *args])
    assert exc.value.code == 1
    assert capsys.readouterr().err.strip() == message


def test_sample_refuses_to_overwrite_without_the_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "o"
    assert runner.invoke(app, ["sample", str(out), "-n", "50", "--format", "native", "-q"]).exit_code == 0
    with pytest.raises(SystemExit) as exc:
        main(["sample", str(out), "-n", "50", "--format", "native", "-q"])
    assert exc.value.code == 1
    assert capsys.readouterr().err.strip() == f"Error: {out}: already holds generated logs (native); use --overwrite or another OUT_DIR"
    assert runner.invoke(app, ["sample", str(out), "-n", "50", "--format", "native", "--overwrite", "-q"]).exit_code == 0
