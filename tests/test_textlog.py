"""Header detection, entries and exception types of free-text logs (logmine.textlog).

The fixtures under tests/cases/textlog are written by hand in the layouts' documented default
patterns (log4j ``%d [%t] %-5p %c - %m%n``, logback ``%d{HH:mm:ss.SSS} [%thread] %-5level
%logger{36} - %msg%n``, Python ``%(asctime)s - %(name)s - %(levelname)s - %(message)s`` and
basicConfig's default, syslog, Spring Boot). Loghub-2k (../shared) is the out-of-sample check:
its structured CSVs give each line's message and header columns.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logmine.sample.pylogging import python_logging_lines
from logmine.textlog import (
    Header,
    detect_header,
    entries,
    exception_type,
)
from logmine.timestamps import parse_timestamp

CASES = Path(__file__).parent / "cases" / "textlog"
LOGHUB = Path(__file__).resolve().parents[1].parent / "shared" / "benchmarks" / "loghub-2k"


def read(name: str) -> list[str]:
    return (CASES / name).read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize(
    ("name", "grammar", "first"),
    [
        ("log4j.log", "ts [thread] level logger -",
         {"ts": "2024-03-01 10:15:30,123", "thread": "main", "level": "INFO", "logger": "com.example.App"}),
        ("logback.log", "ts [thread] level logger -",
         {"ts": "10:15:30.123", "thread": "main", "level": "DEBUG", "logger": "c.e.service.UserService"}),
        ("python.log", "ts - logger - level -", {"ts": "2024-03-01 10:15:30,123", "level": "INFO", "logger": "myapp.db"}),
        ("pydefault.log", "level : logger", {"level": "WARNING", "logger": "root"}),
        ("syslog.log", "ts host logger:", {"ts": "Mar  1 10:15:30", "logger": "sshd", "pid": "2231", "host": "web01"}),
        ("spring.log", "ts level num -- [thread] logger :",
         {"ts": "2024-03-01T10:15:30.123+01:00", "thread": "main", "level": "INFO",
          "logger": "o.s.b.w.embedded.tomcat.TomcatWebServer", "pid": "12345"}),
    ],
    ids=["log4j", "logback", "python", "python-default", "syslog", "spring-boot"],
)
def test_header_found_and_first_entry_fields(name: str, grammar: str, first: dict[str, str]) -> None:
    lines = read(name)
    header = detect_header(lines)
    assert header is not None and header.name == grammar
    entry = next(entries(lines, header))
    assert entry.fields == {**dict.fromkeys(header.fields), **first}


def test_messages_are_cut_after_the_header() -> None:
    messages = {name: [e.message for e in entries(read(name), detect_header(read(name)))]
                for name in ("log4j.log", "python.log", "syslog.log", "spring.log")}
    assert messages == {
        "log4j.log": ["Starting application v1.2", "Connection 7 slow: 1200 ms", "Request failed", "Stopped"],
        "python.log": ["Connected to db host=10.0.0.1", "Handler crashed", "Slow query: 2.5 s"],
        "syslog.log": ["Accepted publickey for alice from 10.0.0.5 port 50022 ssh2", "(root) CMD (run-parts /etc/cron.hourly)",
                       "[12345.678] eth0: link up"],
        "spring.log": ["Tomcat started on port 8080 (http)", "Slow request: 900 ms"],
    }


def test_a_java_stack_trace_is_one_entry_with_the_logged_exception() -> None:
    lines = read("log4j.log")
    found = list(entries(lines, detect_header(lines)))
    assert [(e.line, e.lines, e.exception) for e in found] == [
        (1, 1, None), (2, 1, None), (3, 7, "java.lang.IllegalStateException"), (10, 1, None)]
    assert found[2].text.splitlines() == ["Request failed", *lines[3:9]]


def test_a_python_traceback_is_one_entry_with_the_raised_type() -> None:
    lines = read("python.log")
    found = list(entries(lines, detect_header(lines)))
    assert [(e.line, e.lines, e.fields["level"], e.exception) for e in found] == [
        (1, 1, "INFO", None), (2, 5, "ERROR", "ValueError"), (7, 1, "WARNING", None)]


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (["Request failed", "java.lang.IllegalStateException: closed", "\tat a.B.c(B.java:1)",
          "Caused by: java.io.IOException: pipe"], "java.lang.IllegalStateException"),
        (["Memory leak", "\tat a.B.c(B.java:1)", "Caused by: java.lang.Throwable", "\t... 9 more"], "java.lang.Throwable"),
        (["boom", "Caused by: com.acme.Boom", "\tat a.B.c(B.java:1)"], "com.acme.Boom"),
        (["Error: the disk is full", "Exception: bare words are not a type"], None),
        (["Exception in thread \"main\" java.lang.NullPointerException", "\tat a.B.c(B.java:1)"], "java.lang.NullPointerException"),
        (["all good"], None),
    ],
    ids=["outermost", "caused-by-throwable", "caused-by-only", "bare-words", "uncaught", "none"],
)
def test_exception_type(lines: list[str], expected: str | None) -> None:
    assert exception_type(lines) == expected


def test_lines_before_the_first_header_make_one_entry_without_fields() -> None:
    lines = ["\tat a.B.c(B.java:1)", "\t... 3 more", *read("log4j.log")[:2]]
    found = list(entries(lines, detect_header(lines)))
    assert [(e.line, e.lines, e.has_header) for e in found] == [(1, 2, False), (3, 1, True), (4, 1, True)]


def test_without_header_each_line_is_an_entry_but_frames_join_the_line_above() -> None:
    lines = ["job 1 started", "job 1 failed: IOError", "java.io.IOException: disk", "\tat a.B.c(B.java:1)", "\t... 2 more", "",
             "job 2 started"]
    assert detect_header(lines) is None
    found = list(entries(lines, None))
    assert [(e.line, e.lines, e.message) for e in found] == [
        (1, 1, "job 1 started"), (2, 1, "job 1 failed: IOError"), (3, 4, "java.io.IOException: disk"), (7, 1, "job 2 started")]


def test_a_line_with_a_timestamp_of_its_own_opens_an_entry() -> None:
    lines = [*read("log4j.log")[:2], "2024-03-01 10:15:35,000 supervisor: restarted", "\tdetails"]
    found = list(entries(lines, detect_header(lines)))
    assert [(e.line, e.lines, e.fields.get("ts"), e.message) for e in found][-1] == (3, 2, "2024-03-01 10:15:35,000", "restarted")


def test_java_util_logging_default_layout_is_one_entry_of_two_lines() -> None:
    # written by the JDK 17's java.util.logging.SimpleFormatter (its default format), four calls
    lines = read("jul-simpleformatter.log")
    header = detect_header(lines)
    assert header is not None and header.level_line
    found = list(entries(lines, header))
    assert [(e.line, e.lines, e.fields["level"], e.fields["logger"], e.message, e.exception) for e in found] == [
        (1, 2, "INFO", "Jul main", "Accepted connection from 10.0.3.7", None),
        (3, 2, "WARNING", "Jul main", "Slow query took 1840 ms", None),
        (5, 7, "SEVERE", "Jul main", "Request 7 failed", "java.lang.IllegalStateException"),
        (12, 2, "INFO", "Jul main", "Accepted connection from 10.0.9.1", None),
    ]
    assert found[0].fields["ts"] == "Dec 06, 2026 9:55:16 PM"
    assert parse_timestamp(found[0].fields["ts"]) == datetime(2026, 12, 6, 21, 55, 16, tzinfo=UTC)


_PY_LAYOUTS = {  # layouts of Python's own documentation and of common tools -> the fields they put in the header
    "%(asctime)s - %(name)s - %(levelname)s - %(message)s": ("ts", "logger", "level"),
    "%(asctime)s %(name)-12s %(levelname)-8s %(message)s": ("ts", "logger", "level"),
    "%(asctime)s,%(msecs)03d %(name)s %(levelname)s %(message)s": ("ts", "logger", "level"),
    "%(asctime)s [%(threadName)s] %(levelname)s %(name)s - %(message)s": ("ts", "thread", "level", "logger"),
    "%(asctime)s [%(levelname)s] %(name)s: %(message)s": ("ts", "level", "logger"),
    "%(levelname)s:%(name)s:%(message)s": ("level", "logger"),
    "%(levelname)s:     %(message)s": ("level",),  # uvicorn's
    "%(asctime)s %(levelname)s %(name)s %(message)s": ("ts", "level", "logger"),  # the logger told by its dots
    "%(levelname)-8s %(asctime)s %(name)s %(message)s": ("level", "ts", "logger"),
    "%(levelname)s %(asctime)s %(module)s %(process)d %(thread)d %(message)s": ("level", "module", "pid", "tid"),  # Django's
    "[%(asctime)s] %(levelname)s in %(module)s: %(message)s": ("ts", "level", "module"),  # Flask's
}


@pytest.mark.parametrize("layout", sorted(_PY_LAYOUTS))
def test_python_logging_layouts_read_back_record_for_record(layout: str) -> None:
    """Python's logging writes the lines; every record comes back as one entry with its fields."""
    lines, records = python_logging_lines(layout)
    header = detect_header(lines)
    assert header is not None
    found = list(entries(lines, header))
    assert len(found) == len(records) and sum(e.lines for e in found) == len(lines)
    for entry, record in zip(found, records, strict=True):
        assert entry.message == record.getMessage()
        want = {"level": record.levelname, "logger": record.name, "thread": record.threadName, "module": record.module,
                "pid": str(record.process), "tid": str(record.thread)}
        got = {**entry.fields, "module": entry.fields.get("logger")}
        assert {f: got[f] for f in _PY_LAYOUTS[layout] if f != "ts"} == {f: want[f] for f in _PY_LAYOUTS[layout] if f != "ts"}
        assert (entry.exception == "KeyError") == (record.exc_info is not None)


