"""Compress the workspace's mined templates and export the template pack.

Reads ``templates``, ``request_templates``, ``llm_requests`` (and ``events`` for recency) from
the workspace. Per template family (the highest-traffic member represents it):

1. instances: each request's slot values are recovered from its logged prompt by matching the
   representative's pattern (else its own template's, with slots mapped by name or position);
2. the representative's text is redacted (:mod:`logmine.redact`) and compressed
   (:mod:`logmine.stages.compress.compressor`); slots whose values hold chat turn boundaries are barriers
   the layout step may not move text across; a static head that several templates share is
   compressed once and factored into ``shared_prefixes[]`` (not the template's own static text);
   the finished template, shared head included, is held to the gate (meaning guard, then fidelity
   at least ``min_fidelity``): when it fails, the pack ships its lossless form, else the original,
   and says why in the template's ``fallback``;
3. each template gets its render plan (:func:`logmine.runtime.make_plan`: code-context slots
   trimmed to the budgets, file blocks sent once); on a deterministic sample of real instances,
   tokens are counted with the target tokenizer for the logged prompts and for the lossless, lossy
   and lossy+trimmed renderings, all rendered by the pack runtime (:mod:`logmine.runtime`), the code
   serving sends prompts with (:mod:`logmine.stages.compress.instances`);
4. with a validator (``choose``: ``logmine compress --validate N``), the generator replays logged
   requests through each template's forms and the most compressed form whose outputs agree with the
   logged prompts' ships (else the lossless form, else the original); the token figures are then
   measured again for what ships, and the results are recorded in the pack.

Writes ``OUT/pack/`` atomically, and the workspace tables ``compress_templates`` and
``template_slots``. Re-running on the same workspace gives the same pack byte for byte, except
``created_at``.
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
from logmine.pack import PackTemplate, PackTotals, Placeholder, SharedPrefix, TemplatePack, Thresholds, content_id, write_pack
from logmine.masking import WILDCARD
from logmine.redact import Redactor
from logmine.runtime import PromptRuntime, make_plan, trim_settings, trims
from logmine.stages.compress import verdicts
from logmine.stages.compress.compressor import CompressConfig, CompressedTemplate, Compressor, has_turns, is_fim
from logmine.stages.compress.prefixes import shared_prefixes, split_prefix
from logmine.stages.compress.fidelity import Embedder, TokenCounter, escape_static, segments, static_text
from logmine.stages.compress.instances import FamilySample, Measured, TokenIds, extract_slots, measure, request_contexts, sample_keys, trim_roles
from logmine.stages.compress.family import Family, shipped_head
from logmine.runtime.trim import TrimConfig
from logmine.stages.compress.verdicts import Chooser
from logmine.stages.templates import PLACEHOLDER
from logmine.workspace import Workspace

log = logging.getLogger(__name__)

ProgressFn = Callable[[str, int, int], None]

SLOT_TYPES = {
    "prefix": "code", "suffix": "code", "code": "code", "selection": "code", "declarations": "code", "context": "code",
    "diff": "code", "file_path": "path", "filepath": "path", "path": "path", "language": "language", "lang": "language",
}


@dataclass(frozen=True)
class ExportConfig:
    """Options of the compress/export stage."""

    compress: CompressConfig = field(default_factory=CompressConfig)
    """The compression options (fidelity gate, lossy on/off, ...)."""
    trim: TrimConfig | None = field(default_factory=TrimConfig)
    """Context trimming of code slots (budgets); None: no trimming."""
    sample_per_template: int = 256
    """Instances per template family whose tokens are measured (a deterministic hash sample)."""
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
    """What the stage did, for the summary table and --format json (token figures traffic-weighted per request)."""

    pack_dir: str
    templates: int
    families: int
    requests: int
    requests_covered: int
    instances_matched: int
    measured_requests: int
    static_tokens_before: float
    static_tokens_after_lossless: float
    static_tokens_after: float
    rendered_tokens_before: float
    rendered_tokens_after_lossless: float
    rendered_tokens_after_lossy: float
    rendered_tokens_after: float
    uncached_tokens_before: float
    uncached_tokens_after_lossless: float
    uncached_tokens_after_lossy: float
    uncached_tokens_after: float
    kv_block_share_before: float
    kv_block_share_after_lossless: float
    kv_block_share_after: float
    trim_budget_tokens: int | None
    trimmed_requests: int
    trim_f1: float | None
    trim_f1_nearest_lines: float | None
    trim_f1_requests: int
    fidelity: float
    fidelity_min: float
    lossy_templates: int
    fallbacks: int
    """Templates the finished-template gate shipped less compressed than the compressor made them."""
    secrets_redacted: dict[str, int]
    seconds: float = 0.0
    validation: dict[str, Any] | None = None
    """The pack's validation summary (:class:`~logmine.pack.PackValidation`); None: not validated."""

    def summary(self) -> dict[str, Any]:
        d = dict(self.__dict__)
        cut = 1 - self.static_tokens_after / self.static_tokens_before if self.static_tokens_before else 0.0
        d["static_token_cut"] = cut
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


