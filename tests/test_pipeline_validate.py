"""`logmine run`'s compress stage ships validated packs as `logmine compress` does: the generator judges,
per template, the form that ships (a scripted generator here: no model), and the run says when the pack
was not validated and why."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from pipeline_data import FAKE_MODELS, write_day
from serving_helpers import ScriptedGenerator

from logmine.jobs import generator_available
from logmine.pack import load_pack
from logmine.pipeline import load_pipeline, run_pipeline
from logmine.report import build_report
from logmine.workspace import Workspace

needs_serving = pytest.mark.skipif(importlib.util.find_spec("logmine_serving") is None, reason="the serving layer is not installed")


def _pipeline(tmp_path: Path, compress: str) -> Path:
    """Ingest, templates and compress only (flows and heatmap off: not what is tested)."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "p.toml"
    path.write_text('name = "v"\nworkspace = "ws"\n[[inputs]]\nname = "native"\npaths = ["logs/{date}/native/*.jsonl"]\n'
                    'format = "native"\n[stages.flows]\nenabled = false\n[stages.heatmap]\nenabled = false\n'
                    '[stages.report]\nenabled = false\n[publish]\npack = "srv/pack"\n[stages.compress]\nenabled = true\n' + compress)
    write_day(tmp_path / "logs", "2026-11-28")
    return path


def test_validate_keys_parse_with_the_command_line_defaults(tmp_path: Path) -> None:
    default = load_pipeline(_pipeline(tmp_path, "")).spec.stages.compress
    assert (default.validate_, default.validate_tokens, default.validate_threshold, default.model) == ("auto", 16, 0.9, None)
    chosen = load_pipeline(_pipeline(tmp_path, 'validate = 3\nvalidate_tokens = 8\nvalidate_threshold = 0.75\nmodel = "m"\n')).spec.stages.compress
    assert (chosen.validate_, chosen.validate_tokens, chosen.validate_threshold, chosen.model) == (3, 8, 0.75, "m")
    assert load_pipeline(_pipeline(tmp_path, "validate = false\n")).spec.stages.compress.validate_ is False


def test_validation_off_says_not_validated_in_the_step_summary_and_the_record(tmp_path: Path) -> None:
    rec = run_pipeline(_pipeline(tmp_path, "validate = false\n"), models=FAKE_MODELS)
    step = rec.stages["compress"]
    assert (step["validated"], step["validation"]) == (False, {"not_validated": "stages.compress.validate = false"})
    assert step["note"] == "not validated (stages.compress.validate = false)"
    assert load_pack(tmp_path / "srv" / "pack").validation is None
    stored = json.loads(Workspace.open(tmp_path / "ws").read("runs")["record"][0])
    assert stored["stages"]["compress"]["validation"] == {"not_validated": "stages.compress.validate = false"}
    html, _ = build_report(tmp_path / "ws")
    assert "compress: not validated (stages.compress.validate = false)" in html


@needs_serving
def test_validate_n_lets_the_generator_choose_what_ships_and_the_pack_records_it(tmp_path: Path) -> None:
    gen = ScriptedGenerator()
    rec = run_pipeline(_pipeline(tmp_path, "validate = 1\nvalidate_tokens = 4\n"), models={**FAKE_MODELS, "generator": gen})
    step = rec.stages["compress"]
    pack = load_pack(tmp_path / "srv" / "pack")
    assert step["validated"] is True and pack.validation is not None
    assert step["validation"] == pack.validation.model_dump(mode="json")
    assert step["note"].startswith("1 requests x 4 tokens per template on scripted (cpu): ships ")
    assert (pack.validation.requests_per_template, pack.validation.max_new_tokens, pack.validation.model) == (1, 4, "scripted")
    assert sum(pack.validation.shipped.values()) == len(pack.templates) == step["families"] > 0
    assert all(t.validation is not None and t.validation["form"] in ("compressed", "lossless", "original") for t in pack.templates)
    assert len(gen.prompts) >= pack.validation.templates_validated > 0


@needs_serving
def test_forms_the_generator_disagrees_with_do_not_ship(tmp_path: Path) -> None:
    gen = ScriptedGenerator(rule=lambda prompt: f"{len(prompt):06d}")  # any change to the prompt changes the output
    rec = run_pipeline(_pipeline(tmp_path, "validate = 1\n"), models={**FAKE_MODELS, "generator": gen})
    pack = load_pack(tmp_path / "srv" / "pack")
    refused = [t for t in pack.templates if t.validation["form"] != "compressed"]
    assert refused and rec.stages["compress"]["validation"]["shipped"]["compressed"] == len(pack.templates) - len(refused)
    assert all(t.fallback.startswith(f"{t.validation['form']}: validation: ") for t in refused)


@pytest.mark.skipif(generator_available() is not None, reason="validation is on by default only where the bundled generator is installed")
def test_default_validates_where_the_generator_runs_and_says_when_over_the_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import logmine.jobs

    rec = run_pipeline(_pipeline(tmp_path / "on", ""), models=FAKE_MODELS)
    assert rec.stages["compress"]["validated"] is True
    assert rec.stages["compress"]["validation"]["requests_per_template"] == 2
    monkeypatch.setattr(logmine.jobs, "AUTO_VALIDATE_LIMIT", 1)
    rec = run_pipeline(_pipeline(tmp_path / "over", ""), models=FAKE_MODELS)
    step = rec.stages["compress"]
    assert step["validated"] is False
    assert step["validation"]["not_validated"] == (f"{step['families']} templates x 2 requests is over the 1 replayed by default; "
                                                   "set validate = 2 in [stages.compress] to validate")
    assert load_pack(tmp_path / "over" / "srv" / "pack").validation is None


def test_model_must_be_a_local_directory_named_relative_to_the_file(tmp_path: Path) -> None:
    from logmine.pipeline import PipelineFileError

    path = _pipeline(tmp_path, 'validate = 1\nmodel = "models/none"\n')
    with pytest.raises(PipelineFileError) as err:
        run_pipeline(path, models=FAKE_MODELS)
    assert str(err.value) == (f"{path.resolve()}: key 'stages.compress.model': {tmp_path.resolve() / 'models' / 'none'} "
                              "is not a local model directory (logmine never downloads models)")
