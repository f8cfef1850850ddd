"""The miner's state: its units (token signatures or consolidated templates) and their texts.

Shared by the streaming miner (:mod:`logmine.stages.templates.miner`) and the regrouping rules
that need the whole picture (:mod:`logmine.stages.templates.anchors`).
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from logmine.stages.templates.cluster import Group, find_root

_WS = re.compile(r"(\s+)")


def split_tokens(text: str, collapse_spaces: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(tokens, separators)``; separators hold the leading, between-token and trailing whitespace."""
    if collapse_spaces:
        toks = tuple(text.split())
        return toks, ()
    parts = _WS.split(text)
    lead = parts[1] if parts[0] == "" and len(parts) > 1 else ""
    if parts[0] == "":
        parts = parts[2:]
    trail = parts[-2] if len(parts) > 1 and parts[-1] == "" else ""
    if parts and parts[-1] == "":
        parts = parts[:-2]
    return tuple(parts[0::2]), (lead, *parts[1::2], trail)


_FIELD_SEP = re.compile(r"(?<=\|)(?=.)")
"""Where a word is cut into fields: after each ``|`` that is not the word's last character."""


def split_fields(words: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Words of a log line cut into their ``|``-delimited fields (``main|ray.serve|Started`` is
    ``main|``, ``ray.serve|``, ``Started``), and the separators that join them back: a space
    between words, nothing between the fields of one word. A field then varies, or names the
    event, on its own, as a word does."""
    tokens: list[str] = []
    seps = [""]
    for n, word in enumerate(words):
        for k, part in enumerate(_FIELD_SEP.split(word) if "|" in word else (word,)):
            if tokens:
                seps.append(" " if k == 0 and n else "")
            tokens.append(part)
    seps.append("")
    return tuple(tokens), tuple(seps)


def render(tokens: Sequence[str], seps: Sequence[str]) -> str:
    """The text of ``tokens`` joined by ``seps`` (leading, between and trailing whitespace;
    single spaces when ``seps`` is empty)."""
    if not seps:
        return " ".join(tokens)
    out = [seps[0]]
    for i, tok in enumerate(tokens):
        if i:
            out.append(seps[i])
        out.append(tok)
    out.append(seps[-1])
    return "".join(out)


@dataclass
class MinerState:
    """The miner's units: signatures (or consolidated templates) with their line counts."""

    tokens: list[tuple[str, ...]] = field(default_factory=list)
    seps: list[tuple[str, ...]] = field(default_factory=list)
    weights: list[int] = field(default_factory=list)
    parent: list[int] = field(default_factory=list)
    first_line: list[int] = field(default_factory=list)
    line_units: array = field(default_factory=lambda: array("q"))
    compactions: int = 0
    slot_text: Callable[[str], str | None] | None = field(default=None, repr=False, compare=False)
    """The text a slot token's id stands for (prompts), set for the last consolidation only: a rare
    template whose code slot took static lines joins the template its logged text matches
    (:func:`logmine.stages.templates.rare.absorb_rare`). Every way of mining sets it there alike."""

    def add_unit(self, tokens: tuple[str, ...], seps: tuple[str, ...], first_line: int, weight: int = 0) -> int:
        self.tokens.append(tokens)
        self.seps.append(seps)
        self.weights.append(weight)
        self.parent.append(len(self.parent))
        self.first_line.append(first_line)
        return len(self.tokens) - 1

    def find(self, u: int) -> int:
        return find_root(self.parent, u)

    def live(self) -> list[int]:
        return [u for u in range(len(self.parent)) if self.parent[u] == u]


def group_text(g: Group, state: MinerState) -> str:
    if g.text is not None:
        return g.text

    def seps_of(part: Group) -> tuple[str, ...]:
        return state.seps[min(part.members, key=lambda i: (state.tokens[i], state.seps[i]))]

    tokens, seps = g.render(seps_of)
    return render(tokens, seps)
