"""`logmine validate`: cases from the workspace, the comparison, the written results, the CLI."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from serving_helpers import DEFAULT_SPECS, Spec, make_pack, make_workspace, write_test_pack

from logmine.pack import load_pack
from logmine.workspace import Workspace
from logmine_serving.errors import ValidationInputError
from logmine_serving.generator import Generator
from logmine_serving.pack_runtime import PackRuntime
from logmine_serving.validate import ValidateConfig, load_cases, update_pack, validate, write_results


@pytest.fixture()
def pack_and_ws(tmp_path: Path) -> tuple[Path, Path]:
    pack_dir = write_test_pack(tmp_path / "pack")
    ws = make_workspace(tmp_path / "ws", load_pack(pack_dir))
    return pack_dir, ws


def test_load_cases_takes_slots_from_columns_and_template_slots(pack_and_ws: tuple[Path, Path]) -> None:
    pack_dir, ws = pack_and_ws
    runtime = PackRuntime.load(pack_dir)
    cases = load_cases(ws, runtime, per_template=2)
    fim, same = (runtime.pack.template(n).id for n in ("fim", "same"))
    assert [c.request_id for c in cases[fim]] == ["r1", "r2"]
    assert [c.request_id for c in cases[same]] == ["r4", "r5"]
    assert cases[fim][0].slots["file_path"] == "src/a.py"
    assert cases[fim][1].slots["file_path"] == "lib/override.py"  # from template_slots
    assert cases[fim][1].slots["prefix"] == "import os\n\ndef main():\n    "


def test_load_cases_needs_template_ids(tmp_path: Path) -> None:
    pack = make_pack()
    pack_dir = write_test_pack(tmp_path / "pack")
    ws = make_workspace(tmp_path / "ws", pack, slots_table=False, with_template_id=False)
    with pytest.raises(ValidationInputError, match="run `logmine compress`"):
        load_cases(ws, PackRuntime.load(pack_dir), 3)


def test_load_cases_from_request_templates_and_families(tmp_path: Path) -> None:
    """As compress records it: request_templates assigns mined ids; a pack template stands for its family."""
    import polars as pl

    pack_dir = write_test_pack(tmp_path / "pack")
    runtime = PackRuntime.load(pack_dir)
    fim = runtime.pack.template("fim")
    family_pack = make_pack().model_copy(update={"templates": [fim.model_copy(update={"family_id": "fam-1"})]})
    from logmine.pack import write_pack

    pack_dir = write_pack(family_pack, tmp_path / "pack2")
    runtime = PackRuntime.load(pack_dir)
    ws = Workspace.create(tmp_path / "ws")
    with ws.lock():
        txn = ws.transaction()
        requests = pl.DataFrame({"request_id": ["a", "b", "c"], "prefix": ["p1", "p2", "p3"], "suffix": ["", "", ""],
                                 "file_path": ["x.py"] * 3})
        txn.replace_table("llm_requests", requests)
        txn.replace_table("request_templates", pl.DataFrame({"request_id": ["a", "b", "c"], "template_id": [fim.id, "member-2", "other"]}))
        txn.replace_table("templates", pl.DataFrame({"template_id": [fim.id, "member-2", "other"], "family_id": ["fam-1", "fam-1", "fam-9"]}))
        txn.commit()
    cases = load_cases(ws.root, runtime, per_template=5)
    assert [c.request_id for c in cases[fim.id]] == ["a", "b"]
    assert cases[fim.id][1].slots["prefix"] == "p2"


def test_validate_compares_original_and_compressed(pack_and_ws: tuple[Path, Path], tiny_generator: Generator) -> None:
    pack_dir, ws = pack_and_ws
    runtime = PackRuntime.load(pack_dir)
    cases = load_cases(ws, runtime, per_template=5)
    report = validate(runtime, cases, tiny_generator, ValidateConfig(max_new_tokens=6))
    by_name = {r["name"]: r for r in report.templates}
    same, fim = by_name["same"], by_name["fim"]
    # identical templates must give identical outputs (greedy, same seed)
    assert (same["requests"], same["exact_match"], same["edit_similarity"]) == (2, 1.0, 1.0)
    assert same["prompt_tokens"]["ratio"] == 1.0
    # the compressed fim template drops the file line: fewer prompt tokens, served partly from the prefix cache
    assert fim["requests"] == 3
    assert fim["prompt_tokens"]["compressed"] < fim["prompt_tokens"]["original"]
    assert fim["cached_prompt_tokens"] > 0
    assert 0.0 <= fim["edit_similarity"] <= 1.0
    for key in ("ttft_ms", "tokens_per_s", "itl_p50_ms", "itl_p90_ms", "itl_p99_ms"):
        assert fim[key]["original"] > 0 and fim[key]["compressed"] > 0 and fim[key]["ratio"] > 0
    assert fim["parses_original"] is not None  # python/javascript requests are parse-checked
    assert report.total["requests"] == 5 and report.total["name"] == "TOTAL"
    assert report.config["max_new_tokens"] == 6 and report.config["decoding"] == "greedy"


def test_results_are_written_and_the_pack_updated_atomically(pack_and_ws: tuple[Path, Path], tiny_generator: Generator) -> None:
    pack_dir, ws = pack_and_ws
    runtime = PackRuntime.load(pack_dir)
    report = validate(runtime, load_cases(ws, runtime, 1), tiny_generator, ValidateConfig(max_new_tokens=3))
    path = write_results(report, ws, pack_dir)
    doc = json.loads(path.read_text())
    assert [t["name"] for t in doc["templates"]] == ["fim", "same"]
    table = Workspace.open(ws).read("validation")
    assert table["scope"].to_list() == ["template", "template", "total"]
    assert table["requests"].to_list() == [1, 1, 2]
    update_pack(pack_dir, report)
    updated = load_pack(pack_dir)  # the manifest was rewritten: still verifies
    assert updated.template("fim").validation["requests"] == 1
    assert updated.template("same").validation["exact_match"] == 1.0


def test_render_failures_are_skipped_and_counted(tmp_path: Path, tiny_generator: Generator) -> None:
    specs = (*DEFAULT_SPECS, Spec("needs-lang", "{{ language }}: {{ prefix }}{{ extra }}", "{{ prefix }}", ("prefix",)))
    pack_dir = write_test_pack(tmp_path / "pack", specs)
    runtime = PackRuntime.load(pack_dir)
    ws = make_workspace(tmp_path / "ws", runtime.pack)
    cases = load_cases(ws, runtime, 2)
    tid = runtime.pack.template("needs-lang").id
    from logmine_serving.validate import ValidationCase

    cases[tid] = [ValidationCase("x", tid, {"prefix": "a", "language": "python"})]  # no `extra`
    report = validate(runtime, cases, tiny_generator, ValidateConfig(max_new_tokens=2))
    rec = next(r for r in report.templates if r["name"] == "needs-lang")
    assert (rec["requests"], rec["skipped"]) == (0, 1)


def test_cli_validate_json(pack_and_ws: tuple[Path, Path], tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from logmine.cli import main

    pack_dir, ws = pack_and_ws
    main(["validate", str(pack_dir), "--workspace", str(ws), "-n", "1", "--max-tokens", "3", "--model", str(tiny_model_dir),
          "--device", "cpu", "--format", "json", "--quiet", "--update-pack"])
    doc = json.loads(capsys.readouterr().out)
    assert [t["name"] for t in doc["templates"]] == ["fim", "same"]
    assert doc["total"]["requests"] == 2
    assert doc["written"]["validation_json"] == str(ws / "validation.json")
    assert load_pack(pack_dir).template("same").validation is not None


def test_cli_validate_table(pack_and_ws: tuple[Path, Path], tiny_model_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from logmine.cli import main

    pack_dir, ws = pack_and_ws
    main(["validate", str(pack_dir), "-w", str(ws), "-n", "1", "--max-tokens", "2", "--model", str(tiny_model_dir), "-q"])
    out = capsys.readouterr().out
    assert out.count("TOTAL") == 2 and out.count("fim") == 2 and "exact" in out and "ratio" in out


def _expect_error(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    from logmine.cli import main

    with pytest.raises(SystemExit) as exc:
        main(args)
    assert exc.value.code == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    return captured.err


def test_cli_refuses_a_tampered_pack(pack_and_ws: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    pack_dir, ws = pack_and_ws
    path = pack_dir / "pack.json"
    path.write_text(path.read_text().replace("Complete: ", "Complete:  "))
    err = _expect_error(["validate", str(pack_dir), "-w", str(ws)], capsys)
    assert err.startswith("Error: ") and "sha256 does not match the manifest" in err


def test_cli_refuses_an_unsafe_pack(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pack_dir = write_test_pack(tmp_path / "pack", (Spec("evil", "{{ prefix.__class__ }}", "{{ prefix }}", ("prefix",)),))
    err = _expect_error(["validate", str(pack_dir), "-w", str(tmp_path)], capsys)
    assert err == "Error: template 'evil (original)' refused: it uses attribute access, which template packs may not use\n"


def test_cli_bad_options(pack_and_ws: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    pack_dir, ws = pack_and_ws
    err = _expect_error(["validate", str(pack_dir), "-w", str(ws), "-n", "0"], capsys)
    assert err == "Error: invalid value for --per-template: 0 (at least 1)\n"
    err = _expect_error(["validate", str(pack_dir), "-w", str(ws / "missing")], capsys)
    assert err == f"Error: {ws / 'missing'}: does not exist\n"


@pytest.mark.parametrize("command", ["validate", "serve"])
def test_cli_without_the_serving_layer(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, command: str,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    for name in [m for m in sys.modules if m.startswith("logmine_serving")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "logmine_serving", None)  # import logmine_serving -> ImportError
    args = [command, str(tmp_path)] + (["-w", str(tmp_path)] if command == "validate" else [])
    err = _expect_error(args, capsys)
    assert err == (f"Error: `logmine {command}` needs the serving layer (logmine-serving); install it with: "
                   "pip install -e './serving[server]'  (or: pip install 'logmine-serving[server]')\n")


@pytest.mark.parametrize(("output", "expected"), [("a + b", True), ("a + )", False)], ids=["clean", "broken"])
def test_parse_check_compares_against_the_context(output: str, expected: bool) -> None:
    from logmine_serving.validate import ValidationCase, _parses

    # the context alone is cut mid-statement; only errors the completion adds count
    from logmine.runtime import RenderContext

    case = ValidationCase("r", "t", {"prefix": "    x = 1\ndef add(a, b):\n    return ", "suffix": "\n"}, RenderContext("python", "a.py"))
    assert _parses(case, output) is expected
    assert _parses(ValidationCase("r", "t", {"prefix": "hello "}), "world") is None  # prose: not checked


def test_cli_serve_checks_options_and_the_pack_before_loading_a_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pack_dir = write_test_pack(tmp_path / "pack")
    err = _expect_error(["serve", str(pack_dir), "--max-batch-size", "0"], capsys)
    assert err == "Error: invalid value for --max-batch-size: 0 (at least 1)\n"
    err = _expect_error(["serve", str(pack_dir), "--cache", "memcached://x"], capsys)
    assert err == "Error: invalid value for --cache: 'memcached://x' (none, memory or redis://host:port/db)\n"
    (pack_dir / "extra.txt").write_text("smuggled")
    err = _expect_error(["serve", str(pack_dir)], capsys)
    assert err == f"Error: {pack_dir}: files not in the manifest: extra.txt\n"
