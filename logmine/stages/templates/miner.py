"""Template mining: recover the templates of log lines or prompts, and their variable slots.

:func:`mine_templates` is the pure core (values in, values out): one streaming pass that masks
each line (:mod:`logmine.masking`), groups lines by their masked signature, and periodically
consolidates the signatures into templates (:mod:`logmine.stages.templates.cluster`), so memory
stays bounded by ``MineConfig.max_units`` however long the input. The result assigns every
input line a template id (a content hash of the template text, stable across runs) and maps
each id to its text, variables written ``<*>``.

For prompts, :func:`logmine.stages.templates.prompts.mine_prompts` first replaces the values
the log record carries (prefix, suffix, file path, ...) and code spans by named placeholders.

Partition + merge: :func:`merge_results` combines the results of two shards into what one run
over both would give (exactly so while neither shard compacted).
"""

from __future__ import annotations

import logging
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from logmine.masking import DEFAULT_RULES, WILDCARD, Masker, MaskRule
from logmine.hashing import content_id
from logmine.stages.templates.rare import Hosts, is_pattern
from logmine.stages.templates.cluster import ClusterParams, Group, cluster
from logmine.stages.templates.collapse import collapse_wildcards
from logmine.stages.templates.state import MinerState, group_text, split_fields, split_tokens

log = logging.getLogger(__name__)
_DIGIT = re.compile(r"[0-9]")

ProgressFn = Callable[[str, int, int], None]
Regroup = Callable[[list[Group], "MinerState"], list[Group]]
"""A further merge of the clustered templates that needs the whole picture (see prompts)."""


@dataclass(frozen=True)
class MineConfig:
    """Options of the template miner. The defaults are the one config used on every system."""

    mask_rules: tuple[MaskRule, ...] = DEFAULT_RULES
    """Masking rules, in order (see :func:`logmine.masking.build_rules` to add your own)."""
    typed_masks: bool = False
    """Write masked values as ``<NAME>`` (the rule's ``mask_with``) instead of ``<*>``."""
    collapse_spaces: bool = True
    """Read every whitespace run as one space (log lines); False keeps it (prompts), and reads a
    chat's turn labels as structure (see :attr:`logmine.stages.templates.cluster.ClusterParams.chat_turns`)."""
    max_constant_values: int = 4
    """A token position taking more distinct words than this is a variable."""
    variable_ratio: float = 0.5
    """A position with at least 3 distinct words, each in fewer than 1/ratio lines, is a variable."""
    min_context_tokens: int = 3
    """Constant words a line needs besides its first word before that word may be a variable."""
    max_units: int = 50_000
    """Signatures held before they are consolidated into templates (bounds memory)."""
    max_unit_tokens: int = 5_000_000
    """Tokens held over all signatures before a consolidation (bounds memory for long prompts)."""
    line_cache_size: int = 100_000
    """Lines remembered with their signature (a line seen before skips masking); 0 turns it off.
    Log lines are remembered by their digit shape (every digit written 1; see :attr:`logmine.masking.Masker.shape_table`), so a line that differs
    from one seen only in its numbers' digits is seen before, when those digits are all masked."""
    mask_cache_size: int = 200_000
    """Masked words (log lines) or masked lines (prompts) remembered; 0 masks every text whole."""

    @property
    def cluster_params(self) -> ClusterParams:
        # prompts (whitespace kept) read a chat's turn labels as structure
        return ClusterParams(self.max_constant_values, self.variable_ratio, self.min_context_tokens, chat_turns=not self.collapse_spaces)


@dataclass
class MineResult:
    """The templates of the input and the template of each input line.

    ``assignments[i]`` is the template id of line ``i`` (input order); ``templates`` maps each
    id to its text; ``counts`` to its number of lines; ``first_line`` to the index of the
    first line it holds. ``state`` is what :func:`merge_results` needs.
    """

    assignments: list[str]
    templates: dict[str, str]
    counts: dict[str, int]
    first_line: dict[str, int]
    state: MinerState = field(repr=False)

    def template_of(self, index: int) -> str:
        return self.templates[self.assignments[index]]


