"""Line boundaries of a chunk of native JSONL (shared by the vectorised reader and its checks)."""

from __future__ import annotations

import re

import numpy as np
import polars as pl
import pyarrow as pa

class _Lines:
    """Line boundaries of a chunk, and its lines as a zero-copy Polars column for regex checks."""

    def __init__(self, data: bytes, ends: np.ndarray | None = None) -> None:
        self.data = data
        if ends is None:
            ends = np.flatnonzero(np.frombuffer(data, np.uint8) == 10)
            if data and not data.endswith(b"\n"):
                ends = np.append(ends, len(data))
        self.ends = ends
        self.count = len(ends)
        self.starts = np.concatenate(([0], ends[:-1] + 1)) if self.count else ends
        self._column: pl.Series | None = None
        self._escaped: np.ndarray | None = None
        self._invalid: np.ndarray | None = None

    def without(self, rows: np.ndarray) -> _Lines:
        """The other lines (as they are, CRs included), each ended by a newline.

        Runs of kept lines are copied whole, once (joined from views of the chunk), and their
        boundaries computed, not searched again.
        """
        keep = np.ones(self.count, bool)
        keep[rows] = False
        kept = np.flatnonzero(keep)
        # a run of kept lines starts after a dropped line (or at the first) and ends before one
        first = kept[np.concatenate(([True], np.diff(kept) > 1))] if len(kept) else kept
        last = kept[np.concatenate((np.diff(kept) > 1, [True]))] if len(kept) else kept
        view = memoryview(self.data)
        data = b"\n".join([*(view[s:e] for s, e in zip(self.starts[first].tolist(), self.ends[last].tolist(), strict=True)), b""])
        lines = _Lines(data, np.cumsum(self.ends[kept] - self.starts[kept] + 1) - 1)
        if self._invalid is not None and not keep[self._invalid].any():  # every line that is not UTF-8 is dropped
            lines._invalid = self._invalid[:0]
        return lines

    def raw(self, i: int) -> bytes:
        """Line ``i`` as the per-line reader sees it (newline and trailing CRs stripped)."""
        return self.data[int(self.starts[i]):int(self.ends[i])].rstrip(b"\r\n")

    def column(self) -> pl.Series:
        """Every line (with its newline) as a String column; the data is valid UTF-8 by then."""
        if self._column is None:
            self._column = _Lines._string_column(self.count, self.ends, self.data)
        return self._column

    @staticmethod
    def _string_column(count: int, ends: np.ndarray, data: bytes | bytearray) -> pl.Series:
        return pl.Series("raw", _Lines._string_array(count, ends, data))

    @staticmethod
    def _string_array(count: int, ends: np.ndarray, data: bytes | bytearray) -> pa.LargeStringArray:
        """The lines (each with its newline) as an Arrow string array over ``data``, unvalidated."""
        offsets = np.empty(count + 1, np.int64)
        offsets[0] = 0
        offsets[1:] = np.minimum(ends + 1, len(data))
        return pa.LargeStringArray.from_buffers(count, pa.py_buffer(offsets), pa.py_buffer(data))

    def blanked_column(self, rows: np.ndarray) -> pl.Series:
        """:meth:`column` with lines ``rows`` turned into spaces (lines that are not valid UTF-8)."""
        data = bytearray(self.data)
        for start, end in zip(self.starts[rows].tolist(), self.ends[rows].tolist(), strict=True):
            data[start:end] = b" " * (end - start)
        return _Lines._string_column(self.count, self.ends, data)

    def invalid_utf8(self) -> np.ndarray:
        """The lines that are not valid UTF-8 (ascending): the whole chunk is checked first (Arrow's
        check, a tenth of ``bytes.decode``'s time), then, when it fails, the lines after each one
        Arrow names (:meth:`_invalid_named`)."""
        if self._invalid is None:
            data = self.data
            found = [] if data.isascii() or _valid_utf8(data) else self._invalid_named()
            self._invalid = np.array(found, np.int64)
        return self._invalid

    def _invalid_named(self) -> list[int]:
        """The invalid lines, found by validating the lines as one Arrow string array: its error
        names the first invalid string, and the lines after it are validated again. Should the
        error not name a line that fails to decode, every line holding a byte >= 0x80 is decoded."""
        data, found, first = self.data, [], 0
        strings = self._string_array(self.count, self.ends, data)
        while first < self.count:
            try:
                strings.slice(first).validate(full=True)
            except pa.ArrowInvalid as error:
                named = _NAMED_STRING.search(str(error))
                line = first + int(named.group(1)) if named else -1
                if not first <= line < self.count or _decodes(self.data[int(self.starts[line]):int(self.ends[line])]):
                    return self._invalid_decoded(first, found)
                found.append(line)
                first = line + 1
            else:
                break
        return found

    def _invalid_decoded(self, first: int, found: list[int]) -> list[int]:
        """``found`` and the lines from ``first`` on that hold a byte >= 0x80 and do not decode."""
        data = self.data
        high = np.flatnonzero(np.frombuffer(data, np.uint8, offset=int(self.starts[first])) >= 0x80) + int(self.starts[first])
        rows = np.unique(np.searchsorted(self.ends, high))
        for i, start, end in zip(rows.tolist(), self.starts[rows].tolist(), self.ends[rows].tolist(), strict=True):
            if not _decodes(data[start:end]):
                found.append(i)
        return found

    def escaped(self) -> np.ndarray:
        """Which lines hold ``\\u`` (only those can spell a key with an escape or hold a surrogate)."""
        if self._escaped is None:
            self._escaped = self.column().str.contains("\\u", literal=True).to_numpy()
        return self._escaped


_NAMED_STRING = re.compile(r"string index (\d+)")
"""How Arrow's validation names the first string that is not UTF-8."""


def _valid_utf8(data: bytes) -> bool:
    """Whether ``data`` is valid UTF-8, by Arrow's validation of it as one string (no text is built)."""
    array = pa.LargeStringArray.from_buffers(1, pa.py_buffer(np.array([0, len(data)], np.int64)), pa.py_buffer(data))
    try:
        array.validate(full=True)
    except pa.ArrowInvalid:
        return False
    return True


def _decodes(data: bytes) -> bool:
    """Whether ``data`` is valid UTF-8 (one short line: decoding costs less than setting up Arrow's check)."""
    try:
        data.decode()
    except UnicodeDecodeError:
        return False
    return True
