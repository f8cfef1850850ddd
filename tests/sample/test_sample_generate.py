"""generate(): files in every format, determinism, and truth.json against the files themselves."""

from __future__ import annotations

import json
import re
import zipfile
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from logmine.errors import InputPathError, OptionError
from logmine.sample import FORMATS, SampleConfig, generate
from logmine.sample.code import load_corpus
from logmine.sample.model import MODELS, PATTERN_ACCEPT, Event, Request, Simulator
from logmine.sample.templates import TEMPLATES
from sample_helpers import jsonl_records


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_every_format_writes_its_real_layout(small_sample: Path) -> None:
    rels = sorted(_files(small_sample))
    patterns = {
        "native": r"native/\d{4}-\d\d-\d\d\.jsonl",
        "continue": r"continue/\w+/dev_data/0\.2\.0/(autocomplete|chatInteraction|chatFeedback|editInteraction|editOutcome|tokensGenerated)\.jsonl",
        "continue-llm": r"continue-llm/\w+/llm_log-\d{4}-\d\d-\d\d\.jsonl",
        "tabby": r"tabby/events/\d{4}-\d\d-\d\d\.json",
        "jetbrains": r"jetbrains/\w+/event-log-data/logs/FUS/\d{4}-\d\d-\d\d\.log",
        "kave": r"kave/(arrays/\w+\.json|\d{4}-\d\d-\d\d/\w+\.zip)",
        "otel": r"otel/\w+/traces-\d{4}-\d\d-\d\d\.jsonl",
    }
    for fmt, pattern in patterns.items():
        assert [r for r in rels if re.fullmatch(pattern, r)], fmt
    unexplained = [r for r in rels if r not in ("truth.json", ".logmineignore") and not any(re.fullmatch(p, r) for p in patterns.values())]
    assert unexplained == []


def test_continue_dev_data_files_hold_their_event_name(small_sample: Path) -> None:
    for path in small_sample.glob("continue/*/dev_data/0.2.0/*.jsonl"):
        names = {r.get("eventName") for r in jsonl_records(path)}
        assert names == {path.stem}
        for r in jsonl_records(path):
            assert r["schema"] == "0.2.0" and "(Continue/" in r["userAgent"]


def test_format_specific_shapes(small_sample: Path) -> None:
    fus = [r for p in small_sample.glob("jetbrains/**/*.log") for r in jsonl_records(p)]
    assert max(r["event"]["count"] for r in fus if isinstance(r.get("event"), dict)) > 1  # merged events
    llm = [r for p in small_sample.glob("continue-llm/**/*.jsonl") for r in jsonl_records(p)]
    assert {"startChat", "startComplete", "startFim", "chunk", "message", "success"} <= {r.get("kind") for r in llm}
    otel = "".join(p.read_text("utf-8", "replace") for p in small_sample.glob("otel/**/*.jsonl"))
    assert '"gen_ai.provider.name"' in otel and '"gen_ai.system"' in otel  # current and deprecated names
    assert '"gen_ai.usage.prompt_tokens"' in otel and '"gen_ai.input.messages"' in otel
    zips = list(small_sample.glob("kave/*/*.zip"))
    with zipfile.ZipFile(zips[0]) as archive:
        assert archive.namelist()[:3] == ["0.json", "1.json", "2.json"]
        assert b'"$type":"KaVE.Commons.Model.Events.' in archive.read("0.json")
    arrays = list(small_sample.glob("kave/arrays/*.json"))
    assert arrays and arrays[0].read_bytes().startswith(b"[\n{")
    tabby = [r for p in small_sample.glob("tabby/events/*.json") for r in jsonl_records(p)]
    assert {"completion", "view", "select", "dismiss", "chat_completion"} <= {
        next(iter(r["event"])) for r in tabby if isinstance(r.get("event"), dict)}


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path: Path) -> None:
    config = SampleConfig(events=700, seed=3)
    generate(tmp_path / "a", config)
    generate(tmp_path / "b", config)
    generate(tmp_path / "c", SampleConfig(events=700, seed=4))
    a, b, c = _files(tmp_path / "a"), _files(tmp_path / "b"), _files(tmp_path / "c")
    assert a == b
    assert a.keys() != c.keys() or any(a[k] != c[k] for k in a)


def _native_requests(root: Path) -> dict[str, dict[str, Any]]:
    """Native request records by request_id (a malformed copy repeats an id; the first is real)."""
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(root.glob("native/*.jsonl")):
        for r in jsonl_records(path):
            if r.get("type") == "llm_request" and isinstance(r.get("request_id"), str):
                out.setdefault(r["request_id"], r)
    return out


def test_truth_template_counts_match_the_native_records(small_sample: Path, small_truth: dict[str, Any]) -> None:
    counts = Counter(r["attrs"]["template_name"] for r in _native_requests(small_sample).values())
    truth = {t["name"]: t["count_by_format"].get("native", 0) for t in small_truth["templates"]}
    assert {k: v for k, v in truth.items() if v} == dict(counts)
    by_name = {t.name: t.template_id for t in TEMPLATES}
    assert all(r["attrs"]["template_id"] == by_name[r["attrs"]["template_name"]] for r in _native_requests(small_sample).values())
    assert len(small_truth["templates"]) == len(TEMPLATES)


