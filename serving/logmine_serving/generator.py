"""The generator: greedy decoding with a KV cache, batched with left padding, and reuse of a
pack's shared prefixes.

:class:`Generator` wraps any Hugging Face causal LM (``logmine.models.load_generator``: the
bundled SmolLM2, or ``--model DIR``). Decoding is a plain loop over ``model(...)`` so every
token carries its own timestamp (TTFT and inter-token latency are measured, not estimated) and
a batch can stream each sequence's tokens as they come.

Shared-prefix reuse: :meth:`Generator.prefix` runs the prefill of a static prefix once and
keeps its ``DynamicCache``. A prompt whose token ids start with the prefix's ids gets a deep
copy of that cache, cropped to the common length, and only its remaining tokens are
prefilled. The token sequence the model sees is the same as without the cache, so greedy
outputs are the same (tests and bench/serving.py check it).
"""

from __future__ import annotations

import copy
import inspect
import logging
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from logmine.models import load_generator

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GenerationConfig:
    """How to decode."""

    max_new_tokens: int = 32
    """Tokens to generate at most per sequence."""
    stop_at_eos: bool = True
    """Stop a sequence at the tokenizer's end-of-sequence token."""
    seed: int = 0
    """Seed set before each generation (greedy decoding does not use it; kept for honesty)."""


@dataclass
class PrefixEntry:
    """A prefilled static prefix: its token ids and the KV cache after them."""

    id: str
    ids: list[int]
    cache: Any
    hits: int = 0


@dataclass
class SequenceResult:
    """One sequence's output and timings (seconds, ``time.perf_counter`` clock)."""

    token_ids: list[int] = field(default_factory=list)
    text: str = ""
    prompt_tokens: int = 0
    cached_tokens: int = 0
    start: float = 0.0
    token_times: list[float] = field(default_factory=list)

    @property
    def ttft(self) -> float | None:
        return self.token_times[0] - self.start if self.token_times else None

    @property
    def inter_token(self) -> list[float]:
        t = self.token_times
        return [b - a for a, b in zip(t, t[1:])]

    @property
    def tokens_per_s(self) -> float | None:
        if not self.token_times:
            return None
        elapsed = self.token_times[-1] - self.start
        return len(self.token_times) / elapsed if elapsed > 0 else None


@dataclass(frozen=True)
class StepEvent:
    """Tokens produced by one decoding step: ``(sequence index, token id, text delta)`` each."""

    tokens: list[tuple[int, int, str]]
    time: float


