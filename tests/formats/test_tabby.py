"""The Tabby event log reader: golden rows, the select/dismiss join, accounting, detection, ingest.

Golden files: ``tests/cases/formats/tabby/<fixture>.expected.json``. Regenerate on purpose
with ``LOGMINE_REGEN_GOLDEN=1 .venv/bin/python -m pytest tests/formats/test_tabby.py`` and review the diff.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _golden import assert_lines_accounted, assert_summary_matches, check_golden, compressed_copies, schema_golden

import logmine
from logmine.formats import Batch, detect_format, tabby
from logmine.records import ACTIONS
from logmine.workspace import Workspace

CASES = Path(__file__).resolve().parents[1] / "cases" / "formats" / "tabby"
FIXTURES = sorted(p for p in CASES.glob("*.json") if not p.name.endswith(".expected.json"))


def golden(batches: list[Batch]) -> dict[str, Any]:
    return schema_golden(batches)


def read_all(path: Path) -> list[Batch]:
    return list(tabby.read(path))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_golden_rows(path: Path) -> None:
    check_golden(golden(read_all(path)), path.with_name(path.stem + ".expected.json"))



@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_batch_boundaries_change_nothing(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = golden(read_all(path))
    monkeypatch.setattr(tabby, "BATCH_LINES", 2)
    batches = read_all(path)
    assert len(batches) >= 2 and golden(batches) == expected

@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_every_line_is_accounted(path: Path) -> None:
    batches = read_all(path)
    assert_lines_accounted(batches, len(path.read_bytes().splitlines()))
    produced = {r["source_line"] for b in batches for r in [*b.events, *b.requests]}
    assert len(produced) == sum(b.lines_accepted for b in batches)
    assert not produced & {r.source_line for b in batches for r in b.rejects}


def test_accepted_is_joined_from_select_and_dismiss() -> None:
    requests = {r["request_id"]: r for b in read_all(CASES / "2024-05-14.json") for r in b.requests}
    assert requests["cmpl-1a"]["accepted"] is True  # selected
    assert requests["cmpl-2b"]["accepted"] is False  # dismissed
    assert requests["cmpl-3c"]["accepted"] is None  # only viewed
    assert requests["cmpl-5e"]["accepted"] is None  # its only select was rejected (negative elapsed)
    first = requests["cmpl-1a"]
    assert (first["kind"], first["file_path"], first["language"], first["ide"]) == ("completion", "src/stats.py", "python", "vscode")
    assert (first["prefix"], first["suffix"], first["completion"]) == ("def mean(xs):\n    ", "\n", "return sum(xs) / len(xs)")
    assert requests["cmpl-3c"]["language"] == "typescript"  # typescriptreact folded
    assert requests["cmpl-4d"]["user_id"] == "bob"  # older Tabby kept the user inside the event
    assert requests["chat-6f"]["kind"] == "chat"


def test_outcome_events() -> None:
    events = [e for b in read_all(CASES / "2024-05-14.json") for e in b.events]
    assert [(e["source_line"], e["action"], e.get("duration_ms")) for e in events] == [
        (2, "completion.shown", None), (3, "completion.accepted", 820.0), (5, "completion.shown", None),
        (6, "completion.rejected", 4000.0), (8, "completion.shown", None), (12, "chat.request", None), (13, "other:search", None)]
    for event in events:
        assert event["action"] in ACTIONS or event["action"].startswith("other:")
        assert json.loads(event["attrs"])["raw_action"]


def test_bad_lines_are_rejects_with_reasons() -> None:
    reasons = {r.source_line: r.reason for b in read_all(CASES / "2024-05-14.json") for r in b.rejects}
    assert reasons == {
        11: "absurd_value: field 'elapsed' = -20.0 is not a plausible latency in ms",
        14: "malformed_json: unexpected end of data",
        15: "invalid_utf8: invalid UTF-8 at byte 12",
        16: "wrong_type: field 'ts' should be an integer or a number, got str",
        17: "absurd_value: timestamp 'ts' = 4102444800123.0 ms (2100-01-01T00:00:00.123000+00:00) is outside 2000-2100",
        18: "wrong_type: field 'event' should hold exactly one variant, got 2",
        19: "missing_field: required field 'completion_id' is missing",
        20: "missing_field: required field 'text' is missing",
        21: "wrong_type: field 'completion_id' should be a string, got int",
    }


def test_detection_and_foreign_lines(tmp_path: Path) -> None:
    for path in FIXTURES:
        assert detect_format(path) == "tabby"
    foreign = [
        b'{"type":"event","ts":1715677200000,"action":"file.save"}',
        b'{"recorder_version":"58","session":"s","time":1736849523100,"group":{"id":"actions","version":"1"},'
        b'"event":{"count":1,"data":{},"id":"action.invoked"}}',
        b'{"resourceSpans":[]}',
        b'{"$type":"KaVE.Commons.Model.Events.CommandEvent, KaVE.Commons","TriggeredAt":"2016-05-10T10:00:00+02:00"}',
        b'{"eventName":"autocomplete","timestamp":"2025-01-14T10:00:00Z"}',
        b'{"interactionId":"1","timestamp":1698765433100,"kind":"chunk","chunk":"x"}',
        b'{"ts":1715677200000,"event":{"view":{}},"group":{"id":"x"}}',
    ]
    for line in foreign:
        assert not tabby.sniff(tmp_path / "2024-05-14.json", [line])


def test_compressed_variants_read_identically(tmp_path: Path) -> None:
    source = CASES / "2024-05-14.json"
    expected = golden(read_all(source))
    for path in compressed_copies(source, tmp_path):
        assert detect_format(path) == "tabby"
        assert golden(read_all(path)) == expected


def test_ingest_end_to_end(tmp_path: Path) -> None:
    report = logmine.ingest(FIXTURES, tmp_path / "ws")
    expected = [golden(read_all(p)) for p in FIXTURES]
    summary = report.summary()
    assert_summary_matches(summary, len(FIXTURES), expected)
    ws = Workspace.open(tmp_path / "ws")
    events, requests = ws.read("events"), ws.read("llm_requests")
    assert events.height == sum(len(g["events"]) for g in expected)
    assert requests.height == sum(len(g["requests"]) for g in expected)
    accepted = dict(zip(requests["request_id"], requests["accepted"], strict=True))
    assert (accepted["cmpl-1a"], accepted["cmpl-2b"], accepted["cmpl-3c"]) == (True, False, None)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(
    st.binary(max_size=40).filter(lambda b: b"\n" not in b and b"\r" not in b),
    st.builds(lambda variant, ts, cid, elapsed: json.dumps({"user": None, "ts": ts, "event": {variant: {
        "completion_id": cid, "choice_index": 0, "elapsed": elapsed, "prompt": "p", "language": "python",
        "choices": [{"index": 0, "text": "t"}], "input": [], "output": {"role": "assistant", "content": "c"}}}}).encode(),
              st.sampled_from(sorted(tabby.VARIANTS) + ["x"]), st.one_of(st.integers(-10, 5_000_000_000_000), st.floats(), st.text(max_size=3)),
              st.one_of(st.sampled_from(["a", "b"]), st.integers()), st.one_of(st.none(), st.integers(-5, 10**12), st.floats())),
), max_size=15))
def test_any_input_is_accounted_and_never_raises(tmp_path: Path, lines: list[bytes]) -> None:
    path = tmp_path / "events.json"
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    batches = read_all(path)
    assert_lines_accounted(batches, len(lines))


def test_a_current_chat_completion_without_fields_is_a_chat_event() -> None:
    # since 2025-03 Tabby's Event::ChatCompletion {} has no fields: a valid chat, not a bad line
    batches = read_all(CASES / "2025-04-02.json")
    chats = [(e["source_line"], e["user_id"]) for b in batches for e in b.events if e["action"] == "chat.request"]
    assert chats == [(4, "kim@example.org"), (5, None)]
    assert [r["request_id"] for b in batches for r in b.requests] == ["cmpl-k1"]  # an empty chat has no request to keep
    # a body with some of the old fields but not all is still the old shape, and a bad one
    assert {r.source_line: r.reason for b in batches for r in b.rejects} == {6: "missing_field: required field 'output' is missing"}
