"""The heatmap page in a real headless browser: every chart renders, offline, without JS errors.

Needs Debian's chromium; installed with apt-get when missing, skipped when that fails.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from _browser import dump_dom
from heatmap_helpers import make_workspace, planted_records

from logmine.stages.heatmap import HeatmapConfig, heatmap

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("browser")
    result = heatmap(make_workspace(tmp, planted_records(60)), HeatmapConfig(slow_examples=3))
    index = Path(result.files[-1])
    assert index.name == "index.html"
    return index


def test_page_is_self_contained(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    assert not re.search(r"<script[^>]*\bsrc\s*=", text, re.I)
    assert not re.search(r"<(link|img|iframe)[^>]*\b(href|src)\s*=\s*[\"']?https?:", text, re.I)
    assert "vegaEmbed" in text and 'id="by-type"' in text
    pngs = sorted(p.name for p in page.parent.glob("*.png"))
    assert pngs == ["hour_model.png", "language_type.png", "latency_time.png", "model_type.png", "type_position.png"]
    assert all((page.parent / p).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in pngs)


def test_charts_render_in_headless_chromium(page: Path, tmp_path: Path) -> None:
    run = dump_dom(page, tmp_path / "profile", 15000)
    dom = run.stdout
    charts = int(re.search(r'data-charts="(\d+)"', dom).group(1))  # type: ignore[union-attr]
    assert charts == 5
    assert re.search(r'data-rendered="(\d+)"', dom).group(1) == "5"  # type: ignore[union-attr]
    for chart in ("type_position", "model_type", "language_type", "hour_model", "latency_time"):
        block = dom.split(f'id="chart-{chart}"', 1)[1][:20000]
        assert "<svg" in block or "<canvas" in block, chart
    assert re.search(r'<div id="errors">\s*</div>', dom)
    assert "Uncaught" not in run.stderr
    assert dom.count('class="completion"') == 3