_MINED_SLOT = re.compile(PLACEHOLDER.pattern + "|" + re.escape(WILDCARD))
"""Placeholders the prompt miner writes, and its wildcard."""


def load_templates(ws: Workspace) -> pl.DataFrame:
    """The mined templates with their family and traffic, most requests first."""
    cols = ["template_id", "template", "family_id", "n_requests"]
    return ws.read("templates").select(cols).sort(["n_requests", "template_id"], descending=[True, False])


def load_instances(ws: Workspace) -> pl.DataFrame:
    """Every request that has a template and a prompt, with what trimming and its evaluation need."""
    assignments = ws.read("request_templates")
    cols = ["request_id", "ts", "session_id", "language", "file_path", "prompt", "completion"]
    requests = ws.scan("llm_requests").select(cols).collect()
    return requests.join(assignments, on="request_id", how="inner").filter(pl.col("prompt").is_not_null())


def run(
    ws: Workspace,
    embedder: Embedder,
    count_tokens: TokenCounter,
    config: ExportConfig | None = None,
    progress: ProgressFn = lambda d, a, b: None,
    token_ids: TokenIds | None = None,
    choose: Chooser | None = None,
) -> CompressResult:
    """Compress the workspace's templates and write the pack; return the figures. With ``choose``
    (the validator), each template ships the form it chooses and the pack records its results."""
    config = config or ExportConfig()
    started = time.perf_counter()
    families = _families(load_templates(ws))
    instances = load_instances(ws)
    total_requests = ws.scan("llm_requests").select(pl.len()).collect().item()
    redactor = Redactor()
    slot_rows = _recover_instances(families, instances, config.sample_per_template, progress)
    compressor = Compressor(embedder, count_tokens, config.compress)
    heads = _compress(families, compressor, redactor, progress)
    trimming = trim_settings(config.trim)
    runtime = PromptRuntime(trimming)
    for fam in families:
        fam.plan = make_plan(fam.compressed.source, fam.roles, trimming)
    events = ws.scan("events") if ws.has_table("events") else None
    contexts = request_contexts(_samples(families), events)

    def measure_pack() -> tuple[TemplatePack, CompressResult, Measured]:
        measured = measure(_samples(families), contexts, runtime, count_tokens, token_ids, progress)
        progress("compress pack", 0, 1)
        return (*_build_pack(families, heads, measured, total_requests, redactor, config, count_tokens), measured)

    pack, result, measured = measure_pack()
    if choose is not None:
        choices, summary = choose(pack, verdicts.cases(families, contexts))
        if verdicts.apply_choices(families, heads, choices, compressor):
            pack, result, measured = measure_pack()
        pack = verdicts.record_validation(pack, choices, summary)
        result.validation = summary.model_dump(mode="json")
    pack_dir = config.pack_dir or ws.root / "pack"
    write_pack(pack, pack_dir)
    _write_tables(ws, families, pack, slot_rows, measured)
    result.pack_dir = str(pack_dir)
    result.seconds = time.perf_counter() - started
    return result


