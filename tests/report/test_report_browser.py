"""The report in a real headless browser: every section shown, every picture decoded, no errors.

Needs Debian's chromium: installed with apt-get when missing, skipped when that fails.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from logmine.report import SECTION_IDS, write_report

pytestmark = pytest.mark.browser


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    try:
        subprocess.run(["apt-get", "install", "-y", "chromium"], check=True, capture_output=True, timeout=900)
    except (OSError, subprocess.SubprocessError) as exc:
        pytest.skip(f"chromium is not installed and apt-get install failed: {exc}")
    return shutil.which("chromium") or pytest.skip("chromium still missing after apt-get install")  # type: ignore[return-value]


def test_report_renders_in_headless_chromium(full_workspace: Path, tmp_path: Path) -> None:
    chromium = _chromium()
    result = write_report(full_workspace, out=tmp_path / "index.html")
    run = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
         f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=10000", "--dump-dom", result.path.as_uri()],
        capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 0, run.stderr[-2000:]
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
