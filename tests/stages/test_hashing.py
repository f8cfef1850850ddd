"""The hashing embedder that stands in for the sentence model."""

from __future__ import annotations

import numpy as np
import pytest

from logmine.stages.templates.dedup import Embedder
from logmine.embedding import HashingEmbedder


def test_vectors_are_unit_rows_and_deterministic() -> None:
    texts = ["Rewrite the code.", "rewrite THE code", "", "{code} <*>"]
    vectors = HashingEmbedder(64)(texts)
    assert vectors.shape == (4, 64) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors[[0, 1, 3]], axis=1), 1.0) and not vectors[2].any()
    assert np.array_equal(vectors[0], vectors[1])  # case and punctuation do not count
    assert np.array_equal(HashingEmbedder(64)(texts), vectors)


def test_word_order_counts_through_bigrams() -> None:
    a, b, c = HashingEmbedder()(["keep the names", "names the keep", "keep the names"])
    assert np.array_equal(a, c)
    assert float(a @ b) == pytest.approx(3 / 5)  # three words shared of five grams each: no pair is


def test_it_is_an_embedder_with_a_name() -> None:
    embedder = HashingEmbedder(128)
    assert isinstance(embedder, Embedder) and embedder.name == "hashing-bow-128"
