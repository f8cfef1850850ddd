"""Template instances: recover slot values from logged prompts, re-render, and measure tokens.

A mined template, read as a pattern, matches every prompt assigned to it; the slot values are
the pattern's groups. Rendering the compressed template with those values gives the prompt the
model would have received, so token counts "after" are measured on real instances, not guessed.
Every rendering goes through the pack runtime (:mod:`logmine.runtime`), the code the serving
layer sends prompts with: the pack counts the tokens of the prompts serving sends, code-context
trimming included (:func:`measure`). The KV-block share is computed over the tokenizer's ids of
the same instances.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from logmine.code import resolve_language
from logmine.pack import RenderPlan
from logmine.prompt_syntax import FIM_PREFIX_SENTINELS, FIM_SUFFIX_SENTINELS
from logmine.runtime import Form, PromptRuntime, RenderContext, lossless, trims
from logmine.stages.compress.fidelity import segments
from logmine.runtime.trim import Trimmer, recent_files
from logmine.runtime.trim.evaluate import evaluate

BLOCK = 16
"""vLLM's default KV-cache block size, in tokens."""


@functools.lru_cache(maxsize=4096)
def slot_pattern(source: str) -> re.Pattern[str]:
    """A regex matching renderings of ``source``: static text literal, each slot a lazy group.

    A slot name used twice must hold the same value both times (a backreference).
    """
    parts, seen = [], set()
    for seg in segments(source):
        if seg.slot is None:
            parts.append(re.escape(seg.text))
        elif seg.slot in seen:
            parts.append(f"(?P={seg.slot})")
        else:
            seen.add(seg.slot)
            parts.append(f"(?P<{seg.slot}>.*?)")
    return re.compile("".join(parts) + r"\Z", re.S)


def extract_slots(source: str, prompt: str) -> dict[str, str] | None:
    """The slot values of ``prompt`` as an instance of ``source``; None when it does not match."""
    m = slot_pattern(source).match(prompt)
    return m.groupdict() if m else None


def render(source: str, slots: dict[str, str]) -> str:
    """``source`` filled with ``slots`` verbatim, by the pack runtime (values are data: never template code)."""
    return _VERBATIM.render(Form("<template>", source), slots)


_VERBATIM = PromptRuntime()


@dataclass(frozen=True)
class BlockShare:
    """How much of a prompt set falls in KV blocks that another prompt of the set also starts with."""

    tokens: int
    shared_tokens: int

    @property
    def share(self) -> float:
        return self.shared_tokens / self.tokens if self.tokens else 0.0


def block_share(token_ids: Iterable[Sequence[int]], block: int = BLOCK) -> BlockShare:
    """Share of prompt tokens in fully shared ``block``-token blocks (prefix-cache hits).

    A block is shared when its chained hash (its tokens and every token before it, as vLLM's
    prefix cache keys it) occurs in at least two prompts.
    """
    import numpy as np

    chains: list[list[bytes]] = []
    counts: Counter[bytes] = Counter()
    total = 0
    step = 4 * block
    for ids in token_ids:
        buf = np.asarray(ids, dtype="<u4").tobytes()
        total += len(ids)
        h = hashlib.blake2b(digest_size=16)
        keys = []
        for start in range(0, len(buf) - len(buf) % step, step):
            h.update(buf[start : start + step])
            keys.append(h.copy().digest())
        chains.append(keys)
        counts.update(set(keys))
    shared = sum(block * sum(1 for k in keys if counts[k] >= 2) for keys in chains)
    return BlockShare(total, shared)


# -- code slots and their trimming roles ------------------------------------------------------------
TRIM_ROLES = ("prefix", "suffix", "declarations")
"""The code-context roles :class:`logmine.runtime.trim.trimmer.Trimmer` trims."""
_SENTINEL_ROLE = [
    (re.compile("(?:" + "|".join(map(re.escape, FIM_PREFIX_SENTINELS)) + r")[ \t]*\Z"), "prefix"),
    (re.compile("(?:" + "|".join(map(re.escape, FIM_SUFFIX_SENTINELS)) + r")[ \t\n]*\Z"), "suffix"),
]


def trim_roles(source: str) -> dict[str, str]:
    """Slot name -> trimming role (``prefix``/``suffix``/``declarations``) of a template's code-context slots.

    A slot named after a role has it; otherwise a slot right after a fill-in-the-middle sentinel
    (``<|fim_prefix|>``, ``<SUF>``, ``[PREFIX]``...) takes the sentinel's role. Each role goes to
    one slot at most (the first); other slots (code the user selected, paths) are never trimmed.
    """
    out: dict[str, str] = {}
    parts = segments(source)
    for i, seg in enumerate(parts):
        if seg.slot is None or seg.slot in out:
            continue
        role = seg.slot if seg.slot in TRIM_ROLES else None
        if role is None and i > 0 and parts[i - 1].slot is None:
            role = next((r for rx, r in _SENTINEL_ROLE if rx.search(parts[i - 1].text)), None)
        if role is not None and role not in out.values():
            out[seg.slot] = role
    return out


