"""`logmine validate`: does what the pack serves make the model write what the logged prompts did,
and how much faster?

For up to N logged requests per template, the prompt the pack serves is rendered through the
template's whole render plan (:mod:`logmine.runtime`: code-context trimming and the lossless
steps included, exactly what ``logmine serve`` sends), the generator runs greedily on it and on the
logged prompt (same seed, same max tokens, one warm-up generation excluded from the figures, the
order alternated between requests), and the outputs and timings are compared. A request whose
prompt was not logged is compared with the original template's rendering.

:func:`choose_forms` is the judge of ``logmine compress --validate N``: per template, the most
compressed form whose outputs agree with the logged prompts' (mean edit similarity at least the
threshold) ships: the compressed form, else the lossless form, else the original.

Inputs: :func:`~logmine_serving.cases.load_cases` (the workspace). Outputs: :class:`ValidationReport`
(one record per template and a traffic-weighted total), written by :func:`write_results` to
``OUT/validation.json`` and the workspace table ``validation``; :func:`update_pack` rewrites the pack
atomically with each template's ``validation`` filled.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from logmine.pack import MANIFEST_FILE, PACK_FILE, PackManifest, PackTemplate, PackValidation, TemplatePack, load_pack, write_pack
from logmine.runtime import FormChoice, LoggedRequest
from logmine.workspace import Workspace

from logmine_serving.cases import load_cases
from logmine_serving.errors import RenderError
from logmine_serving.generator import GenerationConfig, Generator, PrefixEntry, SequenceResult
from logmine_serving.pack_runtime import PackRuntime, Which
from logmine_serving.summary import flat_record, summarise, weighted_total

log = logging.getLogger(__name__)
Progress = Callable[[str, int, int], None]
ValidationCase = LoggedRequest
"""A logged request to replay (the name `logmine validate` used before the pack runtime)."""

__all__ = ["CaseResult", "ValidateConfig", "ValidationCase", "ValidationReport", "choose_forms", "flat_record", "load_cases",
           "make_chooser", "summarise", "update_pack", "validate", "write_results"]


@dataclass(frozen=True)
class ValidateConfig:
    """How `logmine validate` samples and generates."""

    per_template: int = 5
    """Logged requests to replay per template, at most."""
    max_new_tokens: int = 32
    """Tokens generated per prompt (the same for the logged and the served prompt)."""
    seed: int = 0
    """Seed set before every generation."""
    prefix_cache: bool = True
    """Serve the pack's prompts from the shared-prefix KV cache where the pack has one."""
    warmup: int = 1
    """Untimed generations before measuring."""
    threshold: float = 0.9
    """:func:`choose_forms`: least mean edit similarity of the outputs for a form to ship."""


@dataclass
class CaseResult:
    """The logged prompt (``original``) vs the served one (``compressed``) for one request."""

    case: LoggedRequest
    original: SequenceResult
    compressed: SequenceResult
    exact: bool
    edit_similarity: float
    parses_original: bool | None
    parses_compressed: bool | None
    same_prompt: bool = False
    """The served prompt is the logged one, character for character."""


@dataclass
class ValidationReport:
    """Per-template records and a traffic-weighted total, JSON-ready."""

    templates: list[dict[str, Any]] = field(default_factory=list)
    total: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"templates": self.templates, "total": self.total, "config": self.config}


