"""The templates stage against a workspace: ``llm_requests`` in, template tables out.

:func:`run` streams the prompts of ``llm_requests`` through the prompt miner
(:func:`logmine.stages.templates.prompts.mine_prompts`), merges near-duplicate templates into
families (:mod:`logmine.stages.templates.dedup`, embeddings cached in ``embedding_cache``) and writes, in
one workspace transaction:

- ``request_templates(request_id, template_id)``; the DuckDB view ``llm_requests`` joins it,
  so every request row has a ``template_id`` column (null without a prompt);
- ``templates``: one row per template (see :data:`TEMPLATES_SCHEMA`);
- ``template_families``: one row per template with its family and the merge evidence;
- ``embedding_cache``: the new vectors, keyed by a hash of model and text.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from logmine.early import cores
from logmine.records import UTC_TS
from logmine.stages.templates.dedup import (
    DedupConfig,
    DedupResult,
    Embedder,
    MergeEdge,
    SentenceEmbedder,
    merge_near_duplicates,
)
from logmine.stages.templates.miner import MineConfig
from logmine.stages.templates.prompts import PROMPT_CONFIG, mine_prompts, placeholders
from logmine.workspace import Transaction, Workspace

log = logging.getLogger(__name__)

ProgressFn = Callable[[str, int, int], None]

REQUEST_TEMPLATES_SCHEMA: dict[str, pl.DataType] = {"request_id": pl.String(), "template_id": pl.String()}
TEMPLATES_SCHEMA: dict[str, pl.DataType] = {
    "template_id": pl.String(),  # b2: content hash of the template text
    "template": pl.String(),  # the text; <*> wildcards and {name} placeholders
    "placeholders": pl.List(pl.String()),  # named placeholders in order of first appearance
    "wildcards": pl.Int64(),  # number of <*>
    "family_id": pl.String(),
    "n_requests": pl.Int64(),
    "share": pl.Float64(),  # n_requests / requests with a prompt
    "tokens": pl.Int64(),  # static text, approximate: words and punctuation marks
    "mean_prompt_tokens": pl.Float64(),  # of its requests, when the log has prompt_tokens
    "first_seen": UTC_TS,
    "last_seen": UTC_TS,
    "example_request_ids": pl.List(pl.String()),
}
TEMPLATE_FAMILIES_SCHEMA: dict[str, pl.DataType] = {
    "family_id": pl.String(),
    "template_id": pl.String(),
    "representative_id": pl.String(),  # the member with the most requests
    "is_representative": pl.Boolean(),
    "family_size": pl.Int64(),
    "family_requests": pl.Int64(),
    "merged_with": pl.String(),  # the member this one merged with (its strongest edge)
    "edit_similarity": pl.Float64(),
    "semantic_similarity": pl.Float64(),  # null when embeddings were off
}
EMBEDDING_CACHE_SCHEMA: dict[str, pl.DataType] = {
    "key": pl.String(), "model": pl.String(), "dim": pl.Int64(), "vector": pl.List(pl.Float32()),
}
REQUEST_COLUMNS = ("request_id", "ts", "prompt", "prefix", "suffix", "file_path", "language", "attrs", "prompt_tokens")


@dataclass(frozen=True)
class TemplatesConfig:
    """Options of the templates stage."""

    mine: MineConfig = PROMPT_CONFIG
    """The miner's options (whitespace kept: prompts)."""
    dedup: DedupConfig = field(default_factory=DedupConfig)
    """Near-duplicate merge thresholds and blocking."""
    embeddings: bool = True
    """Check merges with embeddings as well as edit similarity."""
    embedding_model: str | None = None
    """A local sentence-transformers directory; None: the bundled all-MiniLM-L6-v2."""
    batch_rows: int = 20_000
    """Requests read per batch."""
    examples: int = 3
    """Example request ids kept per template."""
    workers: int | None = None
    """Processes making the prompt skeletons while this one mines (the same templates whatever the number;
    :mod:`~logmine.stages.templates.parallel`). 0: none; None: one per core, at most
    ``MAX_AUTO_WORKERS``, for ``AUTO_WORKERS_FROM`` requests or more (fewer are mined sooner in this process
    than a worker starts)."""


AUTO_WORKERS_FROM = 20_000
MAX_AUTO_WORKERS = 4


def skeleton_workers(config: TemplatesConfig, requests: int) -> int:
    """The number of skeleton worker processes for ``requests`` requests (see :attr:`TemplatesConfig.workers`)."""
    if config.workers is not None:
        return config.workers
    return min(cores(), MAX_AUTO_WORKERS) if requests >= AUTO_WORKERS_FROM else 0


@dataclass
class TemplatesReport:
    """What the stage did."""

    workspace: str
    requests: int = 0
    requests_with_prompt: int = 0
    templates: int = 0
    families: int = 0
    merged_templates: int = 0
    candidate_pairs: int = 0
    embeddings_computed: int = 0
    embeddings_cached: int = 0
    embedding_model: str | None = None
    seconds: float = 0.0
    top: list[dict[str, Any]] = field(default_factory=list)

    def summary(self) -> dict[str, Any]:
        return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in self.__dict__.items() if k != "top"}


