"""The JetBrains FUS event-log reader: golden rows, line accounting, detection, ingest.

Regenerate the expected JSON on purpose with ``LOGMINE_REGEN_GOLDEN=1`` and review the diff.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _golden import check_golden, merged_golden

import logmine
from logmine.formats import detect_format, jetbrains
from logmine.formats._jsondoc import merge_batches
from logmine.records import ACTIONS, EVENTS_SCHEMA

CASES = Path(__file__).parents[1] / "cases" / "formats" / "jetbrains"
REAL = Path(__file__).resolve().parents[2].parent / "shared" / "formats" / "real" / "jetbrains"


def produced(path: Path) -> dict[str, Any]:
    return merged_golden(jetbrains.read(path))


def test_fus_log_golden() -> None:
    check_golden(produced(CASES / "fus.log"), CASES / "fus.expected.json")


def test_fus_log_accounting() -> None:
    batches = list(jetbrains.read(CASES / "fus.log"))
    lines = (CASES / "fus.log").read_bytes().count(b"\n")
    assert sum(b.lines_read for b in batches) == lines == 41
    assert sum(b.lines_read for b in batches) == sum(b.lines_accepted + len(b.rejects) for b in batches)
    assert sum(b.lines_accepted for b in batches) == sum(len(b.events) for b in batches) == 28


def test_rows_fit_the_schema_and_vocabulary() -> None:
    batch = merge_batches(jetbrains.read(CASES / "fus.log"))
    for row in batch.events:  # type: ignore[union-attr]
        assert set(row) <= set(EVENTS_SCHEMA)
        assert row["action"] in ACTIONS or row["action"].startswith("other:")
    frame = pl.DataFrame(batch.events, schema=EVENTS_SCHEMA, strict=False)
    assert frame["weight"].null_count() == 0


def test_merged_count_becomes_weight() -> None:
    batch = merge_batches(jetbrains.read(CASES / "fus.log"))
    merged = [r for r in batch.events if r["weight"] > 1]  # type: ignore[union-attr]
    assert [(r["action"], r["weight"], json.loads(r["attrs"])["count"]) for r in merged] == [
        ("editor.edit", 5, 5), ("editor.edit", 12, 12)
    ]


@pytest.mark.skipif(not REAL.is_dir(), reason="../shared/formats/real/jetbrains is absent")
def test_a_real_idea_log_maps_to_the_vocabulary() -> None:
    # IntelliJ IDEA 2020.2's own test data (recorder 40): every event has a canonical action
    batch = merge_batches(jetbrains.read(REAL / "log2.txt"))
    assert (batch.lines_read, batch.lines_accepted, batch.rejects) == (10, 10, [])
    got = [(e["action"], json.loads(e["attrs"])["raw_action"]) for e in batch.events]  # type: ignore[union-attr]
    assert got == [
        ("window.focus", "ui.dialogs/close"), ("window.focus", "toolwindow/activated"), ("editor.edit", "RenameElement"),
        ("ide.activity", "refactoring/handler.invoked"), ("ide.activity", "productivity/feature.used"),
        ("window.focus", "ui.dialogs/show"), ("editor.navigate", "EditorRight"), ("ide.activity", "ui.dialogs/help.clicked"),
        ("window.focus", "lifecycle/frame.deactivated"), ("window.focus", "lifecycle/frame.activated"),
    ]
    rename = json.loads(batch.events[2]["attrs"])  # type: ignore[index]
    assert (rename["group"], rename["event_id"], rename["action_id"]) == ("actions", "action.invoked", "RenameElement")
    assert rename["data"]["input_event"] == "Shift+F6"
    for name in ("log1.txt", "invalidLog.txt"):  # a test group and a build the validator refused: still read
        other = merge_batches(jetbrains.read(REAL / name))
        assert other.lines_read == other.lines_accepted == len(other.events) == 1


@pytest.mark.parametrize(("group", "event", "data", "action"), [
    ("run.configuration.exec", "started", {"executor": "Debug", "id": "JUnit"}, "ide.activity"),
    ("vcs", "commit.started", {}, "ide.activity"),
    ("vcs", "changes.view.refresh", {}, "other:vcs/changes.view.refresh"),
    ("editor.typing", "typed", {}, "editor.edit"),
    ("editor.typing", "too.many.events", {}, "other:editor.typing/too.many.events"),
    ("file.types.usage", "select", {"file_type": "JAVA"}, "editor.navigate"),
    ("actions", "action.invoked", {"action_id": "EditorLineEndWithSelection"}, "editor.navigate"),
    ("actions", "action.invoked", {"action_id": "ActivateProjectToolWindow"}, "window.focus"),
    ("actions", "action.invoked", {"action_id": "ExtractMethod"}, "editor.edit"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_group_events(group: str, event: str, data: dict[str, Any], action: str) -> None:
    line = {"recorder_version": "58", "session": "s1", "time": 1718012345000, "group": {"id": group, "version": "1"},
            "event": {"count": 1, "data": data, "id": event}}
    row = jetbrains.event_row(line, 1)
    assert row["action"] == action
    assert json.loads(row["attrs"])["group"] == group


def test_detection() -> None:
    assert detect_format(CASES / "fus.log") == "jetbrains"
    assert jetbrains.sniff(CASES / "fus.log", [b'{"type":"event","ts":1}']) is False


_GOOD = (CASES / "fus.log").read_bytes().splitlines()[:28]
_lines = st.one_of(st.sampled_from(_GOOD), st.binary(max_size=80).map(lambda b: b.replace(b"\n", b" ").replace(b"\r", b" ")))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_lines, min_size=1, max_size=20))
def test_every_line_is_accounted_for(lines: list[bytes]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "x.log"
        path.write_bytes(b"\n".join(lines) + b"\n")
        batch = merge_batches(jetbrains.read(path))
    assert batch.lines_read == len(lines) == batch.lines_accepted + len(batch.rejects)
    assert len(batch.events) == batch.lines_accepted


def test_ingest_end_to_end(tmp_path: Path) -> None:
    report = logmine.ingest([CASES / "fus.log"], tmp_path / "ws")
    assert (report.lines_read, report.lines_accepted, report.lines_rejected) == (41, 28, 13)
    ws = logmine.Workspace.open(tmp_path / "ws")
    events = ws.read("events")
    assert events.height == 28
    assert events["source_format"].unique().to_list() == ["jetbrains"]
    assert events["weight"].sum() == 28 - 2 + 5 + 12
    assert ws.read("rejects").height == 13
