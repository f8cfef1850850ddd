"""The report in a real headless browser: every section shown, every picture decoded, no errors.

Needs Debian's chromium: installed with apt-get when missing, skipped when that fails.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from _browser import dump_dom

from logmine.report import SECTION_IDS, write_report

pytestmark = pytest.mark.browser


def test_report_renders_in_headless_chromium(full_workspace: Path, tmp_path: Path) -> None:
    result = write_report(full_workspace, out=tmp_path / "index.html")
    run = dump_dom(result.path, tmp_path / "profile", 10000)
    dom = run.stdout
    body = re.search(r"<body([^>]*)>", dom).group(1)  # type: ignore[union-attr]
    attrs = dict(re.findall(r'data-([a-z]+)="([^"]*)"', body))
    assert int(attrs["charts"]) == result.charts >= 8
    assert attrs["loaded"] == attrs["charts"] and attrs["failed"] == "0"  # every SVG decoded
    for section in (*SECTION_IDS, "queries"):
        block = re.search(rf'<section id="{section}"[^>]*>(.*?)</section>', dom, re.S)
        assert block is not None, section
        assert "<h2>" in block.group(1) and "<table>" in block.group(1), section
    sources = re.search(r'<section id="sources">(.*?)</section>', dom, re.S).group(1)  # type: ignore[union-attr]
    listed = set(re.findall(r'<li id="(q-[^"]+)"', sources))
    assert set(re.findall(r'href="#(q-[^"]+)"', dom)) <= listed
    assert re.search(r'<div id="errors">\s*</div>', dom)
    assert "Uncaught" not in run.stderr