class Replay:
    """Renders and generates for one validation run; the logged prompts' outputs are generated once."""

    def __init__(self, runtime: PackRuntime, generator: Generator, config: ValidateConfig) -> None:
        self.runtime, self.generator, self.config = runtime, generator, config
        self.gen = GenerationConfig(max_new_tokens=config.max_new_tokens, seed=config.seed)
        self.prefixes: dict[str, PrefixEntry] = {}
        self.references: dict[str, SequenceResult] = {}
        self.done = 0

    def prompts(self, t: PackTemplate, cases: Sequence[LoggedRequest], which: Which) -> tuple[list[tuple[LoggedRequest, str, str]], int]:
        """``(case, logged prompt, served prompt)`` of each case that renders, and how many did not."""
        out, skipped = [], 0
        for case in cases:
            try:
                served = self.runtime.render(t, case.slots, which, case.context)
                logged = case.prompt if case.prompt else self.runtime.render(t, case.slots, "original", case.context)
            except RenderError as exc:
                log.warning("skipping request %s: %s", case.request_id, exc)
                skipped += 1
                continue
            if not served or not logged:
                skipped += 1
                continue
            out.append((case, logged, served))
        return out, skipped

    def prefix(self, t: PackTemplate, which: Which) -> PrefixEntry | None:
        """The prefilled shared prefix of the template's compressed form (computed once, not timed)."""
        shared = self.runtime.shared_prefix(t) if self.config.prefix_cache and which == "compressed" else None
        if shared is None or not shared.text:
            return None
        if shared.id not in self.prefixes:
            self.prefixes[shared.id] = self.generator.prefix(shared.id, shared.text)
        return self.prefixes[shared.id]

    def warm_up(self, prompts: Sequence[str]) -> None:
        for prompt in prompts[: self.config.warmup]:
            self.generator.generate([prompt], GenerationConfig(max_new_tokens=min(4, self.gen.max_new_tokens), seed=self.gen.seed))

    def run(self, case: LoggedRequest, logged: str, served: str, prefix: PrefixEntry | None) -> CaseResult:
        """Generate on both prompts (the logged one's output once per prompt text) and compare."""
        from rapidfuzz.distance import Levenshtein

        first_logged = self.done % 2 == 0
        self.done += 1
        if first_logged:
            o = self._reference(logged)
            c = self.generator.generate([served], self.gen, prefix=prefix)[0]
        else:
            c = self.generator.generate([served], self.gen, prefix=prefix)[0]
            o = self._reference(logged)
        return CaseResult(case, o, c, o.text == c.text, float(Levenshtein.normalized_similarity(o.text, c.text)),
                          _parses(case, o.text), _parses(case, c.text), logged == served)

    def _reference(self, logged: str) -> SequenceResult:
        if logged not in self.references:
            self.references[logged] = self.generator.generate([logged], self.gen)[0]
        return self.references[logged]


# -- `logmine validate`: the served prompts against the logged ones ---------------------------------
def validate(runtime: PackRuntime, cases: Mapping[str, list[LoggedRequest]], generator: Generator,
             config: ValidateConfig | None = None, progress: Progress | None = None) -> ValidationReport:
    """Replay ``cases`` through each template's whole render plan (what `serve` sends) against their logged prompts."""
    config = config or ValidateConfig()
    progress = progress or (lambda description, done, total: None)
    replay = Replay(runtime, generator, config)
    prepared = {t.id: replay.prompts(t, cases.get(t.id, []), "compressed") for t in runtime.pack.templates}
    replay.warm_up([served for items, _ in prepared.values() for _, _, served in items])
    total = sum(len(items) for items, _ in prepared.values())
    report = ValidationReport(config=_config(config, generator))
    for t in runtime.pack.templates:
        items, skipped = prepared[t.id]
        prefix = replay.prefix(t, "compressed")
        results = []
        for case, logged, served in items:
            results.append(replay.run(case, logged, served, prefix))
            progress("validate", replay.done, total)
        report.templates.append({"template_id": t.id, "name": t.name, "n_requests": t.n_requests, "skipped": skipped,
                                 **summarise(results)})
    report.total = {"template_id": None, "name": "TOTAL", **weighted_total(report.templates)}
    return report


def _config(config: ValidateConfig, generator: Generator) -> dict[str, Any]:
    return {"per_template": config.per_template, "max_new_tokens": config.max_new_tokens, "seed": config.seed,
            "prefix_cache": config.prefix_cache, "warmup": config.warmup, "model": generator.model_name,
            "device": generator.device, "decoding": "greedy", "reference": "the logged prompt"}


# -- `logmine compress --validate N`: which form ships ----------------------------------------------
RECORDED = ("requests", "same_prompt", "exact_match", "edit_similarity", "parses_original", "parses_compressed", "prompt_tokens",
            "uncached_prompt_tokens", "output_tokens")
"""What the pack records of a form's replay: agreement and tokens, never timings (a re-run gives the same pack)."""
CHAIN: tuple[tuple[str, Which], ...] = (("compressed", "compressed"), ("lossless", "lossless"), ("original", "original"))
"""The forms tried in turn, most compressed first; the original ships when none agrees (its agreement is
measured all the same: a family's members and redaction make its rendering differ from some logged prompts)."""


def choose_forms(runtime: PackRuntime, cases: Mapping[str, Sequence[LoggedRequest]], generator: Generator,
                 config: ValidateConfig | None = None, progress: Progress | None = None
                 ) -> tuple[dict[str, FormChoice], PackValidation]:
    """Per template, the most compressed form whose outputs agree with the logged prompts' (mean edit
    similarity >= ``config.threshold``); forms whose prompts equal the logged ones agree without a
    generation. Returns each template's choice and the pack's validation summary."""
    config = config or ValidateConfig()
    progress = progress or (lambda description, done, total: None)
    replay = Replay(runtime, generator, config)
    choices: dict[str, FormChoice] = {}
    total = len(runtime.pack.templates)
    warmed = False
    for index, t in enumerate(runtime.pack.templates):
        progress("validate", index, total)
        mine = list(cases.get(t.id, []))[: config.per_template]
        if not warmed and mine:
            replay.warm_up([mine[0].prompt or ""] if mine[0].prompt else [])
            warmed = True
        choices[t.id] = _choose(t, mine, replay, config)
    progress("validate", total, total)
    return choices, _pack_summary(runtime.pack, choices, config, generator)