@pytest.mark.parametrize(
    ("name", "grammar", "heads", "first"),
    [  # heads: the entries, each with a level (but postgres' STATEMENT: line, the query of the error before it)
        # the JDK 17's unified logging, ``-Xlog:gc*:file=...:time,uptime,level,tags``
        ("jvm-unified-gc.log", "[ts] [context] [level] [logger]", 8,
         {"ts": "2026-12-06T21:52:29.281+0000", "context": "0.006s", "level": "info", "logger": "gc"}),
        # Ray's raylet (its C++ logger): the state dump's lines continue the entry that opened it
        ("ray-raylet.log", "[ts ...]", 4, {"ts": "2026-12-06 21:52:48,863", "level": "I", "pid": "3193", "tid": "3193"}),
        # Ray's Python processes: ``%(asctime)s\t%(levelname)s %(filename)s:%(lineno)s -- %(message)s``
        ("ray-monitor.log", "ts level logger --", 6, {"ts": "2026-12-06 21:52:47,447", "level": "INFO", "logger": "monitor.py:730"}),
        # uvicorn's default: the level, a colon, padding; a traceback continues its entry. Its access lines
        # (``INFO:     127.0.0.1:50030 - "GET / HTTP/1.1" 200 OK``) read as ``level : logger -`` and win the
        # grammar here: a line that opens with the level still opens an entry
        ("uvicorn.log", None, 10, {"level": "INFO"}),
        # PostgreSQL 15's server log (``log_line_prefix = '%m [%p] '``): ``LOG`` is its level
        ("postgres.log", None, 14, {"ts": "2026-12-06 21:52:38.845 UTC", "thread": "3085", "level": "LOG"}),
    ],
    ids=["jvm-unified", "ray-raylet", "ray-python", "uvicorn", "postgres"],
)
def test_headers_of_real_writers(name: str, grammar: str | None, heads: int, first: dict[str, str]) -> None:
    lines = read(name)
    header = detect_header(lines)
    assert header is not None and header.name == (grammar or header.name)
    found = list(entries(lines, header))
    assert len(found) == heads and sum(e.lines for e in found) == len(lines)
    assert sum(bool(e.fields.get("level")) for e in found) == heads - (1 if name == "postgres.log" else 0)
    assert {k: v for k, v in found[0].fields.items() if v is not None} == first


