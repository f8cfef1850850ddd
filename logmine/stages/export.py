"""Compress the workspace's mined templates and export the template pack.

Reads ``templates`` and ``llm_requests`` (with ``template_id``) from the workspace, compresses
each template family's representative (:mod:`logmine.stages.compress`), measures tokens on real
instances (:mod:`logmine.stages.instances`), redacts secrets (:mod:`logmine.redact`), and writes
``OUT/pack/`` atomically plus the tables ``compress_templates`` and ``template_slots``.
Re-running on the same workspace gives the same pack byte for byte, except ``created_at``.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from logmine import __version__
from logmine.pack import (
    PackTemplate,
    PackTotals,
    Placeholder,
    SharedPrefix,
    TemplatePack,
    Thresholds,
    content_id,
    write_pack,
)
from logmine.redact import Redactor
from logmine.stages.compress import CompressConfig, Compressor, shared_prefixes
from logmine.stages.fidelity import Embedder, TokenCounter, escape_static, segments, static_text
from logmine.stages.instances import block_share, extract_slots, render
from logmine.workspace import Workspace

log = logging.getLogger(__name__)

ProgressFn = Callable[[str, int, int], None]
TokenIds = Callable[[list[str]], list[list[int]]]
"""The tokenizer's texts -> token ids (for the KV-block share metric)."""
SAMPLE_PER_TEMPLATE = 200
"""Instances per template used to measure rendered tokens (the first N in time order)."""

SLOT_TYPES = {
    "prefix": "code", "suffix": "code", "code": "code", "selection": "code", "declarations": "code", "context": "code",
    "file_path": "path", "filepath": "path", "path": "path", "language": "language", "lang": "language",
}


@dataclass(frozen=True)
class ExportConfig:
    """Options of the compress/export stage."""

    compress: CompressConfig = field(default_factory=CompressConfig)
    """The compression options (fidelity gate, lossy on/off, ...)."""
    tokenizer_name: str = "SmolLM2-135M-Instruct"
    """Name of the tokenizer recorded in the pack."""
    embedding_model_name: str = "all-MiniLM-L6-v2"
    """Name of the embedding model recorded in the pack."""
    edit_threshold: float = 0.9
    """Recorded in the pack: the template merge's edit-similarity threshold."""
    semantic_threshold: float = 0.9
    """Recorded in the pack: the template merge's embedding threshold."""
    pack_dir: Path | None = None
    """Where to write the pack (default: WORKSPACE/pack)."""


@dataclass
class CompressResult:
    """What the stage did, for the summary table and --format json."""

    pack_dir: str
    templates: int
    families: int
    requests: int
    requests_covered: int
    static_tokens_before: float
    static_tokens_after: float
    lossless_static_tokens_after: float
    rendered_tokens_before: float
    rendered_tokens_after: float
    uncached_tokens_before: float
    uncached_tokens_after: float
    block_share_before: float
    block_share_after: float
    fidelity: float
    secrets_redacted: dict[str, int]
    seconds: float = 0.0

    def summary(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        cut = 1 - self.static_tokens_after / self.static_tokens_before if self.static_tokens_before else 0.0
        d["static_token_cut"] = round(cut, 4)
        return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in d.items()}


def to_jinja(template: str) -> tuple[str, list[str]]:
    """Turn a mined template (``{name}`` placeholders, ``<*>`` wildcards) into Jinja2 text.

    Wildcards become ``{{ var1 }}``, ``{{ var2 }}``...; literal Jinja delimiters in static text
    are escaped so the pack renders exactly the mined text.
    """
    names: list[str] = []
    out: list[str] = []
    pos = 0
    for m in _MINED_SLOT.finditer(template):
        out.append(escape_static(template[pos : m.start()]))
        name = m.group(1) or f"var{sum(1 for n in names if n.startswith('var')) + 1}"
        names.append(name)
        out.append("{{ " + name + " }}")
        pos = m.end()
    out.append(escape_static(template[pos:]))
    return "".join(out), list(dict.fromkeys(names))


_MINED_SLOT = re.compile(r"\{(prefix|suffix|selection|file_path|language|code\d*|diff\d*)\}|<\*>")
"""Placeholders the prompt miner writes (logmine.stages.templates_prompts.PLACEHOLDER) and its wildcard."""


def load_templates(ws: Workspace) -> pl.DataFrame:
    """The mined templates with their family and traffic, most requests first."""
    cols = ["template_id", "template", "family_id", "n_requests"]
    return ws.read("templates").select(cols).sort(["n_requests", "template_id"], descending=[True, False])


def load_instances(ws: Workspace) -> pl.DataFrame:
    """``request_id, ts, template_id, prompt`` of every request that has a template."""
    assignments = ws.read("request_templates")
    requests = ws.scan("llm_requests").select("request_id", "ts", "prompt").collect()
    return requests.join(assignments, on="request_id", how="inner").filter(pl.col("prompt").is_not_null())