def llm_requests_view_sql(request_templates_file: str) -> str:
    """The ``llm_requests`` view: its own files, left-joined to ``request_templates``.

    DuckDB binds a view when it is created and the workspace creates views in name order
    (``llm_requests`` before ``request_templates``), so the join reads the Parquet file of
    ``request_templates`` itself, found next to ``llm_requests``' own files (moved roots work)."""
    name = request_templates_file.rsplit("/", 1)[-1].replace("'", "''")
    target = f"/data/request_templates/{name}"
    return (
        "SELECT r.*, t.template_id FROM read_parquet({files}, union_by_name = true) r "
        f"LEFT JOIN read_parquet(regexp_replace(({{files}})[1], '/data/llm_requests/[^/]*$', '{target}')) t USING (request_id)"
    )


def run(
    out: Path | str,
    config: TemplatesConfig | None = None,
    embedder: Embedder | None = None,
    progress: ProgressFn = lambda description, done, total: None,
) -> TemplatesReport:
    """Mine the workspace's prompt templates and write the template tables (see module doc).

    ``embedder`` overrides the configured model (tests pass a small deterministic one)."""
    config = config or TemplatesConfig()
    started = time.perf_counter()
    ws = Workspace.open(out)
    report = TemplatesReport(workspace=str(ws.root))
    with ws.lock():
        ws = ws.reload()
        ids, stamps, tokens, records = _columns(ws, config.batch_rows)
        total = ws.scan("llm_requests").select(pl.len()).collect().item()
        mined = mine_prompts(records(progress, total), config.mine, workers=skeleton_workers(config, total))
        report.requests = len(ids)
        rows = pl.DataFrame({"request_id": ids, "ts": stamps, "template_id": mined.assignments, "prompt_tokens": tokens},
                            schema={"request_id": pl.String(), "ts": UTC_TS, "template_id": pl.String(), "prompt_tokens": pl.Int64()})
        assigned = rows.filter(pl.col("template_id").is_not_null())
        report.requests_with_prompt = assigned.height
        progress("templates merge", 0, 1)
        if embedder is None and config.embeddings:
            embedder = SentenceEmbedder(config.embedding_model)
        cache = WorkspaceEmbeddingCache(ws)
        uses = assigned.group_by("template_id").agg(pl.len(), pl.col("ts").min().alias("first"), pl.col("ts").max().alias("last"))
        counts = {t: n for t, n, _, _ in uses.iter_rows()}
        spans = {t: (first, last) for t, _, first, last in uses.iter_rows()}
        dedup = merge_near_duplicates(mined.templates, embedder if config.embeddings else None, config.dedup, counts, cache, spans)
        templates = _templates_frame(mined.templates, assigned, dedup, config.examples)
        families = _families_frame(dedup, counts)
        txn = ws.transaction()
        _write(txn, assigned.select("request_id", "template_id"), templates, families, cache.new_rows(dedup.embedding_model))
        txn.commit()
        progress("templates merge", 1, 1)
    report.templates = templates.height
    report.families = dedup.families
    report.merged_templates = templates.height - dedup.families
    report.candidate_pairs = dedup.candidate_pairs
    report.embeddings_computed = dedup.embeddings_computed
    report.embeddings_cached = dedup.embeddings_cached
    report.embedding_model = dedup.embedding_model
    report.top = templates.head(10).select("template_id", "n_requests", "share", "family_id", "template").to_dicts()
    report.seconds = time.perf_counter() - started
    return report


def _columns(ws: Workspace, batch_rows: int) -> tuple[list[str], list[Any], list[Any], Callable[[ProgressFn, int], Iterator[dict[str, Any]]]]:
    """Request ids, timestamps and prompt token counts (filled while the records stream)."""
    ids: list[str] = []
    stamps: list[Any] = []
    tokens: list[Any] = []
    files = [str(p) for p in _in_source_order(ws.files("llm_requests"))]

    def records(progress: ProgressFn, total: int) -> Iterator[dict[str, Any]]:
        if not files:
            return
        import pyarrow.dataset as pads  # it imports pandas (~0.3 s): not for the commands that only import this stage

        dataset = pads.dataset(files, format="parquet")
        columns = [c for c in REQUEST_COLUMNS if c in dataset.schema.names]
        for batch in dataset.to_batches(columns=columns, batch_size=batch_rows):
            for row in batch.to_pylist():
                ids.append(row["request_id"])
                stamps.append(row.get("ts"))
                tokens.append(row.get("prompt_tokens"))
                yield row
            progress("templates mine", len(ids), total)

    return ids, stamps, tokens, records


def _in_source_order(files: list[Path]) -> list[Path]:
    """The table's files in the order of the logs they hold (each file's first source file and line): the
    miner reads the requests in an order that depends on the logs alone, not on the partitions' names
    (hashes of the logs' absolute paths), so the same logs give the same templates wherever they lie."""
    import pyarrow.parquet as pq

    def first(path: Path) -> tuple[str, int]:
        for batch in pq.ParquetFile(path).iter_batches(batch_size=1, columns=["source_file", "source_line"]):
            row = batch.to_pylist()[0]
            return row["source_file"] or "", row["source_line"] or 0
        return "", 0

    return sorted(files, key=lambda p: (first(p), p.name))


