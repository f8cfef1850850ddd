"""The templates stage on a workspace and its CLI: tables, the llm_requests column, re-ingest, errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from logmine.cli import app, main
from logmine.stages.templates.dedup import DedupConfig
from logmine.embedding import HashingEmbedder
from logmine.stages.ingest.core import IngestConfig, ingest
from logmine.stages.templates.tables import TemplatesConfig, run
from logmine.workspace import Workspace

CASES = Path(__file__).parents[1] / "cases" / "templates"
runner = CliRunner()


def write_logs(root: Path) -> Path:
    """The 72 prompts of tests/cases/templates/prompts.jsonl as native JSONL plus 3 records without a prompt."""
    records = [json.loads(line) for line in (CASES / "prompts.jsonl").read_text().splitlines()]
    logs = root / "logs"
    logs.mkdir()
    with open(logs / "requests.jsonl", "w") as fh:
        for i, r in enumerate(records):
            row = {"type": "llm_request", "ts": f"2026-01-05T09:{i // 60:02d}:{i % 60:02d}Z", "kind": "chat", "request_id": f"r{i:03d}",
                   **{k: v for k, v in r.items() if k != "truth"}}
            fh.write(json.dumps(row) + "\n")
        for i in range(3):
            fh.write(json.dumps({"type": "llm_request", "ts": "2026-01-06T00:00:00Z", "request_id": f"noprompt{i}"}) + "\n")
    return logs


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tpl")
    ingest([write_logs(root)], root / "ws")
    return root / "ws"


@pytest.fixture(scope="module")
def mined(workspace: Path) -> Path:
    report = run(workspace, TemplatesConfig(dedup=DedupConfig(semantic_threshold=0.8)), embedder=HashingEmbedder())
    assert (report.requests, report.requests_with_prompt, report.templates, report.families) == (75, 72, 6, 6)
    assert report.embeddings_computed == 6 and report.embedding_model == "hashing-bow-512"
    return workspace


def test_tables(mined: Path) -> None:
    ws = Workspace.open(mined)
    templates = ws.read("templates")
    assert templates.columns == ["template_id", "template", "placeholders", "wildcards", "family_id", "n_requests", "share", "tokens",
                                 "mean_prompt_tokens", "first_seen", "last_seen", "example_request_ids"]
    assert templates["n_requests"].to_list() == [12] * 6 and templates["share"].to_list() == [pytest.approx(1 / 6)] * 6
    fim = templates.filter(pl.col("template") == "<fim_prefix>{prefix}<fim_suffix>{suffix}<fim_middle>").row(0, named=True)
    assert fim["placeholders"] == ["prefix", "suffix"] and fim["wildcards"] == 0 and fim["tokens"] == 9  # <, fim_prefix, >, ...
    assert len(fim["example_request_ids"]) == 3 and fim["first_seen"] <= fim["last_seen"]
    families = ws.read("template_families")
    assert families.height == 6 and families["is_representative"].all() and families["merged_with"].is_null().all()
    assigned = ws.read("request_templates")
    assert assigned.height == 72 and set(assigned["template_id"]) == set(templates["template_id"])


def test_llm_requests_view_has_template_id_and_keeps_it_after_reingest(mined: Path, tmp_path: Path) -> None:
    query = "SELECT count(*), count(template_id), count(DISTINCT template_id) FROM llm_requests"
    with Workspace.open(mined).connect() as con:
        assert con.execute(query).fetchone() == (75, 72, 6)
    copy = tmp_path / "moved"
    shutil.copytree(mined, copy)
    logs = mined.parent / "logs"
    ingest([logs], copy, IngestConfig(force=True))  # ingest re-declares its tables without view SQL
    with Workspace.open(copy).connect() as con:
        assert con.execute(query).fetchone() == (75, 72, 6)
        assert con.execute("SELECT template_id FROM llm_requests WHERE request_id = 'noprompt0'").fetchone() == (None,)


def test_rerun_embeds_only_new_templates(tmp_path: Path) -> None:
    copy = tmp_path / "ws"
    ingest([write_logs(tmp_path)], copy)
    first = run(copy, embedder=HashingEmbedder())
    second = run(copy, embedder=HashingEmbedder())
    assert (first.embeddings_computed, second.embeddings_computed, second.embeddings_cached) == (6, 0, 6)
    assert Workspace.open(copy).read("embedding_cache").height == 6


def test_near_duplicates_become_one_family(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    texts = ["Rewrite this code so that it handles errors:\n```\n{}\n```", "Rewrite this code so that it handles the errors:\n```\n{}\n```"]
    with open(logs / "r.jsonl", "w") as fh:
        for i in range(40):
            prompt = texts[i % 2].format(f"def f{i}(x):\n    return x * {i}")
            fh.write(json.dumps({"type": "llm_request", "ts": f"2026-01-05T09:00:{i:02d}Z", "request_id": f"q{i}", "prompt": prompt}) + "\n")
    ingest([logs], tmp_path / "ws")
    report = run(tmp_path / "ws", TemplatesConfig(embeddings=False))
    assert (report.templates, report.families, report.merged_templates) == (2, 1, 1)
    families = Workspace.open(tmp_path / "ws").read("template_families")
    assert families["family_size"].to_list() == [2, 2] and families["family_requests"].to_list() == [40, 40]
    assert families["edit_similarity"].min() > 0.9 and families["semantic_similarity"].is_null().all()


@pytest.mark.parametrize(("in_turn", "families"), [(False, 2), (True, 1)])
def test_a_word_swapped_is_two_templates_side_by_side_and_one_in_turn(tmp_path: Path, in_turn: bool, families: int) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    text = "Write the code to insert {} the selected lines, and nothing else:\n```\n{}\n```"
    with open(logs / "r.jsonl", "w") as fh:
        for i in range(40):
            where = ("before" if i < 20 else "after") if in_turn else ("before", "after")[i % 2]
            prompt = text.format(where, f"def f{i}(x):\n    return x * {i}")
            fh.write(json.dumps({"type": "llm_request", "ts": f"2026-01-05T09:00:{i:02d}Z", "request_id": f"q{i}", "prompt": prompt}) + "\n")
    ingest([logs], tmp_path / "ws")
    report = run(tmp_path / "ws", TemplatesConfig(embeddings=False))
    assert (report.templates, report.families) == (2, families)


def test_cli_json_and_table(mined: Path) -> None:
    out = runner.invoke(app, ["templates", str(mined), "--no-embeddings", "--format", "json"], catch_exceptions=False)
    assert out.exit_code == 0
    data = json.loads(out.stdout)
    assert (data["templates"], data["families"], data["requests"]) == (6, 6, 75)
    assert len(data["top"]) == 6 and data["top"][0]["n_requests"] == 12
    table = runner.invoke(app, ["templates", str(mined), "--no-embeddings", "-q"], catch_exceptions=False)
    assert table.exit_code == 0
    assert f"templates -> {mined}" in table.stdout and "top templates" in table.stdout
    assert "<fim_prefix>{prefix}" in table.stdout


def test_cli_mine(tmp_path: Path) -> None:
    out = runner.invoke(app, ["mine", str(CASES / "sshd.log"), "--format", "json", "--limit", "2"], catch_exceptions=False)
    assert out.exit_code == 0
    data = json.loads(out.stdout)
    assert (data["lines"], data["entries"], data["templates"], data["headers"][0]["header"]) == (60, 60, 7, None)
    assert [t["template"] for t in data["top"]] == ["Failed password for <*> from <*> port <*> ssh2",
                                                     "Failed password for invalid user <*> from <*> port <*> ssh2"]
    table = runner.invoke(app, ["mine", str(CASES / "sshd.log")], catch_exceptions=False)
    assert table.stdout.splitlines()[0] == "7 templates in 60 entries (60 lines; header: none)" and "[preauth]" in table.stdout
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"pattern": "ssh2", "mask_with": "PROTO"}]))
    typed = runner.invoke(app, ["mine", str(CASES / "sshd.log"), "--mask-rules", str(rules), "--typed-masks", "-f", "json"], catch_exceptions=False)
    assert json.loads(typed.stdout)["top"][0]["template"] == "Failed password for <*> from <IP> port <NUM> <PROTO>"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["templates", "{ws}", "--edit-threshold", "1.5"], "Error: invalid value for --edit-threshold: 1.5 (a number from 0 to 1)"),
        (["templates", "{ws}", "--semantic-threshold", "-2"], "Error: invalid value for --semantic-threshold: -2.0 (a number from -1 to 1)"),
        (["templates", "{ws}", "--embedding-model", "{tmp}/nope"], "Error: {tmp}/nope: is not a model directory (logmine never downloads models)"),
        (["templates", "{ws}", "--workers", "-1"], "Error: invalid value for --workers: -1 (0 or more)"),
        (["templates", "{tmp}/none"], "Error: {tmp}/none is not a logmine workspace (no manifest.json); run `logmine ingest LOGS -o {tmp}/none` first"),
        (["mine", "{tmp}/missing.log"], "Error: {tmp}/missing.log: does not exist"),
        (["mine", "{log}", "--limit", "-1"], "Error: invalid value for --limit: -1 (0 or more)"),
        (["mine", "{log}", "--mask-rules", "{tmp}/missing.json"], "Error: {tmp}/missing.json: does not exist (--mask-rules takes a JSON file or the rules inline as JSON)"),
    ],
    ids=["edit", "semantic", "model-dir", "workers", "no-workspace", "no-log", "limit", "rules"],
)
def test_cli_errors(args: list[str], message: str, mined: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fill = {"ws": str(mined), "tmp": str(tmp_path), "log": str(CASES / "sshd.log")}
    with pytest.raises(SystemExit) as exit_info:
        main([a.format(**fill) for a in args])
    assert exit_info.value.code == 1
    assert capsys.readouterr().err.strip() == message.format(**fill)


def test_the_same_logs_are_read_in_the_same_order_wherever_they_lie(tmp_path: Path) -> None:
    """A table's files are named by hashes of the logs' absolute paths: the miner, which may depend on the order
    it reads prompts in, reads them in the logs' own order (each file's first source file and line), so the same
    logs under another directory give the same templates."""
    from logmine.stages.templates.tables import _columns

    records = [json.loads(line) for line in (CASES / "prompts.jsonl").read_text().splitlines()]
    orders = []
    for where in ("one", "two", "three"):
        logs = tmp_path / where / "logs"
        logs.mkdir(parents=True)
        for part in range(6):  # six log files: their partitions' names sort in an order of their own in each directory
            with open(logs / f"requests-{part}.jsonl", "w") as fh:
                for i, r in enumerate(records[part::6]):
                    row = {"type": "llm_request", "ts": f"2026-01-05T09:00:{i:02d}Z", "kind": "chat", "request_id": f"r{part}-{i:03d}",
                           **{k: v for k, v in r.items() if k != "truth"}}
                    fh.write(json.dumps(row) + "\n")
        ingest([logs], tmp_path / where / "ws", IngestConfig(group=False))  # a partition per file, as big logs get
        _, _, _, stream = _columns(Workspace.open(tmp_path / where / "ws"), 1000)
        orders.append([row["request_id"] for row in stream(lambda *a: None, 0)])
    assert orders[0] == orders[1] == orders[2]
    assert orders[0][:2] == ["r0-000", "r0-001"]  # the first log file's first lines come first


def test_skeleton_workers_default_by_size_and_an_explicit_number_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    from logmine.stages.templates import tables

    monkeypatch.setattr(tables, "cores", lambda: 8)
    assert tables.skeleton_workers(TemplatesConfig(), tables.AUTO_WORKERS_FROM - 1) == 0  # a small log: no process to start
    assert tables.skeleton_workers(TemplatesConfig(), tables.AUTO_WORKERS_FROM) == tables.MAX_AUTO_WORKERS
    monkeypatch.setattr(tables, "cores", lambda: 2)
    assert tables.skeleton_workers(TemplatesConfig(), 10**6) == 2
    assert tables.skeleton_workers(TemplatesConfig(workers=0), 10**6) == 0
    assert tables.skeleton_workers(TemplatesConfig(workers=3), 10) == 3


def test_the_stage_with_skeleton_workers_writes_the_same_tables(mined: Path, tmp_path: Path) -> None:
    copy = tmp_path / "ws"
    shutil.copytree(mined, copy)
    run(copy, TemplatesConfig(dedup=DedupConfig(semantic_threshold=0.8), workers=2), embedder=HashingEmbedder())
    for table in ("templates", "request_templates"):
        assert Workspace.open(copy).read(table).drop("first_seen", "last_seen", strict=False).equals(
            Workspace.open(mined).read(table).drop("first_seen", "last_seen", strict=False)), table

