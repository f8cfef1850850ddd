"""`logmine validate`: do a pack's compressed templates give the same output as the originals,
and how much faster?

For up to N logged requests per template, the original and the compressed template are
rendered with the request's slot values, the generator runs greedily on both (same seed,
same max tokens, one warm-up generation excluded from the figures, the order alternated
between requests), and the outputs and timings are compared.

Inputs (read at the edge by :func:`load_cases`):

- which template each request has: a ``template_id`` column of the ``llm_requests`` view, else
  the ``request_templates(request_id, template_id)`` table, else ``template_slots``; a request
  matches the pack template with that ``id`` (or ``name``), or whose ``family_id`` is the
  template's family (from the ``templates`` or ``template_slots`` table), since a pack holds one
  template per family;
- slot values: the request's columns named like the template's variables (``prefix``,
  ``suffix``, ``file_path``, ``language``, ...), overridden by ``template_slots(request_id,
  template_id, slots JSON)`` when that table exists.

Outputs: :class:`ValidationReport` (one record per template and a total), written by
:func:`write_results` to ``OUT/validation.json`` and the workspace table ``validation``;
:func:`update_pack` rewrites the pack atomically with each template's ``validation`` filled.
"""

from __future__ import annotations

import json
import logging
import statistics
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from logmine.pack import MANIFEST_FILE, PACK_FILE, PackManifest, load_pack, write_pack
from logmine.workspace import Workspace
from logmine_serving.errors import RenderError, ValidationInputError
from logmine_serving.generator import (
    GenerationConfig,
    Generator,
    PrefixEntry,
    SequenceResult,
)
from logmine_serving.pack_runtime import PackRuntime

log = logging.getLogger(__name__)
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class ValidateConfig:
    """How `logmine validate` samples and generates."""

    per_template: int = 5
    """Logged requests to replay per template, at most."""
    max_new_tokens: int = 32
    """Tokens generated per prompt (the same for original and compressed)."""
    seed: int = 0
    """Seed set before every generation."""
    prefix_cache: bool = True
    """Serve compressed prompts from the shared-prefix KV cache where the pack has one."""
    warmup: int = 1
    """Untimed generations before measuring."""


@dataclass(frozen=True)
class ValidationCase:
    """One logged request to replay: its slot values and code context."""

    request_id: str
    template_id: str
    slots: dict[str, Any]
    language: str | None = None
    file_path: str | None = None


@dataclass
class CaseResult:
    """Original vs compressed for one request."""

    case: ValidationCase
    original: SequenceResult
    compressed: SequenceResult
    exact: bool
    edit_similarity: float
    parses_original: bool | None
    parses_compressed: bool | None


@dataclass
class ValidationReport:
    """Per-template records and a total, JSON-ready."""

    templates: list[dict[str, Any]] = field(default_factory=list)
    total: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"templates": self.templates, "total": self.total, "config": self.config}


# -- reading the workspace (the I/O edge) ---------------------------------------------------
def load_cases(workspace: Path | str, runtime: PackRuntime, per_template: int) -> dict[str, list[ValidationCase]]:
    """Up to ``per_template`` logged requests per pack template, with their slot values."""
    ws = Workspace.open(workspace)
    con = ws.connect(read_only=True)
    try:
        return _load_cases(con, ws.root, runtime, per_template)
    finally:
        con.close()


def _load_cases(con: Any, root: Path, runtime: PackRuntime, per_template: int) -> dict[str, list[ValidationCase]]:
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
    records = [dict(zip(names, r)) for r in rows.fetchall()]
    slots = _template_slots(con, tables, [r["request_id"] for r in records])
    cases: dict[str, list[ValidationCase]] = {t.id: [] for t in runtime.pack.templates}
    for rec in records:
        tid = rec.pop("__pack_template_id")
        values = {k: v for k, v in rec.items() if isinstance(v, (str, int, float, bool)) or v is None}
        values.update(slots.get(rec["request_id"], {}))
        cases[tid].append(ValidationCase(str(rec["request_id"]), tid, values, rec.get("language"), rec.get("file_path")))
    return cases


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


