"""The vectorised reader of native JSONL: Polars parses big line-aligned chunks, expressions check
them, and every line the checks cannot vouch for goes back to the per-line reader.

It yields exactly the rows, rejects (with their reasons) and line accounting of
:func:`logmine.formats.native.records.read_per_line`; a property test compares the two. How:

* A chunk Polars cannot parse (malformed JSON, invalid UTF-8, a line that is not an object, a
  wrong type in a numeric column) or whose row count differs from its line count (a blank line)
  is sifted: lines that a cheap orjson check says Polars would choke on are read per line, the
  rest is parsed again (and, should that fail too, halved down to :data:`MIN_FAST_LINES` lines).
* Polars reads a number, boolean or object in a string column as its text, so a string value that
  looks like one is trusted only when the raw line shows its key once, followed by a quote; an
  all-digit ``ts`` is taken for epoch ms only when the line holds no JSON string of such digits.
  ``token_texts`` is read as categoricals, which Polars reads strictly.
* A row that fails any check (an absurd latency, a time out of range, an unknown type or kind, a
  surrogate ``\\uD8xx`` escape that Polars decodes differently, an unusual time format) is read per
  line, which accepts or rejects it with the exact reason.
* ``attrs`` is not read by Polars: lines that mention it are parsed with orjson, as per line.
* Lines longer than :data:`~logmine.formats._base.MAX_LINE_BYTES` are streamed, never held whole.

Known difference: a line that repeats a key (``{"ts": 1, "ts": 2}``) keeps the first value here and
the last one per line.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import NamedTuple

import numpy as np
import polars as pl

from logmine.formats.native import records as native
from logmine.formats._base import (
    LANGUAGE_ALIASES,
    MAX_LINE_BYTES,
    Batch,
    RecordError,
    open_binary,
    reject,
)
from logmine.formats.native.attrs import ATTRS_CACHE_SIZE, _AttrsCache, _canonical_attrs  # noqa: F401 - re-exported
from logmine.formats.native.checks import (  # noqa: F401 - _SUSPECT, _suspect_rows re-exported for the tests
    _SUSPECT,
    _checks,
    _polars_can_read,
    _suspect_lines,
    _suspect_rows,
    _ts_value,
    _uncertain_rows,
)
from logmine.formats.native.schema import EVENT_COLUMNS, READ_SCHEMA, REQUEST_COLUMNS, _read_schema  # noqa: F401 - re-exported
from logmine.formats.native.lines import _Lines
from logmine.records import REJECT_MISSING_FIELD, REJECT_OVERSIZED

CHUNK_BYTES = min(8 << 20, MAX_LINE_BYTES)
"""Bytes read at a time. At most MAX_LINE_BYTES, so only a chunk's first line can be oversized."""
WORKERS = 2
"""Chunks checked at once."""
MIN_FAST_LINES = 64
"""A piece that still fails to parse after sifting is halved down to this many lines, read per line."""


class _LongLine(NamedTuple):
    """A line longer than MAX_LINE_BYTES, streamed: its first bytes and what the checks need."""

    kept: bytes  # the first MAX_LINE_BYTES + 1 bytes (at least 1 KiB)
    length: int  # bytes without the newline
    trailing_cr: int  # trailing b"\r" bytes (stripped like the newline)
    blank: bool  # only ASCII whitespace


def read(
    path: Path, chunk_bytes: int = CHUNK_BYTES, workers: int = WORKERS, *, span: tuple[int, int | None, int] | None = None,
) -> Iterator[Batch]:
    """Read native JSONL at ``path`` into one batch per chunk, in order; see the module docstring.

    ``workers`` chunks are checked at once (Polars releases the GIL, so one chunk's parse runs
    while another's Python work does); at most ``workers + 1`` chunks are held in memory.
    ``span`` = ``(start, stop, first_line)`` reads only bytes ``[start, stop)`` (``stop`` None: to
    the end) of a plain file, numbering its lines from ``first_line``; ``start`` must begin a line.
    """
    number, cache, dirt = 1 if span is None else span[2], _AttrsCache(), _Dirt()
    with open_binary(path) as raw, ThreadPoolExecutor(max(workers, 1), thread_name_prefix="logmine-native") as pool:
        fh = raw if span is None else _Window(raw, span[0], span[1])
        pending: deque[Future[Batch]] = deque()
        try:
            for piece in _pieces(fh, min(chunk_bytes, MAX_LINE_BYTES)):
                lines = None if isinstance(piece, _LongLine) else _Lines(piece)
                pending.append(pool.submit(_read_piece, piece, number, lines, cache, dirt))
                number += 1 if lines is None else lines.count
                while len(pending) > workers:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:
                future.cancel()


