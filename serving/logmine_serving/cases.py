"""The logged requests `logmine validate` replays, read from a workspace (the I/O edge).

- which template each request has: a ``template_id`` column of the ``llm_requests`` view, else
  the ``request_templates(request_id, template_id)`` table, else ``template_slots``; a request
  matches the pack template with that ``id`` (or ``name``), or whose ``family_id`` is the
  template's family (from the ``templates`` or ``template_slots`` table), since a pack holds one
  template per family;
- slot values: the request's columns named like the template's variables (``prefix``,
  ``suffix``, ``file_path``, ``language``, ...), overridden by ``template_slots(request_id,
  template_id, slots JSON)`` when that table exists;
- the render context: the request's ``language``, ``file_path`` and ``session_id``, and the files
  its session edited or opened before it (the ``events`` table, as ``logmine compress`` measured
  them), and its logged ``prompt``, the reference the served prompt's outputs are compared with.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from logmine.runtime import LoggedRequest, RenderContext, recent_files, trims

from logmine_serving.errors import ValidationInputError
from logmine_serving.pack_runtime import PackRuntime


def load_cases(workspace: Path | str, runtime: PackRuntime, per_template: int) -> dict[str, list[LoggedRequest]]:
    """Up to ``per_template`` logged requests per pack template, with their slot values and context."""
    from logmine.workspace import Workspace

    ws = Workspace.open(workspace)
    con = ws.connect(read_only=True)
    try:
        cases, times = _load_cases(con, ws.root, runtime, per_template)
    finally:
        con.close()
    return _with_recent_files(ws, runtime, cases, times)


def _load_cases(con: Any, root: Path, runtime: PackRuntime, per_template: int
                ) -> tuple[dict[str, list[LoggedRequest]], dict[str, Any]]:
    """The cases, and each one's request time (for the recent-files join)."""
    tables = {r[0]: _columns(con, r[0]) for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    if "llm_requests" not in tables:
        raise ValidationInputError(f"workspace {root} has no llm_requests; run `logmine ingest LOGS -o {root}` first")
    assign = _assignment_sql(tables)
    if assign is None:
        raise ValidationInputError(f"workspace {root}: no request has a template id (no template_id column in llm_requests, "
                                   "no request_templates or template_slots table); run `logmine compress` on it first")
    family = _family_sql(tables)
    keymap: dict[str, str] = {}
    for t in runtime.pack.templates:  # a request matches a pack template by id, name or template family
        keymap.setdefault(t.id, t.id)
        keymap.setdefault(t.name, t.id)
        if t.family_id:
            keymap.setdefault(t.family_id, t.id)
    keys = sorted(keymap)
    order = "r.ts NULLS LAST, r.request_id" if "ts" in tables["llm_requests"] else "r.request_id"
    rows = con.execute(
        f"""WITH keymap AS (SELECT unnest(?::VARCHAR[]) AS key, unnest(?::VARCHAR[]) AS pack_id),
           assign AS ({assign}),
           family AS ({family}),
           matched AS (
             SELECT a.request_id, coalesce(k1.pack_id, k2.pack_id) AS pack_id
             FROM assign a LEFT JOIN family f ON f.template_id = a.template_id
             LEFT JOIN keymap k1 ON k1.key = a.template_id LEFT JOIN keymap k2 ON k2.key = f.family_id
             WHERE coalesce(k1.pack_id, k2.pack_id) IS NOT NULL QUALIFY row_number() OVER (PARTITION BY a.request_id) = 1),
           ranked AS (
             SELECT r.*, m.pack_id AS __pack_template_id,
                    row_number() OVER (PARTITION BY m.pack_id ORDER BY {order}) AS __rn
             FROM llm_requests r JOIN matched m ON m.request_id = r.request_id)
           SELECT * EXCLUDE (__rn) FROM ranked WHERE __rn <= ? ORDER BY __pack_template_id, __rn""",
        [keys, [keymap[k] for k in keys], per_template],
    )
    names = [d[0] for d in rows.description]
    records = [dict(zip(names, r, strict=True)) for r in rows.fetchall()]
    slots = _template_slots(con, tables, [r["request_id"] for r in records])
    cases: dict[str, list[LoggedRequest]] = {t.id: [] for t in runtime.pack.templates}
    times: dict[str, Any] = {}
    for rec in records:
        tid = rec.pop("__pack_template_id")
        values = {k: v for k, v in rec.items() if isinstance(v, (str, int, float, bool)) or v is None}
        values.update(slots.get(rec["request_id"], {}))
        prompt = rec.get("prompt") if isinstance(rec.get("prompt"), str) else None
        cases[tid].append(LoggedRequest(str(rec["request_id"]), tid, values, RenderContext.of(rec), prompt))
        times[str(rec["request_id"])] = rec.get("ts")
    return cases, times


def _with_recent_files(ws: Any, runtime: PackRuntime, cases: dict[str, list[LoggedRequest]], times: dict[str, Any]
                       ) -> dict[str, list[LoggedRequest]]:
    """The cases of templates whose plan trims, with their session's recent files (as compress measured them)."""
    import polars as pl

    need = [c for t in runtime.pack.templates if trims(t.plan) for c in cases.get(t.id, [])]
    if not need or not ws.has_table("events"):
        return cases
    frame = pl.DataFrame({"request_id": [c.request_id for c in need], "session_id": [c.context.session_id for c in need],
                          "ts": [times.get(c.request_id) for c in need]},
                         schema={"request_id": pl.String, "session_id": pl.String, "ts": pl.Datetime("us", "UTC")})
    got = {rid: tuple(files) for rid, files in recent_files(frame, ws.scan("events")).collect().iter_rows() if files}
    return {tid: [dataclasses.replace(c, context=dataclasses.replace(c.context, recent_files=got[c.request_id]))
                  if c.request_id in got else c for c in items] for tid, items in cases.items()}


def _columns(con: Any, table: str) -> set[str]:
    return {r[0] for r in con.execute(f'DESCRIBE "{table}"').fetchall()}


def _assignment_sql(tables: dict[str, set[str]]) -> str | None:
    """SQL for ``(request_id, template_id)``: the llm_requests view's column, else request_templates, else template_slots."""
    if "template_id" in tables["llm_requests"]:
        return "SELECT request_id, template_id FROM llm_requests WHERE template_id IS NOT NULL"
    for table in ("request_templates", "template_slots"):
        if {"request_id", "template_id"} <= tables.get(table, set()):
            return f'SELECT request_id, template_id FROM "{table}"'
    return None


def _family_sql(tables: dict[str, set[str]]) -> str:
    """SQL for ``(template_id, family_id)`` from the templates or template_slots table, when one has it."""
    for table in ("templates", "template_slots"):
        if {"template_id", "family_id"} <= tables.get(table, set()):
            return f'SELECT DISTINCT template_id, family_id FROM "{table}"'
    return "SELECT NULL::VARCHAR AS template_id, NULL::VARCHAR AS family_id WHERE false"


def _template_slots(con: Any, tables: dict[str, set[str]], request_ids: list[str]) -> dict[str, dict[str, Any]]:
    if "template_slots" not in tables or not request_ids:
        return {}
    rows = con.execute("SELECT request_id, slots FROM template_slots WHERE request_id IN (SELECT unnest(?::VARCHAR[]))", [request_ids])
    out: dict[str, dict[str, Any]] = {}
    for request_id, raw in rows.fetchall():
        value = json.loads(raw) if isinstance(raw, str) else raw
        if isinstance(value, dict):
            out[str(request_id)] = value
    return out
