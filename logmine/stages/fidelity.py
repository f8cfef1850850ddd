"""Template text as segments, sentence splitting, and the instruction-coverage fidelity.

Fidelity is NOT the cosine of two rendered prompts (the code in the slots dominates that, and
all-MiniLM-L6-v2 reads only the first 256 word pieces). It is *instruction coverage*: split
the original template's static text into sentences/clauses; for each, take the best cosine
similarity to any sentence of the compressed template; average, weighted by the sentence's
tokens. A best similarity below ``floor`` counts as 0: an unrelated sentence does not half
cover a lost instruction. Dropping a unique instruction lowers the score by about its token
share; dropping a repeated one does not lower it at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

Embedder = Callable[[list[str]], np.ndarray]
"""Maps texts to L2-normalised vectors (one row per text)."""
TokenCounter = Callable[[list[str]], list[int]]
"""Maps texts to their token counts."""

SLOT_RE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
# Sentence / clause boundaries: end punctuation followed by space, line breaks, list bullets.
_SENTENCE_RE = re.compile(r"[^\n.!?]*(?:[.!?]+(?=\s|$)|\n|$)")


@dataclass(frozen=True)
class Segment:
    """A piece of a template: static text, or a slot (``slot`` holds its name)."""

    text: str
    slot: str | None = None


_PIECE_RE = re.compile(r"\{% raw %\}(.*?)\{% endraw %\}|\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}", re.S)
_JINJA_DELIMS = re.compile(r"\{\{|\{%|\{#|\}\}|%\}|#\}")


def segments(source: str) -> list[Segment]:
    """Split a Jinja2 template into static and slot segments.

    Static text is literal (``{% raw %}`` blocks unwrapped); adjacent static pieces are merged.
    """
    out: list[Segment] = []
    pos = 0

    def static(text: str) -> None:
        if not text:
            return
        if out and out[-1].slot is None:
            out[-1] = Segment(out[-1].text + text)
        else:
            out.append(Segment(text))

    for m in _PIECE_RE.finditer(source):
        static(source[pos : m.start()])
        if m.group(2) is None:
            static(m.group(1))
        else:
            out.append(Segment(m.group(0), m.group(2)))
        pos = m.end()
    static(source[pos:])
    return out


def escape_static(text: str) -> str:
    """Literal text as Jinja2 source: wrapped in ``{% raw %}`` when it holds Jinja delimiters."""
    return "{% raw %}" + text + "{% endraw %}" if _JINJA_DELIMS.search(text) else text


def join(parts: Sequence[Segment]) -> str:
    """Segments back to Jinja2 source."""
    return "".join(p.text if p.slot else escape_static(p.text) for p in parts)


def static_text(source: str) -> str:
    """The template's own text, slots removed (joined by newlines)."""
    return "\n".join(s.text for s in segments(source) if s.slot is None)


def sentences(text: str) -> list[str]:
    """Sentences and clauses of static text, stripped, without empty or punctuation-only pieces."""
    out = []
    for m in _SENTENCE_RE.finditer(text):
        piece = m.group(0).strip(" \t\n-*•>#")
        if piece and re.search(r"[A-Za-z0-9]", piece):
            out.append(piece)
    return out


def coverage(
    original: Sequence[str],
    compressed: Sequence[str],
    embedder: Embedder,
    count_tokens: TokenCounter,
    floor: float = 0.5,
) -> float:
    """Token-weighted mean over ``original`` sentences of their best cosine in ``compressed``."""
    if not original:
        return 1.0
    if not compressed:
        return 0.0
    vecs = embedder(list(original) + list(compressed))
    a, b = vecs[: len(original)], vecs[len(original) :]
    best = (a @ b.T).max(axis=1)
    best = np.where(best >= floor, np.clip(best, 0.0, 1.0), 0.0)
    weights = np.asarray(count_tokens(list(original)), dtype=np.float64)
    weights = np.maximum(weights, 1.0)
    return float((best * weights).sum() / weights.sum())


class CachedEmbedder:
    """Wraps an embedder with a per-text cache (compression re-embeds the same sentences a lot)."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.cache: dict[str, np.ndarray] = {}

    def __call__(self, texts: list[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self.cache))
        if missing:
            for text, vec in zip(missing, self.embedder(missing), strict=True):
                self.cache[text] = np.asarray(vec, dtype=np.float32)
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        return np.stack([self.cache[t] for t in texts])


def hashing_embedder(dim: int = 512) -> Embedder:
    """A deterministic bag-of-words embedder (word and bigram hashing), for tests and --no-embeddings.

    Not semantic: paraphrases score low. Use the real model for real fidelity figures.
    """
    import zlib

    def embed(texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), dim), dtype=np.float32)
        for i, text in enumerate(texts):
            words = re.findall(r"[a-z0-9]+", text.lower())
            for gram in words + [a + " " + b for a, b in zip(words, words[1:], strict=False)]:
                out[i, zlib.crc32(gram.encode()) % dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-9)

    return embed


def whitespace_tokens(texts: list[str]) -> list[int]:
    """A crude token count (words and punctuation), for tests."""
    return [len(re.findall(r"\w+|[^\w\s]", t)) for t in texts]