def _read_piece(piece: bytes | _LongLine, number: int, lines: _Lines | None, cache: _AttrsCache, dirt: _Dirt) -> Batch:
    batch = Batch()
    if isinstance(piece, _LongLine):
        _add_long_line(batch, number, piece)
        batch.bytes_read = piece.length + 1
    else:
        _Chunk(lines or _Lines(piece), number, cache, dirt=dirt).read_into(batch)
        batch.bytes_read = len(piece)
    return batch


@dataclass
class _Dirt:
    """Whether the last chunk of a file held lines Polars cannot parse: then the next chunk's
    suspect lines are set aside before its first parse (a parse that fails costs ~3 ms an 8 MiB
    chunk, and in a file with bad lines most chunks have some). Shared by the threads reading a
    file; a stale answer only costs that time."""

    seen: bool = False


# -- splitting the stream into line-aligned chunks ---------------------------------------------
class _Window:
    """Bytes ``[start, stop)`` of a seekable binary file, read like the file itself."""

    def __init__(self, fh, start: int, stop: int | None) -> None:  # noqa: ANN001 - a binary file object
        fh.seek(start)
        self.fh, self.left = fh, None if stop is None else stop - start

    def readinto(self, buffer: bytearray) -> int:
        if self.left is None:
            return self.fh.readinto(buffer)
        n = self.fh.readinto(memoryview(buffer)[:self.left]) if self.left else 0
        self.left -= n
        return n

    def read(self, size: int) -> bytes:
        if self.left is None:
            return self.fh.read(size)
        data = self.fh.read(min(size, self.left)) if self.left else b""
        self.left -= len(data)
        return data


def _pieces(fh, size: int) -> Iterator[bytes | _LongLine]:  # noqa: ANN001 - a binary file object
    """Chunks of whole lines (the last may lack its newline), and over-long lines on their own.

    Blocks are read into one reused buffer (fresh memory for every block costs page faults) and
    each chunk is copied out of it once.
    """
    rest, pending = b"", b""
    buffer = bytearray(size)
    while True:
        if pending:
            data, n, pending = pending, len(pending), b""
        else:
            data, n = buffer, fh.readinto(buffer)
        view = memoryview(data)
        if not n:
            if rest:
                yield rest
            return
        first = data.find(b"\n", 0, n)
        if first < 0:
            rest += view[:n]
            if len(rest) > MAX_LINE_BYTES:
                long, pending = _stream_long_line(fh, rest, size)
                yield long
                rest = b""
            continue
        last = data.rfind(b"\n", 0, n)
        if len(rest) + first > MAX_LINE_BYTES:  # the line that started in an earlier block
            yield _long_line(rest + view[:first])
            chunk = bytes(view[first + 1:last + 1])
        else:
            chunk = rest + view[:last + 1] if rest else bytes(view[:last + 1])
        if chunk:
            yield chunk
        rest = bytes(view[last + 1:n])


def _stream_long_line(fh, start: bytes, size: int) -> tuple[_LongLine, bytes]:  # noqa: ANN001
    """Consume a line that already exceeds MAX_LINE_BYTES; return it and the bytes after it."""
    limit = max(MAX_LINE_BYTES + 1, 1024)
    kept, length, blank = start[:limit], len(start), not start.strip()
    trailing_cr = len(start) - len(start.rstrip(b"\r"))
    while True:
        block = fh.read(size)
        if not block:
            return _LongLine(kept, length, trailing_cr, blank), b""
        nl = block.find(b"\n")
        part = block if nl < 0 else block[:nl]
        if len(kept) < limit:
            kept += part[:limit - len(kept)]
        length += len(part)
        blank = blank and not part.strip()
        stripped = len(part.rstrip(b"\r"))
        trailing_cr = trailing_cr + len(part) if stripped == 0 else len(part) - stripped
        if nl >= 0:
            return _LongLine(kept, length, trailing_cr, blank), block[nl + 1:]


def _add_long_line(batch: Batch, number: int, line: _LongLine) -> None:
    """What :func:`native.add_line` does with this line, without holding it whole."""
    content = line.length - line.trailing_cr
    if content > MAX_LINE_BYTES:  # the reject keeps the line's start and its length, not the line
        # a blank line is rejected before its size is looked at
        blank = RecordError(REJECT_MISSING_FIELD, "blank line")
        err = blank if line.blank else RecordError(REJECT_OVERSIZED, f"line of {content} bytes exceeds {MAX_LINE_BYTES}")
        batch.lines_read += 1
        batch.rejects.append(reject(number, line.kept[:min(content, 1024)], err, size=content))
    else:
        native.add_line(batch, number, line.kept[:content])


def _long_line(line: bytes) -> _LongLine:
    return _LongLine(line[:max(MAX_LINE_BYTES + 1, 1024)], len(line), len(line) - len(line.rstrip(b"\r")), not line.strip())