def run(
    ws: Workspace,
    embedder: Embedder,
    count_tokens: TokenCounter,
    config: ExportConfig | None = None,
    progress: ProgressFn = lambda d, a, b: None,
    token_ids: TokenIds | None = None,
) -> CompressResult:
    """Compress the workspace's templates and write the pack; return the figures."""
    config = config or ExportConfig()
    started = time.perf_counter()
    templates = load_templates(ws)
    instances = load_instances(ws)
    total_requests = ws.scan("llm_requests").select(pl.len()).collect().item()
    families = _families(templates)
    compressor = Compressor(embedder, count_tokens, config.compress)
    lossless = Compressor(embedder, count_tokens, CompressConfig(**{**config.compress.__dict__, "lossy": False}))
    redactor = Redactor()
    entries, slot_rows = [], []
    for index, fam in enumerate(families):
        progress("compress templates", index, len(families))
        entries.append(_compress_family(fam, instances, compressor, lossless, count_tokens, redactor, slot_rows))
    progress("compress templates", len(families), len(families))
    prefixes = _factor_prefixes(entries, count_tokens, config.compress.min_shared_prefix_tokens)
    pack, result = _build_pack(entries, prefixes, total_requests, redactor, config, count_tokens)
    all_before = [p for e in entries for p in e["prompts_before"]]
    all_after = [p for e in entries for p in e["prompts_after"]]
    result.block_share_before = _share(all_before, token_ids)
    result.block_share_after = _share(all_after, token_ids)
    pack_dir = config.pack_dir or ws.root / "pack"
    write_pack(pack, pack_dir)
    _write_tables(ws, entries, slot_rows)
    result.pack_dir = str(pack_dir)
    result.seconds = time.perf_counter() - started
    return result


def _families(templates: pl.DataFrame) -> list[dict[str, Any]]:
    """One entry per family: the highest-traffic member represents it; members' traffic adds up."""
    fams: dict[str, dict[str, Any]] = {}
    for row in templates.iter_rows(named=True):
        fam = row["family_id"] or row["template_id"]
        if fam not in fams:
            fams[fam] = {"family_id": fam, "rep": row, "members": []}
        fams[fam]["members"].append(row)
    return sorted(fams.values(), key=lambda f: (-sum(m["n_requests"] for m in f["members"]), f["family_id"]))


def _compress_family(fam, instances, compressor, lossless, count_tokens, redactor, slot_rows) -> dict[str, Any]:  # noqa: ANN001
    rep = fam["rep"]
    original, names = to_jinja(rep["template"])
    done = compressor.compress(original)
    safe_lossless = lossless.compress(original).source
    member_ids = [m["template_id"] for m in fam["members"]]
    mine = instances.filter(pl.col("template_id").is_in(member_ids)).sort(["ts", "request_id"])
    before, after, prompts_before, prompts_after = [], [], [], []
    for row in mine.iter_rows(named=True):
        member_src = original if row["template_id"] == rep["template_id"] else to_jinja(_member(fam, row["template_id"]))[0]
        slots = extract_slots(member_src, row["prompt"])
        if slots is None:
            continue
        slot_rows.append({"request_id": row["request_id"], "template_id": row["template_id"], "family_id": fam["family_id"],
                          "slots": json.dumps(slots, sort_keys=True, ensure_ascii=False)})
        if len(prompts_before) < SAMPLE_PER_TEMPLATE and set(names) <= set(slots):
            prompts_before.append(row["prompt"])
            prompts_after.append(render(done.source, slots))
    if prompts_before:
        before = count_tokens(prompts_before)
        after = count_tokens(prompts_after)
    static_before, static_after, static_lossless = count_tokens(
        [static_text(original), static_text(done.source), static_text(safe_lossless)])
    return {
        "fam": fam, "original": original, "compressed": done, "names": names, "n_requests": sum(m["n_requests"] for m in fam["members"]),
        "static_before": static_before, "static_after": static_after, "static_lossless": static_lossless,
        "rendered_before": _mean(before), "rendered_after": _mean(after), "prompts_before": prompts_before, "prompts_after": prompts_after,
    }


def _member(fam: dict[str, Any], template_id: str) -> str:
    return next(m["template"] for m in fam["members"] if m["template_id"] == template_id)


def _mean(values: list[int]) -> float:
    return sum(values) / len(values) if values else 0.0


def _factor_prefixes(entries: list[dict[str, Any]], count_tokens: TokenCounter, min_tokens: int) -> dict[int, str]:
    return shared_prefixes([e["compressed"].source for e in entries], count_tokens, min_tokens)