@pytest.mark.parametrize(
    ("line", "grammar", "fields", "message"),
    [
        ("I1206 21:55:00.123456   12345 server.go:123] Started in 5 ms", "glog",
         {"level": "I", "ts": "1206 21:55:00.123456", "tid": "12345", "logger": "server.go:123"}, "Started in 5 ms"),
        ('<34>1 2026-12-06T21:55:00.003Z web01 app 1025 ID47 [exampleSDID@32473 iut="3"] Started in 5 ms', "rfc5424",
         {"context": "34", "ts": "2026-12-06T21:55:00.003Z", "host": "web01", "logger": "app", "pid": "1025"}, "Started in 5 ms"),
        ("<13>1 2026-12-06T21:55:00Z web01 cron - - - Started in 5 ms", "rfc5424",
         {"context": "13", "ts": "2026-12-06T21:55:00Z", "host": "web01", "logger": "cron", "pid": "-"}, "Started in 5 ms"),
        ("1234:M 06 Dec 2026 21:55:00.123 * Ready to accept connections tcp", "redis",
         {"pid": "1234", "context": "M", "ts": "06 Dec 2026 21:55:00.123", "level": "*"}, "Ready to accept connections tcp"),
    ],
    ids=["glog", "rfc5424", "rfc5424-nil", "redis"],
)
def test_fixed_layouts(line: str, grammar: str, fields: dict[str, str], message: str) -> None:
    lines = [line] * 3
    header = detect_header(lines)
    assert header is not None and header.name == grammar
    entry = next(entries(lines, header))
    assert ({k: v for k, v in entry.fields.items() if v is not None}, entry.message) == (fields, message)


