"""The report's sections, each built from named workspace queries (see :mod:`logmine.report.queries`).

A section whose tables are missing is still on the page, saying which command fills it.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from logmine.errors import OptionError
from logmine.report import charts
from logmine.report.queries import Query, Result, Source
from logmine.sketch import DEFAULT_ALPHA
from logmine.stages.heatmap import HeatmapResult, chart_specs

log = logging.getLogger(__name__)


@dataclass
class Cell:
    text: str
    q: Query | None = None
    """The query the value came from (numbers link to it)."""
    num: bool = False


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[Cell]]
    q: Query


@dataclass
class Chart:
    title: str
    uri: str
    q: Query


@dataclass
class Section:
    id: str
    title: str
    present: bool = True
    hint: str = ""
    stats: list[tuple[str, Cell]] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)
    charts: list[Chart] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def fmt(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value != value:  # NaN
            return "–"
        return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:,.3g}" if abs(value) < 1 else f"{value:,.1f}"
    if isinstance(value, (list, tuple)):
        return " → ".join(str(v) for v in value)
    return str(value)


def cell(value: Any, q: Query) -> Cell:
    is_num = isinstance(value, (int, float)) and not isinstance(value, bool)
    return Cell(fmt(value), q if is_num else None, is_num)


def table(title: str, result: Result, columns: list[str] | None = None) -> Table:
    cols = columns or (list(result.rows[0]) if result.rows else [])
    return Table(title, cols, [[cell(r.get(c), result.query) for c in cols] for r in result.rows], result.query)


def stats(result: Result, labels: dict[str, str]) -> list[tuple[str, Cell]]:
    return [(label, cell(result.first.get(key), result.query)) for key, label in labels.items()]


def _chart(section: Section, title: str, build: Any, q: Query) -> None:
    """Render a chart when the viz extra is installed; a failure costs the picture, not the page."""
    if not charts.available():
        if not any("logmine[viz]" in n for n in section.notes):
            section.notes.append("Pictures need the viz extra: pip install 'logmine[viz]'.")
        return
    try:
        section.charts.append(Chart(title, charts.svg_uri(build()), q))
    except Exception as exc:  # noqa: BLE001 - a chart must never take the report down
        log.warning("report chart %r failed: %s", title, exc)
        section.notes.append(f"The chart “{title}” could not be drawn ({type(exc).__name__}).")


def missing(id_: str, title: str, hint: str) -> Section:
    return Section(id_, title, present=False, hint=hint)


# -- run --------------------------------------------------------------------------------------------
def run_section(src: Source, run_id: str | None) -> Section:
    title = "Run"
    if not src.has("runs"):
        return missing("run", title, "No pipeline run is recorded in this workspace: run `logmine run PIPELINE.toml` to fill this section.")
    where = f"WHERE run_id = '{run_id}'" if run_id else ""
    r = src.run("run-record", "runs", f"SELECT run_id, status, exit_code, date, engine, seconds, lines_read, lines_accepted, "
                f"lines_rejected, record FROM runs {where} ORDER BY started_at DESC LIMIT 1")
    if not r and run_id:
        raise OptionError("--run", run_id, "the id of a run in this workspace's runs table")
    if not r:
        return missing("run", title, "No pipeline run is recorded in this workspace: run `logmine run PIPELINE.toml` to fill this section.")
    row = r.first
    rec = json.loads(row["record"])
    s = Section("run", f"Run {row['run_id']}")
    s.stats = [("status", Cell(f"{row['status']} (exit {row['exit_code']})", r.query)), ("pipeline", Cell(rec.get("pipeline", ""))),
               ("date", Cell(row["date"] or "all new or changed partitions")),
               ("engine", Cell(f"{rec['engine'].get('engine')} × {rec['engine'].get('workers')}")),
               ("seconds", cell(row["seconds"], r.query)), ("lines read", cell(row["lines_read"], r.query)),
               ("lines rejected", cell(row["lines_rejected"], r.query))]
    stage_rows = []
    for stage, info in rec.get("stages", {}).items():
        parts = info.get("partitions") if isinstance(info, dict) else None
        stage_rows.append({"stage": stage, "seconds": info.get("seconds"),
                           "partitions computed": len(parts["computed"]) if parts else None,
                           "partitions reused": parts.get("reused") if parts else None})
    if stage_rows:
        s.tables.append(table("Stages", Result(r.query, stage_rows)))
        _chart(s, "Seconds per stage", lambda: charts.bar(stage_rows, "seconds", "stage", "Seconds per stage"), r.query)
    for stage, info in rec.get("stages", {}).items():
        if isinstance(info, dict) and info.get("note"):
            s.notes.append(f"{stage}: {info['note']}")  # e.g. compress: whether the generator validated the pack
    if rec.get("error"):
        s.notes.append(f"Error: {rec['error']}")
    if rec.get("resumed_after"):
        s.notes.append("Resumed after interrupted run(s): " + ", ".join(rec["resumed_after"]))
    s.notes.append("Versions: " + ", ".join(f"{k} {v}" for k, v in sorted(rec.get("versions", {}).items())))
    return s


# -- ingest -----------------------------------------------------------------------------------------
def ingest_section(src: Source) -> Section:
    title = "Ingest accounting"
    if not src.has("sources"):
        return missing("ingest", title, "Run `logmine ingest LOGS -o OUT` to fill this section.")
    s = Section("ingest", title)
    tot = src.run("ingest-totals", "sources", "SELECT count(*) AS files, sum(lines_read) AS lines_read, sum(lines_accepted) AS "
                  "lines_accepted, sum(lines_rejected) AS lines_rejected FROM sources")
    s.stats = stats(tot, {"files": "files", "lines_read": "lines read", "lines_accepted": "accepted", "lines_rejected": "rejected"})
    for name in ("events", "llm_requests"):
        if src.has(name):
            n = src.run(f"ingest-{name}", name, f"SELECT count(*) AS n FROM {name}")
            s.stats.append((f"{name} rows", cell(n.first["n"], n.query)))
    by_format = src.run("ingest-by-format", "sources", "SELECT source_format AS format, count(*) AS files, sum(lines_read) AS "
                        "lines_read, sum(lines_accepted) AS accepted, sum(lines_rejected) AS rejected FROM sources GROUP BY 1 ORDER BY 1")
    s.tables.append(table("By input format", by_format))
    if src.has("rejects"):
        reasons = src.run("ingest-rejects", "rejects", "SELECT split_part(reason, ':', 1) AS reason, count(*) AS lines FROM rejects "
                          "GROUP BY 1 ORDER BY lines DESC, reason")
        if reasons:
            s.tables.append(table("Rejected lines by reason", reasons))
            _chart(s, "Rejected lines by reason", lambda: charts.bar(reasons.rows, "lines", "reason", "Rejected lines by reason"), reasons.query)
        else:
            s.notes.append("No line was rejected.")
    if by_format:
        rows = [{"format": r["format"], "lines": r[k], "outcome": k} for r in by_format.rows for k in ("accepted", "rejected")]
        _chart(s, "Lines per format", lambda: charts.bar(rows, "lines", "format", "Lines per format", color="outcome"), by_format.query)
    return s


# -- flows ------------------------------------------------------------------------------------------
def flows_section(src: Source) -> Section:
    title = "Flows"
    if not src.has("flows_dfg", "flows_activities"):
        return missing("flows", title, "Run `logmine flows OUT` to fill this section.")
    s = Section("flows", title)
    tot = src.run("flows-totals", "flows_dfg", "SELECT count(*) AS edges, sum(count) AS transitions FROM flows_dfg")
    s.stats = stats(tot, {"edges": "edges", "transitions": "transitions"})
    if src.has("flows_sessions"):
        n = src.run("flows-sessions", "flows_sessions", "SELECT count(*) AS sessions FROM flows_sessions")
        s.stats.append(("sessions", cell(n.first["sessions"], n.query)))
    acts = src.run("flows-activities", "flows_activities", "SELECT action, events FROM flows_activities ORDER BY events DESC, action LIMIT 16")
    edges = src.run("flows-edges", "flows_dfg", "SELECT src, dst, count, sessions, gap_mean_s, gap_p50_s, gap_p95_s FROM flows_dfg "
                    "ORDER BY count DESC, src, dst LIMIT 40")
    nodes = [(r["action"], int(r["events"])) for r in acts.rows]
    keep = {a for a, _ in nodes}
    links = [(r["src"], r["dst"], int(r["count"])) for r in edges.rows if r["src"] in keep and r["dst"] in keep]
    if nodes:
        _chart(s, "Directly-follows graph: the most frequent actions (dot size: events) and edges (line width: transitions; "
               "direction in the table below)", lambda: charts.graph(nodes, links, "Directly-follows graph"), edges.query)
    s.tables.append(table("Most frequent transitions", Result(edges.query, edges.rows[:15])))
    if src.has("flows_ngrams"):
        grams = src.run("flows-ngrams", "flows_ngrams", "SELECT n, array_to_string(ngram, ' → ') AS sequence, count, sessions "
                        "FROM flows_ngrams WHERE n >= 3 ORDER BY count DESC, sequence LIMIT 10")
        s.tables.append(table("Top action sequences (3 actions or more)", grams))
    if src.has("flows_variants"):
        var = src.run("flows-variants", "flows_variants", "SELECT array_to_string(variant, ' → ') AS session, sessions, share "
                      "FROM flows_variants ORDER BY sessions DESC, session LIMIT 5")
        s.tables.append(table("Most common whole sessions", var))
    return s


# -- heatmaps ---------------------------------------------------------------------------------------
HEATMAP_TABLES = ("heatmap_by_type", "heatmap_by_type_position", "heatmap_by_model_type", "heatmap_by_language_type",
                  "heatmap_by_hour_model", "heatmap_latency_time")


def heatmap_section(src: Source) -> Section:
    title = "Token-latency heatmaps"
    if not src.has(*HEATMAP_TABLES):
        return missing("heatmap", title, "Run `logmine heatmap OUT` to fill this section.")
    s = Section("heatmap", title)
    newer = {"exact", "ranked"} <= set(src.columns("heatmap_by_type"))  # tables written before small groups were exact lack them
    by_type = src.run("heatmap-by-type", "heatmap_by_type", "SELECT token_type, count, share, mean_us, p50_us, p95_us, p99_us, heat"
                      + (", exact FROM heatmap_by_type ORDER BY ranked DESC, " if newer else " FROM heatmap_by_type ORDER BY ")
                      + "mean_us DESC NULLS LAST, token_type")
    tot = src.run("heatmap-tokens", "heatmap_by_type", "SELECT sum(count) AS tokens FROM heatmap_by_type")
    s.stats = stats(tot, {"tokens": "tokens measured"})
    s.tables.append(table("Latency by token type (µs)", by_type))
    if charts.available() and by_type:
        _heatmap_charts(src, s)
    elif not by_type:
        s.notes.append("No measured tokens.")
    return s


def _heatmap_charts(src: Source, s: Section) -> None:
    frames, queries = {}, {}
    for name in HEATMAP_TABLES:
        queries[name], frames[name] = src.frame(f"heatmap-{name.removeprefix('heatmap_')}", name, f"SELECT * FROM {name}")
    alpha = DEFAULT_ALPHA
    if src.has("heatmap_days"):
        a = src.run("heatmap-alpha", "heatmap_days", "SELECT max(alpha) AS alpha FROM heatmap_days")
        alpha = float(a.first.get("alpha") or DEFAULT_ALPHA)
    try:
        specs = chart_specs(HeatmapResult("", frames), alpha)
    except Exception as exc:  # noqa: BLE001
        log.warning("heatmap chart specs failed: %s", exc)
        s.notes.append(f"The heatmap pictures could not be drawn ({type(exc).__name__}).")
        return
    for name, (title, spec) in specs.items():
        table_name = "heatmap_latency_time" if name == "latency_time" else f"heatmap_by_{name}"
        _chart(s, title, lambda spec=spec: spec, queries.get(table_name, queries["heatmap_by_type"]))


# -- templates --------------------------------------------------------------------------------------
def templates_section(src: Source) -> Section:
    title = "Prompt templates"
    if not src.has("templates"):
        return missing("templates", title, "Run `logmine templates OUT` to fill this section.")
    s = Section("templates", title)
    tot = src.run("templates-totals", "templates", "SELECT count(*) AS templates, sum(n_requests) AS requests FROM templates")
    s.stats = stats(tot, {"templates": "templates", "requests": "requests with a template"})
    top = src.run("templates-top", "templates", "SELECT template_id, left(template, 160) AS template, n_requests, "
                  "n_requests / sum(n_requests) OVER () AS share FROM templates ORDER BY n_requests DESC, template_id LIMIT 20")
    s.tables.append(table("Templates by traffic", top))
    rows = [{"template": (r["template"] or "").replace("\n", " ⏎ ")[:70], "share": r["share"]} for r in top.rows[:15]]
    if rows:
        _chart(s, "Traffic share of the top templates", lambda: charts.bar(rows, "share", "template", "Traffic share", x_title="share of requests"), top.query)
    return s


# -- compression ------------------------------------------------------------------------------------
def compression_section(src: Source, pack_dir: Path | None) -> Section:
    title = "Compression"
    if not src.has("compress_templates"):
        return missing("compression", title, "Run `logmine compress OUT` to fill this section.")
    s = Section("compression", title)
    w = "sum(n_requests * {c}) / nullif(sum(n_requests), 0) AS {c}"
    cols = ("static_tokens_before", "static_tokens_after", "rendered_tokens_before", "rendered_tokens_after", "fidelity")
    tot = src.run("compress-totals", "compress_templates", "SELECT count(*) AS templates, sum(n_requests) AS requests, "
                  + ", ".join(w.format(c=c) for c in cols) + " FROM compress_templates")
    s.stats = stats(tot, {"templates": "templates", "static_tokens_before": "static tokens before (traffic-weighted)",
                          "static_tokens_after": "static tokens after", "rendered_tokens_before": "rendered tokens before",
                          "rendered_tokens_after": "rendered tokens after", "fidelity": "fidelity"})
    per = src.run("compress-templates", "compress_templates", "SELECT template_id, n_requests, static_tokens_before, static_tokens_after, "
                  "rendered_tokens_before, rendered_tokens_after, fidelity, lossy FROM compress_templates ORDER BY n_requests DESC, template_id LIMIT 20")
    s.tables.append(table("Per template", per))
    rows = [{"template": r["template_id"][:14], "before": r["static_tokens_before"], "after": r["static_tokens_after"]} for r in per.rows[:12]]
    if rows:
        _chart(s, "Static tokens before and after", lambda: charts.grouped(rows, "template", ["before", "after"], "Static tokens", "tokens"), per.query)
    _secrets(src, s, pack_dir)
    return s


def _secrets(src: Source, s: Section, pack_dir: Path | None) -> None:
    pack = (pack_dir / "pack.json") if pack_dir else None
    if pack is None or not pack.is_file():
        s.notes.append("No pack found to read the redaction counts from.")
        return
    totals = json.loads(pack.read_text(encoding="utf-8")).get("totals", {})
    q = Query("pack-secrets", str(pack), "JSON path $.totals.secrets_redacted of the published pack")
    src.queries.append(q)
    redacted = totals.get("secrets_redacted") or {}
    s.stats.append(("secrets redacted", Cell(fmt(sum(redacted.values())), q, True)))
    if redacted:
        s.tables.append(Table("Secrets redacted by kind", ["kind", "count"], [[Cell(k), Cell(fmt(v), q, True)] for k, v in sorted(redacted.items())], q))


# -- serving validation -----------------------------------------------------------------------------
VALIDATION_COLUMNS = ("scope", "name", "requests", "exact_match", "edit_similarity", "prompt_tokens_original",
                      "prompt_tokens_compressed", "ttft_ms_ratio", "tokens_per_s_ratio")


def validation_section(src: Source) -> Section:
    title = "Serving validation"
    if not src.has("validation"):
        return missing("validation", title, "Not validated yet: run `logmine validate OUT/pack --workspace OUT` to fill this section.")
    s = Section("validation", title)
    present = src.columns("validation")
    cols = [c for c in VALIDATION_COLUMNS if c in present] or present
    quoted = ", ".join(f'"{c}"' for c in cols)
    order = "ORDER BY scope DESC, name" if {"scope", "name"} <= set(present) else ""
    s.tables.append(table("Original vs compressed prompts", src.run("validation", "validation", f"SELECT {quoted} FROM validation {order} LIMIT 50")))
    return s


def queries_section(src: Source) -> Section | None:
    """The pipeline's extra ``[[queries]]`` results, with their titles and SQL, when there are any."""
    names = sorted(t for t in src.tables if t.startswith("query_"))
    if not names:
        return None
    meta: dict[str, dict[str, Any]] = {}
    if src.has("pipeline_queries"):
        meta = {r["name"]: r for r in src.run("queries-meta", "pipeline_queries", "SELECT name, title, file, sql FROM pipeline_queries").rows}
    s = Section("queries", "Extra queries")
    for name in names:
        short = name.removeprefix("query_")
        info = meta.get(short, {})
        result = src.run(f"q-{name}", name, f'SELECT * FROM "{name}" LIMIT 50')
        if info:  # the numbers were computed by the pipeline's SQL file: cite it
            result.query = Query(result.query.id, name, f"-- {info['file']}\n{info['sql'].strip()}")
            src.queries[-1] = result.query
        s.tables.append(table(info.get("title") or short, result))
    return s
