"""The committed sample_logs/ through the real ingest stage: every format detected, every line
accounted for, and the rejects exactly the malformed lines truth.json says were planted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from logmine.formats import available_readers
from logmine.sample import FORMATS
from logmine.stages.ingest.core import FileReport, ingest

SAMPLE_LOGS = Path(__file__).resolve().parents[2] / "sample_logs"
TRUTH = json.loads((SAMPLE_LOGS / "truth.json").read_text()) if (SAMPLE_LOGS / "truth.json").exists() else None


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> dict[str, FileReport]:
    if TRUTH is None:
        pytest.skip("sample_logs/truth.json is missing; regenerate sample_logs (see sample_logs/README.md)")
    inputs = [SAMPLE_LOGS / fmt for fmt in FORMATS if fmt in available_readers() and (SAMPLE_LOGS / fmt).exists()]
    report = ingest(inputs, tmp_path_factory.mktemp("ws") / "ws")
    return {Path(f.path).relative_to(SAMPLE_LOGS).as_posix(): f for f in report.files}


@pytest.mark.parametrize("fmt", FORMATS)
def test_format_is_detected_and_rejects_are_the_planted_lines(fmt: str, ingested: dict[str, FileReport]) -> None:
    if fmt not in available_readers():
        pytest.skip(f"no reader module logmine/formats for {fmt!r} yet")
    assert TRUTH is not None
    files: dict[str, Any] = TRUTH["formats"][fmt]["files"]
    assert files, f"sample_logs has no {fmt} files"
    assert sorted(r for r in ingested if r.startswith(f"{fmt}/")) == sorted(files)
    for rel, planted in files.items():
        got = ingested[rel]
        assert (got.status, got.source_format) == ("ingested", fmt), rel
        assert got.lines_read == got.lines_accepted + got.lines_rejected, rel
        assert got.lines_rejected == planted["malformed_total"], rel
        # the unit is a line, a zip entry or an array element; malformed copies are units too
        assert got.lines_read == planted["lines"], rel


def test_every_format_has_planted_malformed_lines() -> None:
    if TRUTH is None:
        pytest.skip("sample_logs/truth.json is missing")
    totals = {fmt: sum(f["malformed_total"] for f in body["files"].values()) for fmt, body in TRUTH["formats"].items()}
    assert set(totals) == set(FORMATS)
    assert all(n > 0 for n in totals.values()), totals
