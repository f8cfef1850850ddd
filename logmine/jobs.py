"""The main job: logs in, a template pack out (`logmine compress LOGS -o OUT`).

It chains the stages, each reading and writing the workspace: ingest (incremental), the
templates stage (mine + near-duplicate merge), then compression and the pack export.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from logmine import models
from logmine.errors import NoPromptsError
from logmine.stages.compress import CompressConfig, CompressResult, ExportConfig, TrimConfig
from logmine.stages.compress import run as run_export
from logmine.stages.ingest import IngestConfig, IngestReport, ingest
from logmine.stages.templates import DedupConfig, TemplatesConfig
from logmine.stages.templates import run as run_templates
from logmine.workspace import Workspace

ProgressFn = Callable[[str, int, int], None]


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


@dataclass
class CompressJobReport:
    """The outcome of the whole job."""

    ingest: IngestReport
    templates: dict[str, Any]
    compress: CompressResult
    seconds: float

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
        return {**head, **c, "secrets_redacted": sum(secrets.values()), "secrets_by_kind": secrets, "seconds": round(self.seconds, 2)}


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
    tconfig = TemplatesConfig(dedup=dedup, embeddings=config.embeddings, embedding_model=config.embedding_model)
    templates_report = run_templates(out, tconfig, progress=progress)
    if not templates_report.requests_with_prompt:
        raise NoPromptsError(out, templates_report.requests, _requests_by_format(Workspace.open(out)))
    embedder, embedding_name = models.embedder_for(config.embeddings, config.embedding_model)
    count_tokens, token_ids, tokenizer_name = models.tokenizer_for(config.tokenizer)
    export_config = ExportConfig(
        compress=config.compress, trim=config.trim, tokenizer_name=tokenizer_name, embedding_model_name=embedding_name,
        edit_threshold=config.edit_threshold, semantic_threshold=config.semantic_threshold, pack_dir=config.pack_dir,
    )
    result = run_export(Workspace.open(out), embedder, count_tokens, export_config, progress, token_ids)
    return CompressJobReport(ingest_report, templates_report.summary(), result, time.perf_counter() - started)


def _requests_by_format(ws: Any) -> dict[str, int]:
    if not ws.has_table("llm_requests"):
        return {}
    counts = ws.scan("llm_requests").group_by("source_format").len().collect()
    return {str(name): int(n) for name, n in counts.iter_rows()}