def template_id(text: str) -> str:
    """The content id of a template text (``b2:`` + blake2b of its canonical JSON)."""
    return content_id(text)


class TemplateMiner:
    """Streaming miner: :meth:`add` each line, then :meth:`result`. Deterministic."""

    def __init__(self, config: MineConfig | None = None, regroup: Regroup | None = None) -> None:
        self.config = config or MineConfig()
        self.regroup = regroup
        self.masker = Masker(self.config.mask_rules, self.config.typed_masks, self.config.mask_cache_size)
        self.state = MinerState()
        self._index: dict[str, int] = {}
        self._cache: dict[str, int] = {}
        self._shapes: dict[bytes, int] = {}
        self._by_shape = self.config.collapse_spaces and self.config.line_cache_size > 0 and self.masker.digit_blind
        self._shape_table = self.masker.shape_table
        self._templates: dict[tuple[int, str], list[int]] = {}
        self._regex: dict[int, re.Pattern[str]] = {}
        self._hosts: Hosts | None = None
        self._held_tokens = 0
        self.lines = 0

    # -- streaming -------------------------------------------------------------------------
    def add(self, line: str) -> int:
        """Add one line; return its unit (a provisional cluster id)."""
        if self._by_shape:
            self.add_all((line,))
            return self.state.line_units[-1]
        u = self._cache.get(line)
        if u is None:
            u = self._unit_for(line)
            self._remember(self._cache, line, u)
        state = self.state
        state.weights[u] += 1
        state.line_units.append(u)
        self.lines += 1
        return u

    def _remember(self, cache: dict[Any, int], key: Any, u: int) -> None:
        if self.config.line_cache_size:
            if len(cache) >= self.config.line_cache_size:
                cache.clear()
            cache[key] = u

    def _unit_for_shape(self, line: str, shape: bytes) -> int:
        """The unit of ``line`` worked out from its digit shape when the shape masks to a text
        with no digit left (then the line masks to that same text: the rules treat digits alike);
        else from the line itself, remembered as it is."""
        words = self.masker.mask_words(shape.decode("utf-8", "surrogatepass"))
        key = " ".join(words)
        if _DIGIT.search(key) is None:
            u = self._unit_of(words, key, key)
            self._remember(self._shapes, shape, u)
        else:  # some word's digits stay (`en0`): those words masked again as they are
            words = self.masker.mask_words_by_shape(line, words)
            key = " ".join(words)
            u = self._unit_of(words, key, key)
            self._remember(self._cache, line, u)
        return u

    def add_all(self, lines: Iterable[str], progress: ProgressFn | None = None, total: int = 0) -> None:
        if not self._by_shape:
            for n, line in enumerate(lines):
                self.add(line)
                if progress is not None and n % 10_000 == 0:
                    progress("templates mine", n, total)
            return
        # log lines remembered by their digit shape: the hot loop, its lookups bound once
        shapes, cache, table, state = self._shapes, self._cache, self._shape_table, self.state
        weights, line_units, first = state.weights, state.line_units, self.lines
        n = first - 1
        for n, line in enumerate(lines, first):
            shape = line.encode("utf-8", "surrogatepass").translate(table)
            u = shapes.get(shape)
            if u is None:
                u = cache.get(line)
                if u is None:
                    self.lines = n  # a new unit's first line
                    u = self._unit_for_shape(line, shape)
                    shapes, cache = self._shapes, self._cache  # a consolidation may have replaced them
            weights[u] += 1
            line_units.append(u)
            if progress is not None and (n - first) % 10_000 == 0:
                progress("templates mine", n - first, total)
        self.lines = n + 1

    def masked(self, line: str) -> str:
        return self.masker.masked(line)

    def _unit_for(self, line: str) -> int:
        if self.config.collapse_spaces:
            words = self.masker.mask_words(line)
            key = " ".join(words)
        else:
            words, key = [], self.masker.mask_lines(line)
        return self._unit_of(words, key, key)

    def _unit_of(self, words: list[str], key: str, masked: str) -> int:
        u = self._index.get(key)
        if u is not None:
            return u
        if len(self._index) >= self.config.max_units or self._held_tokens >= self.config.max_unit_tokens:
            self._compact()
        if not self.config.collapse_spaces:
            tokens, seps = split_tokens(masked, False)
        elif "|" in key:
            tokens, seps = split_fields(words)
        else:
            tokens, seps = words, ()
        tokens = tuple(sys.intern(t) for t in tokens)
        u = self._match(tokens, key)
        if u is None and self._hosts is not None:
            u = self._hosts.find(masked)
        if u is None:
            u = self.state.add_unit(tokens, tuple(sys.intern(s) for s in seps), self.lines)
            self._held_tokens += len(tokens)
        self._index[key] = u
        return u

    def _match(self, tokens: tuple[str, ...], key: str) -> int | None:
        """A consolidated template of the same length whose pattern matches ``tokens``."""
        for t in self._templates.get((len(tokens), tokens[0] if tokens else ""), ()):
            rx = self._regex.get(t)
            if rx is None:
                rx = self._regex[t] = _pattern_regex(self.state.tokens[t])
            if rx.match(" ".join(tokens)):
                return t
        return None

    # -- consolidation ---------------------------------------------------------------------
    def _groups(self) -> list[Group]:
        return groups_of(self.state, self.config, self.masker.wildcards, self.regroup)

    def _compact(self) -> None:
        """Consolidate the live units into templates; keep only the templates (bounded memory)."""
        state = self.state
        groups = self._groups()
        templates: dict[tuple[int, str], list[int]] = {}
        hosts = Hosts() if self.regroup is not None else None
        for g in groups:
            parts = g.parts if g.parts else [g]
            root = None
            for part in parts:
                first = min(state.first_line[i] for i in part.members)
                canonical = min(part.members, key=lambda i: state.tokens[i])
                t = state.add_unit(part.pattern, state.seps[canonical], first, sum(state.weights[i] for i in part.members))
                for i in part.members:
                    state.parent[i] = t
                if root is None:
                    root = t
                elif self.regroup is not None:  # else the parts stay units: the root's tokens match only its own lines
                    state.parent[t] = root
                    state.weights[root] += state.weights[t]
                    state.weights[t] = 0
                if WILDCARD in part.pattern:
                    templates.setdefault((len(part.pattern), part.pattern[0] if part.pattern else ""), []).append(t)
            if g.text is not None and root is not None and hosts is not None and is_pattern(g.text):
                # a merged template stands for all its parts: its unit holds the merged text, not its first part's
                tokens, seps = split_tokens(g.text, self.config.collapse_spaces)
                state.tokens[root], state.seps[root] = tuple(sys.intern(x) for x in tokens), tuple(sys.intern(x) for x in seps)
            if hosts is not None and root is not None:
                hosts.add(group_text(g, state), state.weights[root], root)
        self._templates = templates
        self._hosts = hosts
        self._regex = {}
        self._index = {}
        self._cache = {}
        self._shapes = {}
        self._held_tokens = sum(len(state.tokens[u]) for u in state.live())
        state.compactions += 1
        log.debug("compaction %d: %d templates", state.compactions, len(groups))

    # -- result ----------------------------------------------------------------------------
    def result(self) -> MineResult:
        return finalize(self.state, self.config, self.masker.wildcards, self.regroup)


