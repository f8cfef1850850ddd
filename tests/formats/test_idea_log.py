"""The ide_log format: idea.log (and logs with the same header shapes) -> the ide_log table.

tests/cases/formats/ide_log/idea.log is written by hand in idea.log's layout; the real files
of ../shared/formats/real/idea-log (IntelliJ IDEA 13 and 2024.2) are read when present.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from logmine.formats import detect_format, ide_log
from logmine.stages.ingest import ingest
from logmine.textlog import detect_header, entries
from logmine.workspace import Workspace

CASES = Path(__file__).resolve().parents[1] / "cases" / "formats" / "ide_log"
SAMPLE_LOGS = Path(__file__).resolve().parents[2] / "sample_logs"
REAL = Path(__file__).resolve().parents[2].parent / "shared" / "formats" / "real" / "idea-log"
needs_real = pytest.mark.skipif(not REAL.is_dir(), reason="../shared/formats/real/idea-log is absent")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3} ")


def rows(path: Path) -> pl.DataFrame:
    (batch,) = list(ide_log.read(path))
    assert batch.lines_read == batch.lines_accepted + len(batch.rejects)
    return batch.ide_log  # type: ignore[return-value]


def test_rows_of_the_fixture() -> None:
    df = rows(CASES / "idea.log")
    got = df.select("ts", "level", "category", "thread", "exception", "lines", "source_line").rows()  # [elapsed ms] is no thread
    ts = [datetime(2025, 1, 10, 9, 0, s, ms * 1000, UTC)
          for s, ms in ((0, 1), (0, 120), (0, 130), (0, 140), (1, 500), (2, 0), (2, 1), (3, 250), (4, 0))]
    assert got == [
        (ts[0], "INFO", "#c.i.p.i.b.AppStarter", None, None, 1, 1),
        (ts[1], "INFO", "#c.i.i.p.PluginManager", None, None, 1, 2),
        (ts[2], "INFO", "#c.i.i.p.PluginManager", None, None, 1, 3),
        (ts[3], "INFO", "#c.i.i.p.PluginManager", None, None, 1, 4),
        (ts[4], "WARN", "#c.i.o.u.r.overrides", None, None, 1, 5),
        (ts[5], "ERROR", "#c.g.c.CompletionService", None, "java.net.SocketTimeoutException", 6, 6),
        (ts[6], "ERROR", "#c.g.c.CompletionService", None, None, 1, 12),
        (ts[7], "INFO", "#c.i.o.p.DumbServiceImpl", None, None, 3, 13),
        (ts[8], "SEVERE", "#c.i.o.p.DumbServiceImpl", None, None, 1, 16),
    ]
    lines = (CASES / "idea.log").read_text().splitlines()
    assert df["message"][5] == "\n".join(["Completion request failed", *lines[6:11]])
    assert df["message"][7] == "dumb mode started\nIndexing project: 120 files\n"


def test_every_line_is_accounted() -> None:
    (batch,) = list(ide_log.read(CASES / "idea.log"))
    assert (batch.lines_read, batch.lines_accepted, batch.rejects) == (16, 16, [])
    assert batch.ide_log["lines"].sum() == 16  # type: ignore[index]


def test_an_oversized_line_is_rejected_and_the_rest_keeps_its_line_numbers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = (CASES / "idea.log").read_text().splitlines()
    lines[4] = lines[4] + " " + "x" * 300
    path = tmp_path / "idea.log"
    path.write_text("\n".join(lines) + "\n")
    monkeypatch.setattr(ide_log, "MAX_LINE_BYTES", 200)
    (batch,) = list(ide_log.read(path))
    assert [(r.source_line, r.reason.split(":")[0]) for r in batch.rejects] == [(5, "oversized_line")]
    assert (batch.lines_read, batch.lines_accepted) == (16, 15)
    assert batch.ide_log["source_line"].to_list() == [1, 2, 3, 4, 6, 12, 13, 16]  # type: ignore[index]


def test_java_util_logging_two_line_entries_are_rows() -> None:
    # written by the JDK's java.util.logging.SimpleFormatter: the level and message open each entry's second line
    path = Path(__file__).parents[1] / "cases" / "textlog" / "jul-simpleformatter.log"
    assert detect_format(path) == "ide-log"
    df = rows(path)
    ts = datetime(2026, 12, 6, 21, 55, 16, tzinfo=UTC)
    assert df.select("ts", "level", "category", "exception", "lines", "source_line").rows() == [
        (ts, "INFO", "Jul main", None, 2, 1), (ts, "WARNING", "Jul main", None, 2, 3),
        (ts, "SEVERE", "Jul main", "java.lang.IllegalStateException", 7, 5), (ts, "INFO", "Jul main", None, 2, 12)]
    assert df["message"][0] == "Accepted connection from 10.0.3.7"
    assert df["lines"].sum() == len(path.read_text().splitlines())


def test_level_words_letters_and_marks_are_spelt_out() -> None:
    assert [ide_log.level_name(v) for v in ("info", "W", "D", "*", "#", "SEVERE", None)] == [
        "INFO", "WARN", "DEBUG", "NOTICE", "WARNING", "SEVERE", None]


def test_detection() -> None:
    assert detect_format(CASES / "idea.log") == "ide-log"
    assert detect_format(Path(__file__).parents[1] / "cases" / "textlog" / "log4j.log") == "ide-log"
    assert detect_format(Path(__file__).parents[1] / "cases" / "textlog" / "syslog.log") is None  # no level: not an IDE log
    assert detect_format(Path(__file__).parents[1] / "cases" / "templates" / "sshd.log") is None
    native = next((SAMPLE_LOGS / "native").iterdir())
    assert detect_format(native) == "native"


def test_ingest_writes_ide_log_with_templates(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(CASES / "idea.log", logs / "idea.log")
    with open(CASES / "idea.log", "rb") as src, gzip.open(logs / "idea.1.log.gz", "wb") as dst:
        dst.write(src.read())
    report = ingest(logs, tmp_path / "ws")
    assert (report.lines_read, report.lines_accepted, report.lines_rejected, report.total("ide_log")) == (32, 32, 0, 18)
    ws = Workspace.open(tmp_path / "ws")
    df = ws.read("ide_log").sort("source_file", "source_line")
    plain, packed = (df.filter(pl.col("source_file") == str(logs / name)) for name in ("idea.log", "idea.1.log.gz"))
    columns = ["ts", "level", "category", "thread", "message", "exception", "template_id", "template", "lines", "source_line"]
    assert plain.select(columns).equals(packed.select(columns))
    assert plain["source_format"].unique().to_list() == ["ide-log"]
    assert plain["entry_id"].str.ends_with(":1:0")[0]
    plugins = plain.filter(pl.col("category") == "#c.i.i.p.PluginManager")
    assert plugins["template_id"].n_unique() == 1 and plugins["template"][0].startswith("Loaded custom plugins: ")
    assert plain["template"][5] == "Completion request failed"  # the first line only, never a frame
    sources = ws.read("sources").sort("path")
    assert sources.select("lines_read", "lines_accepted", "lines_rejected").rows() == [(16, 16, 0), (16, 16, 0)]
    again = ingest(logs, tmp_path / "ws")
    assert again.summary()["files_skipped"] == 2


def test_json_lines_logs_are_ide_log_rows(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    lines = [json.dumps({"time": 1765069323000 + i, "level": 30 if i % 3 else 50, "pid": 7, "msg": f"job {i} done"}) for i in range(6)]
    lines.insert(3, "Error: boom")  # printed raw by the process: it continues the entry above
    (logs / "app.log").write_text("\n".join(lines) + "\n")
    assert detect_format(logs / "app.log") == "ide-log"
    report = ingest(logs, tmp_path / "ws")
    assert (report.lines_read, report.lines_accepted, report.lines_rejected, report.total("ide_log")) == (7, 7, 0, 6)
    df = Workspace.open(tmp_path / "ws").read("ide_log").sort("source_line")
    assert df.select("level", "message", "lines", "source_line", "template").rows()[:4] == [
        ("ERROR", "job 0 done", 1, 1, "job <*> done"), ("INFO", "job 1 done", 1, 2, "job <*> done"),
        ("INFO", "job 2 done\nError: boom", 2, 3, "job <*> done"), ("ERROR", "job 3 done", 1, 5, "job <*> done")]
    assert df["ts"][0] == datetime(2025, 12, 7, 1, 2, 3, tzinfo=UTC)


# -- the real idea.log files ---------------------------------------------------------------------
@needs_real
@pytest.mark.parametrize("name", ["alkaid616-idea.log", "rspieldenner-idea.log"])
def test_real_every_dated_line_opens_an_entry(name: str) -> None:
    lines = (REAL / name).read_text(encoding="utf-8").splitlines()
    header = detect_header(lines)
    assert header is not None and header.fields == ("ts", "level", "logger", "context")  # [elapsed ms]: a clock, no thread
    found = list(entries(lines, header))
    assert [e.line for e in found] == [i + 1 for i, line in enumerate(lines) if _DATE.match(line)]
    assert sum(e.lines for e in found) == len(lines)


# Checked by hand against the files: line -> (ts, [elapsed ms], level, category, lines, exception); the bracket is
# IdeaLogRecordFormatter's milliseconds since the log was created (``[%7d]``), not a thread
_HAND_CHECKED = {
    "alkaid616-idea.log": {
        1: ("2024-08-27 03:28:02,448", "9", "INFO", "#c.i.p.i.b.AppStarter", 1, None),
        12: ("2024-08-27 03:28:02,498", "59", "INFO", "#c.i.p.i.b.AppStarter", 5, None),
        18: ("2024-08-27 03:28:02,516", "77", "INFO", "#c.i.i.p.PluginManager", 47, None),
        87: ("2024-08-27 03:28:02,899", "460", "WARN", "c.i.o.u.r.overrides", 1, None),
        230: ("2024-08-27 03:28:07,422", "4983", "INFO", "PerformancePlugin", 1, None),
        321: ("2024-08-27 03:28:11,303", "8864", "WARN", "#c.i.i.s.i.StartupManagerImpl", 20, "com.intellij.diagnostic.PluginException"),
        480: ("2024-08-27 03:28:45,228", "42789", "SEVERE", "#c.i.o.u.ObjectTree", 133, "java.lang.RuntimeException"),
        613: ("2024-08-27 03:28:45,231", "42792", "SEVERE", "#c.i.o.u.ObjectTree", 1, None),
    },
    "rspieldenner-idea.log": {
        1: ("2014-03-25 14:29:46,664", "0", "INFO", "#com.intellij.idea.Main", 1, None),
        10: ("2014-03-25 14:29:46,767", "103", "INFO", ".intellij.util.EnvironmentUtil", 1, None),
        28: ("2014-03-25 14:29:55,680", "9016", "INFO", "TestNG Runner", 1, None),
        52: ("2014-03-25 14:30:09,127", "22463", "WARN", "j.ui.mac.MacMainFrameDecorator", 3, None),
        68: ("2014-03-25 14:30:11,707", "25043", "INFO", ".project.GradleProjectResolver", 113, "org.gradle.tooling.BuildActionFailureException"),
        294: ("2014-03-25 14:30:11,714", "25050", "WARN", "nal.AbstractExternalSystemTask", 33,
              "com.intellij.openapi.externalSystem.model.ExternalSystemException"),
        616: ("2014-03-25 14:30:24,769", "38105", "INFO", "#com.intellij.idea.Main", 1, None),
    },
}


@needs_real
@pytest.mark.parametrize("name", sorted(_HAND_CHECKED))
def test_real_header_fields_on_a_hand_checked_sample(name: str) -> None:
    lines = (REAL / name).read_text(encoding="utf-8").splitlines()
    found = {e.line: e for e in entries(lines, detect_header(lines))}
    got = {n: (e.fields["ts"], e.fields["context"], e.fields["level"], e.fields["logger"], e.lines, e.exception)
           for n, e in found.items() if n in _HAND_CHECKED[name]}
    assert got == _HAND_CHECKED[name]


@needs_real
def test_real_ingest_mines_messages_not_headers_or_frames(tmp_path: Path) -> None:
    report = ingest(REAL, tmp_path / "ws")
    assert report.lines_read == report.lines_accepted == sum(len(p.read_bytes().splitlines()) for p in REAL.iterdir())
    df = Workspace.open(tmp_path / "ws").read("ide_log")
    templates = df["template"].unique().to_list()
    frame = re.compile(r"\s*(at |\.\.\. \d+ more|Caused by:)")
    assert not [t for t in templates if frame.match(t)]
    assert not [t for t in templates if re.search(r"\b(INFO|WARN|SEVERE) -", t)]
    assert df.filter(pl.col("exception").is_not_null()).height == 11
