"""`logmine report`: every section, numbers linked to the queries they came from, hints when empty."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from pipeline_data import write_day
from typer.testing import CliRunner

from logmine.cli import app
from logmine.report import SECTION_IDS, build_report, write_report
from logmine.stages.ingest.core import ingest
from logmine.workspace import Workspace

runner = CliRunner()


class Page(HTMLParser):
    """Sections, linked numbers, query anchors, images and scripts of a report page."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.sections: dict[str, str] = {}
        self.num_links: list[tuple[str, str]] = []
        self.anchors: set[str] = set()
        self.images: list[str] = []
        self.external: list[str] = []
        self._link: str | None = None
        self._text = ""
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag == "section" and a.get("id"):
            self.sections[a["id"]] = a.get("data-present") or ""
        if a.get("id", "").startswith("q-"):  # type: ignore[union-attr]
            self.anchors.add(a["id"])  # type: ignore[arg-type]
        if tag == "a" and a.get("class") == "num":
            self._link, self._text = a.get("href"), ""
        if tag == "img":
            self.images.append(a.get("src") or "")
        for key in ("src", "href"):
            value = a.get(key) or ""
            if re.match(r"(https?:)?//", value):
                self.external.append(value)

    def handle_data(self, data: str) -> None:
        if self._link is not None:
            self._text += data

    def handle_endtag(self, tag: str) -> None:
        if tag == "a" and self._link is not None:
            self.num_links.append((self._link, self._text))
            self._link = None


def test_full_workspace_fills_every_section_and_links_every_number(full_workspace: Path) -> None:
    result = write_report(full_workspace)
    html = result.path.read_text(encoding="utf-8")
    page = Page(html)
    assert list(page.sections) == [*SECTION_IDS, "queries", "sources"]
    assert all(page.sections[s] == "yes" for s in SECTION_IDS), page.sections
    assert result.missing == [] and result.charts >= 8
    assert page.external == []
    assert len(page.images) == result.charts and all(src.startswith("data:image/svg+xml;base64,") for src in page.images)
    assert len(page.num_links) > 60
    for href, text in page.num_links:
        assert href.startswith("#q-") and href[1:] in page.anchors, href
        assert re.fullmatch(r"[–0-9,.e+-]+|(ok|partial|failed) \(exit \d\)", text.strip()), text
    assert "Requests per model" in html and "secrets redacted" in html and "generic_secret" in html


def test_numbers_equal_the_workspace_tables(full_workspace: Path) -> None:
    html, _ = build_report(full_workspace)
    ws = Workspace.open(full_workspace)
    sources = ws.read("sources")
    read = int(sources["lines_read"].sum())
    m = re.search(r'<span class="label">lines read</span><span class="value"><a class="num" href="#q-ingest-totals" '
                  r'title="table sources · ([^"]+)">([0-9,]+)</a>', html)
    assert m is not None and int(m.group(2).replace(",", "")) == read
    assert "SELECT count(*) AS files, sum(lines_read) AS lines_read" in m.group(1)
    edges = ws.read("flows_dfg").height
    assert re.search(rf'<span class="label">edges</span><span class="value"><a class="num" href="#q-flows-totals"[^>]*>{edges:,}</a>', html)
    top = ws.read("templates").sort("n_requests", descending=True).row(0, named=True)
    assert f">{top['n_requests']:,}</a>" in html


def test_missing_tables_say_which_command_fills_them(tmp_path: Path) -> None:
    write_day(tmp_path / "logs", "2026-11-28")
    ingest([tmp_path / "logs"], tmp_path / "ws")
    html, result = build_report(tmp_path / "ws")
    assert result.present == ["ingest"]
    page = Page(html)
    assert [s for s, present in page.sections.items() if present == "no"] == ["run", "flows", "heatmap", "templates", "compression", "validation"]
    for hint in ("run `logmine run PIPELINE.toml` to fill this section", "Run `logmine flows OUT` to fill this section.",
                 "Run `logmine heatmap OUT` to fill this section.", "Run `logmine templates OUT` to fill this section.",
                 "Run `logmine compress OUT` to fill this section.",
                 "run `logmine validate OUT/pack --workspace OUT` to fill this section."):
        assert hint in html


def test_text_from_logs_is_escaped(tmp_path: Path) -> None:
    logs = tmp_path / "logs" / "2026-11-28"
    logs.mkdir(parents=True)
    (logs / "x.jsonl").write_text(json.dumps({"type": "llm_request", "ts": "2026-11-28T10:00:00Z", "prompt": "<script>alert(1)</script> hi"}) + "\n")
    ingest([logs], tmp_path / "ws")
    from logmine.pipeline.templates_step import _tables, mine_shard, merge_shards
    from logmine.stages.templates.miner import MineConfig

    result = merge_shards([mine_shard((["<script>alert(1)</script> hi"], MineConfig()))], MineConfig())
    templates, assignments = _tables(result, ["r1"])
    ws = Workspace.open(tmp_path / "ws")
    with ws.lock():
        txn = ws.reload().transaction()
        txn.replace_table("templates", templates)
        txn.commit()
    html, _ = build_report(tmp_path / "ws")
    assert "<script>alert(" not in html and "&lt;script&gt;alert(&lt;*&gt;)&lt;/script&gt; hi" in html


def test_cli_report_writes_the_page_and_reports_json(full_workspace: Path, tmp_path: Path) -> None:
    out = tmp_path / "page.html"
    res = runner.invoke(app, ["report", str(full_workspace), "--output", str(out), "--format", "json"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["report"] == str(out) and doc["sections_missing"] == [] and out.is_file()
    assert set(doc["sections_present"]) == {*SECTION_IDS, "queries"}


def test_cli_report_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str], full_workspace: Path) -> None:
    from logmine.cli import main

    for args, message in (([str(tmp_path / "nope")], "is not a logmine workspace"),
                          ([str(full_workspace), "--run", "no-such-run"], "invalid value for --run: 'no-such-run'")):
        with pytest.raises(SystemExit) as exit_:
            main(["report", *args])
        assert exit_.value.code == 1
        assert message in capsys.readouterr().err