# -- one chunk ---------------------------------------------------------------------------------
@dataclass
class _Chunk:
    """A chunk of whole lines starting at line ``first``; fills a Batch in line order."""

    lines: _Lines
    first: int
    attrs_cache: _AttrsCache = field(default_factory=lambda: _AttrsCache())
    events: list[pl.DataFrame] = field(default_factory=list)
    requests: list[pl.DataFrame] = field(default_factory=list)
    slow: Batch = field(default_factory=Batch)
    accepted: int = 0
    dirt: _Dirt = field(default_factory=_Dirt)

    def read_into(self, batch: Batch) -> None:
        lines = self.lines
        if lines.count:
            numbers = np.arange(self.first, self.first + lines.count, dtype=np.int64)
            if self.dirt.seen:
                self._sift(lines, numbers, parsed=False)
            elif not self._fast(lines, numbers):
                self._sift(lines, numbers)
        batch.lines_read = self.slow.lines_read + self.accepted
        batch.lines_accepted = self.slow.lines_accepted + self.accepted
        batch.rejects = sorted(self.slow.rejects, key=lambda r: r.source_line)
        batch.events = _merge(self.events, self.slow.events, EVENT_COLUMNS)
        batch.requests = _merge(self.requests, self.slow.requests, REQUEST_COLUMNS)

    def _sift(self, lines: _Lines, numbers: np.ndarray, parsed: bool = True) -> None:
        """After a failed parse (``parsed``; else before any): the suspect lines (:func:`_suspect_lines`)
        Polars would choke on go per line and the rest is parsed; should that fail too, every line
        left is sifted."""
        suspects = _suspect_lines(lines)
        unreadable = [i for i in suspects.tolist() if not _polars_can_read(lines.raw(i))]
        self.dirt.seen = bool(unreadable)
        if not unreadable and not parsed and self._fast(lines, numbers):
            return
        if unreadable:
            keep = np.ones(lines.count, bool)
            keep[unreadable] = False
            self._per_line(lines, numbers, unreadable)
            if not keep.any():
                return
            lines, numbers = lines.without(np.array(unreadable, np.int64)), numbers[keep]
            if self._fast(lines, numbers):
                return
        self._sift_every_line(lines, numbers)

    def _sift_every_line(self, lines: _Lines, numbers: np.ndarray) -> None:
        """Lines Polars would choke on (each line checked with orjson) go per line, the rest is parsed again."""
        readable = [i for i in range(lines.count) if _polars_can_read(lines.raw(i))]
        keep = np.zeros(lines.count, bool)
        keep[readable] = True
        self._per_line(lines, numbers, np.flatnonzero(~keep))
        if not readable:
            return
        rest = lines.without(np.flatnonzero(~keep))
        if not self._fast(rest, numbers[keep]):
            self._halve(rest, numbers[keep])

    def _halve(self, lines: _Lines, numbers: np.ndarray) -> None:
        """The last resort when the sifted lines still fail: halve until the bad ones are isolated."""
        if lines.count <= MIN_FAST_LINES:
            self._per_line(lines, numbers, range(lines.count))
            return
        half = lines.count // 2
        mid = int(lines.ends[half - 1]) + 1
        for part, nums in ((lines.data[:mid], numbers[:half]), (lines.data[mid:], numbers[half:])):
            piece = _Lines(part)
            if not self._fast(piece, nums):
                self._halve(piece, nums)

    def _per_line(self, lines: _Lines, numbers: np.ndarray, rows: Iterable[int]) -> None:
        native.add_lines(self.slow, ((int(numbers[i]), lines.raw(int(i))) for i in rows))

    def _fast(self, lines: _Lines, numbers: np.ndarray) -> bool:
        """Parse and check ``lines`` with Polars; False when the piece as a whole cannot be parsed."""
        if len(lines.invalid_utf8()):
            return False
        try:
            df = pl.read_ndjson(lines.data, schema=_read_schema()).rechunk()  # one chunk a column: each eager step would else copy the ~18 pieces again
        except (Exception, pl.exceptions.PanicException):  # noqa: BLE001 - any parse failure: sift the lines
            return False
        if df.height != lines.count:
            return False
        df = df.with_columns(source_line=pl.Series(numbers, dtype=pl.Int64))
        ts_value, epoch_ms = _ts_value(df)
        flagged = _uncertain_rows(df, lines, epoch_ms)
        checked = df.with_columns(ts_value)
        checked = checked.with_columns(_checks(checked))
        ok = checked["ok"].to_numpy() & ~flagged
        attrs, ok = _canonical_attrs(ok, lines, self.attrs_cache)
        checked = checked.with_columns(attrs=attrs)
        self.accepted += int(ok.sum())
        event = (checked["type"] == "event").fill_null(False).to_numpy()  # an ok row is an event or a request
        for rows, names, exprs, out in (
            (ok & event, _EVENT_INPUTS, _event_exprs(), self.events),
            (ok & ~event, _REQUEST_INPUTS, _request_exprs(), self.requests),
        ):  # each filter copies only the columns its table keeps
            out.append(checked.select(names).filter(pl.Series(rows)).select(exprs))
        self._per_line(lines, numbers, np.flatnonzero(~ok))
        return True


