"""Helpers of the sample tests (importable as ``sample_helpers``: pytest puts this folder on sys.path)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def jsonl_records(path: Path) -> list[dict[str, Any]]:
    """The records of a JSON Lines file, skipping lines that are not valid UTF-8 JSON."""
    out = []
    for raw in path.read_bytes().splitlines():
        try:
            obj = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            continue
        out.append(obj)
    return out