class Generator:
    """A causal LM with greedy, batched, streaming decoding and prefix caches."""

    def __init__(self, model: Any, tokenizer: Any, device: str = "cpu") -> None:
        import torch

        self.torch = torch
        self.model, self.tokenizer, self.device = model, tokenizer, device
        self.eos_id = tokenizer.eos_token_id
        pad = tokenizer.pad_token_id
        self.pad_id = pad if pad is not None else (self.eos_id if self.eos_id is not None else 0)
        params = inspect.signature(model.forward).parameters
        self._cache_kw = "cache" if "cache" in params else "past_key_values"
        self._prefixes: dict[str, PrefixEntry] = {}
        self._lock = threading.Lock()  # one forward pass at a time
        self.prefix_hits = 0
        self.prefix_misses = 0

    @classmethod
    def load(cls, name: str | None = None, device: str | None = None) -> Generator:
        """The bundled SmolLM2 (``name=None``) or a local model directory."""
        model, tokenizer, dev = load_generator(name, device)
        return cls(model, tokenizer, dev)

    @property
    def model_name(self) -> str:
        return str(getattr(self.model.config, "_name_or_path", "") or type(self.model).__name__)

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def decode(self, ids: Sequence[int]) -> str:
        return self.tokenizer.decode(list(ids), skip_special_tokens=True)

    # -- prefixes ------------------------------------------------------------------------------
    def prefix(self, prefix_id: str, text: str) -> PrefixEntry:
        """The prefilled cache of ``text`` (computed on first use, then kept)."""
        entry = self._prefixes.get(prefix_id)
        if entry is not None:
            return entry
        ids = self.encode(text)
        with self._lock, self.torch.inference_mode():
            if ids:
                out = self._forward(self.torch.tensor([ids], device=self.device), cache=None)
                cache = out.cache if hasattr(out, "cache") else out.past_key_values
            else:
                cache = None
        entry = PrefixEntry(prefix_id, ids, cache)
        self._prefixes[prefix_id] = entry
        return entry

    def _forward(self, input_ids: Any, cache: Any, attention_mask: Any = None, position_ids: Any = None) -> Any:
        kwargs = {self._cache_kw: cache, "use_cache": True, "attention_mask": attention_mask, "position_ids": position_ids}
        return self.model(input_ids=input_ids, **kwargs)

    # -- decoding ------------------------------------------------------------------------------
    def generate(self, prompts: Sequence[str | list[int]], config: GenerationConfig | None = None,
                 prefix: PrefixEntry | None = None, max_new_tokens: Sequence[int] | None = None) -> list[SequenceResult]:
        """Generate for every prompt in one batch; return each sequence's result."""
        results: list[SequenceResult] = []
        for _event in self.stream(prompts, config, prefix, max_new_tokens, results):
            pass
        return results

    def stream(self, prompts: Sequence[str | list[int]], config: GenerationConfig | None = None,
               prefix: PrefixEntry | None = None, max_new_tokens: Sequence[int] | None = None,
               results: list[SequenceResult] | None = None) -> Iterator[StepEvent]:
        """Greedy-decode ``prompts`` as one left-padded batch, yielding the tokens of each step.

        ``results`` (if given) is filled with one :class:`SequenceResult` per prompt.
        ``max_new_tokens`` caps each sequence separately (default: ``config.max_new_tokens``).
        """
        config = config or GenerationConfig()
        ids_list = [self.encode(p) if isinstance(p, str) else list(p) for p in prompts]
        if any(not ids for ids in ids_list):
            raise ValueError("cannot generate from an empty prompt")
        limits = list(max_new_tokens) if max_new_tokens is not None else [config.max_new_tokens] * len(ids_list)
        out = results if results is not None else []
        out.extend(SequenceResult(prompt_tokens=len(ids)) for ids in ids_list)
        with self._lock, self.torch.inference_mode():
            self.torch.manual_seed(config.seed)
            yield from self._decode(ids_list, limits, config, prefix, out)

    def _prefill_inputs(self, ids_list: list[list[int]], prefix: PrefixEntry | None) -> tuple[int, Any]:
        """The number of prompt tokens served from ``prefix``'s cache, and that cache (copied)."""
        if prefix is None or prefix.cache is None or not prefix.ids:
            return 0, None
        common = min(_common_prefix(ids, prefix.ids) for ids in ids_list)
        common = min(common, min(len(ids) for ids in ids_list) - 1)  # at least one token to prefill
        if common <= 0:
            self.prefix_misses += 1
            return 0, None
        cache = copy.deepcopy(prefix.cache)
        if common < len(prefix.ids):
            cache.crop(-(len(prefix.ids) - common))
        if len(ids_list) > 1:
            cache.batch_repeat_interleave(len(ids_list))
        prefix.hits += 1
        self.prefix_hits += 1
        return common, cache

    def _decode(self, ids_list: list[list[int]], limits: list[int], config: GenerationConfig,
                prefix: PrefixEntry | None, results: list[SequenceResult]) -> Iterator[StepEvent]:
        torch, dev = self.torch, self.device
        start = time.perf_counter()
        for r in results:
            r.start = start
        cached, cache = self._prefill_inputs(ids_list, prefix)
        rest = [ids[cached:] for ids in ids_list]
        width = max(len(r) for r in rest)
        batch = len(rest)
        input_ids = torch.full((batch, width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((batch, cached + width), dtype=torch.long)
        mask[:, :cached] = 1
        for i, r in enumerate(rest):
            input_ids[i, width - len(r):] = torch.tensor(r, dtype=torch.long)
            mask[i, cached + width - len(r):] = 1
            results[i].cached_tokens = cached
        positions = (mask.cumsum(-1) - 1).clamp(min=0)[:, cached:]
        input_ids, mask, positions = input_ids.to(dev), mask.to(dev), positions.to(dev)
        active = [limit > 0 for limit in limits]
        texts = [""] * batch
        step_input = input_ids
        while any(active):
            out = self._forward(step_input, cache, attention_mask=mask, position_ids=positions)
            cache = out.cache if hasattr(out, "cache") else out.past_key_values
            next_ids = out.logits[:, -1, :].argmax(dim=-1)
            chosen = next_ids.tolist()  # synchronises with the device: the token exists now
            now = time.perf_counter()
            emitted: list[tuple[int, int, str]] = []
            for i, tok in enumerate(chosen):
                if not active[i]:
                    continue
                res = results[i]
                if config.stop_at_eos and tok == self.eos_id:
                    active[i] = False
                    continue
                res.token_ids.append(tok)
                res.token_times.append(now)
                delta = self._text_delta(res, texts, i)
                emitted.append((i, tok, delta))
                if len(res.token_ids) >= limits[i]:
                    active[i] = False
            if emitted:
                yield StepEvent(emitted, now)
            if not any(active):
                break
            step_input = next_ids.unsqueeze(-1)
            mask = torch.cat([mask, torch.ones((batch, 1), dtype=mask.dtype, device=dev)], dim=-1)
            positions = positions[:, -1:] + 1
        for res in results:
            res.text = self.decode(res.token_ids)

    def _text_delta(self, res: SequenceResult, texts: list[str], i: int) -> str:
        """The new text of sequence ``i`` (held back while it ends in a partial UTF-8 character)."""
        text = self.decode(res.token_ids)
        if text.endswith("\ufffd"):
            return ""
        delta, texts[i] = text[len(texts[i]):], text
        return delta


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i