def _samples(families: list[Family]) -> list[FamilySample]:
    return [FamilySample(f.compressed.lossless_source, f.compressed.source, f.roles, f.sample,
                         [f.slots[r["request_id"]] for r in f.sample], f.plan) for f in families]


def _families(templates: pl.DataFrame) -> list[Family]:
    """One entry per family: the highest-traffic member represents it; members' traffic adds up."""
    fams: dict[str, Family] = {}
    for row in templates.iter_rows(named=True):
        fam = row["family_id"] or row["template_id"]
        if fam not in fams:
            source, names = to_jinja(row["template"])
            fams[fam] = Family(fam, row, [], source, names)
        fams[fam].members.append(row)
    return sorted(fams.values(), key=lambda f: (-f.n_requests, f.family_id))


def _recover_instances(families: list[Family], instances: pl.DataFrame, sample_n: int, progress: ProgressFn) -> list[dict]:
    """Fill each family's slot values per request and its measured sample; return template_slots rows."""
    groups = {key[0]: df for key, df in instances.partition_by("template_id", as_dict=True).items()}
    rows: list[dict[str, Any]] = []
    for index, fam in enumerate(families):
        progress("compress instances", index, len(families))
        records: dict[str, dict[str, Any]] = {}
        for member in fam.members:
            df = groups.get(member["template_id"])
            if df is None:
                continue
            own = None if member is fam.rep else to_jinja(member["template"])
            for rec in df.sort(["ts", "request_id"]).iter_rows(named=True):
                slots, how = _slots_for(fam, own, rec["prompt"])
                fam.matches[how] += 1
                if slots is None:
                    continue
                fam.slots[rec["request_id"]] = slots
                records[rec["request_id"]] = rec
                rows.append({"request_id": rec["request_id"], "template_id": member["template_id"], "family_id": fam.family_id,
                             "pack_template_id": fam.rep["template_id"], "match": how,
                             "slots": json.dumps(slots, sort_keys=True, ensure_ascii=False)})
        chosen = sample_keys(records, sample_n)
        fam.sample = sorted((records[k] for k in chosen), key=lambda r: (r["ts"], r["request_id"]))
    progress("compress instances", len(families), len(families))
    return rows


def _slots_for(fam: Family, own: tuple[str, list[str]] | None, prompt: str) -> tuple[dict[str, str] | None, str]:
    """The representative's slot values for one prompt, and how they were found."""
    slots = extract_slots(fam.raw_source, prompt)
    if slots is not None:
        return slots, "template"
    if own is None:
        return None, "unmatched"
    found = extract_slots(own[0], prompt)
    if found is None:
        return None, "unmatched"
    if set(fam.names) <= set(found):
        return {n: found[n] for n in fam.names}, "member"
    if len(own[1]) == len(fam.names):  # same shape, other names: map by position
        return {n: found[m] for n, m in zip(fam.names, own[1], strict=True)}, "member"
    return None, "unmatched"


