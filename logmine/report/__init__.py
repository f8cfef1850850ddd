"""One self-contained HTML report per workspace: ``logmine report OUT`` -> ``OUT/report/index.html``.

Sections: the last pipeline run, ingest accounting, flows, token-latency heatmaps, templates,
compression and serving validation (plus a pipeline's extra queries). Numbers come from named
DuckDB queries over the workspace views and link to them; pictures are Vega-Lite charts
rendered to inline SVG (no scripts, no network). A section whose tables are missing says which
command fills it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from logmine.errors import OutputPathError
from logmine.report import sections as sec
from logmine.report.queries import open_source
from logmine.workspace import Workspace

log = logging.getLogger(__name__)

PAGE = Path(__file__).with_name("page.html.j2")
SECTION_IDS = ("run", "ingest", "flows", "heatmap", "templates", "compression", "validation")


@dataclass
class ReportResult:
    """Where the page went and which sections had data."""

    path: Path
    present: list[str]
    missing: list[str]
    charts: int

    def to_json(self) -> dict[str, Any]:
        return {"report": str(self.path), "sections_present": self.present, "sections_missing": self.missing, "charts": self.charts}


def build_report(workspace: Workspace | Path | str, run_id: str | None = None, pack_dir: Path | None = None) -> tuple[str, ReportResult]:
    """The page's HTML and what is in it (nothing written)."""
    ws = workspace if isinstance(workspace, Workspace) else Workspace.open(workspace)
    src = open_source(ws)
    try:
        run = sec.run_section(src, run_id)
        pack_dir = pack_dir or _pack_dir(src, ws)
        parts = [run, sec.ingest_section(src), sec.flows_section(src), sec.heatmap_section(src), sec.templates_section(src),
                 sec.compression_section(src, pack_dir), sec.validation_section(src)]
        extra = sec.queries_section(src)
        if extra is not None:
            parts.append(extra)
    finally:
        src.con.close()
    html = _render(ws, parts, src.queries)
    result = ReportResult(ws.root / "report" / "index.html", [s.id for s in parts if s.present], [s.id for s in parts if not s.present],
                          sum(len(s.charts) for s in parts))
    return html, result


def write_report(workspace: Workspace | Path | str, out: Path | None = None, run_id: str | None = None,
                 pack_dir: Path | None = None) -> ReportResult:
    """Write the report (default ``OUT/report/index.html``, replaced atomically); return what it holds."""
    html, result = build_report(workspace, run_id, pack_dir)
    path = out or result.path
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(html, encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise OutputPathError(path, "report", exc) from exc
    result.path = path
    log.info("report: %s (%d sections with data, %d charts)", path, len(result.present), result.charts)
    return result


def _pack_dir(src: Any, ws: Workspace) -> Path:
    """The pack the last run published (its record says where), else ``OUT/pack``."""
    if src.has("runs"):
        row = src.con.execute("SELECT record FROM runs ORDER BY started_at DESC LIMIT 1").fetchone()
        if row:
            compress = json.loads(row[0]).get("stages", {}).get("compress", {})
            if compress.get("pack_dir"):
                return Path(compress["pack_dir"])
    return ws.root / "pack"


def _render(ws: Workspace, parts: list[Any], queries: list[Any]) -> str:
    import jinja2

    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    template = env.from_string(PAGE.read_text(encoding="utf-8"))
    return template.render(
        title="logmine report", workspace=str(ws.root), duckdb=str(ws.duckdb_path),
        generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), sections=parts, queries=queries,
        n_charts=sum(len(s.charts) for s in parts),
    )


__all__ = ["ReportResult", "SECTION_IDS", "build_report", "write_report"]
