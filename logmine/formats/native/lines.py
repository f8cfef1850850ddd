"""Line boundaries of a chunk of native JSONL (shared by the vectorised reader and its checks)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa

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