def test_a_word_after_the_level_is_the_logger_only_when_most_are_dotted_names() -> None:
    dotted = [f"2024-03-01 10:15:{s:02d},000 INFO {('app.db', 'app.web', 'root')[s % 3]} Query {s} done" for s in range(9)]
    header = detect_header(dotted)
    assert header is not None and header.name == "ts level logger"
    assert [e.fields["logger"] for e in entries(dotted, header)][:3] == ["app.db", "app.web", "root"]
    # Tomcat's OneLineFormatter: the source class and method after the thread
    tomcat = [f"06-Dec-2026 21:55:{s:02d}.123 INFO [main] org.apache.catalina.startup.Catalina.start Server startup in [{s}] ms"
              for s in range(6)]
    header = detect_header(tomcat)
    assert header is not None and header.name == "ts level [thread] logger"
    assert next(entries(tomcat, header)).fields["logger"] == "org.apache.catalina.startup.Catalina.start"
    plain = [f"2024-03-01 10:15:{s:02d},000 INFO {('Query', 'Started', 'Stopped')[s % 3]} job {s}" for s in range(9)]
    header = detect_header(plain)
    assert header is not None and header.name == "ts level"
    assert next(entries(plain, header)).message == "Query job 0"


def test_a_grammar_that_cannot_read_its_own_lines_is_no_header() -> None:
    # a timestamp glued to the level by colons (Jetty's StdErrLog): the slots end before the colon,
    # and a header whose regex parsed none of these lines would make the whole file one entry
    lines = [f"2026-12-06 21:55:{s:02d}.000:INFO:oejs.Server:main: Started in {s} ms" for s in range(20)]
    header = detect_header(lines)
    found = list(entries(lines, header))
    assert len(found) == 20
    # a colon after the timestamp is a separator (update-alternatives' log)
    lines = [f"update-alternatives 2025-06-24 14:36:{s:02d}: link group pager updated" for s in range(5)]
    found = list(entries(lines, detect_header(lines)))
    assert [(e.fields["host"], e.fields["ts"], e.message) for e in found][:1] == [
        ("update-alternatives", "2025-06-24 14:36:00", "link group pager updated")]
    assert len(found) == 5


