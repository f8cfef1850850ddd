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

from logmine.stages.compress import CompressConfig
from logmine.stages.export import CompressResult, ExportConfig
from logmine.stages.ingest import IngestConfig, IngestReport

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
        c = self.compress.summary()
        i = self.ingest.summary()
        return {
            "workspace": i["workspace"], "pack": c["pack_dir"], "lines_read": i["lines_read"], "lines_rejected": i["lines_rejected"],
            "requests": c["requests"], "templates_found": self.templates.get("templates"), "families": c["families"],
            "traffic_covered": round(c["requests_covered"] / c["requests"], 4) if c["requests"] else 0.0,
            "static_tokens_before": c["static_tokens_before"], "static_tokens_after_lossless": c["lossless_static_tokens_after"],
            "static_tokens_after": c["static_tokens_after"], "static_token_cut": c["static_token_cut"],
            "rendered_tokens_before": c["rendered_tokens_before"], "rendered_tokens_after": c["rendered_tokens_after"],
            "uncached_tokens_after": c["uncached_tokens_after"], "kv_block_share_before": c["block_share_before"],
            "kv_block_share_after": c["block_share_after"], "fidelity": c["fidelity"],
            "secrets_redacted": sum(c["secrets_redacted"].values()), "secrets_by_kind": c["secrets_redacted"],
            "seconds": round(self.seconds, 2),
        }


def compress_logs(
    logs: Sequence[Path | str],
    out: Path | str,
    config: CompressJobConfig | None = None,
    progress: ProgressFn = lambda d, a, b: None,
) -> CompressJobReport:
    """Ingest ``logs`` into the workspace ``out``, mine and merge templates, compress, write the pack."""
    from logmine.stages.dedup import DedupConfig
    from logmine.stages.ingest import ingest
    from logmine.stages.templates_workspace import TemplatesConfig
    from logmine.stages.templates_workspace import run as run_templates
    from logmine.workspace import Workspace

    config = config or CompressJobConfig()
    started = time.perf_counter()
    ingest_report = ingest(logs, out, config.ingest, progress=progress)
    dedup = DedupConfig(edit_threshold=config.edit_threshold, semantic_threshold=config.semantic_threshold)
    tconfig = TemplatesConfig(dedup=dedup, embeddings=config.embeddings, embedding_model=config.embedding_model)
    templates_report = run_templates(out, tconfig, progress=progress)
    embedder, embedding_name = _embedder(config)
    count_tokens, token_ids, tokenizer_name = _tokenizer(config)
    export_config = ExportConfig(
        compress=config.compress, tokenizer_name=tokenizer_name, embedding_model_name=embedding_name,
        edit_threshold=config.edit_threshold, semantic_threshold=config.semantic_threshold, pack_dir=config.pack_dir,
    )
    from logmine.stages.export import run as run_export

    result = run_export(Workspace.open(out), embedder, count_tokens, export_config, progress, token_ids)
    return CompressJobReport(ingest_report, templates_report.summary(), result, time.perf_counter() - started)


def _embedder(config: CompressJobConfig) -> tuple[Callable[[list[str]], Any], str]:
    if not config.embeddings:
        from logmine.stages.fidelity import hashing_embedder

        return hashing_embedder(), "hashing-bag-of-words"
    from logmine.models import DEFAULT_EMBEDDING_MODEL, embed, embedding_model_path

    name = config.embedding_model
    embedding_model_path(name)  # fail early with a clear error when the model is missing
    return (lambda texts: embed(texts, name)), name or DEFAULT_EMBEDDING_MODEL


def _tokenizer(config: CompressJobConfig) -> tuple[Callable[[list[str]], list[int]], Callable[[list[str]], list[list[int]]], str]:
    from logmine.models import DEFAULT_GENERATOR, load_tokenizer

    tok = load_tokenizer(config.tokenizer)

    def ids(texts: list[str]) -> list[list[int]]:
        return tok(texts, add_special_tokens=False)["input_ids"] if texts else []

    def count(texts: list[str]) -> list[int]:
        return [len(x) for x in ids(texts)]

    return count, ids, config.tokenizer or DEFAULT_GENERATOR
