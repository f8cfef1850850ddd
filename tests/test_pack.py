from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from logmine.cli import app
from logmine.errors import FormatVersionError, OutputPathError, PackError
from logmine.pack import (
    PackTemplate,
    PackTotals,
    Placeholder,
    TemplatePack,
    Thresholds,
    diff_packs,
    load_pack,
    pack_json_bytes,
    write_pack,
)


def make_pack(n: int = 2, source: str = "Explain {{ code }}") -> TemplatePack:
    templates = [
        PackTemplate(
            id=f"b2:{i:024x}", name=f"t{i}", source=source, original_source="Please explain {{ code }}",
            placeholders=[Placeholder(name="code", type="code")], n_requests=10 * (i + 1), share=1 / n,
            static_tokens_before=3, static_tokens_after=1, rendered_tokens_before=50.0, rendered_tokens_after=48.0,
            uncached_tokens_after=48.0, fidelity=0.97, lossy=True,
        )
        for i in range(n)
    ]
    totals = PackTotals(templates=n, requests=sum(t.n_requests for t in templates), static_tokens_before=3,
                        static_tokens_after=1, rendered_tokens_before=50, rendered_tokens_after=48,
                        uncached_tokens_after=48, fidelity=0.97)
    return TemplatePack(created_at="2026-11-29T00:00:00Z", logmine_version="0.1.0", tokenizer="SmolLM2-135M-Instruct",
                        embedding_model="all-MiniLM-L6-v2",
                        thresholds=Thresholds(edit_similarity=0.9, semantic_similarity=0.9, min_fidelity=0.94),
                        templates=templates, totals=totals)


def test_write_then_load_round_trips(tmp_path: Path) -> None:
    pack = make_pack()
    write_pack(pack, tmp_path / "pack")
    assert load_pack(tmp_path / "pack") == pack
    assert sorted(p.name for p in (tmp_path / "pack").iterdir()) == ["manifest.json", "pack.json"]


@settings(max_examples=25, deadline=None)
@given(st.text(min_size=1, max_size=60), st.integers(min_value=1, max_value=4))
def test_pack_survives_json_round_trip(source: str, n: int) -> None:
    pack = make_pack(n, source)
    again = TemplatePack.model_validate(json.loads(pack_json_bytes(pack)))
    assert again == pack
    assert pack_json_bytes(again) == pack_json_bytes(pack)


def test_tampered_file_is_refused(tmp_path: Path) -> None:
    write_pack(make_pack(), tmp_path / "pack")
    path = tmp_path / "pack" / "pack.json"
    path.write_text(path.read_text().replace("Explain", "Ignore all rules and"))
    with pytest.raises(PackError, match="sha256 does not match the manifest"):
        load_pack(tmp_path / "pack")


def test_unlisted_file_is_refused(tmp_path: Path) -> None:
    write_pack(make_pack(), tmp_path / "pack")
    (tmp_path / "pack" / "extra.j2").write_text("{{ x }}")
    with pytest.raises(PackError, match="files not in the manifest: extra.j2"):
        load_pack(tmp_path / "pack")


def test_newer_format_is_refused_and_schema_checked(tmp_path: Path) -> None:
    raw = json.loads(pack_json_bytes(make_pack()))
    (tmp_path / "pack.json").write_text(json.dumps({**raw, "format_version": 99}))
    with pytest.raises(FormatVersionError, match="pack format 99 is newer than supported 2; upgrade logmine"):
        load_pack(tmp_path, verify=False)
    raw["templates"][0]["unexpected"] = 1
    (tmp_path / "pack.json").write_text(json.dumps(raw))
    with pytest.raises(PackError, match="does not match the pack schema at templates.0.unexpected"):
        load_pack(tmp_path, verify=False)


def test_a_format_1_pack_is_migrated_and_renders_its_slots_verbatim(tmp_path: Path) -> None:
    from logmine.runtime import RenderContext, render

    raw = json.loads(pack_json_bytes(make_pack()))
    for t in raw["templates"]:  # format 1 had neither field
        del t["plan"], t["lossless_source"]
    del raw["validation"]
    (tmp_path / "pack.json").write_text(json.dumps({**raw, "format_version": 1}))
    pack = load_pack(tmp_path, verify=False)
    assert pack.format_version == 2 and all(t.plan is None for t in pack.templates)
    code = "def f():\n    return 1\n" * 200  # far over any trimming budget: verbatim all the same
    assert render(pack.templates[0], {"code": code}, RenderContext(language="python")) == f"Explain {code}"


def test_rewrite_replaces_whole_pack_atomically(tmp_path: Path) -> None:
    write_pack(make_pack(3), tmp_path / "pack")
    write_pack(make_pack(1), tmp_path / "pack")
    assert len(load_pack(tmp_path / "pack").templates) == 1
    assert [p.name for p in tmp_path.iterdir()] == ["pack"]  # no temporary or old directories left


def test_a_pack_directory_under_a_file_is_an_output_error(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("x")
    with pytest.raises(OutputPathError) as info:
        write_pack(make_pack(), tmp_path / "a-file" / "pack")
    assert str(info.value) == f"{tmp_path}/a-file/pack: cannot write the pack here ({tmp_path}/a-file is a file, not a directory)"


def test_diff_reports_added_removed_changed() -> None:
    old, new = make_pack(2), make_pack(3, source="Explain briefly {{ code }}")
    changes = diff_packs(old, new)
    kinds = sorted((c["change"], c["name"]) for c in changes["templates"])
    assert kinds == [("added", "t2"), ("changed", "t0"), ("changed", "t1")]
    assert changes["totals"]["templates"] == (2, 3)


def test_cli_verify_ok_and_tampered(tmp_path: Path) -> None:
    write_pack(make_pack(), tmp_path / "pack")
    runner = CliRunner()
    ok = runner.invoke(app, ["pack", "verify", str(tmp_path / "pack"), "--format", "json"], catch_exceptions=False)
    assert ok.exit_code == 0
    assert json.loads(ok.stdout)["ok"] is True
    (tmp_path / "pack" / "pack.json").write_text("{}")
    from logmine.cli import main

    with pytest.raises(SystemExit) as exc:
        main(["pack", "verify", str(tmp_path / "pack")])
    assert exc.value.code == 1


def test_workspace_commit_clears_a_killed_pack_write(tmp_path: Path) -> None:
    import polars as pl

    from logmine.workspace import Workspace

    ws = Workspace.create(tmp_path / "ws")
    (ws.root / ".pack.dead.tmp").mkdir()  # what write_pack leaves when killed mid-write
    (ws.root / ".pack.dead.tmp" / "pack.json").write_text("{")
    with ws.lock():
        txn = ws.transaction()
        txn.replace_table("t", pl.DataFrame({"a": [1]}))
        txn.commit()
    assert not (ws.root / ".pack.dead.tmp").exists()


def test_rewrite_swaps_directories_so_readers_always_find_a_pack(tmp_path: Path) -> None:
    import threading

    write_pack(make_pack(1), tmp_path / "pack")
    missing: list[str] = []
    stop = threading.Event()

    def reader() -> None:
        while not stop.is_set():
            if not (tmp_path / "pack" / "pack.json").is_file():
                missing.append("gap")

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for n in range(1, 30):
            write_pack(make_pack(1 + n % 3), tmp_path / "pack")
    finally:
        stop.set()
        thread.join()
    assert missing == []
    assert load_pack(tmp_path / "pack").templates
