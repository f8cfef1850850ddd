"""The KaVE reader: golden rows for an array file with all 20 event types, JSON Lines with bad
lines, a broken document and a zip built here; accounting, detection, ingest.

Regenerate the expected JSON on purpose with ``LOGMINE_REGEN_GOLDEN=1`` and review the diff.
"""

from __future__ import annotations

import json
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _golden import check_golden, merged_golden

import logmine
from logmine.formats import detect_format, kave
from logmine.formats._jsondoc import merge_batches
from logmine.records import ACTIONS, EVENTS_SCHEMA

CASES = Path(__file__).parents[1] / "cases" / "formats" / "kave"
SHARED = Path("/work/shared/formats/kave/JsonUtilsIDEEventTest.events.json")
EVENTS = json.loads((CASES / "all_types.json").read_text())


def produced(path: Path) -> dict[str, Any]:
    return merged_golden(kave.read(path))


def build_zip(path: Path) -> Path:
    """A data-set style zip: one event a member, plus a corrupt, a malformed, a non-JSON, an
    empty member, a directory entry and a member holding an array of two events."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as archive:

        def add(name: str, data: bytes | str, compress: int = zipfile.ZIP_DEFLATED) -> None:
            info = zipfile.ZipInfo(name, date_time=(2016, 5, 9, 10, 0, 0))
            info.compress_type = compress
            archive.writestr(info, data)

        add("0.json", json.dumps(EVENTS[9]))
        add("1.json", json.dumps(EVENTS[2]))
        add("2.json", b'{"corrupt": "CORRUPT-ME-CORRUPT-ME"}', zipfile.ZIP_STORED)
        add("3.json", b'{"$type": "KaVE.Commons.Model.Events.ActivityEvent, KaVE.Commons", ')
        add("notes.txt", b"not an event")
        add("sub/", b"")
        add("sub/4.json", b"")
        add("5.json", json.dumps([EVENTS[10], EVENTS[17]]))
    data = path.read_bytes()
    assert data.count(b"CORRUPT-ME-CORRUPT-ME") == 1
    path.write_bytes(data.replace(b"CORRUPT-ME-CORRUPT-ME", b"CORRUPT-XX-CORRUPT-XX"))  # member 2 fails its CRC
    return path


@pytest.mark.parametrize("name", ["all_types.json", "events.jsonl", "broken_array.json"])
def test_golden(name: str) -> None:
    check_golden(produced(CASES / name), CASES / f"{name.split('.')[0]}.expected.json")


def test_zip_golden(tmp_path: Path) -> None:
    check_golden(produced(build_zip(tmp_path / "2016-05-09" / "17.zip")), CASES / "zip.expected.json")


def test_all_twenty_types_are_read() -> None:
    batch = merge_batches(kave.read(CASES / "all_types.json"))
    assert not batch.rejects
    types = {json.loads(r["attrs"])["kave_type"] for r in batch.events}  # type: ignore[union-attr]
    assert types == set(kave.EVENT_TYPES)
    assert len(kave.EVENT_TYPES) == 20
    for row in batch.events:  # type: ignore[union-attr]
        assert set(row) <= set(EVENTS_SCHEMA)
        assert row["action"] in ACTIONS or row["action"].startswith("other:")


@pytest.mark.parametrize("name", ["all_types.json", "events.jsonl", "broken_array.json"])
def test_accounting(name: str) -> None:
    batches = list(kave.read(CASES / name))
    read = sum(b.lines_read for b in batches)
    assert read == sum(b.lines_accepted + len(b.rejects) for b in batches)
    assert sum(b.lines_accepted for b in batches) == sum(len(b.events) for b in batches)
    assert read == {"all_types.json": 33, "events.jsonl": 15, "broken_array.json": 4}[name]


def test_zip_accounting(tmp_path: Path) -> None:
    batch = merge_batches(kave.read(build_zip(tmp_path / "u.zip")))
    reasons = [r.reason.split(":")[0] for r in batch.rejects]
    assert (batch.lines_read, batch.lines_accepted) == (8, 4)
    assert reasons == ["unreadable_file", "malformed_json", "unknown_record", "missing_field"]


@pytest.mark.parametrize(
    ("value", "ms"),
    [("00:00:01", 1000.0), ("00:00:05.2000000", 5200.0), ("01:02:03.0070008", 3723007.0008), ("0.00:00:00.5", 500.0)],
)
def test_timespan(value: str, ms: float) -> None:
    assert kave.timespan_ms(value, "Duration") == pytest.approx(ms)


def test_names() -> None:
    assert kave.event_type("KaVE.Commons.Model.Events.VisualStudio.BuildEvent, KaVE.Commons") == "Build"
    assert kave.command_name("{5EFC7975-14BC-11CF-9B2B-00AA00573819}:224:File.SaveAll") == "File.SaveAll"
    assert kave.command_name("VsAction:1:Edit.Undo") == "Edit.Undo"
    assert kave.document_name("0Doc:CSharp C:\\src\\Proj\\File.cs") == ("csharp", "C:\\src\\Proj\\File.cs")
    assert kave.document_name("0Doc:Basic \\P\\M.vb") == ("vb", "\\P\\M.vb")


def test_detection(tmp_path: Path) -> None:
    assert detect_format(CASES / "all_types.json") == "kave"
    assert detect_format(CASES / "events.jsonl") == "kave"
    assert detect_format(build_zip(tmp_path / "u.zip")) == "kave"


def test_not_a_zip_is_an_unreadable_file(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "bad.zip").write_bytes(b"this is not a zip archive")
    with pytest.raises(ValueError, match="not a readable zip"):
        list(kave.read(tmp_path / "in" / "bad.zip"))
    report = logmine.ingest([tmp_path / "in"], tmp_path / "ws")
    assert [f.status for f in report.files] == ["rejected"]
    assert list(report.rejects_by_reason) == ["unreadable_file"]


@pytest.mark.skipif(not SHARED.exists(), reason="/work/shared is not mounted")
def test_shared_serializer_output() -> None:
    batch = merge_batches(kave.read(SHARED))
    assert (batch.lines_read, batch.lines_accepted, batch.rejects) == (20, 20, [])
    assert {json.loads(r["attrs"])["kave_type"] for r in batch.events} == set(kave.EVENT_TYPES)  # type: ignore[union-attr]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(min_value=0, max_value=len((CASES / "all_types.json").read_bytes())))
def test_a_cut_document_never_raises(cut: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cut.json"
        path.write_bytes((CASES / "all_types.json").read_bytes()[:cut])
        batch = merge_batches(kave.read(path))
    assert batch.lines_read == batch.lines_accepted + len(batch.rejects)
    assert batch.lines_accepted == len(batch.events)


_GOOD = [json.dumps(e).encode() for e in EVENTS]
_lines = st.one_of(st.sampled_from(_GOOD), st.binary(max_size=60).map(lambda b: b"{" + b.replace(b"\n", b" ").replace(b"\r", b" ")))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_lines, min_size=1, max_size=15))
def test_every_line_is_accounted_for(lines: list[bytes]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "x.jsonl"
        path.write_bytes(b"\n".join([_GOOD[0], *lines]) + b"\n")
        batch = merge_batches(kave.read(path))
    assert batch.lines_read == len(lines) + 1 == batch.lines_accepted + len(batch.rejects)


def test_ingest_end_to_end(tmp_path: Path) -> None:
    zipped = build_zip(tmp_path / "in" / "2016-05-09" / "17.zip")
    report = logmine.ingest([CASES / "all_types.json", CASES / "events.jsonl", zipped], tmp_path / "ws")
    assert (report.lines_read, report.lines_accepted, report.lines_rejected) == (33 + 15 + 8, 33 + 3 + 4, 12 + 4)
    events = logmine.Workspace.open(tmp_path / "ws").read("events")
    assert events.height == 40
    assert events["user_id"].drop_nulls().n_unique() == 1  # the zip's user, pseudonymised
    assert "17" not in events["user_id"].drop_nulls().to_list()
