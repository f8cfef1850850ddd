"""The reader of Continue's prompt log (the text of its LLMLogFormatter): golden rows, what the
text keeps of the items (interleaved lanes, wrapped lines, dates), accounting, detection, ingest,
and Continue's own formatter output when ../shared is there.

Golden files: ``tests/cases/formats/continue-prompt-log/<fixture>.expected.json``. Regenerate on
purpose with ``LOGMINE_REGEN_GOLDEN=1`` and review the diff.
"""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _golden import assert_lines_accounted, assert_summary_matches, check_golden, compressed_copies, schema_golden

import logmine
from logmine.formats import Batch, available_readers, continue_llm, continue_prompt_log, detect_format
from logmine.workspace import Workspace

CASES = Path(__file__).resolve().parents[1] / "cases" / "formats" / "continue-prompt-log"
FIXTURE = CASES / "prompt.log"
ALL_CASES = Path(__file__).resolve().parents[1] / "cases" / "formats"
SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "formats"
UPSTREAM = SHARED / "continue_llm_log"
REAL = SHARED / "real" / "continue" / "prompt.log"
WRITTEN = datetime(2025, 3, 3, 0, 10, tzinfo=UTC)
"""When the fixture's last line was written, as its modification time would say."""


def read_all(path: Path, written: datetime | None = WRITTEN) -> list[Batch]:
    return list(continue_prompt_log.read(path, written))


def golden(batches: list[Batch]) -> dict[str, Any]:
    assert not any(b.events for b in batches)
    return schema_golden(batches, tables=("requests",))


def rows(path: Path, written: datetime | None = WRITTEN) -> list[dict[str, Any]]:
    return sorted((r for b in read_all(path, written) for r in b.requests), key=lambda r: r["source_line"])


def test_golden_rows() -> None:
    check_golden(golden(read_all(FIXTURE)), CASES / "prompt.expected.json")


def test_batch_boundaries_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    expected = golden(read_all(FIXTURE))
    monkeypatch.setattr(continue_prompt_log, "BATCH_LINES", 3)
    batches = read_all(FIXTURE)
    assert len(batches) >= 2 and golden(batches) == expected


def test_every_line_is_accounted() -> None:
    batches = read_all(FIXTURE)
    assert_lines_accounted(batches, len(FIXTURE.read_bytes().splitlines()))
    assert {r.source_line: r.reason.split(":")[0] for b in batches for r in b.rejects} == {
        64: "wrong_type", 65: "unknown_record", 66: "missing_field", 67: "unknown_record", 68: "unknown_record",
        69: "unknown_record"}


def test_overlapping_interactions_are_told_apart_by_their_lane() -> None:
    chat, fim = rows(FIXTURE)[:2]
    # the Fim's lines cut the chat's streamed text; the chat's next line joins it again without a break
    assert chat["completion"] == ("Because split() returns [''] for an empty line, so unpacking it into three names raises"
                                  " ValueError.\nSkip blank lines first.")
    assert chat["token_times_ms"] == [400.0, 1000.0, 1100.0] and chat["ttft_ms"] == 400.0 and chat["total_ms"] == 1600.0
    assert "".join(chat["token_texts"]) == chat["completion"]
    assert (chat["prompt"], chat["model"], chat["prompt_tokens"], chat["completion_tokens"]) == (
        "system: You answer questions about the open file.\nuser: Why does parse_row() fail on an empty line?",
        "qwen2.5-coder:7b", 58, 24)
    assert (fim["kind"], fim["prefix"], fim["suffix"], fim["completion"], fim["ttft_ms"], fim["total_ms"]) == (
        "completion", "def area(r):\n    return ", "\nprint(area(2))", "math.pi * r * r", 200.0, 500.0)
    assert json.loads(fim["attrs"])["raw_action"] == "startFim"


def test_wrapped_lines_thinking_and_tool_calls() -> None:
    cancelled = rows(FIXTURE)[2]
    # a wrap at a space gets its space back, a wrap inside a word (a full 100-character line) none
    assert cancelled["prompt"] == (
        "user: Please read src/rows.py and tell me why the parser rejects rows whose last column is empty, then suggest a"
        " fix that keeps the existing tests green.\nThe failing input is"
        " tests/data/fixtures/rows_with_trailing_empty_columns_and_windows_line_endings_2025.csv in the repo.")
    attrs = json.loads(cancelled["attrs"])
    assert (attrs["end"], attrs["thinking_chunks"], attrs["thinking_tokens"], attrs["tool_calls"]) == ("cancel", 1, 5, ["read_file"])
    assert cancelled["completion"] == "" and cancelled["token_times_ms"] == [900.0]  # the tool-call message has empty text


def test_dates_come_from_the_file_and_midnight() -> None:
    stamps = [r["ts"].isoformat() for r in rows(FIXTURE)]
    assert stamps == ["2025-03-02T09:41:03.200000+00:00", "2025-03-02T09:41:03.900000+00:00",
                      "2025-03-02T23:59:58.700000+00:00", "2025-03-03T00:00:02.500000+00:00"]
    # written at 00:00:01, before the last start's time of day: the last start was the day before
    assert rows(FIXTURE, datetime(2025, 3, 3, 0, 0, 1, tzinfo=UTC))[-1]["ts"].date().isoformat() == "2025-03-02"


