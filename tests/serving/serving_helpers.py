"""Packs and workspaces for the serving tests, built from the pydantic models (no compress stage)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from logmine.pack import PackTemplate, PackTotals, Placeholder, SharedPrefix, Thresholds, TemplatePack, content_id, write_pack
from logmine.records import LLM_REQUESTS_SCHEMA, conform
from logmine.workspace import Workspace

SYSTEM = "You are a careful coding assistant. Complete the code between the markers and answer with code only.\n"


@dataclass(frozen=True)
class Spec:
    name: str
    original: str
    compressed: str
    placeholders: tuple[str, ...] = ("prefix", "suffix")
    shared_prefix: str | None = None


DEFAULT_SPECS = (
    Spec("fim", SYSTEM + "File: {{ file_path }}\n<prefix>{{ prefix }}</prefix><suffix>{{ suffix }}</suffix>",
         SYSTEM + "<prefix>{{ prefix }}</prefix><suffix>{{ suffix }}</suffix>", ("file_path", "prefix", "suffix"), SYSTEM),
    Spec("same", "Complete: {{ prefix }}", "Complete: {{ prefix }}", ("prefix",)),
)


def make_pack(specs: tuple[Spec, ...] = DEFAULT_SPECS) -> TemplatePack:
    templates, prefixes = [], {}
    for s in specs:
        tid = content_id({"template": s.original})
        prefix_id = None
        if s.shared_prefix is not None:
            prefix_id = content_id({"prefix": s.shared_prefix})
            prefixes.setdefault(prefix_id, SharedPrefix(id=prefix_id, text=s.shared_prefix, tokens=len(s.shared_prefix.split()), template_ids=[]))
            prefixes[prefix_id].template_ids.append(tid)
        templates.append(PackTemplate(
            id=tid, name=s.name, source=s.compressed, original_source=s.original,
            placeholders=[Placeholder(name=p, type="code" if p in {"prefix", "suffix"} else "path") for p in s.placeholders],
            shared_prefix_id=prefix_id, n_requests=3, share=1 / len(specs), static_tokens_before=10, static_tokens_after=8,
            rendered_tokens_before=20, rendered_tokens_after=18, uncached_tokens_after=5, fidelity=1.0, lossy=False))
    totals = PackTotals(templates=len(templates), requests=3 * len(templates), static_tokens_before=10, static_tokens_after=8,
                        rendered_tokens_before=20, rendered_tokens_after=18, uncached_tokens_after=5, fidelity=1.0)
    return TemplatePack(created_at="2025-01-01T00:00:00Z", logmine_version="0.1.0", tokenizer="tiny", embedding_model="none",
                        thresholds=Thresholds(edit_similarity=0.8, semantic_similarity=0.9, min_fidelity=0.9),
                        templates=templates, shared_prefixes=list(prefixes.values()), totals=totals)


def write_test_pack(directory: Path, specs: tuple[Spec, ...] = DEFAULT_SPECS) -> Path:
    return write_pack(make_pack(specs), directory)


REQUESTS = [
    ("r1", "fim", "src/a.py", "python", "def add(a, b):\n    return ", "\n"),
    ("r2", "fim", "src/b.py", "python", "import os\n\ndef main():\n    ", "\n"),
    ("r3", "fim", "src/c.js", "javascript", "function greet(name) {\n  ", "\n}\n"),
    ("r4", "same", "src/d.py", "python", "x = [1, 2, 3]\nprint(", ")\n"),
    ("r5", "same", "src/e.py", "python", "class A:\n    def f(self):\n        ", ""),
]


def make_workspace(root: Path, pack: TemplatePack, slots_table: bool = True, with_template_id: bool = True) -> Path:
    """A workspace whose llm_requests carry a template_id (as compress writes it), the prompt the original
    template renders (the logged prompt), and a template_slots table."""
    from logmine.runtime import Form, render

    ids = {t.name: t.id for t in pack.templates}
    originals = {t.name: t.original_source for t in pack.templates}
    rows = [{"request_id": rid, "kind": "completion", "file_path": fp, "language": lang, "prefix": pre, "suffix": suf,
             "prompt": render(Form(name, originals[name]), {"file_path": fp, "prefix": pre, "suffix": suf}),
             "template_id": ids[name]} for rid, name, fp, lang, pre, suf in REQUESTS if name in ids]
    frame = conform(pl.DataFrame(rows), LLM_REQUESTS_SCHEMA)
    if not with_template_id:
        frame = frame.drop("template_id")
    ws = Workspace.create(root)
    with ws.lock():
        txn = ws.transaction()
        txn.replace_table("llm_requests", frame)
        if slots_table:
            # r2's file_path is overridden per request, as compress may record slot values
            txn.replace_table("template_slots", pl.DataFrame({"request_id": ["r2"], "template_id": [ids["fim"]],
                                                              "slots": ['{"file_path": "lib/override.py"}']}))
        txn.commit()
    return root


def trigram_embedder(texts):  # noqa: ANN001, ANN201 - the cache's Embedder signature
    """A deterministic stand-in for a sentence embedder: hashed character trigrams, L2-normalised."""
    import zlib

    import numpy as np

    out = np.zeros((len(texts), 256), dtype=np.float32)
    for row, text in enumerate(texts):
        for i in range(max(len(text) - 2, 1)):
            out[row, zlib.crc32(text[i:i + 3].encode()) % 256] += 1.0
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(norms == 0, 1, norms)


def parse_metrics(text: str) -> dict[str, float]:
    """Prometheus text -> {'name{labels}': value}."""
    values = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.rpartition(" ")
            values[key] = float(value)
    return values


class ScriptedGenerator:
    """A stand-in for :class:`logmine_serving.generator.Generator`: the "model" writes ``rule(prompt)``,
    one token per character, with made-up but monotonic timings; it records every prompt it was given."""

    model_name = "scripted"
    device = "cpu"

    def __init__(self, rule=None) -> None:  # noqa: ANN001
        self.rule = rule or (lambda prompt: prompt[-12:])
        self.prompts: list[str] = []

    def prefix(self, prefix_id: str, text: str):  # noqa: ANN201
        from logmine_serving.generator import PrefixEntry

        return PrefixEntry(prefix_id, list(text.encode()), cache=None)

    def generate(self, prompts, config=None, prefix=None, max_new_tokens=None):  # noqa: ANN001, ANN201
        from logmine_serving.generator import GenerationConfig, SequenceResult

        config = config or GenerationConfig()
        out = []
        for prompt in prompts:
            self.prompts.append(prompt)
            text = self.rule(prompt)[: config.max_new_tokens]
            cached = len(prefix.ids) if prefix is not None and prompt.encode().startswith(bytes(prefix.ids)) else 0
            out.append(SequenceResult(token_ids=[ord(ch) for ch in text], text=text, prompt_tokens=len(prompt.encode()),
                                      cached_tokens=cached, start=0.0, token_times=[0.01 * (i + 1) for i in range(len(text))]))
        return out
