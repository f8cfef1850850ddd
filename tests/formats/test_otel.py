"""The OTel GenAI (OTLP/JSON) reader: golden rows for JSON Lines (current and deprecated attribute
names, OpenLLMetry, streaming chunks, malformed lines) and a pretty-printed document;
accounting, detection, ingest, and the semantic-conventions examples when /work/shared is there.

Regenerate the expected JSON on purpose with ``LOGMINE_REGEN_GOLDEN=1`` and review the diff.
"""

from __future__ import annotations

import json
import logging
import re
import tempfile
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _golden import check_golden, merged_golden

import logmine
from logmine.formats import detect_format, otel
from logmine.formats._jsondoc import merge_batches
from logmine.records import EVENTS_SCHEMA, LLM_REQUESTS_SCHEMA, REQUEST_KINDS

CASES = Path(__file__).parents[1] / "cases" / "formats" / "otel"
EXAMPLES = Path("/work/shared/formats/otel-genai/docs_gen-ai_non-normative_examples-llm-calls.md")


def produced(path: Path) -> dict[str, Any]:
    return merged_golden(otel.read(path))


@pytest.mark.parametrize("name", ["genai.jsonl", "genai_pretty.json"])
def test_golden(name: str) -> None:
    check_golden(produced(CASES / name), CASES / f"{name.split('.')[0]}.expected.json")


@pytest.mark.parametrize(("name", "read", "accepted"), [("genai.jsonl", 13, 7), ("genai_pretty.json", 4, 3)])
def test_accounting(name: str, read: int, accepted: int) -> None:
    batches = list(otel.read(CASES / name))
    assert sum(b.lines_read for b in batches) == read
    assert sum(b.lines_accepted for b in batches) == accepted
    assert sum(b.lines_read for b in batches) == sum(b.lines_accepted + len(b.rejects) for b in batches)


def test_rows_fit_the_schemas() -> None:
    for name in ("genai.jsonl", "genai_pretty.json"):
        batch = merge_batches(otel.read(CASES / name))
        for row in batch.requests:  # type: ignore[union-attr]
            assert set(row) <= set(LLM_REQUESTS_SCHEMA) and row["kind"] in REQUEST_KINDS
        for row in batch.events:  # type: ignore[union-attr]
            assert set(row) <= set(EVENTS_SCHEMA)
        frame = pl.DataFrame(batch.requests, schema=LLM_REQUESTS_SCHEMA, strict=False)
        assert frame["ts"].null_count() == 0


def test_a_partly_bad_line_is_accepted_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="logmine.formats.otel"):
        batch = merge_batches(otel.read(CASES / "genai.jsonl"))
    assert 8 in {r["source_line"] for r in batch.requests}  # type: ignore[union-attr]
    assert 8 not in {r.source_line for r in batch.rejects}
    assert any(":8: a record was skipped: absurd_value" in m for m in caplog.messages)


def test_deprecated_python_literal_prompt() -> None:
    # the example value of the deprecated gen_ai.prompt in the semantic conventions
    attrs = {"gen_ai.prompt": "[{'role': 'user', 'content': 'What is the capital of France?'}]",
             "gen_ai.completion": "[{'role': 'assistant', 'content': 'The capital of France is Paris.'}]"}
    assert otel.prompt_text(attrs) == "user: What is the capital of France?"
    assert otel.completion_text(attrs) == "The capital of France is Paris."


def test_detection() -> None:
    assert detect_format(CASES / "genai.jsonl") == "otel"
    assert detect_format(CASES / "genai_pretty.json") == "otel"


def _examples() -> list[tuple[str, Any, Any]]:
    text = EXAMPLES.read_text()
    blocks = dict(re.findall(r'<span id="(gen-ai-[\w-]+)">.*?```json\n(.*?)\n```', text, flags=re.S))
    pairs = []
    for anchor, body in sorted(blocks.items()):
        if anchor.startswith("gen-ai-input-messages-"):
            output = blocks.get(anchor.replace("input", "output"))
            pairs.append((anchor, json.loads(body), json.loads(output) if output else None))
    return pairs


@pytest.mark.skipif(not EXAMPLES.exists(), reason="/work/shared is not mounted")
def test_semantic_convention_examples() -> None:
    pairs = _examples()
    assert len(pairs) >= 5
    for anchor, inputs, outputs in pairs:
        attributes = [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
                      {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(inputs)}}]
        if outputs is not None:
            attributes.append({"key": "gen_ai.output.messages", "value": {"stringValue": json.dumps(outputs)}})
        span = {"name": "chat gpt-4", "startTimeUnixNano": "1718012345000000000", "endTimeUnixNano": "1718012346000000000",
                "attributes": attributes}
        table, row = otel.span_row(span, {}, 1)  # type: ignore[misc]
        assert table == "requests" and row["total_ms"] == 1000.0
        for message in inputs:
            assert f"{message['role']}: " in row["prompt"], anchor
            for part in message["parts"]:
                if part["type"] == "text":
                    assert part["content"] in row["prompt"], anchor
        if outputs is not None:
            texts = [p["content"] for m in outputs for p in m["parts"] if p["type"] == "text"]
            assert row["completion"] and all(t in row["completion"] for t in texts), anchor


_GOOD = (CASES / "genai.jsonl").read_bytes().splitlines()[:4]
_lines = st.one_of(st.sampled_from(_GOOD), st.binary(max_size=60).map(lambda b: b.replace(b"\n", b" ").replace(b"\r", b" ")))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_lines, min_size=1, max_size=12))
def test_every_line_is_accounted_for(lines: list[bytes]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "x.jsonl"
        path.write_bytes(b"\n".join([_GOOD[0], *lines]) + b"\n")
        batch = merge_batches(otel.read(path))
    assert batch.lines_read == len(lines) + 1 == batch.lines_accepted + len(batch.rejects)


def test_ingest_end_to_end(tmp_path: Path) -> None:
    report = logmine.ingest([CASES / "genai.jsonl", CASES / "genai_pretty.json"], tmp_path / "ws")
    assert (report.lines_read, report.lines_accepted, report.lines_rejected) == (13 + 4, 7 + 3, 6 + 1)
    ws = logmine.Workspace.open(tmp_path / "ws")
    requests = ws.read("llm_requests")
    assert requests.height == 7 and ws.read("events").height == 3 + 6  # 6 chats, each a chat.request event too
    streamed = requests.filter(pl.col("token_times_ms").is_not_null())
    assert streamed["token_times_ms"].to_list() == [[180.0, 230.0, 260.0, 300.0]]
    assert requests["request_id"].n_unique() == 7