def template_regex(template: str, wildcards: Iterable[str] = (WILDCARD,)) -> re.Pattern[str]:
    """The template read as a pattern: each wildcard matches any text (spaces and newlines
    included: a value may have several words, or be empty where a merged template's region
    was), each whitespace run any whitespace."""
    alternatives = "|".join(re.escape(w) for w in sorted(set(wildcards), key=len, reverse=True))
    out = []
    for piece in re.split(f"({alternatives})", template.strip()):
        if piece in wildcards:
            out.append(".*?")
        else:
            out.append(r"\s*".join(re.escape(w) for w in re.split(r"\s+", piece)))
    return re.compile(r"\s*" + "".join(out) + r"\s*\Z", re.DOTALL)


def _pattern_regex(pattern: Sequence[str]) -> re.Pattern[str]:
    return re.compile("".join(_token_regex(t) for t in _interleave(pattern)) + r"\Z")


def _token_regex(token: str) -> str:
    """A pattern token as a regex: a wildcard is any word, a named slot ``{code}`` any of its slot tokens."""
    if token == WILDCARD:
        return r"\S+"
    return "".join(rf"\{{{m[1:-1]}(?::[a-z]+)?\}}" if _SLOT_NAME.fullmatch(m) else re.escape(m) for m in _SLOT_NAME.split(token) if m)