def test_without_a_date_the_modification_time_dates_the_file(tmp_path: Path) -> None:
    path = tmp_path / "prompt.log"
    shutil.copy(FIXTURE, path)
    os.utime(path, (WRITTEN.timestamp(), WRITTEN.timestamp()))
    assert golden(read_all(path, None)) == golden(read_all(FIXTURE))


def test_detection_claims_prompt_logs_only() -> None:
    assert detect_format(FIXTURE) == "continue-prompt-log"
    for path in sorted(p for p in ALL_CASES.rglob("*") if p.is_file() and p.parent != CASES):
        head = path.read_bytes()[: 1 << 16].splitlines()[:5]
        assert not continue_prompt_log.sniff(path, [line.strip() for line in head if line.strip()]), path
    for name, reader in available_readers().items():
        if name != continue_prompt_log.NAME:
            assert not reader.sniff(FIXTURE, [b"09:41:03.2 [Chat]", b"Options: {"]), name


def test_compressed_variants_read_identically(tmp_path: Path) -> None:
    expected = golden(read_all(FIXTURE))
    for path in compressed_copies(FIXTURE, tmp_path):
        assert detect_format(path) == "continue-prompt-log"
        assert golden(read_all(path)) == expected


def test_ingest_end_to_end(tmp_path: Path) -> None:
    path = tmp_path / "logs" / "prompt.log"
    path.parent.mkdir()
    shutil.copy(FIXTURE, path)
    os.utime(path, (WRITTEN.timestamp(), WRITTEN.timestamp()))
    report = logmine.ingest([path.parent], tmp_path / "ws")
    assert_summary_matches(report.summary(), 1, [golden(read_all(FIXTURE))])
    requests = Workspace.open(tmp_path / "ws").read("llm_requests").sort("source_line")
    assert requests["source_format"].to_list() == ["continue-prompt-log"] * 4
    assert requests["request_id"].str.ends_with(":1:0").to_list() == [True, False, False, False]
    assert requests["kind"].to_list() == ["chat", "completion", "chat", "completion"]


@pytest.mark.skipif(not UPSTREAM.is_dir(), reason="../shared/formats/continue_llm_log is absent")
@pytest.mark.parametrize("name", ["chat", "complete"])
def test_continues_formatter_output_gives_what_its_items_give(name: str) -> None:
    """Continue's own test: its items and the text its formatter wrote for them make the same request."""
    (text,) = rows(UPSTREAM / f"prompt.log.{name}.expected", datetime(2023, 10, 31, 18, tzinfo=UTC))
    (items,) = [r for b in continue_llm.read(UPSTREAM / f"interaction_items.{name}.jsonl") for r in b.requests]
    same = ("ts", "kind", "model", "prompt", "prefix", "suffix", "completion", "prompt_tokens", "completion_tokens", "total_ms")
    assert {k: text[k] for k in same} == {k: items[k] for k in same}
    # offsets are 0.1 s steps, and only the chunks that started a line show one
    assert set(text["token_times_ms"]) <= {round(t, -2) for t in items["token_times_ms"]}
    assert text["ttft_ms"] == items["ttft_ms"]
    assert json.loads(text["attrs"])["end"] == json.loads(items["attrs"])["end"]


@pytest.mark.skipif(not REAL.exists(), reason="../shared/formats/real/continue is absent")
def test_the_real_prompt_log() -> None:
    assert detect_format(REAL) == "continue-prompt-log"
    batches = read_all(REAL, datetime(2023, 10, 31, 18, tzinfo=UTC))
    assert_lines_accounted(batches, len(REAL.read_bytes().splitlines()))
    assert not any(b.rejects for b in batches)
    got = [(r["kind"], json.loads(r["attrs"])["raw_action"], r["prompt"], r["prefix"], r["suffix"], r["completion"], r["ttft_ms"])
           for r in sorted((r for b in batches for r in b.requests), key=lambda r: r["source_line"])]
    assert got == [
        ("chat", "startChat", "system: You are a helpful assistant", None, None, "Hello, world!\nHow can I help you?", 1000.0),
        ("completion", "startComplete", "A horse is a horse", None, None, ", of course, of course", 1000.0),
        ("completion", "startFim", None, "A\nB", "D\nE", "C", 1000.0),
    ]


_LINES = FIXTURE.read_text().splitlines()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(st.sampled_from(_LINES), st.text(max_size=30).map(lambda t: t.replace("\n", " ").replace("\r", " "))),
                max_size=25))
def test_any_input_is_accounted_and_never_raises(tmp_path: Path, lines: list[str]) -> None:
    path = tmp_path / "prompt.log"
    path.write_bytes("".join(line + "\n" for line in lines).encode("utf-8", "surrogatepass"))
    batches = read_all(path)
    assert_lines_accounted(batches, len(path.read_bytes().splitlines()))
    assert sum(len(b.requests) for b in batches) <= sum(b.lines_accepted for b in batches)
