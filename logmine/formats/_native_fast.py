"""The vectorised reader of native JSONL: Polars parses big line-aligned chunks, expressions check
them, and every line the checks cannot vouch for goes back to the per-line reader.

It yields exactly the rows, rejects (with their reasons) and line accounting of
:func:`logmine.formats.native.read_per_line`; a property test compares the two. How:

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
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import NamedTuple

import numpy as np
import orjson
import polars as pl
import pyarrow as pa

from logmine.formats import native
from logmine.formats._base import (
    LANGUAGE_ALIASES,
    MAX_LATENCY_MS,
    MAX_LINE_BYTES,
    TS_MAX,
    TS_MIN,
    Batch,
    RecordError,
    open_binary,
    reject,
)
from logmine.records import REJECT_OVERSIZED, REQUEST_KINDS, UTC_TS

CHUNK_BYTES = min(8 << 20, MAX_LINE_BYTES)
"""Bytes read at a time. At most MAX_LINE_BYTES, so only a chunk's first line can be oversized."""
WORKERS = 2
"""Chunks checked at once."""
MIN_FAST_LINES = 64
"""A piece that still fails to parse after sifting is halved down to this many lines, read per line."""

_S, _F, _I = pl.String(), pl.Float64(), pl.Int64()
READ_SCHEMA: dict[str, pl.DataType] = {
    "type": _S, "ts": _S, "action": _S, "event_id": _S, "session_id": _S, "user_id": _S, "ide": _S,
    "file_path": _S, "language": _S, "duration_ms": _F, "kind": _S, "request_id": _S,
    "model": _S, "prompt": _S, "prefix": _S, "suffix": _S, "completion": _S, "accepted": pl.Boolean(),
    "ttft_ms": _F, "total_ms": _F, "prompt_tokens": _I, "completion_tokens": _I,
    "token_times_ms": pl.List(_F), "token_texts": pl.List(_S),
}
EVENT_COLUMNS: dict[str, pl.DataType] = {
    "event_id": _S, "ts": UTC_TS, "session_id": _S, "user_id": _S, "ide": _S, "action": _S, "file_path": _S,
    "language": _S, "duration_ms": _F, "attrs": _S, "source_line": _I,
}
REQUEST_COLUMNS: dict[str, pl.DataType] = {
    "request_id": _S, "ts": UTC_TS, "session_id": _S, "user_id": _S, "kind": _S, "model": _S, "language": _S,
    "file_path": _S, "prompt": _S, "prefix": _S, "suffix": _S, "completion": _S, "accepted": pl.Boolean(),
    "ttft_ms": _F, "total_ms": _F, "prompt_tokens": _I, "completion_tokens": _I, "token_times_ms": pl.List(_F),
    "token_texts": pl.List(_S), "ide": _S, "attrs": _S, "source_line": _I,
}


def _read_schema() -> dict[str, pl.DataType]:
    """READ_SCHEMA, but ``token_texts`` as categoricals, which Polars reads strictly: a number in the
    list fails the parse instead of becoming its text. Fresh categories per chunk are freed with it."""
    return {**READ_SCHEMA, "token_texts": pl.List(pl.Categorical(pl.Categories.random()))}


_STRING_FIELDS = tuple(k for k, v in READ_SCHEMA.items() if v == _S and k not in {"type", "ts", "kind"})

# A string value that may be the text Polars made of a number, boolean, object or list.
_SUSPECT = r"^(?:-?[0-9][0-9.eE+-]*$|true$|false$|[\[{])"
_ISO_TS = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]{1,6})?(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])?$"
_MS_TS = r"^[0-9]{12,13}$"
# A key with a \uXXXX escape: the key the raw-line checks look for might be spelt that way.
_ESCAPED_KEY = r'\\u[0-9a-fA-F]{4}(?:[^"\\]|\\.)*"\s*:'
_WS = r"[ \t\r\n]*"
"""JSON whitespace (``\\s`` would also match Unicode spaces)."""


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
    number, cache = 1 if span is None else span[2], _AttrsCache()
    with open_binary(path) as raw, ThreadPoolExecutor(max(workers, 1), thread_name_prefix="logmine-native") as pool:
        fh = raw if span is None else _Window(raw, span[0], span[1])
        pending: deque[Future[Batch]] = deque()
        try:
            for piece in _pieces(fh, min(chunk_bytes, MAX_LINE_BYTES)):
                lines = None if isinstance(piece, _LongLine) else _Lines(piece)
                pending.append(pool.submit(_read_piece, piece, number, lines, cache))
                number += 1 if lines is None else lines.count
                while len(pending) > workers:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:
                future.cancel()


