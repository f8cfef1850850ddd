"""A small generated sample shared by the sample tests (generated once per test session)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from logmine.sample import SampleConfig, generate

SMALL = SampleConfig(events=2800, seed=5)


@pytest.fixture(scope="session")
def small_sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sample") / "logs"
    generate(out, SMALL)
    return out


@pytest.fixture(scope="session")
def small_truth(small_sample: Path) -> dict[str, Any]:
    return json.loads((small_sample / "truth.json").read_text())