def _build_pack(entries, prefixes, total_requests, redactor, config, count_tokens) -> tuple[TemplatePack, CompressResult]:  # noqa: ANN001
    prefix_ids: dict[str, str] = {}
    shared: dict[str, SharedPrefix] = {}
    templates: list[PackTemplate] = []
    covered = sum(e["n_requests"] for e in entries)
    for i, e in enumerate(entries):
        source = redactor(e["compressed"].source)
        original = redactor(e["original"])
        prefix = prefixes.get(i)
        pid = None
        prefix_tokens = 0
        if prefix:
            prefix = redactor(prefix)
            pid = prefix_ids.setdefault(prefix, content_id({"shared_prefix": prefix}))
            prefix_tokens = count_tokens([prefix])[0]
            sp = shared.setdefault(pid, SharedPrefix(id=pid, text=prefix, tokens=prefix_tokens, template_ids=[]))
            sp.template_ids.append(e["fam"]["rep"]["template_id"])
        rep = e["fam"]["rep"]
        templates.append(PackTemplate(
            id=rep["template_id"], name=_name(source, rep["template_id"]), source=source, original_source=original,
            placeholders=[Placeholder(name=n, type=SLOT_TYPES.get(n, "text" if not n.startswith("var") else "other"))
                          for n in dict.fromkeys(s.slot for s in segments(source) if s.slot)],
            shared_prefix_id=pid, n_requests=e["n_requests"], share=round(e["n_requests"] / total_requests, 6) if total_requests else 0.0,
            static_tokens_before=e["static_before"], static_tokens_after=e["static_after"],
            rendered_tokens_before=round(e["rendered_before"], 3), rendered_tokens_after=round(e["rendered_after"], 3),
            uncached_tokens_after=round(max(e["rendered_after"] - prefix_tokens, 0.0), 3),
            fidelity=e["compressed"].fidelity, lossy=e["compressed"].lossy, family_id=e["fam"]["family_id"],
        ))
    result = _totals(entries, templates, total_requests, covered, redactor)
    totals = PackTotals(
        templates=len(templates), requests=covered, static_tokens_before=result.static_tokens_before,
        static_tokens_after=result.static_tokens_after, rendered_tokens_before=result.rendered_tokens_before,
        rendered_tokens_after=result.rendered_tokens_after, uncached_tokens_after=result.uncached_tokens_after,
        fidelity=result.fidelity, secrets_redacted=dict(sorted(redactor.counts.items())),
    )
    pack = TemplatePack(
        created_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), logmine_version=__version__,
        tokenizer=config.tokenizer_name, embedding_model=config.embedding_model_name,
        thresholds=Thresholds(edit_similarity=config.edit_threshold, semantic_similarity=config.semantic_threshold,
                              min_fidelity=config.compress.min_fidelity),
        templates=sorted(templates, key=lambda t: (-t.n_requests, t.id)), shared_prefixes=sorted(shared.values(), key=lambda s: s.id),
        totals=totals,
    )
    return pack, result


def _name(source: str, template_id: str) -> str:
    words = re.findall(r"[A-Za-z]{3,}", static_text(source))[:4]
    return ("-".join(w.lower() for w in words) or "template") + "-" + template_id.split(":")[-1][:6]


def _totals(entries, templates, total_requests, covered, redactor) -> CompressResult:  # noqa: ANN001
    def weighted(key: str) -> float:
        return sum(e[key] * e["n_requests"] for e in entries) / covered if covered else 0.0

    uncached_after = sum(t.uncached_tokens_after * t.n_requests for t in templates) / covered if covered else 0.0
    fidelity = sum(t.fidelity * t.n_requests for t in templates) / covered if covered else 1.0
    return CompressResult(
        pack_dir="", templates=sum(len(e["fam"]["members"]) for e in entries), families=len(entries), requests=total_requests,
        requests_covered=covered, static_tokens_before=weighted("static_before"), static_tokens_after=weighted("static_after"),
        lossless_static_tokens_after=weighted("static_lossless"), rendered_tokens_before=weighted("rendered_before"),
        rendered_tokens_after=weighted("rendered_after"), uncached_tokens_before=weighted("rendered_before"),
        uncached_tokens_after=uncached_after, block_share_before=0.0, block_share_after=0.0,
        fidelity=fidelity, secrets_redacted=dict(sorted(redactor.counts.items())),
    )


def _share(prompts: list[str], token_ids: TokenIds | None) -> float:
    if not prompts or token_ids is None:
        return 0.0
    return round(block_share(token_ids(prompts)).share, 4)


def _write_tables(ws: Workspace, entries: list[dict[str, Any]], slot_rows: list[dict[str, Any]]) -> None:
    rows = [{
        "template_id": e["fam"]["rep"]["template_id"], "family_id": e["fam"]["family_id"], "original": e["original"],
        "compressed": e["compressed"].source, "steps": ",".join(e["compressed"].steps), "fidelity": e["compressed"].fidelity,
        "lossy": e["compressed"].lossy, "n_requests": e["n_requests"], "static_tokens_before": e["static_before"],
        "static_tokens_after": e["static_after"], "rendered_tokens_before": e["rendered_before"],
        "rendered_tokens_after": e["rendered_after"],
    } for e in entries]
    schema = {"request_id": pl.String, "template_id": pl.String, "family_id": pl.String, "slots": pl.String}
    with ws.lock():
        txn = ws.reload().transaction()
        txn.replace_table("compress_templates", pl.DataFrame(rows, infer_schema_length=None) if rows else pl.DataFrame(
            schema={"template_id": pl.String}))
        txn.replace_table("template_slots", pl.DataFrame(slot_rows, schema=schema))
        txn.commit()
