"""`logmine mine FILE|DIR`: the header found and cut off, entries with their header columns
(--format json), .gz read as in ingest, directories mined file by file, binary files refused."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
import zstandard
from cli_helpers import run_cli
from typer.testing import CliRunner

from logmine.cli import app

IDEA = Path(__file__).resolve().parents[1] / "cases" / "formats" / "ide_log" / "idea.log"
LOG4J = Path(__file__).resolve().parents[1] / "cases" / "textlog" / "log4j.log"


def mined(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    code, out, err = run_cli(capsys, "mine", *args, "--format", "json")
    assert (code, err) == (0, "")
    return json.loads(out)


def test_json_has_the_header_and_every_entry_with_its_columns(capsys: pytest.CaptureFixture[str]) -> None:
    data = mined(capsys, str(IDEA))
    assert (data["files"], data["lines"], data["entries"]) == (1, 16, 9)
    assert data["headers"] == [{"file": str(IDEA), "header": "ts [context] level - logger -",
                                "fields": ["ts", "level", "logger", "context"], "coverage": 0.6}]
    error = data["rows"][5]
    assert error == {"file": str(IDEA), "line": 6, "lines": 6, "ts": "2025-01-10 09:00:02,000", "context": "2000", "level": "ERROR",
                     "logger": "#c.g.c.CompletionService", "message": "Completion request failed",
                     "exception": "java.net.SocketTimeoutException", "template_id": error["template_id"]}
    by_id = {t["id"]: t for t in data["top"]}
    assert by_id[error["template_id"]]["template"] == "Completion request failed"
    assert by_id[error["template_id"]]["exceptions"] == {"java.net.SocketTimeoutException": 1}
    assert sum(t["entries"] for t in data["top"]) == 9
    assert not [t for t in data["top"] if "INFO" in t["template"] or t["template"].startswith("at ")]


def test_table_names_the_header(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_cli(capsys, "mine", str(IDEA))
    assert code == 0
    assert out.splitlines()[0] == "7 templates in 9 entries (16 lines; header: ts [context] level - logger -)"


@pytest.mark.parametrize("suffix", [".gz", ".zst"])
def test_compressed_reads_as_the_plain_file(suffix: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    packed = tmp_path / f"idea.log{suffix}"
    data = IDEA.read_bytes()
    packed.write_bytes(gzip.compress(data) if suffix == ".gz" else zstandard.ZstdCompressor().compress(data))
    plain, gz = mined(capsys, str(IDEA)), mined(capsys, str(packed))
    assert [{**r, "file": None} for r in gz["rows"]] == [{**r, "file": None} for r in plain["rows"]]
    assert gz["top"] == plain["top"]


def test_a_directory_is_mined_file_by_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    logs = tmp_path / "log"
    logs.mkdir()
    shutil.copy(IDEA, logs / "idea.log")
    (logs / "app.log.gz").write_bytes(gzip.compress(LOG4J.read_bytes()))
    (logs / "snapshot.bin").write_bytes(b"\x00\x01\x02binary\x00" * 10)
    code, out, err = run_cli(capsys, "mine", str(logs), "--format", "json")
    assert code == 0
    assert err == f"skipped {logs / 'snapshot.bin'}: a binary file, not a text log\n"
    data = json.loads(out)
    assert (data["files"], data["lines"], data["entries"]) == (2, 26, 13)
    assert [(h["file"], h["header"]) for h in data["headers"]] == [
        (str(logs / "app.log.gz"), "ts [thread] level logger -"), (str(logs / "idea.log"), "ts [context] level - logger -")]
    assert [r["line"] for r in data["rows"]] == [1, 2, 3, 10, 1, 2, 3, 4, 5, 6, 12, 13, 16]


def test_a_binary_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blob = tmp_path / "heap.hprof"
    blob.write_bytes(b"JAVA PROFILE 1.0.2\x00" + bytes(range(256)) * 4)
    assert run_cli(capsys, "mine", str(blob)) == (1, "", f"Error: {blob}: is a binary file, not a text log\n")


def test_stdin_finds_the_header_too() -> None:
    result = CliRunner().invoke(app, ["mine", "-", "--format", "json"], input=LOG4J.read_text(), catch_exceptions=False)
    data = json.loads(result.stdout)
    assert (data["lines"], data["entries"], data["headers"][0]["header"]) == (10, 4, "ts [thread] level logger -")
    assert data["rows"][2]["exception"] == "java.lang.IllegalStateException"
