"""Pictures of the directly-follows graph: Graphviz DOT and Mermaid text, SVG when `dot` exists.

Only the ``max_edges`` most frequent edges are drawn (ties broken by name), with the actions
they touch; each edge is labelled with its count and mean gap, each node with its events.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
import uuid
from pathlib import Path

import polars as pl

log = logging.getLogger(__name__)


def _top_edges(dfg: pl.DataFrame, max_edges: int) -> pl.DataFrame:
    return dfg.sort(["count", "src", "dst"], descending=[True, False, False]).head(max_edges)


def _nodes(edges: pl.DataFrame, activities: pl.DataFrame) -> list[tuple[str, int]]:
    names = sorted(set(edges["src"].to_list()) | set(edges["dst"].to_list()))
    if not names:  # a graph with no steps still shows its actions
        names = sorted(activities["action"].to_list())
    counts = dict(zip(activities["action"].to_list(), activities["events"].to_list(), strict=True))
    return [(name, int(counts.get(name, 0))) for name in names]


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 1:
        return f"{seconds * 1000:.0f}ms"
    if seconds < 120:
        return f"{seconds:.1f}s"
    if seconds < 7200:
        return f"{seconds / 60:.1f}m"
    return f"{seconds / 3600:.1f}h"


def _dot_quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def to_dot(dfg: pl.DataFrame, activities: pl.DataFrame, max_edges: int = 60) -> str:
    """The graph in Graphviz DOT; node ids are quoted action names."""
    edges = _top_edges(dfg, max_edges)
    top = max(edges["count"].max() or 1, 1) if edges.height else 1
    lines = ["digraph flows {", "  rankdir=LR;", '  node [shape=box, style="rounded,filled", fillcolor="#eef3fb", fontname="Helvetica"];',
             '  edge [fontname="Helvetica", fontsize=10];']
    for name, events in _nodes(edges, activities):
        label = _dot_quote(f"{name}\n{events:,}")
        lines.append(f"  {_dot_quote(name)} [label={label}];")
    for row in edges.iter_rows(named=True):
        width = 1 + 4 * row["count"] / top
        label = f"{row['count']:,} · {_duration(row['gap_mean_s'])}"
        lines.append(f"  {_dot_quote(row['src'])} -> {_dot_quote(row['dst'])} [label={_dot_quote(label)}, penwidth={width:.2f}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _mermaid_text(text: str) -> str:
    return text.replace("&", "#amp;").replace('"', "#quot;").replace("<", "#lt;").replace(">", "#gt;")


def to_mermaid(dfg: pl.DataFrame, activities: pl.DataFrame, max_edges: int = 60) -> str:
    """The graph as a Mermaid flowchart; nodes get ids n0, n1... and quoted labels."""
    edges = _top_edges(dfg, max_edges)
    nodes = _nodes(edges, activities)
    ids = {name: f"n{i}" for i, (name, _) in enumerate(nodes)}
    lines = ["flowchart LR"]
    for name, events in nodes:
        lines.append(f'  {ids[name]}["{_mermaid_text(name)}<br/>{events:,}"]')
    for row in edges.iter_rows(named=True):
        label = _mermaid_text(f"{row['count']:,} · {_duration(row['gap_mean_s'])}")
        lines.append(f'  {ids[row["src"]]} -->|"{label}"| {ids[row["dst"]]}')
    return "\n".join(lines) + "\n"


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def render_svg(dot_path: Path, svg_path: Path, timeout_s: float = 120.0) -> bool:
    """Run Graphviz's `dot` on ``dot_path``; False (and a log line) when it is missing or fails."""
    exe = shutil.which("dot")
    if exe is None:
        log.info("graphviz `dot` not found; skipping %s", svg_path.name)
        return False
    tmp = svg_path.with_name(f".{svg_path.name}.{uuid.uuid4().hex}.tmp")
    try:
        subprocess.run([exe, "-Tsvg", str(dot_path), "-o", str(tmp)], check=True, capture_output=True, timeout=timeout_s)
    except (OSError, subprocess.SubprocessError) as exc:
        log.warning("graphviz failed on %s: %s", dot_path, exc)
        tmp.unlink(missing_ok=True)
        return False
    os.replace(tmp, svg_path)
    return True


def write_pictures(out_dir: Path, dfg: pl.DataFrame, activities: pl.DataFrame, max_edges: int = 60) -> dict[str, str]:
    """Write dfg.dot and dfg.mmd (and dfg.svg when `dot` is installed) under ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    files = {"dot": out_dir / "dfg.dot", "mermaid": out_dir / "dfg.mmd"}
    _write(files["dot"], to_dot(dfg, activities, max_edges))
    _write(files["mermaid"], to_mermaid(dfg, activities, max_edges))
    svg = out_dir / "dfg.svg"
    if render_svg(files["dot"], svg):
        files["svg"] = svg
    else:
        svg.unlink(missing_ok=True)  # never leave a picture of an older graph
    return {k: str(v) for k, v in files.items()}