_SLOT_NAME = re.compile(r"(\{[a-z_]+\})")


def _interleave(pattern: Sequence[str]) -> list[str]:
    out: list[str] = []
    for i, t in enumerate(pattern):
        if i:
            out.append(" ")
        out.append(t)
    return out


def groups_of(state: MinerState, config: MineConfig, wildcards: frozenset[str], regroup: Regroup | None = None) -> list[Group]:
    """The templates of the live units."""
    groups = cluster(state.tokens, state.weights, config.cluster_params, wildcards, state.live())
    return regroup(groups, state) if regroup is not None else groups


def finalize(state: MinerState, config: MineConfig, wildcards: frozenset[str], regroup: Regroup | None = None) -> MineResult:
    """Cluster the live units one last time and name each template by its content id."""
    groups = groups_of(state, config, wildcards, regroup)
    unit_template: dict[int, str] = {}
    templates: dict[str, str] = {}
    for g in groups:
        text = group_text(g, state)
        tid = template_id(text)
        templates[tid] = text
        for u in g.members:
            unit_template[u] = tid
    of_unit = [unit_template.get(state.find(u)) for u in range(len(state.parent))]  # each unit's root found once
    assignments: list[str] = [of_unit[u] for u in state.line_units]  # type: ignore[misc]
    counts = dict(Counter(assignments))
    first: dict[str, int] = {}
    for n, tid in enumerate(assignments):
        if tid not in first:
            first[tid] = n
            if len(first) == len(counts):
                break
    templates = {t: templates[t] for t in sorted(templates, key=lambda t: (-counts.get(t, 0), t)) if t in counts}
    return MineResult(assignments, templates, counts, first, state)


def mine_templates(lines: Iterable[str], config: MineConfig | None = None, progress: ProgressFn | None = None) -> MineResult:
    """Mine the templates of ``lines`` in one streaming pass; see :class:`MineResult`."""
    miner = TemplateMiner(config)
    miner.add_all(lines, progress)
    return miner.result()


def merge_results(a: MineResult, b: MineResult, config: MineConfig | None = None) -> MineResult:
    """The result of mining ``a``'s lines followed by ``b``'s: both shards' units are
    clustered together, so the templates are those of a single run over all lines (exactly,
    while neither shard compacted). Assignments are a's lines then b's."""
    config = config or MineConfig()
    state = MinerState()
    _copy_state(a.state, state, 0)
    _copy_state(b.state, state, len(a.assignments))
    return finalize(state, config, Masker(config.mask_rules, config.typed_masks).wildcards)


def _copy_state(src: MinerState, dst: MinerState, line_offset: int) -> None:
    base = len(dst.tokens)
    for u in range(len(src.tokens)):
        dst.add_unit(src.tokens[u], src.seps[u], src.first_line[u] + line_offset, src.weights[u])
        dst.parent[base + u] = base + src.find(u)
    dst.line_units.extend(base + u for u in src.line_units)


__all__ = ["MineConfig", "MineResult", "TemplateMiner", "mine_templates", "merge_results", "template_id", "collapse_wildcards"]