@pytest.mark.parametrize(
    ("make", "grammar", "fields", "message"),
    [
        (lambda i: f"[10.30 16:49:{i:02d}] chrome.exe - open through proxy p.example.org:5070 HTTPS", "[ts] logger -",
         {"ts": "10.30 16:49:00", "logger": "chrome.exe"}, "open through proxy p.example.org:5070 HTTPS"),
        (lambda i: f"20171223-22:15:{i:02d}:606|Step_LSC|30002312|onStandStepChanged {3579 + i}", "ts | logger | num |",
         {"ts": "20171223-22:15:00:606", "logger": "Step_LSC", "pid": "30002312"}, "onStandStepChanged 3579"),
        (lambda i: f"02.01.2024 03:04:{i:02d}.123 ERROR disk {i} is full", "ts level",
         {"ts": "02.01.2024 03:04:00.123", "level": "ERROR"}, "disk 0 is full"),
        (lambda i: f"2024-03-01 10:15:{i:02d} app.db - query took {i} ms", "ts logger -",
         {"ts": "2024-03-01 10:15:00", "logger": "app.db"}, "query took 0 ms"),
    ],
    ids=["bracket-month-day", "pipe-fields", "dotted-day-first", "logger-dash"],
)
def test_timestamps_of_digit_groups_and_fields_after_them(make: Callable[[int], str], grammar: str, fields: dict[str, str], message: str) -> None:
    """A date of digit groups before a time is a timestamp whatever its separators, and the fields after it
    (a word before `` - ``, fields between pipes) are the header's."""
    lines = [make(i) for i in range(20)]
    header = detect_header(lines)
    assert header is not None and header.name == grammar
    first = next(entries(lines, header))
    assert {k: v for k, v in first.fields.items() if v is not None} == fields
    assert first.message == message
    assert len(list(entries(lines, header))) == len(lines)


def test_free_text_has_no_header() -> None:
    assert detect_header(["Failed password for root from 10.0.0.1 port 22 ssh2", "Connection closed by 10.0.0.2 [preauth]"]) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2024-08-27 03:28:02,448", datetime(2024, 8, 27, 3, 28, 2, 448000, UTC)),
        ("2024-03-01T10:15:30.123+01:00", datetime(2024, 3, 1, 9, 15, 30, 123000, UTC)),
        ("17/06/09 20:10:40", datetime(2017, 6, 9, 20, 10, 40, tzinfo=UTC)),
        ("Sun Dec 04 04:47:44 2005", datetime(2005, 12, 4, 4, 47, 44, tzinfo=UTC)),
        ("10/Oct/2000:13:55:36 -0700", datetime(2000, 10, 10, 13, 55, 36, tzinfo=timezone(-timedelta(hours=7))).astimezone(UTC)),
        ("1117838570", datetime(2005, 6, 3, 22, 42, 50, tzinfo=UTC)),
        ("Sun Dec 06 21:51:14 UTC 2026", datetime(2026, 12, 6, 21, 51, 14, tzinfo=UTC)),
        ("Dec 06, 2026 12:05:16 AM", datetime(2026, 12, 6, 0, 5, 16, tzinfo=UTC)),
        ("06-Dec-2026 21:55:00.123", datetime(2026, 12, 6, 21, 55, 0, 123000, UTC)),
        ("2005.11.09 12:01:01", datetime(2005, 11, 9, 12, 1, 1, tzinfo=UTC)),
        ("20171223-22:15:29:606", datetime(2017, 12, 23, 22, 15, 29, 606000, UTC)),
        ("02.01.2024 03:04:00.123", datetime(2024, 1, 2, 3, 4, 0, 123000, UTC)),
        ("Mar  1 10:15:30", None),
        ("10.30 16:49:06", None),
        ("10:15:30.123", None),
        ("2024-13-01 10:00:00", None),
    ],
    ids=["idea", "iso-zone", "slash", "ctime", "access-log", "epoch", "ctime-zone", "jul", "tomcat", "dotted-ymd", "compact",
         "dotted-dmy", "no-year", "month-day-only", "time-only", "bad-month"],
)
def test_parse_timestamp(text: str, expected: datetime | None) -> None:
    assert parse_timestamp(text) == expected


_HEAD = st.sampled_from(["2024-03-01 10:15:30,123 [main] INFO  com.example.App - started",
                         "2024-03-01 10:15:31,002 [t-2] ERROR com.example.Pool - failed"])
