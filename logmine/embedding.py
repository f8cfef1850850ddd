"""A deterministic bag-of-words embedder: feature hashing, no model.

It stands in for the sentence model where none may be loaded: the fidelity check of
``logmine compress --no-embeddings``, and the tests of the near-duplicate merge, the compressor
and the pipelines. It is not semantic (paraphrases score low); use the real model for real
fidelity figures.
"""

from __future__ import annotations

import re
import zlib

import numpy as np

_WORD = re.compile(r"[a-z0-9]+")


class HashingEmbedder:
    """Lower-cased words and pairs of neighbouring words, each counted in the dimension its
    CRC-32 picks, L2-normalised; a text without words is the zero vector. Satisfies
    :class:`logmine.stages.templates.dedup.Embedder` and the fidelity check's embedder."""

    def __init__(self, dim: int = 512) -> None:
        self.dim = dim
        """Dimensions of the vectors."""
        self.name = f"hashing-bow-{dim}"

    def __call__(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            words = _WORD.findall(text.lower())
            for gram in words + [a + " " + b for a, b in zip(words, words[1:])]:
                out[i, zlib.crc32(gram.encode()) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-9)
