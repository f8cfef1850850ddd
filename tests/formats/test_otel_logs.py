"""OTel GenAI in its default mode: prompts and completions as log records beside (or among) the
spans, joined by traceId/spanId into one request each, read file by file and through ingest; and
the real files of the official OpenAI instrumentation when ../shared is there."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import logmine
from logmine.formats import companion, detect_format, otel
from logmine.formats._jsondoc import merge_batches

CASES = Path(__file__).resolve().parents[1] / "cases" / "formats" / "otel"
SPANS, LOGS = CASES / "chat.jsonl", CASES / "chat.logs.jsonl"
REAL = Path(__file__).resolve().parents[2].parent / "shared" / "formats" / "real" / "otel"
A = "5d1c0e4a9b7f4e21a3c8d6f0b2e4a6c8:a1a1a1a1a1a1a1a1"
B = "0f9e8d7c6b5a49382716f5e4d3c2b1a0:b2b2b2b2b2b2b2b2"
C = "77aa66bb55cc44dd33ee22ff11009988:c3c3c3c3c3c3c3c3"


def requests(path: Path) -> dict[str, dict[str, Any]]:
    return {r["request_id"]: r for r in merge_batches(otel.read(path)).requests}  # type: ignore[union-attr]


def copy(folder: Path, *paths: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for path in paths:
        shutil.copy(path, folder / path.name)
    return folder


def test_a_span_takes_its_events_from_its_own_file_and_the_logs_file() -> None:
    batch = merge_batches(otel.read(SPANS))
    assert (batch.lines_read, batch.lines_accepted, batch.rejects) == (3, 3, [])
    rows = requests(SPANS)
    assert sorted(rows) == [B, A]  # line 3 holds B's events: joined into B's row, no row of its own
    a, b = rows[A], rows[B]
    assert (a["prompt"], a["completion"]) == ("system: You review pull requests.\nuser: Review: def add(a, b): return a - b",
                                              "add() subtracts; use a + b.")
    assert (a["model"], a["total_ms"], a["prompt_tokens"], a["completion_tokens"], a["source_line"]) == ("gpt-4o-mini", 1800.0, 42, 9, 1)
    assert json.loads(a["attrs"])["log_records"] == 3
    assert (b["prompt"], b["completion"]) == ("user: Explain the regex ^\\d{3}-\\d{4}$", "Three digits, a dash, four digits.")
    chats = [json.loads(e["attrs"])["request_id"] for e in batch.events if e["action"] == "chat.request"]  # type: ignore[union-attr]
    assert chats == [A, B]


def test_events_whose_span_is_in_neither_file_are_a_request_of_their_own() -> None:
    batch = merge_batches(otel.read(LOGS))
    assert (batch.lines_read, batch.lines_accepted) == (6, 4)  # A's events and the plain log line: accepted, no row
    assert {r.source_line: r.reason for r in batch.rejects} == {
        5: "missing_field: required field 'timeUnixNano' or 'observedTimeUnixNano' is missing",
        6: "wrong_type: field 'resourceLogs' should be a list, got str"}
    (c,) = batch.requests  # type: ignore[misc]
    assert (c["request_id"], c["kind"], c["source_line"], c["ts"].isoformat(), c["ide"]) == (
        C, "chat", 4, "2026-01-01T10:00:09+00:00", "review-bot")
    assert (c["prompt"], c["completion"], c.get("total_ms"), c.get("model")) == (
        "user: Name three sorting algorithms.", "Merge sort, quicksort, heapsort.", None, None)
    assert json.loads(c["attrs"])["finish_reasons"] == ["stop"]
    assert [e["action"] for e in batch.events] == ["chat.request"]  # type: ignore[union-attr]


def test_each_file_alone(tmp_path: Path) -> None:
    spans = requests(copy(tmp_path / "spans", SPANS) / SPANS.name)
    assert spans[A]["prompt"] is None and spans[B]["prompt"] is not None  # B's events are in the spans file itself
    logs = requests(copy(tmp_path / "logs", LOGS) / LOGS.name)
    assert sorted(logs) == [A, C] and logs[A]["prompt"].startswith("system: You review pull requests.")


def test_ingest_makes_each_request_once_and_reads_a_file_again_when_its_companion_changes(tmp_path: Path) -> None:
    logs_dir = copy(tmp_path / "logs", SPANS)
    ws = tmp_path / "ws"
    logmine.ingest([logs_dir], ws)
    assert _prompts(ws) == {A: None, B: "user: Explain the regex ^\\d{3}-\\d{4}$"}
    copy(logs_dir, LOGS)  # the logs file arrives later: the unchanged spans file is read again
    report = logmine.ingest([logs_dir], ws)
    assert [f.status for f in report.files] == ["ingested", "ingested"]
    prompts = _prompts(ws)
    assert sorted(prompts) == sorted([A, B, C]) and prompts[A].startswith("system: You review pull requests.")
    assert [f.status for f in logmine.ingest([logs_dir], ws).files] == ["skipped", "skipped"]
    (logs_dir / LOGS.name).write_bytes(LOGS.read_bytes().splitlines(keepends=True)[1] * 1)  # A's choice only
    assert [f.status for f in logmine.ingest([logs_dir], ws).files] == ["ingested", "ingested"]
    assert _prompts(ws)[A] is None and sorted(_prompts(ws)) == sorted([A, B])


def test_ingesting_one_file_of_a_pair_reads_both(tmp_path: Path) -> None:
    folder = copy(tmp_path / "logs", SPANS, LOGS)
    report = logmine.ingest([folder / SPANS.name], tmp_path / "ws")
    assert sorted(Path(f.path).name for f in report.files) == [SPANS.name, LOGS.name]
    assert (report.lines_read, report.lines_accepted, report.lines_rejected) == (9, 7, 2)
    assert sorted(_prompts(tmp_path / "ws")) == sorted([A, B, C])


def test_companion_names() -> None:
    assert companion(Path("d/x.jsonl")) == Path("d/x.logs.jsonl")
    assert companion(Path("d/x.logs.jsonl")) == Path("d/x.jsonl")
    assert companion(Path("x.logs.json.gz")) == Path("x.json.gz")
    assert companion(Path("x.jsonl.zst")) == Path("x.logs.jsonl.zst")
    assert companion(Path(".logs.jsonl")) is None and companion(Path("x.log")) is None
    assert detect_format(LOGS) == "otel"


def _prompts(ws: Path) -> dict[str, str | None]:
    frame = logmine.Workspace.open(ws).read("llm_requests")
    assert frame["request_id"].n_unique() == frame.height
    return dict(zip(frame["request_id"], frame["prompt"], strict=True))


@pytest.mark.skipif(not REAL.is_dir(), reason="../shared/formats/real/otel is absent")
def test_the_official_instrumentations_default_mode(tmp_path: Path) -> None:
    spans, logs = REAL / "openai-v2-default-semconv.jsonl", REAL / "openai-v2-default-semconv.logs.jsonl"
    assert detect_format(logs) == "otel"
    report = logmine.ingest([spans], tmp_path / "ws")  # the logs file comes with it
    assert (report.lines_read, report.lines_accepted, report.lines_rejected) == (23 + 16, 23 + 16, 0)
    frame = logmine.Workspace.open(tmp_path / "ws").read("llm_requests")
    # these recordings come from different test runs: no span of the one file is in the other,
    # so the 23 spans keep no prompt and the events make 5 requests of their own
    with_prompt = frame.filter(pl.col("prompt").is_not_null())
    assert (frame.height, with_prompt.height) == (28, 5)
    assert set(with_prompt["source_file"]) == {str(logs)}
    # the same conversations recorded in the experimental mode (content on the span) read the same
    experimental = {(r["prompt"], r["completion"]) for r in requests(REAL / "openai-v2-latest-experimental.jsonl").values()}
    assert set(zip(with_prompt["prompt"], with_prompt["completion"], strict=True)) <= experimental
    tool_round = with_prompt.filter(pl.col("prompt").str.contains("tool_call_response"))["prompt"].to_list()
    assert tool_round == ["system: You're a helpful assistant.\nuser: What's the weather in Seattle and San Francisco today?\n"
                          'assistant: [tool_call get_current_weather {"location": "Seattle, WA"}]\n'
                          '[tool_call get_current_weather {"location": "San Francisco, CA"}]\n'
                          "tool: [tool_call_response 50 degrees and raining]\ntool: [tool_call_response 70 degrees and sunny]"]
    events = logmine.Workspace.open(tmp_path / "ws").read("events")
    assert events.filter(pl.col("action") == "chat.request").height == frame.filter(pl.col("kind") == "chat").height
