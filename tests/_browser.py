"""Headless chromium for the browser tests: found on PATH or installed with apt-get, skipped when that fails."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    try:
        subprocess.run(["apt-get", "install", "-y", "chromium"], check=True, capture_output=True, timeout=900)
    except (OSError, subprocess.SubprocessError) as exc:
        pytest.skip(f"chromium is not installed and apt-get install failed: {exc}")
    return shutil.which("chromium") or pytest.skip("chromium still missing after apt-get install")  # type: ignore[return-value]


def dump_dom(page: Path, profile: Path, budget_ms: int) -> subprocess.CompletedProcess[str]:
    """Load ``page`` in headless chromium for ``budget_ms`` of virtual time; the run, its DOM on stdout."""
    run = subprocess.run(
        [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
         f"--user-data-dir={profile}", f"--virtual-time-budget={budget_ms}", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return run
