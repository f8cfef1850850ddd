"""The Continue LLM interaction log reader: one request per interaction, golden rows, accounting.

Golden files: ``tests/cases/formats/continue-llm/<fixture>.expected.json``. Regenerate on purpose
with ``LOGMINE_REGEN_GOLDEN=1 .venv/bin/python -m pytest tests/formats/test_continue_llm.py`` and review the diff.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _golden import assert_lines_accounted, assert_summary_matches, check_golden, compressed_copies, schema_golden

import logmine
from logmine.formats import Batch, continue_llm, detect_format
from logmine.workspace import Workspace

CASES = Path(__file__).resolve().parents[1] / "cases" / "formats" / "continue-llm"
FIXTURES = sorted(CASES.glob("*.jsonl"))
UPSTREAM = Path(__file__).resolve().parents[2].parent / "shared" / "formats" / "continue_llm_log"
A, B, C, D = ("3f2a9c1e-0b7d-4c55-9e61-5d8f0a7b2c10", "8e41d7aa-2f3b-4b0e-a1c9-77c0d2e5f901",
              "c5b07e12-9a4d-41f8-b3e6-0d9c8a1f2e33", "f0d1e2c3-b4a5-4697-8877-665544332211")


def golden(batches: list[Batch]) -> dict[str, Any]:
    """Everything the reader produced for a file; it writes requests only."""
    assert not any(b.events for b in batches)
    return schema_golden(batches, tables=("requests",))


def read_all(path: Path) -> list[Batch]:
    return list(continue_llm.read(path))


def by_id(path: Path) -> dict[str, dict[str, Any]]:
    return {r["request_id"]: r for b in read_all(path) for r in b.requests}


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_golden_rows(path: Path) -> None:
    check_golden(golden(read_all(path)), path.with_name(path.stem + ".expected.json"))



@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_batch_boundaries_change_nothing(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = golden(read_all(path))
    monkeypatch.setattr(continue_llm, "BATCH_LINES", 2)
    batches = read_all(path)
    assert len(batches) >= 2 and golden(batches) == expected

@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.name)
def test_every_line_is_accounted(path: Path) -> None:
    batches = read_all(path)
    assert_lines_accounted(batches, len(path.read_bytes().splitlines()))


def test_interleaved_interactions_become_one_request_each() -> None:
    rows = by_id(CASES / "interactions.jsonl")
    assert sorted(rows) == sorted([A, B, C, D])
    chat = rows[A]
    assert (chat["kind"], chat["source_line"], chat["model"]) == ("chat", 1, "claude-3-5-sonnet-latest")
    assert chat["prompt"] == "system: You are a helpful coding assistant.\nuser: Why is `mean([])` failing?"
    # the thinking message at +150 ms is not a token; the tool-call message at +702 ms is an (empty) arrival
    assert (chat["ttft_ms"], chat["token_times_ms"], chat["total_ms"]) == (612.0, [612.0, 640.0, 702.0], 1350.0)
    assert chat["completion"] == "".join(chat["token_texts"]) == "Dividing by `len([])` is zero."
    assert (chat["prompt_tokens"], chat["completion_tokens"]) == (1840, 96)
    attrs = json.loads(chat["attrs"])
    assert (attrs["end"], attrs["thinking_chunks"], attrs["tool_calls"]) == ("success", 1, ["builtin_read_file"])


def test_fim_cancel_error_and_missing_end() -> None:
    rows = by_id(CASES / "interactions.jsonl")
    fim = rows[B]
    assert (fim["kind"], fim["prompt"], fim["prefix"][:13], fim["suffix"][:5]) == ("completion", None, "def mean(xs):", "\n    ")
    assert (fim["token_times_ms"], fim["total_ms"], json.loads(fim["attrs"])["end"]) == ([140.0, 161.0], 220.0, "cancel")
    failed = rows[C]
    assert failed["completion"] == "Fix mean() on empty lists"  # a chunk may be a message object
    assert {k: json.loads(failed["attrs"])[k] for k in ("end", "error_name", "error")} == {
        "end": "error", "error_name": "AbortError", "error": "Request timed out"}
    unfinished = rows[D]
    assert (unfinished["total_ms"], unfinished["prompt_tokens"], unfinished["ttft_ms"]) == (None, None, 800.0)
    assert json.loads(unfinished["attrs"])["end"] == "missing"


def test_orphans_and_bad_items_are_rejects() -> None:
    reasons = {r.source_line: r.reason for b in read_all(CASES / "interactions.jsonl") for r in b.rejects}
    assert reasons == {
        11: f"unknown_record: chunk item of interaction '{A}' after that interaction's end item",
        12: "unknown_record: chunk item of interaction '7d6c5b4a-orphan' but no start item of it came before (orphan)",
        13: "malformed_json: unexpected end of data",
        15: "absurd_value: chunk item is -10.0 ms from its interaction's start",
        18: "unknown_record: unknown item kind 'progress'",
        19: "missing_field: required field 'interactionId' is missing",
        20: "absurd_value: field 'promptTokens' = -1 is negative",
    }


def test_a_restarted_interaction_id_emits_the_open_one(tmp_path: Path) -> None:
    items = [
        {"interactionId": "x", "timestamp": 1736849523100, "kind": "startComplete", "prompt": "p1"},
        {"interactionId": "x", "timestamp": 1736849523200, "kind": "chunk", "chunk": "a"},
        {"interactionId": "x", "timestamp": 1736849524100, "kind": "startComplete", "prompt": "p2"},
        {"interactionId": "x", "timestamp": 1736849524300, "kind": "success", "promptTokens": 2, "generatedTokens": 1},
    ]
    path = tmp_path / "log.jsonl"
    path.write_text("".join(json.dumps(i) + "\n" for i in items))
    rows = [r for b in read_all(path) for r in b.requests]
    assert [(r["prompt"], r["completion"], r["total_ms"], json.loads(r["attrs"])["end"]) for r in rows] == [
        ("p1", "a", None, "missing"), ("p2", None, 200.0, "success")]


@pytest.mark.skipif(not UPSTREAM.is_dir(), reason="../shared/formats/continue_llm_log is absent")
@pytest.mark.parametrize("name", ["chat", "complete"])
def test_upstream_items_agree_with_upstream_formatter(name: str) -> None:
    """Continue's own test items; their offsets must match what Continue's formatter printed for them."""
    path = UPSTREAM / f"interaction_items.{name}.jsonl"
    batches = read_all(path)
    assert sum(b.lines_accepted for b in batches) == len(path.read_bytes().splitlines())
    (row,) = [r for b in batches for r in b.requests]
    expected_text = (UPSTREAM / f"prompt.log.{name}.expected").read_text()
    offsets = [float(s) * 1000 for s in re.findall(r"^\s+\+(\d+\.\d)\s", expected_text, flags=re.M)]
    printed = [round(t, -2) for t in row["token_times_ms"]] + ([row["total_ms"]] if row["total_ms"] is not None else [])
    # the formatter prints a line's offset only when it starts a new line of output
    assert set(offsets) <= set(printed) and offsets[0] == row["ttft_ms"]
    assert row["ts"].strftime("%H:%M:%S.") + str(row["ts"].microsecond // 100000) == expected_text.split()[0]
    if name == "chat":
        assert (row["kind"], row["completion"], row["prompt_tokens"], row["completion_tokens"]) == (
            "chat", "Hello, world!\nHow can I help you?", 10, 20)
        assert "Success" in expected_text and json.loads(row["attrs"])["end"] == "success"
    else:
        assert (row["kind"], row["prompt"], row["completion"]) == ("completion", "A horse is a horse", ", of course, of course")
        assert json.loads(row["attrs"])["end"] == "missing"


def test_detection_and_foreign_lines(tmp_path: Path) -> None:
    for path in FIXTURES:
        assert detect_format(path) == "continue-llm"
    foreign = [
        b'{"type":"llm_request","ts":"2025-01-14T10:00:00Z","kind":"chat"}',
        b'{"eventName":"chatInteraction","timestamp":"2025-01-14T10:00:00Z","schema":"0.2.0"}',
        b'{"user":null,"ts":1715677200000,"event":{"completion":{"completion_id":"c"}}}',
        b'{"recorder_version":"58","time":1736849523100,"group":{"id":"actions"},"event":{"id":"x"}}',
        b'{"resourceSpans":[]}',
        b'{"$type":"KaVE.Commons.Model.Events.CommandEvent, KaVE.Commons"}',
    ]
    for line in foreign:
        assert not continue_llm.sniff(tmp_path / "x.jsonl", [line])


def test_compressed_variants_read_identically(tmp_path: Path) -> None:
    source = CASES / "interactions.jsonl"
    expected = golden(read_all(source))
    for path in compressed_copies(source, tmp_path):
        assert detect_format(path) == "continue-llm"
        assert golden(read_all(path)) == expected


def test_ingest_end_to_end(tmp_path: Path) -> None:
    report = logmine.ingest(FIXTURES, tmp_path / "ws")
    expected = [golden(read_all(p)) for p in FIXTURES]
    summary = report.summary()
    assert_summary_matches(summary, len(FIXTURES), expected)
    requests = Workspace.open(tmp_path / "ws").read("llm_requests")
    assert requests.height == sum(len(g["requests"]) for g in expected)
    chat = requests.filter(requests["request_id"] == A).to_dicts()[0]
    assert chat["token_times_ms"] == [612.0, 640.0, 702.0] and chat["token_texts"][0] == "Dividing by "


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(
    st.binary(max_size=40).filter(lambda b: b"\n" not in b and b"\r" not in b),
    st.builds(lambda iid, ts, kind, chunk: json.dumps({"interactionId": iid, "timestamp": ts, "kind": kind, "chunk": chunk,
                                                       "prompt": "p", "prefix": "a", "suffix": "b", "messages": [],
                                                       "message": {"role": "assistant", "content": chunk}}).encode(),
              st.sampled_from(["a", "b", 3]), st.one_of(st.integers(-10, 2_000_000_000_000), st.floats(), st.none()),
              st.sampled_from(sorted(continue_llm.ITEM_KINDS) + ["other"]), st.one_of(st.text(max_size=4), st.integers(), st.none())),
), max_size=15))
def test_any_input_is_accounted_and_never_raises(tmp_path: Path, lines: list[bytes]) -> None:
    path = tmp_path / "llm.jsonl"
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    batches = read_all(path)
    assert_lines_accounted(batches, len(lines))
    starts = sum(1 for b in batches for r in b.requests)
    assert starts <= sum(b.lines_accepted for b in batches)