def _compress(families: list[Family], compressor: Compressor, redactor: Redactor, progress: ProgressFn) -> dict[int, str]:
    """Compress every family's representative; return the static head each template shares with
    others (``{family index: literal head}``, see :func:`shared_prefixes`).

    A shared head is compressed once, on its own, and put in front of the compressed rest of each
    template that starts with it, so the templates still share it after compression (the server
    caches it once); the rest is compressed against the head's instructions.
    """
    progress("compress templates", 0, len(families))
    for fam in families:
        fam.original = redactor(fam.raw_source)
        fam.roles = trim_roles(fam.original)
    compressor.warm([f.original for f in families])
    cmin = compressor.config.min_shared_prefix_tokens
    heads = shared_prefixes([f.original for f in families], compressor.count, cmin)
    protocol = {heads[i] for i, f in enumerate(families) if i in heads and is_fim(f.original)}  # heads FIM templates share stay as they are
    compressed_heads: dict[str, CompressedTemplate] = {}
    for index, fam in enumerate(families):
        progress("compress templates", index, len(families))
        barriers = {n for n in fam.names if any(has_turns(s.get(n, "")) for s in (fam.slots[r["request_id"]] for r in fam.sample))}
        if index not in heads or is_fim(fam.original):
            fam.compressed = compressor.compress(fam.original, barriers)
            fam.head = (heads[index], heads[index]) if index in heads else None
            continue
        head, rest = split_prefix(fam.original, heads[index])
        if head not in compressed_heads:
            keep = heads[index] in protocol
            compressed_heads[head] = CompressedTemplate(head, head, 1.0, False, [], head) if keep else compressor.compress(head)
        shared = compressed_heads[head]
        fam.compressed = c = compressor.compress(rest, barriers, prefix=shared)
        for attr in ("source", "lossless_source"):  # unchanged text keeps the original's spelling of it
            if segments(getattr(c, attr)) == segments(fam.original):
                setattr(c, attr, fam.original)
        fam.head = shipped_head(c.fallback, (static_text(shared.lossless_source), static_text(shared.source)), heads[index])
    for index, fam in enumerate(families):  # the finished template: lossy only at or above --min-fidelity, its meaning kept
        held = compressor.hold(fam.compressed)  # compress() held it already: this changes it only if the spelling above broke it
        if held is not fam.compressed:
            fam.compressed = held
            fam.head = shipped_head(held.fallback, fam.head, heads[index]) if fam.head else None
    progress("compress templates", len(families), len(families))
    return heads


def _build_pack(families, heads, measured: Measured, total_requests, redactor, config, count_tokens) -> tuple[TemplatePack, CompressResult]:  # noqa: ANN001
    prefixes = {"before": heads, "lossless": _compressed_heads(families, heads, 0),
                "after": _compressed_heads(families, heads, 1)}
    plen = {v: _prefix_tokens(p, count_tokens) for v, p in prefixes.items()}
    statics = _static_tokens(families, prefixes, count_tokens)
    shared: dict[str, SharedPrefix] = {}
    templates: list[PackTemplate] = []
    names: set[str] = set()
    for i, fam in enumerate(families):
        tid = fam.rep["template_id"]
        pid = None
        if i in prefixes["after"]:
            text = prefixes["after"][i]
            pid = content_id({"shared_prefix": text})
            shared.setdefault(pid, SharedPrefix(id=pid, text=text, tokens=plen["after"][i], template_ids=[])).template_ids.append(tid)
        m = measured.families[i]
        source = fam.compressed.source
        templates.append(PackTemplate(
            id=tid, name=_name(fam.original, tid, names), source=source, original_source=fam.original,
            placeholders=[Placeholder(name=n, type="code" if n in fam.roles else SLOT_TYPES.get(n, "text" if not n.startswith("var") else "other"))
                          for n in dict.fromkeys(s.slot for s in segments(source) if s.slot)],
            shared_prefix_id=pid, n_requests=fam.n_requests, share=round(fam.n_requests / total_requests, 6) if total_requests else 0.0,
            static_tokens_before=statics[i][0], static_tokens_after=statics[i][2], static_tokens_after_lossless=statics[i][1],
            rendered_tokens_before=_r(m.mean("before")), rendered_tokens_after=_r(m.mean("after")),
            rendered_tokens_after_lossless=_r(m.mean("lossless")), rendered_tokens_after_untrimmed=_r(m.mean("lossy")),
            uncached_tokens_before=_r(max(m.mean("before") - plen["before"].get(i, 0), 0.0)),
            uncached_tokens_after=_r(max(m.mean("after") - plen["after"].get(i, 0), 0.0)),
            fidelity=fam.compressed.fidelity, lossy=fam.compressed.lossy, fallback=fam.compressed.fallback, family_id=fam.family_id,
            trimmed_slots=(dict(sorted(fam.roles.items())) or None) if trims(fam.plan) else None, measured_requests=m.n,
            lossless_source=fam.compressed.lossless_source, plan=fam.plan,
        ))
    result = _totals(families, templates, measured, plen, total_requests, redactor, config)
    r4 = {k: round(v, 4) if isinstance(v, float) else v for k, v in result.__dict__.items()}
    totals = PackTotals(
        templates=len(templates), requests=r4["requests_covered"], static_tokens_before=r4["static_tokens_before"],
        static_tokens_after=r4["static_tokens_after"], static_tokens_after_lossless=r4["static_tokens_after_lossless"],
        rendered_tokens_before=r4["rendered_tokens_before"], rendered_tokens_after=r4["rendered_tokens_after"],
        rendered_tokens_after_lossless=r4["rendered_tokens_after_lossless"],
        rendered_tokens_after_untrimmed=r4["rendered_tokens_after_lossy"], uncached_tokens_before=r4["uncached_tokens_before"],
        uncached_tokens_after=r4["uncached_tokens_after"], kv_block_share_before=r4["kv_block_share_before"],
        kv_block_share_after=r4["kv_block_share_after"], fidelity=r4["fidelity"], secrets_redacted=result.secrets_redacted,
    )
    pack = TemplatePack(
        created_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), logmine_version=__version__,
        tokenizer=config.tokenizer_name, embedding_model=config.embedding_model_name,
        thresholds=Thresholds(edit_similarity=config.edit_threshold, semantic_similarity=config.semantic_threshold,
                              min_fidelity=config.compress.min_fidelity),
        templates=sorted(templates, key=lambda t: (-t.n_requests, t.id)), shared_prefixes=sorted(shared.values(), key=lambda s: s.id),
        totals=totals, trimming=trim_settings(config.trim),
    )
    return pack, result


