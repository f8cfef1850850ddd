"""The JetBrains FUS event-log reader: golden rows, line accounting, detection, ingest.

Regenerate the expected JSON on purpose with ``LOGMINE_REGEN_GOLDEN=1`` and review the diff.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _golden import check_golden, merged_golden

import logmine
from logmine.formats import detect_format, jetbrains
from logmine.formats._jsondoc import merge_batches
from logmine.records import ACTIONS, EVENTS_SCHEMA

CASES = Path(__file__).parents[1] / "cases" / "formats" / "jetbrains"


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
