"""Which files an ingest run reads: the files under its inputs (hidden entries and
``.logmineignore`` patterns skipped), and the companions a reader reads with a file (an OTel
spans file and its log records file)."""

from __future__ import annotations

import fnmatch
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from logmine.errors import InputPathError
from logmine.formats import companion, companion_files

log = logging.getLogger(__name__)


def collect_files(paths: Sequence[Path | str], exclude: Path | None = None, unreadable: list[Path] | None = None) -> list[Path]:
    """Every file under ``paths`` (directories walked recursively, hidden entries skipped), sorted.

    Files under ``exclude`` (the workspace itself) are left out; directories that cannot be
    listed are appended to ``unreadable`` when it is given.
    """
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if not path.exists():
            raise InputPathError(path)
        if path.is_file():
            out.append(path)
            continue
        if not path.is_dir():
            raise InputPathError(path, "is neither a file nor a directory")

        def failed(exc: OSError) -> None:
            log.warning("%s: cannot list directory (%s)", exc.filename, exc.strerror)
            if unreadable is not None:
                unreadable.append(Path(exc.filename))

        ignore = _ignore_patterns(path)
        for root, dirs, files in os.walk(path, onerror=failed):
            rel = Path(root).relative_to(path)
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and not _ignored(rel / d, ignore))
            out.extend(Path(root) / f for f in sorted(files) if not f.startswith(".") and not _ignored(rel / f, ignore))
    if exclude is not None:
        inside = exclude.resolve()
        out = [p for p in out if not p.resolve().is_relative_to(inside)]
    return sorted(dict.fromkeys(out))


IGNORE_FILE = ".logmineignore"
"""A file in an input directory listing glob patterns (one a line, # comments) of files to skip."""


def _ignore_patterns(directory: Path) -> list[str]:
    path = directory / IGNORE_FILE
    if not path.is_file():
        return []
    lines = (line.strip() for line in path.read_text(encoding="utf-8", errors="replace").splitlines())
    return [line.rstrip("/") for line in lines if line and not line.startswith("#")]


def _ignored(rel: Path, patterns: list[str]) -> bool:
    """True when ``rel`` (relative to the input directory) or its name matches an ignore pattern."""
    return any(rel.match(p) or fnmatch.fnmatch(rel.as_posix(), p) for p in patterns)


def with_companions(files: list[Path], fmt: str | None) -> list[Path]:
    """``files`` and the existing files their readers read with them (an OTel spans file's log
    records file and back): a pair is always ingested together, so each file's rows stay exact."""
    extra = [c for f in files for c in companion_files(f, fmt) if c not in files]
    return sorted(dict.fromkeys([*files, *extra])) if extra else files


def companions_of(path: Path, known: dict[str, dict[str, Any]], fmt: str | None) -> list[Path]:
    """The files whose changes change ``path``'s rows: its companion now, or the one it had when
    it was last read (a deleted logs file takes the prompts out of its spans file's rows)."""
    other = companion(path)
    if other is None:
        return []
    before = known.get(str(other))
    return [other] if companion_files(path, fmt) or (before is not None and before["source_format"] == "otel") else []


__all__ = ["IGNORE_FILE", "collect_files", "companions_of", "with_companions"]
