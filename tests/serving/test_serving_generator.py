"""The generator on a tiny local Llama: determinism, batching, streaming, shared-prefix reuse."""

from __future__ import annotations

from logmine_serving.generator import GenerationConfig, Generator

PREFIX = "You are a helpful coding assistant. Complete the code.\n"
PROMPTS = [PREFIX + "def add(a, b):\n", PREFIX + "function greet(name) {", "import os\n"]
CONFIG = GenerationConfig(max_new_tokens=10, stop_at_eos=False)


def test_greedy_decoding_is_deterministic(tiny_generator: Generator) -> None:
    a = tiny_generator.generate([PROMPTS[0]], CONFIG)[0]
    b = tiny_generator.generate([PROMPTS[0]], CONFIG)[0]
    assert a.token_ids == b.token_ids and len(a.token_ids) == 10
    assert a.prompt_tokens == len(tiny_generator.encode(PROMPTS[0]))
    assert a.ttft is not None and len(a.inter_token) == 9


def test_left_padded_batch_matches_single_prompts(tiny_generator: Generator) -> None:
    single = [tiny_generator.generate([p], CONFIG)[0].token_ids for p in PROMPTS]
    batch = [r.token_ids for r in tiny_generator.generate(PROMPTS, CONFIG)]
    assert batch == single


def test_per_sequence_token_limits(tiny_generator: Generator) -> None:
    results = tiny_generator.generate(PROMPTS, CONFIG, max_new_tokens=[2, 5, 1])
    assert [len(r.token_ids) for r in results] == [2, 5, 1]


def test_stream_deltas_add_up_to_the_text(tiny_generator: Generator) -> None:
    results: list = []
    deltas: dict[int, str] = {}
    for event in tiny_generator.stream(PROMPTS[:2], CONFIG, results=results):
        for i, _tok, delta in event.tokens:
            deltas[i] = deltas.get(i, "") + delta
    assert [deltas[0], deltas[1]] == [r.text for r in results]


def test_shared_prefix_cache_gives_identical_outputs(tiny_generator: Generator) -> None:
    plain = [tiny_generator.generate([p], CONFIG)[0] for p in PROMPTS[:2]]
    entry = tiny_generator.prefix("p", PREFIX)
    assert tiny_generator.prefix("p", PREFIX) is entry  # prefilled once
    cached = [tiny_generator.generate([p], CONFIG, prefix=entry)[0] for p in PROMPTS[:2]]
    assert [c.token_ids for c in cached] == [p.token_ids for p in plain]
    assert [c.cached_tokens for c in cached] == [len(entry.ids)] * 2
    batched = tiny_generator.generate(PROMPTS[:2], CONFIG, prefix=entry)
    assert [b.token_ids for b in batched] == [p.token_ids for p in plain]
    # a prompt that does not start with the prefix simply gets no cache
    other = tiny_generator.generate([PROMPTS[2]], CONFIG, prefix=entry)[0]
    assert other.cached_tokens == 0
    assert other.token_ids == tiny_generator.generate([PROMPTS[2]], CONFIG)[0].token_ids


def test_prefix_cache_is_not_mutated_by_use(tiny_generator: Generator) -> None:
    entry = tiny_generator.prefix("q", PREFIX)
    length = entry.cache.get_seq_length()
    tiny_generator.generate([PROMPTS[0]], CONFIG, prefix=entry)
    assert entry.cache.get_seq_length() == length
