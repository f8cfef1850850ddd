"""Find a pipeline's input files and group them into date partitions.

``logs/{date}/continue/*.jsonl`` is globbed with the placeholder widened to digits, then each
match's date is read back with a regular expression built from ``date_format``. A partition's
key is its ISO date (``2026-11-28``) whatever the paths' own spelling.
"""

from __future__ import annotations

import glob
import hashlib
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from logmine.pipeline.spec import DATE_PLACEHOLDER, InputSpec, Pipeline

_DIRECTIVES = {"Y": (r"(?P<Y>\d{4})", "[0-9][0-9][0-9][0-9]"), "m": (r"(?P<m>\d{2})", "[0-9][0-9]"), "d": (r"(?P<d>\d{2})", "[0-9][0-9]")}


@dataclass(frozen=True, order=True)
class InputFile:
    """One matched file and where it came from."""

    partition: str
    path: str
    input: str
    format: str | None


def _date_glob_and_regex(date_format: str) -> tuple[str, str]:
    glob_parts, rx_parts = [], []
    for piece in re.split(r"(%[Ymd])", date_format):
        if re.fullmatch(r"%[Ymd]", piece):
            rx, gl = _DIRECTIVES[piece[1]]
            rx_parts.append(rx)
            glob_parts.append(gl)
        elif piece:
            rx_parts.append(re.escape(piece))
            glob_parts.append(glob.escape(piece))
    return "".join(glob_parts), "".join(rx_parts)


def _pattern_regex(pattern: str, date_rx: str) -> re.Pattern[str]:
    """A regex for the whole path: glob wildcards become regex ones, the date part captures."""
    head, tail = pattern.split(DATE_PLACEHOLDER)

    def glob_to_rx(text: str) -> str:
        out, i = [], 0
        while i < len(text):
            if text.startswith("**/", i):  # zero or more directories
                out.append("(?:.*/)?")
                i += 3
            elif text.startswith("**", i):
                out.append(".*")
                i += 2
            elif text[i] == "*":
                out.append("[^/]*")
                i += 1
            elif text[i] == "?":
                out.append("[^/]")
                i += 1
            elif text[i] == "[":
                end = text.find("]", i + 1)
                out.append(text[i : end + 1] if end > 0 else re.escape(text[i]))
                i = end + 1 if end > 0 else i + 1
            else:
                out.append(re.escape(text[i]))
                i += 1
        return "".join(out)

    return re.compile(glob_to_rx(head) + date_rx + glob_to_rx(tail) + r"\Z")


def discover(pipeline: Pipeline, spec: InputSpec) -> list[InputFile]:
    """Every file one input matches, with its partition."""
    date_glob, date_rx = _date_glob_and_regex(spec.date_format)
    found: dict[str, InputFile] = {}
    for raw in spec.paths:
        pattern = str(pipeline.resolve(raw))
        rx = _pattern_regex(pattern, date_rx)
        for path in glob.glob(pattern.replace(DATE_PLACEHOLDER, date_glob), recursive=True):
            m = rx.match(path)
            if m is None or path in found:
                continue
            try:
                day = date(int(m.group("Y")), int(m.group("m")), int(m.group("d")))
            except ValueError:  # 2026-13-45: not a date, not an input
                continue
            found[path] = InputFile(day.isoformat(), path, spec.name, spec.format)
    return [f for f in sorted(found.values()) if _is_file(f.path)]


def _is_file(path: str) -> bool:
    import os

    return os.path.isfile(path) and not os.path.basename(path).startswith(".")


def partitions(pipeline: Pipeline) -> dict[str, list[InputFile]]:
    """Every input's files grouped by partition (sorted keys, sorted files)."""
    out: dict[str, list[InputFile]] = {}
    for spec in pipeline.spec.inputs:
        for f in discover(pipeline, spec):
            out.setdefault(f.partition, []).append(f)
    return {k: sorted(v) for k, v in sorted(out.items())}


def window_start(end: str, days: int | None) -> str | None:
    """The first partition kept by a retention of ``days`` ending at ``end`` (inclusive)."""
    if days is None:
        return None
    return (datetime.strptime(end, "%Y-%m-%d").date() - timedelta(days=days - 1)).isoformat()


def fingerprint(*parts: object) -> str:
    """A short content hash of ``parts`` (their ``repr``)."""
    return hashlib.blake2b(repr(parts).encode(), digest_size=12).hexdigest()
