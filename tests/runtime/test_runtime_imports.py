"""The pack runtime's imports run one way: it loads no stage (its trimmer, logmine.runtime.trim, is its
own), and the serving layer imports logmine's prompt code only from it."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SERVING_MAY_IMPORT = {"logmine.pack", "logmine.errors", "logmine.models", "logmine.code", "logmine.workspace", "logmine.runtime"}


def test_importing_the_runtime_loads_no_stage_and_no_polars() -> None:
    code = "import sys, json, logmine.runtime; print(json.dumps(sorted(sys.modules)))"
    loaded = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout)
    stage = {m for m in loaded if m.startswith("logmine.stages.")}
    assert stage == set(), stage  # the trimmer is the runtime's own (logmine.runtime.trim): no stage is loaded
    assert "polars" not in loaded and "logmine.workspace" not in loaded


def test_serving_imports_only_the_runtime_and_the_shared_modules() -> None:
    found = set()
    for path in (ROOT / "serving" / "logmine_serving").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("logmine."):
                found.add(node.module)
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name.startswith("logmine."))
    assert found and found <= SERVING_MAY_IMPORT, found - SERVING_MAY_IMPORT
    assert "logmine.runtime" in found