@cache
def _language() -> pl.Expr:
    language = pl.col("language")
    normal = language.str.strip_chars(" ").str.to_lowercase().replace(LANGUAGE_ALIASES)
    return pl.when(language == "").then(None).otherwise(normal).alias("language")


@cache
def _event_exprs() -> tuple[pl.Expr, ...]:
    exprs = {name: pl.col(name) for name in EVENT_COLUMNS}
    exprs["ts"] = pl.col("ts_value")
    exprs["language"] = _language()
    return tuple(e.cast(EVENT_COLUMNS[n]).alias(n) for n, e in exprs.items())


@cache
def _request_exprs() -> tuple[pl.Expr, ...]:
    exprs = {name: pl.col(name) for name in REQUEST_COLUMNS}
    exprs["ts"] = pl.col("ts_value")
    exprs["language"] = _language()
    kind = pl.col("kind")
    exprs["kind"] = pl.when(kind.is_null() | (kind == "")).then(pl.lit("other")).otherwise(kind)
    return tuple(e.cast(REQUEST_COLUMNS[n]).alias(n) for n, e in exprs.items())


_EVENT_INPUTS = [name for name in EVENT_COLUMNS if name != "ts"] + ["ts_value"]
_REQUEST_INPUTS = [name for name in REQUEST_COLUMNS if name != "ts"] + ["ts_value"]
"""The checked frame's columns each table is built from."""


def _merge(fast: list[pl.DataFrame], slow: list[dict[str, object]] | pl.DataFrame, schema: dict[str, pl.DataType]) -> pl.DataFrame:
    """The fast rows and the per-line rows of a chunk as one frame in line order."""
    frames = [f for f in fast if f.height]
    if isinstance(slow, list) and slow:
        frames.append(pl.DataFrame(slow, schema=schema, strict=False))
    if not frames:
        return pl.DataFrame(schema=schema)
    if len(frames) == 1:
        return frames[0]
    return pl.concat(frames, how="vertical").sort("source_line")



# -- several small files at once ---------------------------------------------------------------
def read_together(contents: list[bytes]) -> tuple[Batch, list[int]]:
    """Several small files' whole contents (each under :data:`CHUNK_BYTES`, together about a
    chunk's worth) checked as one chunk, lines numbered through it: the chunk's batch, and the
    lines before each file (then the total), so file i has lines ``firsts[i] + 1 .. firsts[i + 1]``.

    A Polars parse has fixed costs (~50 small operations a chunk); a few hundred KB per parse
    made a file of that size cost three times what its bytes cost in a big file.
    """
    parts = [c if not c or c.endswith(b"\n") else c + b"\n" for c in contents]  # the last line, newline or not
    firsts = np.concatenate(([0], np.cumsum([p.count(b"\n") for p in parts], dtype=np.int64))).tolist()
    batch = _read_piece(b"".join(parts), 1, None, _AttrsCache(), _Dirt()) if firsts[-1] else Batch()
    return batch, firsts


def read_files(contents: list[bytes]) -> list[Batch]:
    """:func:`read_together`'s batch cut into one batch per file, with the rows, rejects and line
    accounting :func:`read` would give that file on its own, lines numbered from 1 in each file."""
    batch, firsts = read_together(contents)
    out = []
    for i, content in enumerate(contents):
        lo, hi = firsts[i], firsts[i + 1]
        part = Batch(lines_read=hi - lo, bytes_read=len(content))
        if hi > lo:
            part.events, part.requests = _lines_of(batch.events, lo, hi), _lines_of(batch.requests, lo, hi)
        part.rejects = [replace(r, source_line=r.source_line - lo) for r in batch.rejects if lo < r.source_line <= hi]
        part.lines_accepted = part.lines_read - len(part.rejects)
        out.append(part)
    return out


def _lines_of(frame: pl.DataFrame | list[dict[str, object]], lo: int, hi: int) -> pl.DataFrame:
    """The rows of chunk lines ``lo + 1 .. hi`` (``frame`` in line order), renumbered from 1."""
    assert isinstance(frame, pl.DataFrame)  # a chunk's batch holds frames (:func:`_merge`)
    lines = frame["source_line"].to_numpy()
    start, stop = np.searchsorted(lines, [lo + 1, hi + 1])
    return frame.slice(int(start), int(stop - start)).with_columns(pl.col("source_line") - lo)
