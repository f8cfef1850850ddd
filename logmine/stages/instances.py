"""Template instances: recover slot values from logged prompts, re-render, and measure tokens.

A mined template, read as a pattern, matches every prompt assigned to it; the slot values are
the pattern's groups. Rendering the compressed template with those values gives the prompt the
model would have received, so token counts "after" are measured on real instances, not guessed.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from logmine.stages.fidelity import segments

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
    """Fill ``{{ name }}`` slots literally (values are data: never evaluated as template code)."""
    return "".join(slots.get(s.slot, "") if s.slot else s.text for s in segments(source))


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
    prompts = [list(ids) for ids in token_ids]
    chains: list[list[bytes]] = []
    counts: Counter[bytes] = Counter()
    for ids in prompts:
        h = hashlib.blake2b(digest_size=16)
        keys = []
        for start in range(0, len(ids) - len(ids) % block, block):
            h.update(b"".join(i.to_bytes(4, "little", signed=False) for i in ids[start : start + block]))
            keys.append(h.copy().digest())
        chains.append(keys)
        counts.update(set(keys))
    total = sum(len(ids) for ids in prompts)
    shared = sum(block * sum(1 for k in keys if counts[k] >= 2) for keys in chains)
    return BlockShare(total, shared)