def sample_keys(keys: Iterable[str], n: int) -> set[str]:
    """A deterministic sample of ``n`` keys: those with the smallest blake2b hash.

    Stable as logs grow: a key once sampled stays sampled until ``n`` smaller hashes arrive.
    """
    ranked = sorted(keys, key=lambda k: hashlib.blake2b(k.encode(), digest_size=8).digest())
    return set(ranked[:n])


# -- measuring a family's instances: renderings, trimming, tokens -----------------------------------
TokenIds = Callable[[list[str]], list[list[int]]]
"""The tokenizer's texts -> token ids (for the KV-block share metric)."""
VARIANTS = ("before", "lossless", "lossy", "after")
"""The logged prompt; rendered by the lossless template; by the lossy one; by the lossy one with trimmed code slots."""


@dataclass(frozen=True)
class FamilySample:
    """What :func:`measure` needs of one template family."""

    lossless: str
    """The template after the lossless steps."""
    lossy: str
    """The final compressed template."""
    roles: Mapping[str, str]
    """Slot name -> trimming role (:func:`trim_roles`)."""
    requests: Sequence[Mapping[str, Any]]
    """Sampled requests: request_id, ts, session_id, language, file_path, prompt, completion."""
    slots: Sequence[Mapping[str, str]]
    """The slot values of each sampled request (same order)."""
    plan: RenderPlan | None = None
    """The render plan of ``lossy`` (:func:`logmine.runtime.make_plan`); None: slots verbatim."""

    def forms(self) -> dict[str, Form]:
        """What each rendered variant renders: the lossless and lossy templates with their slots
        verbatim (lossless steps kept), and the lossy one with its whole plan."""
        verbatim = lossless(self.plan)
        return {"lossless": Form("lossless", self.lossless, verbatim), "lossy": Form("lossy", self.lossy, verbatim),
                "after": Form("after", self.lossy, self.plan)}


@dataclass
class FamilyTokens:
    """Token counts of a family's sampled instances, per variant."""

    tokens: dict[str, list[int]]

    @property
    def n(self) -> int:
        return len(self.tokens.get("before", []))

    def mean(self, variant: str) -> float:
        values = self.tokens.get(variant, [])
        return sum(values) / len(values) if values else 0.0


@dataclass
class Measured:
    """Per-family token counts, the KV-block shares, and context trimming's figures."""

    families: list[FamilyTokens]
    block_share: dict[str, float] = field(default_factory=dict)
    trimmed: int = 0
    f1: float | None = None
    f1_baseline: float | None = None
    f1_requests: int = 0
    served: dict[str, tuple[str, int]] = field(default_factory=dict)
    """request_id -> (:func:`prompt_hash`, tokens) of the prompt the serving layer sends for it (``after``)."""


