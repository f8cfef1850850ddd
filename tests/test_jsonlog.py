"""Application logs written as JSON lines (logmine.jsonlog), read through logmine.textlog's entries.

The lines are written here the way each writer documents its output: pino/bunyan (numeric levels,
epoch milliseconds, ``msg``), structlog's JSONRenderer (``event``), Python JSON formatters
(``asctime``/``levelname``/``name``/``message``), Docker's json-file driver (``log`` with its newline).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from logmine.jsonlog import FIELD_KEYS, json_header
from logmine.textlog import FIELDS, detect_header, entries
from logmine.timestamps import parse_timestamp


def lines_of(objects: list[dict[str, object]]) -> list[str]:
    return [json.dumps(o) for o in objects]


WRITERS = {
    "pino": ([{"level": 30 + 10 * (i % 2), "time": 1765069323000 + i, "pid": 4242, "hostname": "web-1",
               "msg": f"request {i} done"} for i in range(6)],
             "json: time level pid hostname msg", {"ts": "1765069323000", "level": "INFO", "pid": "4242", "host": "web-1"},
             "request 0 done"),
    "structlog": ([{"event": f"user {i} logged in", "level": "info", "logger": "app.auth",
                    "timestamp": "2026-12-07T01:02:03.000456Z"} for i in range(6)],
                  "json: timestamp level logger event",
                  {"ts": "2026-12-07T01:02:03.000456Z", "level": "info", "logger": "app.auth"}, "user 0 logged in"),
    "python-json": ([{"asctime": "2026-12-07 01:02:03,456", "name": "app.db", "levelname": "WARNING",
                      "message": f"slow query {i}"} for i in range(6)],
                    "json: asctime levelname name message",
                    {"ts": "2026-12-07 01:02:03,456", "level": "WARNING", "logger": "app.db"}, "slow query 0"),
    "docker-json-file": ([{"log": f"GET /items/{i} 200\n", "stream": "stdout", "time": "2026-12-07T01:02:03.123456789Z"}
                          for i in range(6)],
                         "json: time log", {"ts": "2026-12-07T01:02:03.123456789Z"}, "GET /items/0 200"),
}


@pytest.mark.parametrize("writer", sorted(WRITERS))
def test_json_lines_of_common_writers(writer: str) -> None:
    objects, name, fields, message = WRITERS[writer]
    lines = lines_of(objects)
    header = detect_header(lines)
    assert header is not None and header.name == name
    found = list(entries(lines, header))
    assert len(found) == len(lines)
    assert {k: v for k, v in found[0].fields.items() if v is not None} == fields
    assert found[0].message == message


def test_a_raw_traceback_between_json_lines_continues_its_entry() -> None:
    lines = [json.dumps({"time": "2026-12-07T01:02:03Z", "level": "error", "msg": "request failed"}),
             "Traceback (most recent call last):", '  File "app.py", line 3, in <module>', "ValueError: bad id",
             json.dumps({"time": "2026-12-07T01:02:04Z", "level": "info", "msg": "request done"})]
    found = list(entries(lines, detect_header(lines)))
    assert [(e.message, e.lines, e.exception) for e in found] == [("request failed", 4, "ValueError"), ("request done", 1, None)]


def test_a_stack_trace_beside_the_message_is_the_entrys() -> None:
    trace = 'Traceback (most recent call last):\n  File "app.py", line 3, in <module>\nKeyError: \'id\''
    lines = lines_of([{"asctime": "2026-12-07 01:02:03,456", "levelname": "ERROR", "message": "lookup failed", "exc_info": trace},
                      {"level": 50, "time": 1765069323000, "msg": "crashed",
                       "err": {"type": "TypeError", "message": "x is undefined", "stack": "TypeError: x is undefined\n    at main (/app/index.js:3:7)"}},
                      {"asctime": "2026-12-07 01:02:04,000", "levelname": "INFO", "message": "two lines\nof message"}])
    found = list(entries(lines, detect_header(lines)))
    assert [(e.message, e.exception, e.lines) for e in found] == [
        ("lookup failed", "KeyError", 1), ("crashed", "TypeError", 1), ("two lines", None, 1)]
    assert found[0].text == "lookup failed\n" + trace and found[2].text == "two lines\nof message"


def test_a_line_of_another_writer_is_read_by_the_usual_names() -> None:
    lines = lines_of([{"timestamp": "2026-12-07T01:02:03Z", "severity": "INFO", "message": f"job {i}"} for i in range(5)])
    lines.append(json.dumps({"time": 1765069323000, "level": 50, "msg": "pino crashed"}))
    last = list(entries(lines, detect_header(lines)))[-1]
    assert (last.message, last.fields["ts"], last.fields["level"]) == ("pino crashed", "1765069323000", "ERROR")
    assert parse_timestamp(last.fields["ts"]) == datetime(2025, 12, 7, 1, 2, 3, tzinfo=UTC)


@pytest.mark.parametrize(
    "lines",
    [
        [json.dumps({"cpu": i, "mem": 2 * i}) for i in range(5)],  # metrics: no message key
        ["{not json", "{still not}", "plain text"],
        [json.dumps({"msg": "one"}), "two", "three", "four", "five", "six", "seven"],  # too few objects
    ],
    ids=["no-message-key", "not-json", "too-few"],
)
def test_what_is_no_json_log(lines: list[str]) -> None:
    assert json_header(lines) is None


def test_a_banner_before_the_json_lines() -> None:
    lines = ["Starting app v1.2 ...", *lines_of([{"time": "2026-12-07T01:02:03Z", "level": "info", "msg": f"tick {i}"} for i in range(5)])]
    header = detect_header(lines)
    assert header is not None and header.name == "json: time level msg"
    assert [e.message for e in entries(lines, header)] == ["Starting app v1.2 ...", *(f"tick {i}" for i in range(5))]


def test_text_logs_keep_their_text_header() -> None:
    lines = [f"2026-12-07 01:02:0{i},123 INFO [main] app.Main - started {i}" for i in range(5)]
    header = detect_header(lines)
    assert header is not None and header.name == "ts level [thread] logger -"


def test_the_json_fields_are_the_text_header_fields() -> None:
    assert tuple(FIELD_KEYS) == FIELDS
