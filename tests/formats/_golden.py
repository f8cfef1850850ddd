"""The golden-test harness shared by the format reader tests.

Expected JSON sits next to each fixture. Regenerate it on purpose with ``LOGMINE_REGEN_GOLDEN=1``
(``LOGMINE_UPDATE_GOLDEN=1`` is accepted as an alias) and review the diff.
"""

from __future__ import annotations

import gzip
import json
import os
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

import orjson
import zstandard

from logmine.formats import Batch
from logmine.formats._jsondoc import merge_batches
from logmine.records import EVENTS_SCHEMA, LLM_REQUESTS_SCHEMA

REGEN_VARS = ("LOGMINE_REGEN_GOLDEN", "LOGMINE_UPDATE_GOLDEN")
"""The variable that regenerates expected JSON, then its alias; any non-empty value but "0" turns it on."""
_FILLED_BY_INGEST = {"source_format", "source_file"}
_SCHEMAS = {"events": EVENTS_SCHEMA, "requests": LLM_REQUESTS_SCHEMA}


def regenerating() -> bool:
    return any(os.environ.get(name, "") not in ("", "0") for name in REGEN_VARS)


def check_golden(produced: dict[str, Any], expected_path: Path) -> None:
    """Compare with the expected JSON, writing it first when regenerating."""
    if regenerating():
        expected_path.write_text(json.dumps(produced, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    assert produced == json.loads(expected_path.read_text())


def utc_iso(value: Any) -> Any:
    """A datetime as ISO text (it must be tz-aware UTC); anything else unchanged."""
    if isinstance(value, datetime):
        assert value.utcoffset() is not None and value.utcoffset().total_seconds() == 0, "ts must be tz-aware UTC"
        return value.isoformat()
    return value


def rejects(batches: Iterable[Batch]) -> list[dict[str, Any]]:
    return [{"source_line": r.source_line, "reason": r.reason, "raw": r.raw} for b in batches for r in b.rejects]


def schema_golden(batches: list[Batch], tables: tuple[str, ...] = ("events", "requests")) -> dict[str, Any]:
    """Everything a reader produced for a file, every schema column present (ingest's own columns left out)."""
    out: dict[str, Any] = {
        "lines_read": sum(b.lines_read for b in batches),
        "lines_accepted": sum(b.lines_accepted for b in batches),
    }
    for table in tables:
        schema = _SCHEMAS[table]
        out[table] = []
        for row in (r for b in batches for r in getattr(b, table)):
            assert set(row) <= set(schema), f"columns outside the schema: {set(row) - set(schema)}"
            out[table].append({c: utc_iso(row.get(c)) for c in schema if c not in _FILLED_BY_INGEST})
    out["rejects"] = rejects(batches)
    return out


def merged_golden(batches: Iterable[Batch]) -> dict[str, Any]:
    """Everything a reader produced, merged into one batch: the rows' own keys, attrs parsed."""
    batch = merge_batches(batches)
    return {
        "lines_read": batch.lines_read,
        "lines_accepted": batch.lines_accepted,
        "events": [_sorted_row(r) for r in batch.events],  # type: ignore[union-attr]
        "requests": [_sorted_row(r) for r in batch.requests],  # type: ignore[union-attr]
        "rejects": rejects([batch]),
    }


def _sorted_row(row: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in sorted(row.items()):
        if key == "attrs" and value is not None:
            parsed = json.loads(value)
            assert value == orjson.dumps(parsed, option=orjson.OPT_SORT_KEYS).decode(), "attrs must be sorted compact JSON"
            value = parsed
        out[key] = utc_iso(value)
    return out


def assert_lines_accounted(batches: list[Batch], lines: int) -> None:
    """Every input line was read, and each was either accepted or rejected."""
    assert sum(b.lines_read for b in batches) == lines
    assert sum(b.lines_accepted + len(b.rejects) for b in batches) == lines


def compressed_copies(source: Path, folder: Path) -> list[Path]:
    """A gzip and a zstd copy of ``source`` in ``folder``, named ``<source name>.gz`` / ``.zst``."""
    data = source.read_bytes()
    gz, zst = folder / f"{source.name}.gz", folder / f"{source.name}.zst"
    gz.write_bytes(gzip.compress(data))
    zst.write_bytes(zstandard.ZstdCompressor().compress(data))
    return [gz, zst]


def assert_summary_matches(summary: dict[str, Any], files: int, expected: list[dict[str, Any]]) -> None:
    """An ingest summary counts the files and the lines the goldens of those files count."""
    assert (summary["files_ingested"], summary["lines_read"], summary["lines_accepted"], summary["lines_rejected"]) == (
        files, sum(g["lines_read"] for g in expected), sum(g["lines_accepted"] for g in expected),
        sum(len(g["rejects"]) for g in expected))
