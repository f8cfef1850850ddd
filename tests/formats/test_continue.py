"""The Continue dev data reader: golden rows, line accounting, detection, compression, ingest.

Golden files: ``tests/cases/formats/continue/<fixture>.expected.json``. Regenerate on purpose
with ``LOGMINE_REGEN_GOLDEN=1 .venv/bin/python -m pytest tests/formats/test_continue.py`` and review the diff.
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
from logmine.formats import Batch, continue_dev, detect_format
from logmine.records import ACTIONS
from logmine.workspace import Workspace

CASES = Path(__file__).resolve().parents[1] / "cases" / "formats" / "continue"
FIXTURES = sorted(CASES.glob("*.jsonl"))
def golden(batches: list[Batch]) -> dict[str, Any]:
    return schema_golden(batches)


def read_all(path: Path) -> list[Batch]:
    return list(continue_dev.read(path))


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_golden_rows(path: Path) -> None:
    check_golden(golden(read_all(path)), path.with_name(path.stem + ".expected.json"))



@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_batch_boundaries_change_nothing(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = golden(read_all(path))
    monkeypatch.setattr(continue_dev, "BATCH_LINES", 2)
    batches = read_all(path)
    assert len(batches) >= 2 and golden(batches) == expected

@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_every_line_is_accounted(path: Path) -> None:
    batches = read_all(path)
    assert_lines_accounted(batches, len(path.read_bytes().splitlines()))
    rejected = {r.source_line for b in batches for r in b.rejects}
    produced = {r["source_line"] for b in batches for r in [*b.events, *b.requests]}
    assert not rejected & produced
    assert len(produced) == sum(b.lines_accepted for b in batches)  # every accepted line gave rows


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_rows_follow_the_contract(path: Path) -> None:
    for batch in read_all(path):
        for row in [*batch.events, *batch.requests]:
            attrs = json.loads(row["attrs"])
            assert row["attrs"] == json.dumps(attrs, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
            assert attrs["raw_action"]
        for row in batch.events:
            assert row["action"] in ACTIONS or row["action"].startswith("other:")


def test_autocomplete_maps_to_a_request_and_outcome_events() -> None:
    batches = read_all(CASES / "autocomplete.jsonl")
    requests = {r["request_id"]: r for b in batches for r in b.requests}
    actions = [(e["source_line"], e["action"]) for b in batches for e in b.events]
    assert requests["c0a1-7f3e"]["kind"] == "completion" and requests["c0a1-7f3e"]["accepted"] is True
    assert requests["c0a1-7f3e"]["ide"] == "vscode" and requests["c0a2-11aa"]["ide"] == "jetbrains"
    assert (1, "completion.shown") in actions and (1, "completion.accepted") in actions
    assert (2, "completion.rejected") in actions
    # noCode: no prompt, completion or code, and no accepted flag -> only completion.shown
    nocode = requests["c0a3-22bb"]
    assert (nocode["prompt"], nocode["completion"], nocode["prefix"], nocode["accepted"]) == (None, None, None, None)
    assert [a for line, a in actions if line == 3] == ["completion.shown"]


def test_bad_lines_are_rejects_with_reasons() -> None:
    reasons = {r.source_line: r.reason for b in read_all(CASES / "autocomplete.jsonl") for r in b.rejects}
    assert reasons[4].startswith("malformed_json")
    assert reasons[5].startswith("invalid_utf8")
    assert reasons[6] == "absurd_value: field 'time' = -5.0 is not a plausible latency in ms"
    assert reasons[7].startswith("absurd_value: timestamp 'timestamp' = 1999-12-31")
    assert reasons[8] == "wrong_type: field 'accepted' should be a boolean, got str"
    assert reasons[9] == "missing_field: required field 'timestamp' is missing"


def test_event_name_comes_from_the_file_name_when_absent() -> None:
    assert continue_dev.event_name_from_path(Path("dev_data/0.2.0/toolUsage.jsonl.zst")) == "toolUsage"
    assert continue_dev.event_name_from_path(Path("notes.jsonl")) is None
    events = [e for b in read_all(CASES / "toolUsage.jsonl") for e in b.events]
    assert [e["action"] for e in events] == ["tool.call"]


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_detected_as_continue(path: Path) -> None:
    assert detect_format(path) == "continue"


FOREIGN_LINES = {
    "native": b'{"type":"event","ts":"2025-01-14T10:00:00Z","action":"file.save"}',
    "jetbrains": b'{"recorder_version":"58","session":"s","build":"243.1","bucket":"1","time":1736849523100,'
    b'"group":{"id":"actions","version":"1"},"event":{"count":1,"data":{"action_id":"EditorCopy"},"id":"action.invoked"}}',
    "otel": b'{"resourceSpans":[{"resource":{"attributes":[]},"scopeSpans":[]}]}',
    "kave": b'{"$type":"KaVE.Commons.Model.Events.CommandEvent, KaVE.Commons","TriggeredAt":"2016-05-10T10:00:00+02:00"}',
    "tabby": b'{"user":null,"ts":1715677200000,"event":{"view":{"completion_id":"c","choice_index":0}}}',
    "continue-llm": b'{"interactionId":"1","timestamp":1698765433100,"kind":"chunk","chunk":"x"}',
}


@pytest.mark.parametrize("name", sorted(FOREIGN_LINES))
def test_does_not_claim_other_formats(name: str, tmp_path: Path) -> None:
    path = tmp_path / "toolUsage.jsonl"  # even under a Continue event file name
    path.write_bytes(FOREIGN_LINES[name] + b"\n")
    assert not continue_dev.sniff(path, [FOREIGN_LINES[name]])


def test_compressed_variants_read_identically(tmp_path: Path) -> None:
    source = CASES / "autocomplete.jsonl"
    expected = golden(read_all(source))
    for path in compressed_copies(source, tmp_path):
        assert detect_format(path) == "continue"
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
    assert set(events["source_format"]) == {"continue"} and set(requests["source_format"]) == {"continue"}
    assert events["event_id"].n_unique() == events.height
    assert all(u is None or u.startswith("u_") for u in requests["user_id"])  # pseudonymised
    assert ws.read("rejects").height == summary["lines_rejected"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(
    st.binary(max_size=60).filter(lambda b: b"\n" not in b and b"\r" not in b),
    st.builds(lambda name, ts, acc, t: json.dumps({"eventName": name, "timestamp": ts, "accepted": acc, "time": t}).encode(),
              st.sampled_from(sorted(continue_dev.EVENT_NAMES) + ["x"]),
              st.one_of(st.none(), st.integers(-10, 5_000_000_000_000), st.just("2025-01-14T10:00:00Z"), st.text(max_size=5)),
              st.one_of(st.none(), st.booleans(), st.integers()), st.one_of(st.none(), st.floats(allow_nan=True), st.integers())),
), max_size=12))
def test_any_input_is_accounted_and_never_raises(tmp_path: Path, lines: list[bytes]) -> None:
    path = tmp_path / "autocomplete.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    batches = read_all(path)
    assert_lines_accounted(batches, len(lines))