def prompt_hash(prompt: str) -> str:
    """A short content hash of a rendered prompt (the ``served_hash`` column of ``template_slots``)."""
    return "b2:" + hashlib.blake2b(prompt.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def request_contexts(families: Sequence[FamilySample], events: Any) -> dict[str, RenderContext]:
    """request_id -> the render context of every sampled request: its language, file and session, and
    the files its session edited or opened before it (from the events table, or none without one)."""
    reqs = [r for f in families for r in f.requests]
    recent = _recent_files(reqs, events) if events is not None and any(trims(f.plan) for f in families) else {}
    return {r["request_id"]: RenderContext.of(r, recent.get(r["request_id"], ())) for r in reqs}


def measure(families: Sequence[FamilySample], contexts: Mapping[str, RenderContext], runtime: PromptRuntime,
            count_tokens: Callable[[list[str]], list[int]], token_ids: TokenIds | None = None,
            progress: Callable[[str, int, int], None] = lambda d, a, b: None, batch: int = 512) -> Measured:
    """Render every sampled instance four ways (:data:`VARIANTS`) through ``runtime``, count tokens,
    and measure trimming (F1 of the kept units, with the runtime's trimmer options).

    ``contexts`` are the requests' render contexts (:func:`request_contexts`); ``after`` is what the
    serving layer sends for the request: the lossy template with its whole plan.
    """
    progress("compress render", 0, 1)
    texts = _renderings(families, contexts, runtime)
    keys = [(i, j) for i, f in enumerate(families) if trims(f.plan) for j in range(len(f.requests))]
    out = Measured([FamilyTokens({}) for _ in families], trimmed=len(keys))
    if keys:
        out.f1, out.f1_baseline, out.f1_requests = _evaluate(families, keys, contexts, runtime)
    owner = [i for i, fam in enumerate(families) for _ in fam.requests]
    ids: dict[str, list] = {}
    for n, variant in enumerate(VARIANTS):
        progress("compress tokens", n, len(VARIANTS))
        ids[variant] = _tokens(texts, variant, ids, count_tokens, token_ids, batch)
        if token_ids is not None and variant != "lossy":
            out.block_share[variant] = round(block_share(ids[variant]).share, 4)
        for i, x in zip(owner, ids[variant], strict=True):
            out.families[i].tokens.setdefault(variant, []).append(x if isinstance(x, int) else len(x))
    progress("compress tokens", len(VARIANTS), len(VARIANTS))
    rids = [r["request_id"] for fam in families for r in fam.requests]
    out.served = {rid: (prompt_hash(text), n) for rid, text, n in
                  zip(rids, texts["after"], [t for f in out.families for t in f.tokens.get("after", [])], strict=True)}
    return out


def _renderings(families: Sequence[FamilySample], contexts: Mapping[str, RenderContext], runtime: PromptRuntime
                ) -> dict[str, list[str]]:
    """Each variant's text of every sampled instance, in family order; the trimmed renderings are made
    by file, then time (the trimmer's parse caches work per file stream; the result does not depend on it)."""
    texts: dict[str, list[str]] = {v: [] for v in VARIANTS}
    keys = [(i, j) for i, f in enumerate(families) for j in range(len(f.requests))]
    forms = [f.forms() for f in families]
    index = {k: n for n, k in enumerate(keys)}
    after: list[str] = [""] * len(keys)
    for i, j in _ordered(families, keys):
        fam = families[i]
        after[index[(i, j)]] = runtime.render(forms[i]["after"], fam.slots[j], contexts.get(fam.requests[j]["request_id"]))
    for (i, j), text in zip(keys, after, strict=True):
        fam = families[i]
        req, slots = fam.requests[j], fam.slots[j]
        ctx = contexts.get(req["request_id"])
        texts["before"].append(req["prompt"])
        texts["lossless"].append(runtime.render(forms[i]["lossless"], slots, ctx))
        texts["lossy"].append(runtime.render(forms[i]["lossy"], slots, ctx))
        texts["after"].append(text)
    return texts


def _tokens(texts: dict[str, list[str]], variant: str, done: dict[str, list], count_tokens: Callable[[list[str]], list[int]],
            token_ids: TokenIds | None, batch: int) -> list:
    """Token ids (or counts, without ``token_ids``) of one variant's texts, in batches; a text equal to
    the same instance's text of an earlier variant is not tokenized again."""
    mine = texts[variant]
    out: list = [None] * len(mine)
    todo = []
    for k, text in enumerate(mine):
        same = next((v for v in done if texts[v][k] == text), None)
        if same is not None:
            out[k] = done[same][k]
        else:
            todo.append(k)
    fn = token_ids if token_ids is not None else count_tokens
    for start in range(0, len(todo), batch):
        chunk = todo[start : start + batch]
        for k, x in zip(chunk, fn([mine[k] for k in chunk]), strict=True):
            out[k] = x
    return out


def _recent_files(requests: Sequence[Mapping[str, Any]], events: Any) -> dict[str, list[str]]:
    """request_id -> files its session edited or opened before it (from the events table)."""
    import polars as pl

    frame = pl.DataFrame({"request_id": [r["request_id"] for r in requests], "session_id": [r.get("session_id") for r in requests],
                          "ts": [r["ts"] for r in requests]}, schema={"request_id": pl.String, "session_id": pl.String,
                                                                      "ts": pl.Datetime("us", "UTC")})
    got = recent_files(frame, events).collect()
    return {rid: list(files) for rid, files in got.iter_rows() if files}


def _ordered(families: Sequence[FamilySample], keys: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Requests by file, then time (the trimmer's incremental caches work per file stream)."""
    def key(k: tuple[int, int]) -> tuple:
        r = families[k[0]].requests[k[1]]
        return (r.get("file_path") or "", r["ts"], r["request_id"])

    return sorted(keys, key=key)


def _evaluate(families: Sequence[FamilySample], keys: list[tuple[int, int]], contexts: Mapping[str, RenderContext],
              runtime: PromptRuntime) -> tuple[float | None, float | None, int]:
    """Mean F1 of trimming and of the nearest-lines baseline over requests whose logged completion
    references a unit of the prefix (``logmine.runtime.trim.evaluate``); and how many requests that was."""
    trimmer = Trimmer(runtime.base)
    ours, base = [], []
    for i, j in _ordered(families, keys):
        r, roles = families[i].requests[j], families[i].roles
        name = next((n for n, role in roles.items() if role == "prefix"), None)
        prefix = families[i].slots[j].get(name, "") if name else ""
        if not prefix or not r.get("completion"):
            continue
        language = resolve_language(r.get("language"), r.get("file_path"))
        if language is None:
            continue
        ctx = contexts.get(r["request_id"])
        e = evaluate(prefix, language, r["completion"], trimmer=trimmer, file_path=r.get("file_path"),
                     recent_files=list(ctx.recent_files) if ctx else [])
        if e.f1 is not None:
            ours.append(e.f1)
            base.append(e.f1_baseline or 0.0)
    if not ours:
        return None, None, 0
    return sum(ours) / len(ours), sum(base) / len(base), len(ours)
