"""Frequent sequential patterns (PrefixSpan) over integer-encoded sessions, in numpy.

Semantics are those of PyPI ``prefixspan``'s ``PrefixSpan(db).frequent(minsup)``: a pattern
is a list of items; its support is the number of sequences that contain it as a
subsequence (counted once per sequence); every pattern with support >= ``min_count`` and
``min_len <= len <= max_len`` is returned.

With ``max_gap = g`` consecutive pattern items must match positions at most ``g`` apart
(``g = 1``: contiguous, i.e. n-grams). Without it, the leftmost match of a prefix in each
sequence is the only one that matters, and a projected database is one end position per
sequence; with it, every end position must be kept, since a later occurrence of the
prefix may be the one that lets the next item fall inside the gap.

Data layout: ``items`` holds every sequence back to back, ``offsets[s]:offsets[s+1]`` is
sequence ``s``. For the unconstrained search a table ``dist[p, x]`` gives the distance from
position ``p`` to the next ``x`` in the same sequence (0: none), so counting the extensions of
a prefix is one row gather plus a column count, and projecting is one column read.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

log = logging.getLogger(__name__)

Pattern = tuple[int, ...]


@dataclass(frozen=True)
class PatternConfig:
    """What counts as a frequent pattern."""

    min_count: int
    """Least number of sequences that must contain a pattern."""
    max_len: int = 4
    """Longest pattern, in items."""
    min_len: int = 1
    """Shortest pattern reported (shorter prefixes are still explored)."""
    max_gap: int | None = None
    """Consecutive items at most this many positions apart; None: any gap."""


def prefixspan(items: np.ndarray, offsets: np.ndarray, config: PatternConfig,
               tick: Callable[[int], None] | None = None) -> list[tuple[Pattern, int]]:
    """All frequent patterns as ``(pattern, support)``, shorter patterns first within a branch."""
    if config.min_count < 1 or config.max_len < 1:
        raise ValueError("min_count and max_len must be at least 1")
    items = np.ascontiguousarray(items, dtype=np.int64)
    offsets = np.asarray(offsets, dtype=np.int64)
    n_seq = len(offsets) - 1
    if n_seq <= 0 or items.size == 0:
        return []
    seq_of = np.repeat(np.arange(n_seq, dtype=np.int64), np.diff(offsets))
    first = _first_occurrences(items, seq_of)
    support = np.bincount(items[first], minlength=int(items.max()) + 1)
    frequent = np.flatnonzero(support >= config.min_count)
    if frequent.size == 0:
        return []
    gapped = config.max_gap is not None and config.max_gap < int(np.diff(offsets).max()) - 1
    miner: _Miner = (_GapMiner if gapped else _FreeMiner)(items, offsets, seq_of, frequent, config)
    # roots: one node per frequent item; the gap miner keeps every occurrence, the free one
    # the leftmost of each sequence.
    starts = np.flatnonzero(miner.column[items] >= 0) if gapped else first[miner.column[items[first]] >= 0]
    out: list[tuple[Pattern, int]] = []
    if config.min_len <= 1:
        out.extend(((int(x),), int(support[x])) for x in frequent.tolist())
    miner.tick = tick or (lambda n: None)
    miner.expand([(int(x),) for x in frequent.tolist()], miner.column[items[starts]], starts, out)
    return out


def _first_occurrences(items: np.ndarray, seq_of: np.ndarray) -> np.ndarray:
    """Index of the first occurrence of each (sequence, item) pair."""
    width = int(items.max()) + 1
    _, idx = np.unique(seq_of * width + items, return_index=True)
    return np.sort(idx)


ROW_BUDGET = 4_000_000
"""Most projected rows held at one level before the nodes are mined in groups."""


class _Miner:
    """Level-wise growth of a batch of same-length prefixes; rows are (node, end position)."""

    def __init__(self, items: np.ndarray, offsets: np.ndarray, seq_of: np.ndarray, frequent: np.ndarray, config: PatternConfig) -> None:
        self.items, self.offsets, self.seq_of, self.config = items, offsets, seq_of, config
        self.frequent = frequent
        self.width = frequent.size
        self.column = np.full(int(items.max()) + 1, -1, dtype=np.int64)
        self.column[frequent] = np.arange(frequent.size)
        self.tick: Callable[[int], None] = lambda n: None

    def expand(self, patterns: list[Pattern], node: np.ndarray, pos: np.ndarray, out: list[tuple[Pattern, int]]) -> None:
        """Count the one-item extensions of every node, report the frequent ones, recurse."""
        length = len(patterns[0])
        if length >= self.config.max_len:
            return
        counts = self.count(node, pos, len(patterns))
        fn, fc = np.nonzero(counts >= self.config.min_count)
        if length + 1 >= self.config.min_len:
            items = self.frequent[fc].tolist()
            out.extend(((*patterns[n], x), c) for n, x, c in zip(fn.tolist(), items, counts[fn, fc].tolist(), strict=True))
            self.tick(len(out))
        if length + 1 >= self.config.max_len or fn.size == 0:
            return
        # mine the children in groups of parents whose children fit the row budget
        child_rows = np.bincount(fn, weights=counts[fn, fc], minlength=len(patterns))
        lo = 0
        for hi in _groups(np.cumsum(child_rows), ROW_BUDGET):
            if lo == 0 and hi == len(patterns):
                gnode, gpos = node, pos
            else:
                sel = np.flatnonzero((node >= lo) & (node < hi))
                gnode, gpos = node[sel] - lo, pos[sel]
            pick = (fn >= lo) & (fn < hi)
            gfn, gfc = fn[pick] - lo, fc[pick]
            child_of = np.full((hi - lo, self.width), -1, dtype=np.int64)
            child_of[gfn, gfc] = np.arange(gfn.size)
            children = [(*patterns[lo + n], x) for n, x in zip(gfn.tolist(), self.frequent[gfc].tolist(), strict=True)]
            cnode, cpos = self.project(gnode, gpos, child_of)
            if cpos.size:
                self.expand(children, cnode, cpos, out)
            lo = hi

    def count(self, node: np.ndarray, pos: np.ndarray, n_nodes: int) -> np.ndarray:
        raise NotImplementedError

    def project(self, node: np.ndarray, pos: np.ndarray, child_of: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError


def _groups(cum: np.ndarray, budget: int) -> list[int]:
    """End indices splitting a cumulative row count into groups of about ``budget`` rows."""
    ends, start_rows = [], 0.0
    for i, c in enumerate(cum.tolist()):
        if c - start_rows > budget and i > 0 and (not ends or ends[-1] < i):
            ends.append(i)
            start_rows = cum[i - 1]
    ends.append(len(cum))
    return ends


_BITS = ((np.arange(256)[:, None] >> np.arange(8)[None, :]) & 1).astype(np.float64)
"""_BITS[v, j]: bit j of byte v."""


class _FreeMiner(_Miner):
    """No gap constraint: one (leftmost) end position per supporting sequence."""

    def __init__(self, *args: object) -> None:
        super().__init__(*args)  # type: ignore[arg-type]
        self.dist = _next_distance(self.items, self.offsets, self.seq_of, self.frequent)  # (N, items)
        self.dist_rows = self.dist.view(np.dtype((np.void, self.dist.itemsize * self.width))).ravel()
        packed = np.packbits(self.dist != 0, axis=1, bitorder="little")  # (N, bytes)
        self.nbytes = 4 if packed.shape[1] <= 4 else 8 if packed.shape[1] <= 8 else packed.shape[1]
        pres = np.zeros((self.items.size, self.nbytes), dtype=np.uint8)
        pres[:, : packed.shape[1]] = packed
        # one fixed-size scalar per position, so a gather is a 1-D take
        self.present = pres.view({4: np.uint32, 8: np.uint64}.get(self.nbytes, np.dtype((np.void, self.nbytes)))).ravel()

    def count(self, node: np.ndarray, pos: np.ndarray, n_nodes: int) -> np.ndarray:
        """Sequences of each node that hold each item after the prefix: a byte histogram per node."""
        nb = self.nbytes
        rows = self.present[pos].view(np.uint8).reshape(pos.size, nb)
        base = node * (nb * 256)
        idx = np.empty((nb, pos.size), dtype=np.int64)  # bin of (node, byte k, byte value)
        for k in range(nb):
            idx[k] = rows[:, k]
            idx[k] += base
            idx[k] += k * 256
        hist = np.bincount(idx.ravel(), minlength=n_nodes * nb * 256).reshape(n_nodes * nb, 256)
        counts = hist.astype(np.float64) @ _BITS
        return counts.reshape(n_nodes, nb * 8)[:, : self.width].astype(np.int64)

    def project(self, node: np.ndarray, pos: np.ndarray, child_of: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Rows of the children: the next occurrence of the child's item after each parent row."""
        w = self.width
        steps = self.dist_rows[pos].view(self.dist.dtype).reshape(pos.size, w).ravel()
        flat = np.flatnonzero(steps != 0)
        row = flat // w
        cid = child_of.ravel()[node[row] * w + (flat - row * w)]
        keep = cid >= 0
        return cid[keep], pos[row[keep]] + steps[flat[keep]]


