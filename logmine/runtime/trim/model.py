"""Options and results of context trimming (:mod:`logmine.runtime.trim.trimmer`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from logmine.runtime.trim.base import Unit


@dataclass(frozen=True)
class TrimConfig:
    """Options of context trimming."""

    budget_tokens: int = 256
    """Token budget of the prefix slot (approximate tokens: words and punctuation)."""
    suffix_budget_tokens: int = 128
    """Token budget of the suffix slot."""
    declarations_budget_tokens: int = 256
    """Token budget of the declarations slot."""
    ast_weight: float = 0.7
    """Weight of AST importance in the score (recency gets the rest)."""
    near_lines: int = 8
    """Lines up to the cursor whose identifiers count as 'used near the cursor'."""
    near_weight: float = 0.7
    """Suffix and declarations slots: importance a unit gains when it defines a name used at the cursor."""
    lru_decay: float = 0.5
    """Recency factor per step back in a least-recently-used list (files, symbols)."""
    partial_matches: int = 3
    """How many units may match the identifier typed at the cursor for the match to count."""
    use_decay: float = 0.8
    """Recency factor per unit between the cursor and the latest code using a unit's names."""
    max_kept: int = 3
    """Keep at most this many units off the cursor's path (0: no cap beyond the budget and the cut)."""
    unseen_mass: float = 0.3
    """Prefix slot: referenced units expected beyond the candidates' importance, in the expected-F1 cut."""
    prefix_min_score: float = 0.3
    """Prefix slot: units scoring below this are not kept (the expected-F1 cut chooses among the others)."""
    min_score: float = 0.45
    """Suffix and declarations slots: units scoring below this are not kept even when the budget has room."""
    fill: bool = False
    """Prefix slot: fill the budget instead of cutting for F1 (what the model then writes needs the code near
    the cursor and every unit it may reference): the lines nearest the cursor up to ``near_share`` of the
    budget are kept verbatim, then the best-scoring units while they fit, with no floor, cap or expected-F1 cut."""
    near_share: float = 0.5
    """With ``fill``: the share of the prefix budget kept for the contiguous lines nearest the cursor."""


@dataclass
class TrimResult:
    """The trimmed text, the units of the context and which were kept."""

    text: str
    units: list[Unit]
    kept: list[int] = field(default_factory=list)
    path: set[int] = field(default_factory=set)
    tokens: int = 0
    original_tokens: int = 0
    near_start: int | None = None
    """With ``fill``: the byte offset where the verbatim lines nearest the cursor begin (a unit ending after
    it is kept at least in part); None otherwise."""


@dataclass(frozen=True)
class TrimmedSlots:
    """Trimmed slot values of one request and their token counts before and after."""

    values: dict[str, str]
    tokens_before: dict[str, int]
    tokens_after: dict[str, int]
