"""A template family on its way into the pack: its members, instances, compressed form and render plan."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from logmine.pack import RenderPlan
from logmine.stages.compress.compressor import CompressedTemplate


@dataclass
class Family:
    """One template family on its way into the pack."""

    family_id: str
    rep: dict[str, Any]
    members: list[dict[str, Any]]
    raw_source: str
    """The representative as Jinja2, unredacted (matches the logged prompts)."""
    names: list[str]
    original: str = ""
    """The representative, redacted: what the pack holds as ``original_source``."""
    slots: dict[str, dict[str, str]] = field(default_factory=dict)
    """request_id -> the representative's slot values, for every instance recovered."""
    matches: Counter[str] = field(default_factory=Counter)
    sample: list[dict[str, Any]] = field(default_factory=list)
    compressed: CompressedTemplate | None = None
    roles: dict[str, str] = field(default_factory=dict)
    head: tuple[str, str] | None = None
    """The static head the template shares with others, compressed once: (lossless, lossy) literal text."""
    plan: RenderPlan | None = None
    """The render plan of the compressed source (:class:`~logmine.pack.RenderPlan`; None: verbatim)."""

    @property
    def n_requests(self) -> int:
        return sum(m["n_requests"] for m in self.members)



def shipped_head(fallback: str | None, head: tuple[str, str], literal: str) -> tuple[str, str]:
    """(lossless, shipped) literal text of the shared head a template starts with, from the head's
    (lossless, compressed) forms: as compressed, or where the gate fell back, lossless or original."""
    if fallback is None:
        return head
    return (head[0], head[0]) if fallback.startswith("lossless") else (literal, literal)
