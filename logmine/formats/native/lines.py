"""Line boundaries of a chunk of native JSONL (shared by the vectorised reader and its checks)."""

from __future__ import annotations

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

        Runs of kept lines are copied whole and their boundaries computed, not searched again.
        """
        keep = np.ones(self.count, bool)
        keep[rows] = False
        kept = np.flatnonzero(keep)
        # a run of kept lines starts after a dropped line (or at the first) and ends before one
        first = kept[np.concatenate(([True], np.diff(kept) > 1))] if len(kept) else kept
        last = kept[np.concatenate((np.diff(kept) > 1, [True]))] if len(kept) else kept
        data = b"\n".join(self.data[s:e] for s, e in zip(self.starts[first].tolist(), self.ends[last].tolist(), strict=True)) + b"\n"
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
        offsets = np.empty(count + 1, np.int64)
        offsets[0] = 0
        offsets[1:] = np.minimum(ends + 1, len(data))
        return pl.Series("raw", pa.LargeStringArray.from_buffers(count, pa.py_buffer(offsets), pa.py_buffer(data)))

    def blanked_column(self, rows: np.ndarray) -> pl.Series:
        """:meth:`column` with lines ``rows`` turned into spaces (lines that are not valid UTF-8)."""
        data = bytearray(self.data)
        for start, end in zip(self.starts[rows].tolist(), self.ends[rows].tolist(), strict=True):
            data[start:end] = b" " * (end - start)
        return _Lines._string_column(self.count, self.ends, data)

    def invalid_utf8(self) -> np.ndarray:
        """The lines that are not valid UTF-8 (ascending): the whole chunk is checked first (Arrow's
        check, a tenth of ``bytes.decode``'s time), then only lines holding a byte >= 0x80 are decoded."""
        if self._invalid is None:
            found: list[int] = []
            data = self.data
            if not data.isascii() and not _valid_utf8(data):
                rows = np.unique(np.searchsorted(self.ends, np.flatnonzero(np.frombuffer(data, np.uint8) >= 0x80)))
                for i, start, end in zip(rows.tolist(), self.starts[rows].tolist(), self.ends[rows].tolist(), strict=True):
                    if not _decodes(data[start:end]):
                        found.append(i)
            self._invalid = np.array(found, np.int64)
        return self._invalid

    def escaped(self) -> np.ndarray:
        """Which lines hold ``\\u`` (only those can spell a key with an escape or hold a surrogate)."""
        if self._escaped is None:
            self._escaped = self.column().str.contains("\\u", literal=True).to_numpy()
        return self._escaped


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