def _read_piece(piece: bytes | _LongLine, number: int, lines: _Lines | None, cache: _AttrsCache) -> Batch:
    batch = Batch()
    if isinstance(piece, _LongLine):
        _add_long_line(batch, number, piece)
        batch.bytes_read = piece.length + 1
    else:
        _Chunk(lines or _Lines(piece), number, cache).read_into(batch)
        batch.bytes_read = len(piece)
    return batch


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
    if line.blank:  # a blank line is rejected before its size is looked at; the reject keeps 1 KiB
        native.add_line(batch, number, line.kept[:min(content, 1024)])
    elif content > MAX_LINE_BYTES:
        err = RecordError(REJECT_OVERSIZED, f"line of {content} bytes exceeds {MAX_LINE_BYTES}")
        batch.lines_read += 1
        batch.rejects.append(reject(number, line.kept[:min(content, 1024)], err))
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

    def read_into(self, batch: Batch) -> None:
        lines = self.lines
        if lines.count:
            numbers = np.arange(self.first, self.first + lines.count, dtype=np.int64)
            if not self._fast(lines, numbers):
                self._sift(lines, numbers)
        batch.lines_read = self.slow.lines_read + self.accepted
        batch.lines_accepted = self.slow.lines_accepted + self.accepted
        batch.rejects = sorted(self.slow.rejects, key=lambda r: r.source_line)
        batch.events = _merge(self.events, self.slow.events, EVENT_COLUMNS)
        batch.requests = _merge(self.requests, self.slow.requests, REQUEST_COLUMNS)

    def _sift(self, lines: _Lines, numbers: np.ndarray) -> None:
        """After a failed parse: lines Polars would choke on go per line, the rest is parsed again."""
        readable = [i for i in range(lines.count) if _polars_can_read(lines.raw(i))]
        keep = np.zeros(lines.count, bool)
        keep[readable] = True
        self._per_line(lines, numbers, np.flatnonzero(~keep))
        if not readable:
            return
        rest = _Lines(b"\n".join(lines.data[lines.starts[i]:lines.ends[i]] for i in readable) + b"\n")
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
        data = lines.data
        if not data.isascii():
            try:
                data.decode()
            except UnicodeDecodeError:
                return False
        try:
            df = pl.read_ndjson(data, schema=_read_schema()).rechunk()  # one chunk a column: each eager step would else copy the ~18 pieces again
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


_FLOATS = ("duration_ms", "ttft_ms", "total_ms")
_INTS = ("prompt_tokens", "completion_tokens")


def _polars_can_read(raw: bytes) -> bool:
    """Whether ``pl.read_ndjson`` reads this line with READ_SCHEMA: a cheap mirror of its rules.

    Wrong answers only cost time: a line wrongly deemed readable makes the re-parse fail (then
    :meth:`_Chunk._halve` isolates it); one wrongly deemed unreadable is read per line.
    """
    if not raw.strip():
        return False
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return False
    if type(obj) is not dict:
        return False
    for key in _FLOATS:
        if obj.get(key) is not None and type(obj[key]) not in (int, float):
            return False
    for key in _INTS:
        value = obj.get(key)
        if value is not None and not (type(value) is int and -(2**63) <= value < 2**63):
            return False
    accepted, times, texts = obj.get("accepted"), obj.get("token_times_ms"), obj.get("token_texts")
    if accepted is not None and type(accepted) is not bool:
        return False
    if texts is not None and not (type(texts) is list and all(t is None or type(t) is str for t in texts)):
        return False
    return times is None or (type(times) is list and all(t is None or type(t) in (int, float) for t in times))