# -- the pure core -----------------------------------------------------------------------------
def validate(runtime: PackRuntime, cases: Mapping[str, list[ValidationCase]], generator: Generator,
             config: ValidateConfig | None = None, progress: Progress | None = None) -> ValidationReport:
    """Replay ``cases`` through the original and the compressed templates; compare."""
    config = config or ValidateConfig()
    progress = progress or (lambda description, done, total: None)
    gen_config = GenerationConfig(max_new_tokens=config.max_new_tokens, seed=config.seed)
    prepared, skipped = _prepare(runtime, cases)
    prefixes = _prefixes(runtime, generator, config)
    _warm_up(prepared, generator, gen_config, config.warmup)
    total = sum(len(v) for v in prepared.values())
    done = 0
    by_template: dict[str, list[CaseResult]] = {}
    for tid, items in prepared.items():
        for case, original, compressed in items:
            by_template.setdefault(tid, []).append(
                _run_case(case, original, compressed, generator, gen_config, prefixes.get(tid), first_original=done % 2 == 0))
            done += 1
            progress("validate", done, total)
    report = ValidationReport(config={
        "per_template": config.per_template, "max_new_tokens": config.max_new_tokens, "seed": config.seed,
        "prefix_cache": config.prefix_cache, "warmup": config.warmup, "model": generator.model_name,
        "device": generator.device, "decoding": "greedy",
    })
    for t in runtime.pack.templates:
        record = summarise(by_template.get(t.id, []))
        report.templates.append({"template_id": t.id, "name": t.name, "skipped": skipped.get(t.id, 0), **record})
    all_results = [r for rs in by_template.values() for r in rs]
    report.total = {"template_id": None, "name": "TOTAL", "skipped": sum(skipped.values()), **summarise(all_results)}
    return report


def _prepare(runtime: PackRuntime, cases: Mapping[str, list[ValidationCase]]) -> tuple[dict[str, list[tuple[ValidationCase, str, str]]], dict[str, int]]:
    prepared: dict[str, list[tuple[ValidationCase, str, str]]] = {}
    skipped: dict[str, int] = {}
    for t in runtime.pack.templates:
        for case in cases.get(t.id, []):
            try:
                original = runtime.render(t, case.slots, "original")
                compressed = runtime.render(t, case.slots, "compressed")
            except RenderError as exc:
                log.warning("skipping request %s: %s", case.request_id, exc)
                skipped[t.id] = skipped.get(t.id, 0) + 1
                continue
            if not original or not compressed:
                skipped[t.id] = skipped.get(t.id, 0) + 1
                continue
            prepared.setdefault(t.id, []).append((case, original, compressed))
    return prepared, skipped


def _prefixes(runtime: PackRuntime, generator: Generator, config: ValidateConfig) -> dict[str, PrefixEntry]:
    """The prefilled shared prefix of each template that has one (computed once, not timed)."""
    if not config.prefix_cache:
        return {}
    out = {}
    for t in runtime.pack.templates:
        shared = runtime.shared_prefix(t)
        if shared is not None and shared.text:
            out[t.id] = generator.prefix(shared.id, shared.text)
    return out


def _warm_up(prepared: Mapping[str, list[tuple[ValidationCase, str, str]]], generator: Generator,
             gen_config: GenerationConfig, n: int) -> None:
    prompts = [c for items in prepared.values() for _, _, c in items][:n]
    for prompt in prompts:
        generator.generate([prompt], GenerationConfig(max_new_tokens=min(4, gen_config.max_new_tokens), seed=gen_config.seed))


def _run_case(case: ValidationCase, original: str, compressed: str, generator: Generator, gen_config: GenerationConfig,
              prefix: PrefixEntry | None, first_original: bool) -> CaseResult:
    if first_original:
        o = generator.generate([original], gen_config)[0]
        c = generator.generate([compressed], gen_config, prefix=prefix)[0]
    else:
        c = generator.generate([compressed], gen_config, prefix=prefix)[0]
        o = generator.generate([original], gen_config)[0]
    from rapidfuzz.distance import Levenshtein

    return CaseResult(case, o, c, o.text == c.text, float(Levenshtein.normalized_similarity(o.text, c.text)),
                      _parses(case, o.text), _parses(case, c.text))


def _parses(case: ValidationCase, output: str) -> bool | None:
    """Whether the completion adds no syntax error to the code around it; None if not code.

    The code around it is the request's ``prefix`` and ``suffix`` slots (often cut mid-file, so
    not valid on their own): the check is that ``prefix + output + suffix`` has no more
    tree-sitter ERROR/MISSING nodes than ``prefix + suffix``. Without prefix/suffix the output
    alone must parse cleanly.
    """
    try:
        from logmine.code import error_count, parse, resolve_language
    except ImportError:  # a slim serving host without the parsing stack: no parse check
        return None
    prefix = case.slots.get("prefix") if isinstance(case.slots.get("prefix"), str) else ""
    suffix = case.slots.get("suffix") if isinstance(case.slots.get("suffix"), str) else ""
    language = resolve_language(case.language, case.file_path, None if (prefix or suffix) else output)
    if language is None:
        return None
    def errors(code: str) -> int:  # every ERROR/MISSING node counted: no cap, the two are compared
        return error_count(parse(code, language).root_node, limit=sys.maxsize)

    with_output = errors(f"{prefix}{output}{suffix}")
    context = errors(f"{prefix}{suffix}") if (prefix or suffix) else 0
    return with_output <= context