def _compressed_heads(families: list[Family], heads: dict[int, str], which: int) -> dict[int, str]:
    """The shared heads as the compressed templates start with them (``which``: 0 lossless, 1 lossy);
    each was compressed once, so the templates that shared a head share its compressed text."""
    return {i: families[i].head[which] for i in heads if families[i].head and families[i].head[which]}


def _r(x: float) -> float:
    return round(x, 3)


def _prefix_tokens(prefixes: dict[int, str], count_tokens: TokenCounter) -> dict[int, int]:
    keys = sorted(prefixes)
    return dict(zip(keys, count_tokens([prefixes[k] for k in keys]), strict=True))


def _static_tokens(families: list[Family], prefixes: dict[str, dict[int, str]], count_tokens: TokenCounter) -> list[tuple[int, int, int]]:
    """(before, lossless, after) static tokens per family, in one tokenizer call: the template's own
    text, slots excluded. After compression a shared prefix factored out of the template (its
    ``shared_prefix_id``, a pack entry of its own that the server caches once) is not the template's
    own text; before compression nothing is factored, so the original counts whole."""
    texts = []
    for i, f in enumerate(families):
        texts.append(static_text(f.original))
        for variant, src in (("lossless", f.compressed.lossless_source), ("after", f.compressed.source)):
            own = static_text(src)
            head = prefixes[variant].get(i, "")
            texts.append(own[len(head):] if head and own.startswith(head) else own)
    counts = count_tokens(texts) if texts else []
    return [tuple(counts[3 * i : 3 * i + 3]) for i in range(len(families))]


def _name(original: str, template_id: str, taken: set[str]) -> str:
    """A readable, stable name: the first words of the (redacted) original text and the id's hash."""
    words = re.findall(r"[A-Za-z]{3,}", static_text(original))[:4]
    digest = template_id.split(":")[-1]
    stem = "-".join(w.lower() for w in words) or "template"
    for n in range(6, len(digest) + 1):
        name = f"{stem}-{digest[:n]}"
        if name not in taken:
            taken.add(name)
            return name
    raise ValueError(f"duplicate template id {template_id}")