def _next_distance(items: np.ndarray, offsets: np.ndarray, seq_of: np.ndarray, frequent: np.ndarray) -> np.ndarray:
    """``dist[p, c]``: positions from p to the next item ``frequent[c]`` in p's sequence, 0 if none."""
    n = items.size
    longest = int(np.diff(offsets).max())
    dtype = np.uint8 if longest < 2**8 else np.uint16 if longest < 2**16 else np.uint32
    dist = np.zeros((n, frequent.size), dtype=dtype)
    ends = offsets[1:][seq_of]  # one past the end of each position's sequence
    idx = np.arange(n, dtype=np.int64)
    big = np.int64(n + 1)
    for col, x in enumerate(frequent.tolist()):
        at = np.where(items == x, idx, big)
        nxt = np.minimum.accumulate(at[::-1])[::-1]  # next x at or after p
        after = np.empty(n, dtype=np.int64)
        after[:-1], after[-1] = nxt[1:], big
        ok = after < ends
        dist[ok, col] = (after[ok] - idx[ok]).astype(dtype)
    return dist


class _GapMiner(_Miner):
    """Gap constraint: every end position of the prefix is kept; support counts sequences."""

    def __init__(self, *args: object) -> None:
        super().__init__(*args)  # type: ignore[arg-type]
        gap = int(self.config.max_gap or 1)
        n = self.items.size
        ends = self.offsets[1:][self.seq_of]
        idx = np.arange(n, dtype=np.int64)
        self.ahead = np.full((n, gap), -1, dtype=np.int32)  # column of the item d+1 positions ahead
        for d in range(1, gap + 1):
            ok = idx + d < ends
            self.ahead[ok, d - 1] = self.column[self.items[idx[ok] + d]]

    def _hits(self, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        window = self.ahead[pos]  # (m, gap) columns, -1 where none or infrequent
        row, d = np.nonzero(window >= 0)
        return row, d, window[row, d].astype(np.int64)

    def count(self, node: np.ndarray, pos: np.ndarray, n_nodes: int) -> np.ndarray:
        row, _, col = self._hits(pos)
        n_seq = len(self.offsets) - 1
        keys = np.unique((node[row] * n_seq + self.seq_of[pos[row]]) * self.width + col)
        pairs = (keys // (n_seq * self.width)) * self.width + keys % self.width
        return np.bincount(pairs, minlength=n_nodes * self.width).reshape(n_nodes, self.width)

    def project(self, node: np.ndarray, pos: np.ndarray, child_of: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        row, d, col = self._hits(pos)
        cid = child_of[node[row], col]
        keep = cid >= 0
        n = self.items.size
        keys = np.unique(cid[keep] * n + pos[row[keep]] + d[keep] + 1)
        return keys // n, keys % n
