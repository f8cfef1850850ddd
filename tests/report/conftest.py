"""A workspace with every report section filled: a pipeline run (compress with small stand-in
models), plus a serving-validation table as `logmine validate` writes it."""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: pipeline_data

from pipeline_data import FAKE_MODELS, write_day, write_pipeline  # noqa: E402

from logmine.workspace import Workspace  # noqa: E402


def add_validation(root: Path) -> None:
    """A `validation` table shaped like logmine_serving.validate.write_results writes it."""
    ws = Workspace.open(root)
    rows = [
        {"scope": "template", "name": "t1", "requests": 3, "exact_match": 1.0, "edit_similarity": 1.0, "prompt_tokens_original": 40.0,
         "prompt_tokens_compressed": 31.0, "ttft_ms_ratio": 0.8, "tokens_per_s_ratio": 1.1},
        {"scope": "total", "name": "total", "requests": 3, "exact_match": 1.0, "edit_similarity": 1.0, "prompt_tokens_original": 40.0,
         "prompt_tokens_compressed": 31.0, "ttft_ms_ratio": 0.8, "tokens_per_s_ratio": 1.1},
    ]
    with ws.lock():
        txn = ws.reload().transaction()
        txn.replace_table("validation", pl.DataFrame(rows))
        txn.commit()


@pytest.fixture(scope="session")
def full_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from logmine.pipeline import run_pipeline

    root = tmp_path_factory.mktemp("report")
    for i, day in enumerate(["2026-11-27", "2026-11-28"]):
        write_day(root / "logs", day, seed=i)
    extra = '\n[stages.compress]\nenabled = true\n[[queries]]\nname = "per_model"\nfile = "per_model.sql"\ntitle = "Requests per model"\n'
    (root / "per_model.sql").write_text("SELECT model, count(*) AS requests FROM llm_requests GROUP BY ALL ORDER BY model")
    path = write_pipeline(root, extra=extra, report=False)
    run_pipeline(path, models=FAKE_MODELS)
    add_validation(root / "ws")
    return root / "ws"
