"""Fast scalar draws from a seeded numpy Generator.

Drawing one scalar at a time from numpy costs about a microsecond; the simulator draws
several per event, so :class:`Draw` takes uniforms and normals in blocks and hands them out
one by one. Deterministic for the Generator's seed.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Sequence
from itertools import accumulate
from typing import TypeVar

import numpy as np

T = TypeVar("T")
_BLOCK = 8192


class Draw:
    """Scalar random draws backed by blocks of a numpy Generator's output."""

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self._u: list[float] = []
        self._n: list[float] = []

    def uniform(self) -> float:
        """A float in [0, 1)."""
        if not self._u:
            self._u = self.rng.random(_BLOCK).tolist()
        return self._u.pop()

    def normal(self) -> float:
        if not self._n:
            self._n = self.rng.standard_normal(_BLOCK).tolist()
        return self._n.pop()

    def chance(self, p: float) -> bool:
        return self.uniform() < p

    def below(self, n: int) -> int:
        """An int in [0, n)."""
        return min(n - 1, int(self.uniform() * n))

    def between(self, lo: int, hi: int) -> int:
        """An int in [lo, hi] (both included)."""
        return lo + self.below(hi - lo + 1)

    def pick(self, items: Sequence[T]) -> T:
        return items[self.below(len(items))]

    def lognormal(self, median: float, sigma: float) -> float:
        return median * math.exp(sigma * self.normal())

    def exponential(self, mean: float) -> float:
        return -mean * math.log(1.0 - self.uniform())

    def weighted(self, cdf: Sequence[float]) -> int:
        """An index drawn with the weights whose cumulative sums are ``cdf``."""
        return min(len(cdf) - 1, bisect_right(cdf, self.uniform() * cdf[-1]))

    def hex(self, n: int) -> str:
        """``n`` random hex digits."""
        return "".join(f"{int(self.uniform() * 65536):04x}" for _ in range((n + 3) // 4))[:n]

    def uuid(self) -> str:
        h = self.hex(32)
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) % 4]}{h[17:20]}-{h[20:32]}"

    def text(self, alphabet: str, n: int) -> str:
        return "".join(alphabet[self.below(len(alphabet))] for _ in range(n))


def cdf(weights: Sequence[float]) -> list[float]:
    """Cumulative sums of ``weights`` for :meth:`Draw.weighted`."""
    return list(accumulate(weights))