class _Lines:
    """Line boundaries of a chunk, and its lines as a zero-copy Polars column for regex checks."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        ends = np.flatnonzero(np.frombuffer(data, np.uint8) == 10)
        if data and not data.endswith(b"\n"):
            ends = np.append(ends, len(data))
        self.ends = ends
        self.count = len(ends)
        self.starts = np.concatenate(([0], ends[:-1] + 1)) if self.count else ends
        self._column: pl.Series | None = None
        self._escaped: np.ndarray | None = None

    def raw(self, i: int) -> bytes:
        """Line ``i`` as the per-line reader sees it (newline and trailing CRs stripped)."""
        return self.data[int(self.starts[i]):int(self.ends[i])].rstrip(b"\r\n")

    def column(self) -> pl.Series:
        """Every line (with its newline) as a String column; the data is valid UTF-8 by then."""
        if self._column is None:
            offsets = np.empty(self.count + 1, np.int64)
            offsets[0] = 0
            offsets[1:] = np.minimum(self.ends + 1, len(self.data))
            array = pa.LargeStringArray.from_buffers(self.count, pa.py_buffer(offsets), pa.py_buffer(self.data))
            self._column = pl.Series("raw", array)
        return self._column

    def escaped(self) -> np.ndarray:
        """Which lines hold ``\\u`` (only those can spell a key with an escape or hold a surrogate)."""
        if self._escaped is None:
            self._escaped = self.column().str.contains("\\u", literal=True).to_numpy()
        return self._escaped


def _uncertain_rows(df: pl.DataFrame, lines: _Lines, epoch_ms: np.ndarray) -> np.ndarray:
    """Rows whose values Polars may have coerced or decoded differently from orjson (``epoch_ms``:
    the rows whose ``ts`` text is 12-13 digits)."""
    flagged = np.zeros(df.height, bool)
    for name in (c for c in _STRING_FIELDS if df[c].null_count() < df.height):
        rows = _suspect_rows(df[name])
        if len(rows):
            flagged[rows[~_was_string(lines.column().gather(rows), name).to_numpy()]] = True
    rows = np.flatnonzero(epoch_ms)
    if len(rows):
        flagged[rows[_maybe_digit_string(lines.column().gather(rows), lines.escaped()[rows])]] = True
    if df["token_texts"].to_arrow().flatten().null_count:  # a null among the texts is a reject
        gaps = df.select(pl.col("token_texts").list.eval(pl.element().is_null()).list.any().fill_null(False))
        flagged |= gaps.to_series().to_numpy()
    # surrogate escapes: Polars does not reject lone ones as orjson does
    rows = np.flatnonzero(lines.escaped())
    if len(rows):
        flagged[rows[lines.column().gather(rows).str.contains(r"\\u[dD][89abAB]").to_numpy()]] = True
    return flagged


_SUSPECT_FIRST = np.zeros(256, bool)
_SUSPECT_FIRST[list(b"-0123456789tf[{")] = True
"""The first bytes of the texts :data:`_SUSPECT` matches."""


def _suspect_rows(values: pl.Series) -> np.ndarray:
    """The rows whose text matches :data:`_SUSPECT`: first a test of the first byte, read from the
    Arrow string views without copying the texts (a view holds its text's first bytes), then the
    regex on the few rows that pass it."""
    arrow = values.to_arrow(compat_level=pl.CompatLevel.newest())
    if not pa.types.is_string_view(arrow.type):  # pragma: no cover - Polars hands out views
        return values.str.contains(_SUSPECT).fill_null(False).arg_true().to_numpy()
    end = arrow.offset + len(arrow)  # (the buffer may be longer than its views)
    views = np.frombuffer(arrow.buffers()[1], np.uint8, count=end * 16).reshape(end, 16)[arrow.offset:]
    candidates = np.flatnonzero(_SUSPECT_FIRST[views[:, 4]])  # byte 4 of a view: the first byte (nulls: any)
    if len(candidates) == 0:
        return candidates
    return candidates[values.gather(candidates).str.contains(_SUSPECT).fill_null(False).to_numpy()]


def _was_string(raw: pl.Series, key: str) -> pl.Series:
    """Whether the top-level ``key`` of each raw line surely holds a JSON string."""
    return _holds(raw, key, '"')


def _holds(raw: pl.Series, key: str, start: str) -> pl.Series:
    """Whether the top-level ``key`` of each raw line surely holds a value starting with ``start``.

    True when the key appears once, spelt plainly, followed by ``start`` (a regex). (Had the
    top-level key been spelt with an escape, the line would have an escaped key, ruled out here.)
    """
    return (
        (raw.str.count_matches(f'"{key}"\\s*:') == 1)
        & raw.str.contains(f'"{key}"\\s*:\\s*{start}')
        & ~raw.str.contains(_ESCAPED_KEY)
    )


def _maybe_digit_string(raw: pl.Series, escaped: np.ndarray) -> np.ndarray:
    """False when a line's top-level ``ts`` surely is no JSON string, so an all-digit ``ts`` was a number.

    A string shows as the plainly spelt key, a colon and a quote, unless the key is spelt with an
    escape (ruled out here; only a line with ``\\u``, ``escaped``, can have one); a nested ``"ts"``
    string only sends the line per line.
    """
    maybe = raw.str.contains(rf'"ts"{_WS}:{_WS}"').to_numpy()
    if escaped.any():
        maybe |= escaped & raw.str.contains(_ESCAPED_KEY).to_numpy()
    return maybe


def _latency_ok(name: str) -> pl.Expr:
    col = pl.col(name)
    return col.is_null() | ((col >= 0) & (col <= MAX_LATENCY_MS))


def _ts_value(df: pl.DataFrame) -> tuple[pl.Series, np.ndarray]:
    """``ts`` as the per-line reader parses it, for the ISO 8601 forms and epoch ms it surely agrees
    on, and the mask of the rows whose text is epoch ms (12-13 digits).

    The common ``...Z`` form and epoch ms are parsed with numpy (:func:`_numpy_micros`); the other
    rows with the Polars parsers they need (a when/then chain evaluates every branch in full).
    """
    ts = df["ts"]
    micros, fast, epoch_ms = _numpy_micros(ts)
    value = pl.Series("ts_value", micros).cast(pl.Datetime("us")).dt.replace_time_zone("UTC")
    value = pl.select(pl.when(pl.Series(fast)).then(value)).to_series().alias("ts_value")
    rest = np.flatnonzero(~fast & ts.is_not_null().to_numpy())
    if len(rest):
        others = ts.gather(rest).to_frame()
        value = value.scatter(rest, others.select(_ts_expr(others)).to_series())
    return value, epoch_ms


def _ts_expr(df: pl.DataFrame) -> pl.Expr:
    ts = pl.col("ts")
    kinds = df.select(
        iso=ts.str.contains(_ISO_TS).fill_null(False),
        zoned=ts.str.contains(r"(?:Z|[+-][0-9]{2}:[0-9]{2})$").fill_null(False),
        ms=ts.str.contains(_MS_TS).fill_null(False),
    )
    value = pl.lit(None, dtype=UTC_TS)
    if kinds["ms"].any():
        epoch = pl.from_epoch(ts.cast(pl.Int64, strict=False), time_unit="ms").dt.replace_time_zone("UTC").cast(UTC_TS)
        value = pl.when(kinds["ms"]).then(epoch).otherwise(value)
    if (kinds["iso"] & ~kinds["zoned"]).any():
        naive = ts.str.to_datetime("%Y-%m-%dT%H:%M:%S%.f", time_unit="us", strict=False, cache=False).dt.replace_time_zone("UTC")
        value = pl.when(kinds["iso"] & ~kinds["zoned"]).then(naive).otherwise(value)
    if (kinds["iso"] & kinds["zoned"]).any():
        zoned = ts.str.to_datetime("%Y-%m-%dT%H:%M:%S%.f%#z", time_unit="us", time_zone="UTC", strict=False, cache=False)
        value = pl.when(kinds["iso"] & kinds["zoned"]).then(zoned).otherwise(value)
    return value.alias("ts_value")


_DAYS_IN_MONTH = np.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])
_Z_SIZES = (20, 22, 23, 24, 25, 26, 27)
"""Lengths of ``YYYY-MM-DDTHH:MM:SSZ`` and of the forms with 1-6 fraction digits."""
_MS_SIZES = (12, 13)
"""Lengths of epoch milliseconds (:data:`_MS_TS`)."""
_Z_WIDTH = 32
"""Bytes taken from each text's start (the longest form and padding to whole 8-byte words)."""


def _z_template(size: int) -> tuple[np.ndarray, np.ndarray]:
    """The lowest byte allowed at each of the first _Z_WIDTH places of a ``...Z`` text of ``size``
    bytes, and how far above it a byte may be (any byte after the text: the next texts' or padding)."""
    form = "D" * size if size in _MS_SIZES else "DDDD-DD-DDTDD:DD:DD" + ("." + "D" * (size - 21) if size > 20 else "") + "Z"
    low, high = np.zeros(_Z_WIDTH, np.uint8), np.full(_Z_WIDTH, 255, np.uint8)
    low[:size] = np.frombuffer(form.replace("D", "0").encode(), np.uint8)
    high[:size] = np.frombuffer(form.replace("D", "9").encode(), np.uint8)
    return low, high - low


_Z_TEMPLATES = {size: _z_template(size) for size in _Z_SIZES + _MS_SIZES}
_ALL_BYTES_TRUE = np.uint64(0x0101010101010101)
"""Eight True bools read as one word."""


def _numpy_micros(ts: pl.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Microseconds since the epoch of each ``YYYY-MM-DDTHH:MM:SS[.f]Z`` text (1-6 fraction digits,
    a real date and time of day) and of each 12-13 digit text (epoch ms), a mask of the texts of
    either form (the others' values are junk) and a mask of the epoch ms.

    The texts are taken by length (one or two lengths in most chunks), so each place's byte is
    checked against a fixed template and the digits sit in fixed places.
    """
    n = len(ts)
    micros, fast, epoch_ms = np.zeros(n, np.int64), np.zeros(n, bool), np.zeros(n, bool)
    arrow = ts.to_arrow()
    if arrow.null_count == n or arrow.buffers()[2] is None:
        return micros, fast, epoch_ms
    offsets = np.frombuffer(arrow.buffers()[1], np.int64)[arrow.offset:arrow.offset + n + 1]
    data = np.frombuffer(arrow.buffers()[2], np.uint8)
    lengths = np.diff(offsets)
    padded = np.lib.stride_tricks.sliding_window_view(np.concatenate([data, np.zeros(_Z_WIDTH, np.uint8)]), _Z_WIDTH)
    counts = np.bincount(np.minimum(lengths, _Z_WIDTH), minlength=_Z_WIDTH + 1)
    for size in (size for size in _Z_SIZES + _MS_SIZES if counts[size]):
        rows = np.flatnonzero(lengths == size)
        chars = padded[offsets[rows]]
        low, span = _Z_TEMPLATES[size]
        within = ((chars - low) <= span).view(np.uint64)  # a byte below low wraps above span
        ok = (within[:, 0] & within[:, 1] & within[:, 2] & within[:, 3]) == _ALL_BYTES_TRUE
        digit = chars[:, :size] - np.uint8(48)
        if size in _MS_SIZES:
            micros[rows] = (digit.astype(np.int64) @ 10 ** np.arange(size + 2, 2, -1, dtype=np.int64)) * ok
            epoch_ms[rows] = ok
        else:
            micros[rows], ok = _z_micros(digit, ok)
        fast[rows] = ok
    return micros, fast, epoch_ms


def _z_micros(digit: np.ndarray, ok: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The microseconds of ``...Z`` texts of one length (as digit values; ``ok``: of the form),
    0 where the date or time is not real, and ``ok`` cleared there."""
    d = digit[:, :19].astype(np.int32)  # (days fit in 32 bits; microseconds are counted in 64)
    year = d[:, 0] * 1000 + d[:, 1] * 100 + d[:, 2] * 10 + d[:, 3]
    month, day = d[:, 5] * 10 + d[:, 6], d[:, 8] * 10 + d[:, 9]
    hour, minute, second = d[:, 11] * 10 + d[:, 12], d[:, 14] * 10 + d[:, 15], d[:, 17] * 10 + d[:, 18]
    leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
    month_ok = (month >= 1) & (month <= 12)
    days_in_month = _DAYS_IN_MONTH[np.where(month_ok, month, 0)] + ((month == 2) & leap)
    ok &= (year >= 1) & month_ok & (day >= 1) & (day <= days_in_month) & (hour <= 23) & (minute <= 59) & (second <= 59)
    places = digit.shape[1] - 21  # fraction digits
    fraction = digit[:, 20:20 + places].astype(np.int64) @ (10 ** np.arange(5, 5 - places, -1, dtype=np.int64)) if places > 0 else 0
    y = year - (month <= 2)  # days from the civil date (H. Hinnant's algorithm)
    era, yoe = y // 400, y % 400
    doy = (153 * ((month + 9) % 12) + 2) // 5 + day - 1
    days = (era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468).astype(np.int64)
    return ((days * 86400 + hour * 3600 + minute * 60 + second) * 1_000_000 + fraction) * ok, ok


def _checks(df: pl.DataFrame) -> pl.Expr:
    """``ok``: the per-line checks as one expression, over ``df`` with its ``ts_value`` column."""
    return _checks_expr(df["token_times_ms"].null_count() < df.height)


@cache
def _checks_expr(with_times: bool) -> pl.Expr:
    """:func:`_checks`, built once (``with_times``: whether any row has ``token_times_ms``)."""
    language = pl.col("language")
    common = (
        pl.col("ts_value").is_between(pl.lit(TS_MIN, UTC_TS), pl.lit(TS_MAX, UTC_TS), closed="left").fill_null(False)
        & (language.is_null() | language.str.contains(r"^[\x20-\x7e]*$"))
    )
    kind = pl.col("kind")
    times = pl.col("token_times_ms")
    request = (
        (kind.is_null() | kind.is_in(list(REQUEST_KINDS) + [""]))
        & _latency_ok("ttft_ms") & _latency_ok("total_ms")
        & (pl.col("prompt_tokens").is_null() | (pl.col("prompt_tokens") >= 0))
        & (pl.col("completion_tokens").is_null() | (pl.col("completion_tokens") >= 0))
    )
    if with_times:
        request = request & (
            times.is_null()
            | ((times.list.min().is_null() | (times.list.min() >= 0)) & (times.list.max().is_null() | (times.list.max() <= MAX_LATENCY_MS)))
        )
    event = pl.col("action").is_not_null() & _latency_ok("duration_ms")
    kind_ok = pl.when(pl.col("type") == "event").then(event).when(pl.col("type") == "llm_request").then(request)
    return (common & kind_ok).fill_null(False).alias("ok")


ATTRS_CACHE_SIZE = 50_000
"""Distinct ``attrs`` texts a file's reader remembers with their canonical JSON."""
_ATTRS_VALUE = rf"^{_WS}:{_WS}\{{[^{{}}]*\}}"
"""After the key: a colon and an object without braces inside (a ``}`` in a string cuts it short: invalid)."""
_UNREADABLE = "\x00"
"""The canonical text of a cut-out text that is no JSON object (its lines are parsed whole); an
empty object's is "" (a frame's null would read as not known)."""


class _AttrsCache:
    """Cut-out ``attrs`` texts and their canonical JSON, shared by the threads reading one file.

    A frame rather than a dict, so a chunk looks its texts up without a Python loop; a thread that
    adds texts joins against its own extended frame, so a concurrent update lost costs only time.
    """

    def __init__(self) -> None:
        self.frame = pl.DataFrame(schema={"text": pl.String(), "canonical": pl.String()})

    def canonical(self, texts: pl.Series) -> pl.Series:
        frame = self.frame
        found = texts.to_frame("text").join(frame, on="text", how="left", validate="m:1", maintain_order="left")["canonical"]
        new = texts.filter(found.is_null()).unique()
        if new.len():
            values = pl.Series([_canonical_text(t) for t in new.to_list()], dtype=pl.String())
            added = pl.DataFrame({"text": new, "canonical": values})
            self.frame = frame = added if frame.height + added.height > ATTRS_CACHE_SIZE else pl.concat([frame, added])
            found = texts.to_frame("text").join(frame, on="text", how="left", validate="m:1", maintain_order="left")["canonical"]
        return found


def _canonical_text(text: str) -> str:
    """The sorted-key JSON of the object in ``text`` (``: {...}``), "" when empty, _UNREADABLE when invalid."""
    try:
        value = orjson.loads(text[text.index("{"):])
    except orjson.JSONDecodeError:
        return _UNREADABLE
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode() if value else ""


def _canonical_attrs(ok: np.ndarray, lines: _Lines, cache: _AttrsCache) -> tuple[pl.Series, np.ndarray]:
    """``attrs`` as the per-line reader writes it (sorted-key JSON, None when empty or absent).

    Polars does not read ``attrs`` (turning objects into text is a good part of its parse, and its
    text loses a whole float's type). The lines that mention the key, or might spell it with an
    escape, get it from orjson: where the line's only ``"attrs"`` is surely a top-level key holding
    an object without braces inside (:func:`_attrs_texts`), that object's text is cut out and each
    distinct text is canonicalised once (``cache`` keeps them across chunks); other lines are parsed
    whole. A row whose ``attrs`` is neither an object nor null is left to the per-line reader
    (``ok`` cleared).
    """
    column = lines.column()
    named = column.str.contains('"attrs"', literal=True).to_numpy()
    escaped = lines.escaped()
    out = pl.repeat(None, len(ok), dtype=pl.String(), eager=True).alias("attrs")
    rows = np.flatnonzero(ok & (named | escaped))
    if len(rows) == 0:
        return out, ok
    texts = _attrs_texts(column.gather(rows), escaped[rows])
    done = texts.is_not_null().to_numpy()
    if done.any():
        values = cache.canonical(texts.filter(pl.Series(done)))
        readable = (values != _UNREADABLE).to_numpy()  # a "}" inside a string cut it short
        done[np.flatnonzero(done)[~readable]] = False
        values = values.filter(pl.Series(readable))
        out = out.scatter(rows[done], pl.select(pl.when(values != "").then(values)).to_series())  # "": an empty object
    ok = ok.copy()
    rest = rows[~done]
    slow: dict[int, str | None] = {}
    loads, dumps, sort = orjson.loads, orjson.dumps, orjson.OPT_SORT_KEYS
    data, starts, ends = lines.data, lines.starts[rest].tolist(), lines.ends[rest].tolist()
    for i, start, end in zip(rest.tolist(), starts, ends, strict=True):
        value = loads(data[start:end]).get("attrs")
        if isinstance(value, dict):
            slow[i] = dumps(value, option=sort).decode() if value else None
        elif value is not None:
            ok[i] = False
    if slow:
        out = out.scatter(list(slow), pl.Series(list(slow.values()), dtype=pl.String()))
    return out, ok


def _attrs_texts(raw: pl.Series, escaped: np.ndarray) -> pl.Series:
    """The text after the top-level ``"attrs"`` key (``: {...}``) where it is cut out safely, else null.

    Safely: the line is ASCII (so byte offsets are character offsets) without ``\\u`` escapes (a key
    spelt with one could repeat ``attrs``), starts with its ``{`` and has no other ``{`` before its
    only ``"attrs"``, which follows no backslash (so it opens a string, at the top level) and is
    followed by a colon and an object without braces inside.
    """
    line, before, after = pl.col("raw"), pl.col("before"), pl.col("after")
    pos = line.str.find('"attrs"', literal=True)
    parts = pl.DataFrame({"raw": raw, "escaped": escaped}).select(
        plain=~pl.col("escaped") & (line.str.len_bytes() == line.str.len_chars()) & line.str.starts_with("{"),
        before=line.str.slice(1, pos - 1), after=line.str.slice(pos + 7),
    )
    top = ~before.str.contains("{", literal=True) & ~before.str.ends_with("\\") & ~after.str.contains('"attrs"', literal=True)
    return parts.select(pl.when(pl.col("plain") & top).then(after.str.extract_all(_ATTRS_VALUE).list.first())).to_series()


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