def _choose(t: PackTemplate, cases: list[LoggedRequest], replay: Replay, config: ValidateConfig) -> FormChoice:
    if not cases:
        return FormChoice("compressed", None, {"requests": 0, "note": "no logged request to replay"})
    forms: dict[str, dict[str, Any]] = {}
    seen: dict[tuple[str, ...], str] = {}
    refused: list[str] = []
    for shipped, which in CHAIN:
        items, skipped = replay.prompts(t, cases, which)
        key = tuple(served for _, _, served in items)
        if key in seen:  # the same prompts as a form already judged: the same verdict
            forms[shipped] = {**forms[seen[key]], "same_prompts_as": seen[key]}
        elif all(logged == served for _, logged, served in items):
            forms[shipped] = {"requests": len(items), "skipped": skipped, "same_prompt": 1.0 if items else None,
                              "exact_match": 1.0 if items else None,
                              "edit_similarity": 1.0 if items else None, "identical_prompts": True}
        else:
            prefix = replay.prefix(t, which)
            judged = summarise([replay.run(c, lg, sv, prefix) for c, lg, sv in items])
            forms[shipped] = {"skipped": skipped, **{k: v for k, v in judged.items() if k in RECORDED}}
        seen.setdefault(key, shipped)
        sim = forms[shipped].get("edit_similarity")
        if shipped == "original" or (sim is not None and sim >= config.threshold and not forms[shipped].get("skipped")):
            reason = "; ".join(refused) or None
            return FormChoice(shipped, reason, {"requests": len(cases), "threshold": config.threshold, "forms": forms})  # type: ignore[arg-type]
        refused.append(f"{shipped} edit similarity {_fmt(sim)} < {config.threshold}"
                       + (f", {forms[shipped]['skipped']} not rendered" if forms[shipped].get("skipped") else ""))
    raise AssertionError("the chain ends with the original")  # pragma: no cover


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}"


def _pack_summary(pack: TemplatePack, choices: Mapping[str, FormChoice], config: ValidateConfig, generator: Generator) -> PackValidation:
    shipped: dict[str, int] = {"compressed": 0, "lossless": 0, "original": 0}
    for c in choices.values():
        shipped[c.form] += 1
    weights = {t.id: t.n_requests for t in pack.templates}

    def weighted(metric: str, form: str | None) -> float | None:
        """Traffic-weighted ``metric`` of ``form`` (None: of the form each template ships)."""
        pairs = []
        for tid, c in choices.items():
            if not c.record.get("requests"):
                continue
            value = c.record["forms"].get(form or c.form, {}).get(metric)
            if value is not None:
                pairs.append((value, weights.get(tid, 0)))
        mass = sum(w for _, w in pairs)
        return round(sum(v * w for v, w in pairs) / mass, 4) if mass else None

    return PackValidation(
        requests_per_template=config.per_template, max_new_tokens=config.max_new_tokens, threshold=config.threshold,
        model=generator.model_name, device=generator.device,
        templates_validated=sum(1 for c in choices.values() if c.record.get("requests")), shipped=shipped,
        edit_similarity=weighted("edit_similarity", None), exact_match=weighted("exact_match", None),
        edit_similarity_compressed=weighted("edit_similarity", "compressed"))


def make_chooser(generator: Generator, config: ValidateConfig | None = None, progress: Progress | None = None
                 ) -> Callable[[TemplatePack, dict[str, list[LoggedRequest]]], tuple[dict[str, FormChoice], PackValidation]]:
    """The validator ``logmine compress --validate N`` hands the export (``choose``)."""
    def choose(pack: TemplatePack, cases: dict[str, list[LoggedRequest]]) -> tuple[dict[str, FormChoice], PackValidation]:
        return choose_forms(PackRuntime.from_pack(pack), cases, generator, config, progress)

    return choose


def _parses(case: LoggedRequest, output: str) -> bool | None:
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
    ctx = case.context.resolved(case.slots)
    language = resolve_language(ctx.language, ctx.file_path, None if (prefix or suffix) else output)
    if language is None:
        return None

    def errors(code: str) -> int:  # every ERROR/MISSING node counted: no cap, the two are compared
        return error_count(parse(code, language).root_node, limit=sys.maxsize)

    with_output = errors(f"{prefix}{output}{suffix}")
    context = errors(f"{prefix}{suffix}") if (prefix or suffix) else 0
    return with_output <= context


# -- writing results ---------------------------------------------------------------------------
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
