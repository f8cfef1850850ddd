"""IDE logs as they lie in the workspace: JetBrains' ``idea.log`` and every line-oriented log with
the same kind of header (log4j/logback layouts, Python logging, ...) -> the ``ide_log`` table.

The header is found per file by :func:`logmine.textlog.detect_header` (nothing is configured);
a file is this format when its first line parses with a header that has a timestamp and a
level, JSON lines with a message key and those fields included (:mod:`logmine.jsonlog`). Each entry -- a header line and the lines that continue it (a stack trace, a wrapped
message) -- is one row:

==============  ================================================================================
ts              the header's timestamp in UTC (a timestamp without zone, as idea.log writes it,
                is read as UTC; one without a year, as syslog writes it, is null)
level           the level word, upper case (logcat's one-letter levels spelt out)
category        the logger / category (idea.log: ``#c.i.o.u.ObjectTree``)
thread          the ``[thread]`` slot, or the thread id of a ``pid tid`` header; null for idea.log, whose
                bracketed number is milliseconds since the log was created (a clock, read as context)
message         the entry's whole text without the header: the first line's message and the
                continuation lines, newline-joined
exception       the exception type the entry carries (:func:`logmine.textlog.exception_type`)
lines           the physical lines of the entry
source_line     the entry's first line
==============  ================================================================================

``template_id`` and ``template`` are filled at ingest from the first line of each message,
mined over the file's entries (see :mod:`logmine.stages.ingest.writer`).

Line accounting: every physical line is read; the lines of an entry (its continuation lines
included) are accepted, lines before the first header line make an entry without header
fields, and only lines over :data:`MAX_LINE_BYTES` are rejected. Bytes that are not UTF-8 are
read as U+FFFD (a text log keeps its line).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import polars as pl

from logmine.formats._base import MAX_LINE_BYTES, Batch, iter_lines, open_binary
from logmine.jsonlog import JsonHeader
from logmine.records import IDE_LOG_SCHEMA, REJECT_OVERSIZED, Reject
from logmine.textlog import Entry, Header, detect_header, entries
from logmine.timestamps import parse_timestamp

NAME = "ide-log"
HEAD_LINES = 2000
"""Lines read to find a file's header."""
_LETTER_LEVELS = {"V": "VERBOSE", "D": "DEBUG", "I": "INFO", "W": "WARN", "E": "ERROR", "F": "FATAL", "A": "ASSERT"}
_MARK_LEVELS = {".": "DEBUG", "-": "VERBOSE", "*": "NOTICE", "#": "WARNING"}
"""Redis's level marks."""


def sniff(path: Path, head: list[bytes]) -> bool:
    if any(b"\x00" in line for line in head):
        return False
    lines = [line.decode("utf-8", "replace") for line in head]
    header = detect_header(lines)
    return header is not None and {"ts", "level"} <= set(header.fields) and header.parse(lines[0]) is not None


def looks_binary(path: Path, probe: int = 1 << 16) -> bool:
    """True when the (decompressed) start of ``path`` holds NUL bytes or is mostly control bytes: not a text log."""
    with open_binary(path) as fh:
        data = fh.read(probe)
    if b"\x00" in data:
        return True
    control = sum(1 for b in data if b < 32 and b not in (9, 10, 12, 13, 27))
    return bool(data) and control > len(data) * 0.1


def text_lines(path: Path) -> Iterator[str]:
    """The lines of a text file (.gz and .zst decompressed), newline cut, U+FFFD for bytes that are not UTF-8."""
    for _, raw in iter_lines(path):
        yield raw.decode("utf-8", "replace")


def header_and_entries(lines: Iterable[str], sample: int = HEAD_LINES) -> tuple[Header | JsonHeader | None, Iterator[Entry]]:
    """The header found on the first ``sample`` lines, and the entries of all lines (streamed)."""
    it = iter(lines)
    head = list(itertools.islice(it, sample))
    header = detect_header(head, sample)
    return header, entries(itertools.chain(head, it), header)


def level_name(level: str | None) -> str | None:
    """A level word in upper case, logcat's letters and Redis's marks spelt out (``D`` -> ``DEBUG``, ``#`` -> ``WARNING``)."""
    if level is None:
        return None
    return _LETTER_LEVELS.get(level) or _MARK_LEVELS.get(level) or level.upper()


def row(entry: Entry) -> dict[str, Any]:
    """The ``ide_log`` row of one entry (template columns left for the writer)."""
    f = entry.fields
    return {
        "ts": parse_timestamp(f.get("ts")),
        "level": level_name(f.get("level")),
        "category": f.get("logger"),
        "thread": f.get("thread") if f.get("thread") is not None else f.get("tid"),
        "message": entry.text,
        "exception": entry.exception,
        "lines": entry.lines,
        "source_line": entry.line,
    }


def read(path: Path) -> Iterator[Batch]:
    """One batch with every entry of the file: the templates are mined over all of them."""
    batch = Batch()
    kept: list[int] = []  # physical number of each line the entries are made of

    def physical() -> Iterator[str]:
        for number, raw in iter_lines(path):
            batch.lines_read += 1
            batch.bytes_read += len(raw) + 1
            if len(raw) > MAX_LINE_BYTES:
                reason = f"{REJECT_OVERSIZED}: line of {len(raw)} bytes exceeds {MAX_LINE_BYTES}"
                batch.rejects.append(Reject(number, reason, raw[:1024].decode("utf-8", "replace")))
                continue
            kept.append(number)
            yield raw.decode("utf-8", "replace")

    _, found = header_and_entries(physical())
    rows = [row(entry) for entry in found]
    for r in rows:  # entries number the kept lines; a rejected line in between shifts the file's numbers
        r["source_line"] = kept[r["source_line"] - 1]
    batch.lines_accepted = len(kept)
    if rows:
        batch.ide_log = pl.DataFrame(rows, schema={k: IDE_LOG_SCHEMA[k] for k in rows[0]})
    yield batch