_WORDS = re.compile(r"\w+|[^\w\s]")
_VARIABLE = re.compile(r"<\*>|\{[a-z_]+\d*\}")


def static_tokens(template: str) -> int:
    """An approximate token count of a template's static text (words and punctuation marks)."""
    return len(_WORDS.findall(_VARIABLE.sub(" ", template)))


def _templates_frame(texts: Mapping[str, str], assigned: pl.DataFrame, dedup: DedupResult, examples: int) -> pl.DataFrame:
    total = max(assigned.height, 1)
    stats = (
        assigned.sort("ts", "request_id", nulls_last=True)
        .group_by("template_id", maintain_order=True)
        .agg(
            pl.len().alias("n_requests"),
            pl.col("prompt_tokens").mean().alias("mean_prompt_tokens"),
            pl.col("ts").min().alias("first_seen"),
            pl.col("ts").max().alias("last_seen"),
            pl.col("request_id").head(examples).alias("example_request_ids"),
        )
    )
    meta = pl.DataFrame(
        [{"template_id": t, "template": text, "placeholders": placeholders(text), "wildcards": text.count("<*>"),
          "family_id": dedup.family_of.get(t), "tokens": static_tokens(text)} for t, text in texts.items()],
        schema={"template_id": pl.String(), "template": pl.String(), "placeholders": pl.List(pl.String()), "wildcards": pl.Int64(),
                "family_id": pl.String(), "tokens": pl.Int64()},
    )
    frame = meta.join(stats, on="template_id", how="inner").with_columns(
        pl.col("n_requests").cast(pl.Int64), (pl.col("n_requests") / total).alias("share"))
    return frame.select(list(TEMPLATES_SCHEMA)).cast(TEMPLATES_SCHEMA).sort(["n_requests", "template_id"], descending=[True, False])  # type: ignore[arg-type]


def _families_frame(dedup: DedupResult, counts: Mapping[str, int]) -> pl.DataFrame:
    best: dict[str, MergeEdge] = {}
    for edge in dedup.edges:
        for me, other in ((edge.a, edge.b), (edge.b, edge.a)):
            if me not in best or _strength(edge) > _strength(best[me]):
                best[me] = edge
    rows = []
    for fid, members in sorted(dedup.members.items()):
        rep = dedup.representative[fid]
        requests = sum(counts.get(m, 0) for m in members)
        for m in members:
            edge = best.get(m)
            rows.append({
                "family_id": fid, "template_id": m, "representative_id": rep, "is_representative": m == rep,
                "family_size": len(members), "family_requests": requests,
                "merged_with": None if edge is None else (edge.b if edge.a == m else edge.a),
                "edit_similarity": None if edge is None else edge.edit_similarity,
                "semantic_similarity": None if edge is None else edge.semantic_similarity,
            })
    return pl.DataFrame(rows, schema=TEMPLATE_FAMILIES_SCHEMA)


def _strength(edge: MergeEdge) -> tuple[float, float]:
    return (edge.semantic_similarity or 0.0, edge.edit_similarity)


def _write(txn: Transaction, assigned: pl.DataFrame, templates: pl.DataFrame, families: pl.DataFrame, cache_rows: pl.DataFrame) -> None:
    txn.replace_table("request_templates", assigned.cast(REQUEST_TEMPLATES_SCHEMA))  # type: ignore[arg-type]
    txn.replace_table("templates", templates)
    txn.replace_table("template_families", families)
    txn.ensure_table("embedding_cache", EMBEDDING_CACHE_SCHEMA)
    if cache_rows.height:
        txn.put_partition("embedding_cache", f"run-{txn.token}", cache_rows)
    file = txn.tables["request_templates"].partitions["all"]
    txn.tables["llm_requests"].view_sql = llm_requests_view_sql(file)


class WorkspaceEmbeddingCache:
    """The ``embedding_cache`` table as an :class:`~logmine.stages.templates.dedup.EmbeddingCache`:
    reads what earlier runs stored, collects the new vectors for this run's transaction."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.new: dict[str, np.ndarray] = {}
        self.model = ""

    def get(self, keys: list[str]) -> dict[str, np.ndarray]:
        if not keys or not self.ws.has_table("embedding_cache"):
            return {}
        found = self.ws.scan("embedding_cache").filter(pl.col("key").is_in(keys)).select("key", "vector").unique("key").collect()
        return {k: np.asarray(v, dtype=np.float32) for k, v in zip(found["key"], found["vector"])}

    def put(self, vectors: Mapping[str, np.ndarray]) -> None:
        self.new.update(vectors)

    def new_rows(self, model: str | None = None) -> pl.DataFrame:
        rows = [{"key": k, "model": model or "", "dim": int(v.shape[0]), "vector": v.astype(np.float32).tolist()} for k, v in sorted(self.new.items())]
        return pl.DataFrame(rows, schema=EMBEDDING_CACHE_SCHEMA)