# -- aggregation -------------------------------------------------------------------------------
def summarise(results: list[CaseResult]) -> dict[str, Any]:
    """Fidelity and speed over ``results``: means, medians, latency percentiles and ratios."""
    if not results:
        return {"requests": 0}
    o = [r.original for r in results]
    c = [r.compressed for r in results]
    out: dict[str, Any] = {
        "requests": len(results),
        "exact_match": _mean([r.exact for r in results]),
        "edit_similarity": _mean([r.edit_similarity for r in results]),
        "parses_original": _mean([r.parses_original for r in results if r.parses_original is not None]),
        "parses_compressed": _mean([r.parses_compressed for r in results if r.parses_compressed is not None]),
        "prompt_tokens": _pair(_mean([x.prompt_tokens for x in o]), _mean([x.prompt_tokens for x in c])),
        "cached_prompt_tokens": _mean([x.cached_tokens for x in c]),
        "output_tokens": _pair(_mean([len(x.token_ids) for x in o]), _mean([len(x.token_ids) for x in c])),
        "ttft_ms": _pair(_median([x.ttft for x in o], 1000), _median([x.ttft for x in c], 1000)),
        "tokens_per_s": _pair(_median([x.tokens_per_s for x in o]), _median([x.tokens_per_s for x in c])),
    }
    for q in (50, 90, 99):
        out[f"itl_p{q}_ms"] = _pair(_percentile([d for x in o for d in x.inter_token], q, 1000),
                                    _percentile([d for x in c for d in x.inter_token], q, 1000))
    return out


def _pair(original: float | None, compressed: float | None) -> dict[str, float | None]:
    ratio = compressed / original if original and compressed is not None else None
    return {"original": original, "compressed": compressed, "ratio": ratio}


def _mean(values: list[Any]) -> float | None:
    return float(statistics.fmean(float(v) for v in values)) if values else None


def _median(values: list[float | None], scale: float = 1.0) -> float | None:
    vals = [v * scale for v in values if v is not None]
    return float(statistics.median(vals)) if vals else None


def _percentile(values: list[float], q: int, scale: float = 1.0) -> float | None:
    if not values:
        return None
    ordered = sorted(v * scale for v in values)
    k = (len(ordered) - 1) * q / 100
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return float(ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo))


# -- writing results ---------------------------------------------------------------------------
def flat_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """``{"ttft_ms": {"original": 1}}`` -> ``{"ttft_ms_original": 1}`` (for tables)."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        if isinstance(value, Mapping):
            out.update({f"{key}_{k}": v for k, v in value.items()})
        else:
            out[key] = value
    return out


def write_results(report: ValidationReport, workspace: Path | str, pack_path: Path | str) -> Path:
    """Write ``OUT/validation.json`` and replace the workspace table ``validation``."""
    import polars as pl

    ws = Workspace.open(workspace)
    doc = {"pack": str(pack_path), **report.to_json()}
    path = ws.root / "validation.json"
    tmp = path.with_name(".validation.json.tmp")
    tmp.write_text(json.dumps(doc, indent=2, default=str) + "\n")
    tmp.replace(path)
    rows = [{"scope": "template", **flat_record(r)} for r in report.templates] + [{"scope": "total", **flat_record(report.total)}]
    columns = sorted({k for r in rows for k in r})
    frame = pl.DataFrame([{c: r.get(c) for c in columns} for r in rows], infer_schema_length=None)
    with ws.lock(wait=True):
        ws = ws.reload()
        txn = ws.transaction()
        txn.replace_table("validation", frame)
        txn.commit()
    return path


def update_pack(pack_dir: Path | str, report: ValidationReport) -> Path:
    """Rewrite the pack atomically (via ``write_pack``) with each template's ``validation`` filled."""
    pack_dir = Path(pack_dir)
    if pack_dir.is_file():
        pack_dir = pack_dir.parent
    pack = load_pack(pack_dir)
    by_id = {r["template_id"]: r for r in report.templates}
    templates = [t.model_copy(update={"validation": {**by_id[t.id], "config": report.config}}) if t.id in by_id else t
                 for t in pack.templates]
    manifest = PackManifest.model_validate_json((pack_dir / MANIFEST_FILE).read_text())
    extra = {name: (pack_dir / name).read_bytes() for name in manifest.files if name != PACK_FILE}
    return write_pack(pack.model_copy(update={"templates": templates}), pack_dir, extra)