def test_native_token_timings_are_consistent(small_sample: Path) -> None:
    requests = [r for r in _native_requests(small_sample).values() if r.get("token_texts")]
    assert len(requests) > 50
    for r in requests:
        times, texts, kinds = r["token_times_ms"], r["token_texts"], r["attrs"]["token_kinds"]
        assert len(times) == len(texts) == len(kinds) == r["completion_tokens"]
        assert "".join(texts) == r["completion"]
        assert times == sorted(times) and times[0] == r["ttft_ms"] and r["total_ms"] >= times[-1]


def test_malformed_byte_kinds_match_truth(small_sample: Path, small_truth: dict[str, Any]) -> None:
    """Lines that are not UTF-8 JSON, counted independently, equal the planted byte-level kinds."""
    checked = 0
    for fmt, body in small_truth["formats"].items():
        for rel, stats in body["files"].items():
            if rel.endswith(".zip") or rel.startswith("kave/arrays/"):
                continue
            raw = (small_sample / rel).read_bytes().splitlines()
            assert len(raw) == stats["lines"], rel
            broken = Counter()
            for line in raw:
                try:
                    json.loads(line.decode("utf-8"))
                except UnicodeDecodeError:
                    broken["invalid_utf8"] += 1
                except ValueError:
                    broken["truncated_json"] += 1
            planted = stats["malformed"]
            assert dict(broken) == {k: planted[k] for k in ("invalid_utf8", "truncated_json") if planted.get(k)}, rel
            checked += stats["malformed_total"]
    assert checked > 0


def test_planted_secrets_are_in_the_files_of_their_format(small_sample: Path, small_truth: dict[str, Any]) -> None:
    assert len({s["kind"] for s in small_truth["secrets"]}) >= 5
    texts = {fmt: "".join(p.read_text("utf-8", "replace") for p in (small_sample / fmt).rglob("*") if p.is_file())
             for fmt in ("native", "continue", "continue-llm", "tabby", "otel")}
    for secret in small_truth["secrets"]:
        needle = secret["value"].split("\n")[1] if secret["kind"] == "private_key" else secret["value"]
        for fmt, n in secret["count_by_format"].items():
            assert n > 0 and needle in texts[fmt], (fmt, secret["kind"])
    homes = {p["home"].split("/")[1] for p in small_truth["people"]}
    assert homes == {"home", "Users"}


def test_truth_documents_the_planted_facts(small_truth: dict[str, Any]) -> None:
    assert small_truth["token_latency"]["kind_factor"]["STRING"] == 5.0
    assert small_truth["acceptance"]["pattern"]["after"] == ["file.save", "editor.edit"]
    assert set(small_truth["models"]) == {m.name for m in MODELS}
    assert set(small_truth["formats"]) == set(FORMATS)
    assert small_truth["generator"]["command"] == "logmine sample OUT_DIR --events 2800 --seed 5"


def test_simulated_acceptance_follows_the_planted_pattern() -> None:
    sim = Simulator(np.random.default_rng(0), load_corpus(None), secret_rate=0.0, max_prefix=400, max_suffix=100, ides=("vscode",))
    user = sim.make_user(0, "logmine")
    successors: Counter[str] = Counter()
    for i in range(40):
        session = sim.run_session(user, 1.74e12 + i * 1e7, 1000)
        actions = [item.action for item in session.items if isinstance(item, Event)]
        successors.update(b for a, b in zip(actions, actions[1:], strict=False) if a == "file.save")
        assert all(isinstance(item, (Event, Request)) for item in session.items)
    a = sim.acceptance
    pattern = a["after_save_edit.accepted"] / a["after_save_edit.shown"]
    other = a["other.accepted"] / a["other.shown"]
    assert a["after_save_edit.shown"] > 200
    assert abs(pattern - PATTERN_ACCEPT) < 0.08
    assert 0.18 < other < 0.38
    assert successors.most_common(1)[0][0] == "editor.format"


def test_bad_options_and_existing_output_are_user_errors(tmp_path: Path) -> None:
    with pytest.raises(OptionError, match="--format"):
        generate(tmp_path / "x", SampleConfig(events=10, formats=("nope",)))
    with pytest.raises(OptionError, match="--events"):
        generate(tmp_path / "x", SampleConfig(events=0))
    generate(tmp_path / "y", SampleConfig(events=50, formats=("native",)))
    with pytest.raises(InputPathError, match="--overwrite"):
        generate(tmp_path / "y", SampleConfig(events=50, formats=("native",)))
    generate(tmp_path / "y", SampleConfig(events=60, formats=("native",), overwrite=True))
    assert json.loads((tmp_path / "y" / "truth.json").read_text())["generator"]["events"] == 60
    with pytest.raises(InputPathError, match="--code-dir"):
        generate(tmp_path / "z", SampleConfig(events=10, code_dir=tmp_path / "missing"))


def test_code_dir_fills_prompts_with_its_files(tmp_path: Path) -> None:
    code = tmp_path / "code"
    code.mkdir()
    (code / "billing.py").write_text("".join(f"def invoice_total_{i}(items):\n    return sum(items)\n\n" for i in range(20)))
    generate(tmp_path / "out", SampleConfig(events=400, formats=("native",), code_dir=code))
    prompts = " ".join(r["prompt"] for r in _native_requests(tmp_path / "out").values())
    assert "invoice_total_" in prompts and "/src/code/billing.py" in prompts
