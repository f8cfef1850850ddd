"""The layout's contracts: one-way imports, one face per stage package, no circles, no private
names across packages, modules of a readable size, and docs/architecture.md in step with them.

The import contracts are import-linter's (``[tool.importlinter]`` in pyproject.toml); the rest are
checked here from the source. ``LOGMINE_REGEN_DOCS=1`` rewrites the generated part of
docs/architecture.md.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {"logmine": ROOT / "logmine", "logmine_serving": ROOT / "serving" / "logmine_serving"}
STAGES = ("ingest", "flows", "heatmap", "templates", "compress")
MAX_LINES = 600
"""A module past this is two ideas (the guideline is ~500; a test fails only well past it)."""
DOC = ROOT / "docs" / "architecture.md"
BEGIN, END = "<!-- generated: layers -->", "<!-- end generated -->"


def _modules() -> list[tuple[str, Path]]:
    out = []
    for top, root in PACKAGES.items():
        for path in sorted(root.rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            name = ".".join((top, *parts)).removesuffix(".__init__")
            out.append((name, path))
    return out


def _owner(module: str) -> str:
    """The unit whose ``_private`` names are its own business: a stage package, else the module's package."""
    parts = module.split(".")
    if parts[:2] == ["logmine", "stages"] and len(parts) > 2:
        return ".".join(parts[:3])
    return ".".join(parts[:-1]) or module


def _private_owner(target: str, name: str) -> str | None:
    """The owner of the private module or name ``from target import name`` reaches, if any."""
    parts = target.split(".")
    for i, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:i]) or target
    if name.startswith("_") and not name.startswith("__"):
        return _owner(target + ".x") if _is_package(target) else _owner(target)
    return None


def _is_package(module: str) -> bool:
    top, *rest = module.split(".")
    return (PACKAGES[top].joinpath(*rest) / "__init__.py").is_file()


def test_import_contracts_hold() -> None:
    pytest.importorskip("importlinter")
    # in a process of its own: import-linter reconfigures logging, which other tests read
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(PACKAGES["logmine_serving"].parent), str(ROOT), os.environ.get("PYTHONPATH", "")])}
    code = "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports(config_filename=sys.argv[1], no_cache=True))"
    done = subprocess.run([sys.executable, "-c", code, str(ROOT / "pyproject.toml")], capture_output=True, text=True, env=env, cwd=ROOT)
    assert done.returncode == 0, "an import contract is broken:\n" + done.stdout[-4000:] + done.stderr[-2000:]


def test_no_module_imports_another_packages_private_names() -> None:
    found = []
    for module, path in _modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module):
                continue
            if node.module.split(".")[0] not in PACKAGES:
                continue
            for alias in node.names:
                owner = _private_owner(node.module, alias.name)
                if owner is not None and not (module == owner or module.startswith(owner + ".")):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: from {node.module} import {alias.name}")
    assert found == []


def test_no_module_is_too_long() -> None:
    long = [f"{path.relative_to(ROOT)}: {n} lines" for _, path in _modules() if (n := len(path.read_text().splitlines())) > MAX_LINES]
    assert long == []


@pytest.mark.parametrize("stage", STAGES)
def test_each_stage_has_one_documented_face(stage: str) -> None:
    init = PACKAGES["logmine"] / "stages" / stage / "__init__.py"
    tree = ast.parse(init.read_text())
    doc = ast.get_docstring(tree) or ""
    assert "In:" in doc and "Out:" in doc and ("Writes" in doc or "writes" in doc), f"{stage}: the face says what comes in, goes out and is written"
    exported = next(ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == "__all__")  # type: ignore[attr-defined]
    imported = {a.asname or a.name for n in tree.body if isinstance(n, ast.ImportFrom) for a in n.names}
    assert sorted(exported) == sorted(imported), f"{stage}: __all__ lists exactly what the face imports"


def layers_markdown() -> str:
    """The generated part of docs/architecture.md: the contracts as pyproject.toml states them,
    and each stage's face (the first line of its docstring and its exports)."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    lines = [BEGIN, "", "Import contracts (pyproject.toml, checked by `tests/test_architecture.py`):", ""]
    for c in config["contracts"]:
        lines.append(f"- **{c['name']}** (`{c['type']}`)")
        for layer in c.get("layers", []):
            lines.append(f"  - `{layer}`" if len(layer) < 100 else "  - the shared modules: " + ", ".join(f"`{m.strip()}`" for m in layer.split(":")))
    lines += ["", "| stage | face | exports |", "|---|---|---|"]
    for stage in STAGES:
        tree = ast.parse((PACKAGES["logmine"] / "stages" / stage / "__init__.py").read_text())
        first = " ".join((ast.get_docstring(tree) or "").split("\n\n")[0].split())
        exported = next(ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign) and n.targets[0].id == "__all__")  # type: ignore[attr-defined]
        lines.append(f"| `{stage}` | {first} | {', '.join(f'`{e}`' for e in exported)} |")
    return "\n".join(lines + ["", END])


def test_architecture_doc_matches_the_contracts() -> None:
    text = DOC.read_text()
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    expected = head + layers_markdown() + tail
    if os.environ.get("LOGMINE_REGEN_DOCS"):
        DOC.write_text(expected)
        text = expected
    assert text == expected, "docs/architecture.md is out of date: LOGMINE_REGEN_DOCS=1 pytest tests/test_architecture.py"
