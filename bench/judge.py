"""Judging prompts by what the model writes: greedy generations of the bundled generator, cached.

Shared by bench/trim.py (``--judge``) and bench/compress.py (``--judge``). Each prompt is generated
once per model and token count (greedy, ``max_new_tokens``, seed 0) and its output kept in a JSONL
cache keyed by the sha256 of the prompt, so a run cut short by ``time_limit_s`` (the shared box
allows a few minutes a command) resumes where it stopped and a tuning round re-generates only the
prompts that changed. Prompts are batched by token length (left padding, attention mask) to bound
the decode overhead; ``batch=1`` generates each alone.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

DEFAULT_CACHE = Path("/tmp/logmine-judge-cache.jsonl")


class Judge:
    """Greedy outputs of the bundled generator (SmolLM2-135M-Instruct on CPU) for prompts, cached on disk."""

    def __init__(self, cache: Path = DEFAULT_CACHE, max_new_tokens: int = 16, batch: int = 8, threads: int = 1) -> None:
        self.cache_path = cache
        self.max_new_tokens = max_new_tokens
        self.batch = batch
        self.threads = threads
        self.model: Any = None
        self.tok: Any = None
        self.outputs: dict[str, str] = {}
        self.generated = 0
        self.seconds = 0.0
        if cache.exists():
            for line in cache.read_text().splitlines():
                row = json.loads(line)
                self.outputs[row["key"]] = row["out"]

    def key(self, prompt: str) -> str:
        return hashlib.sha256(f"smollm2-135m\x00{self.max_new_tokens}\x00{prompt}".encode()).hexdigest()

    def _load(self) -> None:
        if self.model is None:
            import torch

            from logmine.models import load_generator

            torch.set_num_threads(self.threads)
            self.model, self.tok, _ = load_generator(device="cpu")
            torch.set_num_threads(self.threads)
            self.tok.padding_side = "left"
            if self.tok.pad_token is None:
                self.tok.pad_token = self.tok.eos_token

    def missing(self, prompts: Sequence[str]) -> list[str]:
        return list(dict.fromkeys(p for p in prompts if self.key(p) not in self.outputs))

    def run(self, prompts: Sequence[str], time_limit_s: float | None = None) -> bool:
        """Generate every prompt not yet cached; False when ``time_limit_s`` ran out first (rerun to go on)."""
        todo = self.missing(prompts)
        if not todo:
            return True
        self._load()
        import torch

        started = time.perf_counter()
        lengths = {p: len(self.tok(p, add_special_tokens=False).input_ids) for p in todo}
        todo.sort(key=lambda p: lengths[p])
        with self.cache_path.open("a") as out:
            for k in range(0, len(todo), self.batch):
                if time_limit_s is not None and time.perf_counter() - started > time_limit_s:
                    return False
                chunk = todo[k : k + self.batch]
                enc = self.tok(chunk, return_tensors="pt", padding=True, add_special_tokens=False)
                torch.manual_seed(0)
                t0 = time.perf_counter()
                with torch.no_grad():
                    gen = self.model.generate(**enc, max_new_tokens=self.max_new_tokens, do_sample=False,
                                              pad_token_id=self.tok.pad_token_id)
                self.seconds += time.perf_counter() - t0
                new = gen[:, enc.input_ids.shape[1] :]
                for p, ids in zip(chunk, new, strict=True):
                    text = self.tok.decode(ids, skip_special_tokens=True)
                    self.outputs[self.key(p)] = text
                    out.write(json.dumps({"key": self.key(p), "out": text}) + "\n")
                self.generated += len(chunk)
                out.flush()
        return True

    def output(self, prompt: str) -> str:
        return self.outputs[self.key(prompt)]


def edit_similarity(a: str, b: str) -> float:
    """Normalised Levenshtein similarity, as ``logmine validate`` scores outputs."""
    from rapidfuzz.distance import Levenshtein

    return float(Levenshtein.normalized_similarity(a, b))