_BODY = st.sampled_from(["\tat a.B.c(B.java:1)", "Caused by: java.io.IOException: x", "\t... 2 more", "", "plain text",
                         "java.lang.IllegalStateException: y"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(_HEAD, _BODY), min_size=1, max_size=40))
def test_every_line_belongs_to_exactly_one_entry(lines: list[str]) -> None:
    header = detect_header(lines)
    found = list(entries(lines, header))
    assert sum(e.lines for e in found) == len(lines)
    assert [e.line for e in found] == sorted({e.line for e in found})
    heads = {i + 1 for i, line in enumerate(lines) if line.startswith("2024-")}
    if header is not None:
        assert {e.line for e in found if e.has_header} == heads


def test_header_is_a_value() -> None:
    header = Header(("ts@0", "[thread]", "level", "-", "logger-", "-"))
    assert header.fields == ("ts", "thread", "level", "logger")
    assert header.parse("2024-08-27 03:28:02,448 [      9]   INFO - #c.i.p.i.b.AppStarter - JNA loaded") == {
        "ts": "2024-08-27 03:28:02,448", "thread": "9", "level": "INFO", "logger": "#c.i.p.i.b.AppStarter", "message": "JNA loaded"}
    assert header.parse("\tat a.B.c(B.java:1)") is None


# -- out of sample: Loghub-2k's structured CSVs ------------------------------------------------------
_SYSTEMS = {  # system -> header fields checked against the CSV's columns
    "Android": {"level": "Level", "logger": "Component", "pid": "Pid", "tid": "Tid"},
    "Apache": {"level": "Level"},
    "HDFS": {"level": "Level", "logger": "Component", "pid": "Pid"},
    "Hadoop": {"level": "Level", "logger": "Component", "thread": "Process"},
    "OpenSSH": {"pid": "Pid"},
    "OpenStack": {"level": "Level", "logger": "Component", "pid": "Pid"},
    "Spark": {"level": "Level", "logger": "Component"},
    "Windows": {"level": "Level", "logger": "Component"},
    "Zookeeper": {"level": "Level"},
    "Mac": {"logger": "Component"},
}


@pytest.mark.skipif(not LOGHUB.is_dir(), reason="../shared/benchmarks/loghub-2k is absent")
@pytest.mark.parametrize("system", sorted(_SYSTEMS))
def test_loghub_messages_and_header_fields(system: str) -> None:
    lines = (LOGHUB / system / f"{system}_2k.log").read_text(encoding="utf-8", errors="replace").splitlines()
    truth = pl.read_csv(LOGHUB / system / f"{system}_2k.log_structured_corrected.csv", infer_schema=False)
    found = list(entries(lines, detect_header(lines)))
    assert len(found) == truth.height
    least = 0.93 if system == "Mac" else 1.0  # Mac: 6.6 % of its lines name a process with spaces or a second bracket
    assert sum(e.message.strip() == c.strip() for e, c in zip(found, truth["Content"], strict=True)) >= least * len(found)
    for name, column in _SYSTEMS[system].items():
        same = sum((e.fields.get(name) or "") == (v or "") for e, v in zip(found, truth[column], strict=True))
        assert same >= least * len(found), (name, same)


def test_a_bracketed_number_that_only_grows_is_a_clock_not_a_thread() -> None:
    # idea.log's ``[%7d]`` is milliseconds since the log was created; one record written a little late
    elapsed = [0, 25, 25, 103, 9016, 9010, 22463, 25043, 1250043, 1250044]
    idea = [f"2014-03-25 14:29:{i:02d},664 [{e:7d}]   INFO - #c.i.idea.Main - step {i}" for i, e in enumerate(elapsed)]
    header = detect_header(idea)
    assert header is not None and header.name == "ts [context] level - logger -"
    assert [e.fields["context"] for e in entries(idea, header)][-2:] == ["1250043", "1250044"]
    # numeric thread ids come and go: a thread
    tids = [12, 7, 12, 31, 7, 12, 31, 7, 12, 31]
    threads = [f"2014-03-25 14:29:{i:02d},664 [{t}] INFO app.Worker - step {i}" for i, t in enumerate(tids)]
    header = detect_header(threads)
    assert header is not None and "[thread]" in header.name