def _totals(families, templates, measured: Measured, plen, total_requests, redactor, config) -> CompressResult:  # noqa: ANN001
    weights = [f.n_requests for f in families]
    covered = sum(weights)

    def weighted(values: list[float]) -> float:
        return sum(v * w for v, w in zip(values, weights, strict=True)) / covered if covered else 0.0

    def rendered(v: str) -> float:
        return weighted([m.mean(v) for m in measured.families])

    def uncached(v: str, p: str) -> float:
        return weighted([max(m.mean(v) - plen[p].get(i, 0), 0.0) for i, m in enumerate(measured.families)])

    fids = [f.compressed.fidelity for f in families]
    return CompressResult(
        pack_dir="", templates=sum(len(f.members) for f in families), families=len(families), requests=total_requests,
        requests_covered=covered, instances_matched=sum(len(f.slots) for f in families),
        measured_requests=sum(m.n for m in measured.families),
        static_tokens_before=weighted([t.static_tokens_before for t in templates]),
        static_tokens_after_lossless=weighted([t.static_tokens_after_lossless for t in templates]),
        static_tokens_after=weighted([t.static_tokens_after for t in templates]),
        rendered_tokens_before=rendered("before"), rendered_tokens_after_lossless=rendered("lossless"),
        rendered_tokens_after_lossy=rendered("lossy"), rendered_tokens_after=rendered("after"),
        uncached_tokens_before=uncached("before", "before"), uncached_tokens_after_lossless=uncached("lossless", "lossless"),
        uncached_tokens_after_lossy=uncached("lossy", "after"), uncached_tokens_after=uncached("after", "after"),
        kv_block_share_before=measured.block_share.get("before", 0.0),
        kv_block_share_after_lossless=measured.block_share.get("lossless", 0.0),
        kv_block_share_after=measured.block_share.get("after", 0.0),
        trim_budget_tokens=config.trim.budget_tokens if config.trim else None, trimmed_requests=measured.trimmed,
        trim_f1=measured.f1, trim_f1_nearest_lines=measured.f1_baseline, trim_f1_requests=measured.f1_requests,
        fidelity=weighted(fids) if covered else 1.0, fidelity_min=min(fids, default=1.0),
        lossy_templates=sum(1 for f in families if f.compressed.lossy),
        fallbacks=sum(1 for f in families if f.compressed.fallback), secrets_redacted=dict(sorted(redactor.counts.items())),
    )


def _write_tables(ws: Workspace, families: list[Family], pack: TemplatePack, slot_rows: list[dict[str, Any]], measured: Measured) -> None:
    by_id = {t.id: t for t in pack.templates}
    rows = []
    for fam in families:
        t = by_id[fam.rep["template_id"]]
        rows.append({
            "template_id": t.id, "family_id": fam.family_id, "name": t.name, "original": t.original_source, "compressed": t.source,
            "steps": ",".join(fam.compressed.steps), "fidelity": t.fidelity, "lossy": t.lossy, "n_requests": t.n_requests,
            "instances_matched": len(fam.slots), "instances_unmatched": fam.matches["unmatched"],
            "static_tokens_before": t.static_tokens_before, "static_tokens_after": t.static_tokens_after,
            "rendered_tokens_before": t.rendered_tokens_before, "rendered_tokens_after": t.rendered_tokens_after,
            "uncached_tokens_after": t.uncached_tokens_after,
        })
    for row in slot_rows:  # the prompt serving sends for a measured request: what the pack counted
        row["served_hash"], row["served_tokens"] = measured.served.get(row["request_id"], (None, None))
    schema = {"request_id": pl.String, "template_id": pl.String, "family_id": pl.String, "pack_template_id": pl.String,
              "match": pl.String, "slots": pl.String, "served_hash": pl.String, "served_tokens": pl.Int64}
    with ws.lock():
        txn = ws.reload().transaction()
        txn.replace_table("compress_templates", pl.DataFrame(rows, infer_schema_length=None) if rows else pl.DataFrame(
            schema={"template_id": pl.String}))
        txn.replace_table("template_slots", pl.DataFrame(slot_rows, schema=schema))
        txn.commit()
