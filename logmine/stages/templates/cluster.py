"""The pure clustering core of the template miner: masked token sequences in, templates out.

Input: *units*, each a masked token sequence (a distinct signature, or a template found
earlier) with the number of lines it stands for. Output: a partition of the units into
templates. The steps, each deterministic and independent of the order of the units:

1. Bucket the units by token count, first token (the first word names the event, as in
   Drain's tree) and the model-format tokens they hold (``<|fim_prefix|>``: a prompt format).
   The bucket word skips what names no event: a masked value or ``key=value`` field
   (``pid=<*> level=INFO``); a first word that is a field (most lines' rest follows three or
   more first words: ``chrome.exe - ...``), which then stays a variable; and, after such a
   field, a word nearly every line has (a logger's name in ``main|ray.serve|Started ...``).
   A prompt read whole as one code slot and logged verbatim in ``_STATIC_PROMPTS`` prompts or
   more is a bucket of its own: static text, not one more value of a ``{code}`` template.
2. Split each bucket recursively, always on the position with the fewest distinct words,
   while that position looks like a constant: few distinct words (at most
   ``max_constant_values``), not a ``key=value`` pair, no masked value among them. The
   positions left that still differ are variables. Prompts whose group has no constant word but
   its first and their structure (turn labels, fences) share only a length when they are long or
   hold their code slots at different places: they stay apart; so do long ones that share one
   word more (``You are ...``).
3. Merge templates of different lengths whose patterns are equal once runs of adjacent
   wildcards are read as one variable-length wildcard (a value of several words).
4. Merge templates that share a frame (the same words before and after) and differ only in
   the region between, when that region takes many values of any length; the first word
   is such a region too, when the rest of the line has enough constant words.
"""

from __future__ import annotations

import functools
import os
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from logmine.masking import WILDCARD
from logmine.prompt_syntax import MODEL_FORMAT, TEMPLATE_BOUNDARY
from logmine.stages.templates.collapse import (
    collapse_lists,
    collapse_wildcards,
    collapse_with_seps,
)
from logmine.stages.templates.fields import (
    LETTER,
    bucket_word,
    field_token,
    leading_fields,
    word_head,
)
from logmine.stages.templates.frames import (
    frame_buckets,
    frame_chars,
    frame_words,
    in_frame,
    shared_frame,
    structure_only,
)
from logmine.stages.templates.last_turn import (
    MAX_REQUEST_WORDS,
    TURN_LABELS,
    last_turn_heads,
    last_turns_request,
    opening_request,
)
from logmine.stages.templates.tokens import KEYED, NAMED, SLOT, has_mask, slot_names


@dataclass(frozen=True)
class ClusterParams:
    """The thresholds of the clustering core (one set for every system)."""

    max_constant_values: int = 4
    """A position with more distinct words than this is a variable."""
    variable_ratio: float = 0.5
    """A position with at least 3 distinct words in fewer than 1/ratio lines each is a variable."""
    min_context_tokens: int = 3
    """Constant words the rest of a line needs before its first word may be a variable."""
    min_determined: int = 2
    """Differing positions a position's word must decide before the units split on it."""
    key_candidates: int = 8
    """Positions (fewest distinct words first) tried as such a deciding position."""
    min_context_chars: int = 12
    """Constant characters a free-text region's frame needs (``<s>[INST] ... [/INST]``)."""
    unique_region_ratio: float = 0.3
    """A region longer than its frame's constant words is still a variable when at least this
    share of its lines hold a value of their own (free text, such as a chat message)."""
    chat_turns: bool = False
    """Read a chat's turn labels (the ``user:`` tokens ingest writes before each turn) as structure:
    units with different turns are never one template, and no merge joins them (prompts)."""


@dataclass
class Group:
    """One template: the units it holds and its token pattern (wildcards where they differ)."""

    members: list[int]
    pattern: tuple[str, ...]
    parts: list[Group] = field(default_factory=list)
    """For a variable-length template: its fixed-length templates, one per token count."""
    frame: tuple[int, int] | None = None
    """For a template merged around a region: the lengths of its head and tail."""
    text: str | None = None
    """The template text, when a later merge wrote it (else rendered from the pattern)."""

    def render(self, seps_of: Callable[[Group], Sequence[str]]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The pattern and its separators, taken from the smallest fixed-length part
        (``seps_of(part)``: leading, between-token and trailing whitespace of its pattern)."""
        if not self.parts:
            return self.pattern, tuple(seps_of(self))
        part = min(self.parts, key=lambda p: (len(p.pattern), p.pattern))
        tokens, seps = collapse_with_seps(part.pattern, tuple(seps_of(part)))
        if self.frame is None:
            return tokens, seps
        if not seps:
            return self.pattern, ()
        head, tail = self.frame
        n = len(tokens)
        return self.pattern, (*seps[: head + 1], *seps[n - tail : n], seps[n])


StructureFn = Callable[[Group], tuple[str, ...]]
"""The structure of a template that no merge crosses (its chat turns; nothing for log lines)."""


@functools.lru_cache(maxsize=1 << 16)
def _sentinels(tokens: tuple[str, ...]) -> tuple[str, ...]:
    """The model-format tokens of a unit, in order: units of different prompt formats are never
    one template, so they are bucketed apart (a variable never stands for a sentinel)."""
    return tuple(m for t in tokens if "<" in t or "[" in t for m in MODEL_FORMAT.findall(t))


def turns(tokens: Sequence[str]) -> tuple[str, ...]:
    """The turn labels of a unit, in order (``("system:", "user:", "user:")``): a chat's turns are
    its template's structure, as a model's sentinels are (a variable never spans a turn boundary)."""
    return tuple(t for t in tokens if t in TURN_LABELS)


def _turn_positions(tokens: Sequence[str]) -> tuple[tuple[int, str], ...]:
    """A unit's turn labels and where they are: units of one length are compared position by
    position, which means nothing across turn boundaries they hold at different positions."""
    return tuple((i, t) for i, t in enumerate(tokens) if t in TURN_LABELS)


def is_variable(values: Counter[str], lines: int, params: ClusterParams, wildcards: frozenset[str], region: bool = False) -> bool:
    """Whether a position taking ``values`` (word -> lines) over ``lines`` lines is a variable.

    For a ``region`` (several words between a shared head and tail) only the counts decide."""
    distinct = len(values)
    if distinct <= 1:
        return False
    if distinct > params.max_constant_values:
        return True
    if distinct >= 3 and distinct / max(lines, 1) > params.variable_ratio:
        return True
    if region:
        return False
    if any(v in wildcards for v in values) or 2 * sum(has_mask(v, wildcards) for v in values) >= distinct:
        return True
    if 2 * sum(n for v, n in values.items() if has_mask(v, wildcards)) > lines:
        return True  # most lines hold a masked value here: the other words are values the rules missed
    keys = {m.group(1) if (m := KEYED.match(v)) else None for v in values}
    return len(keys) == 1 and None not in keys


def pattern_of(rows: Sequence[Sequence[str]]) -> tuple[str, ...]:
    """Position-wise: the shared word, or a wildcard where the rows differ (keeping a shared
    head or tail that ends or starts at punctuation: ``rhost=<*>``, ``(<*>)``)."""
    return tuple(col[0] if len(set(col)) == 1 else generalise(col) for col in zip(*rows))


_HEAD = re.compile(r"^.*[^A-Za-z0-9_<>*]")
_TAIL = re.compile(r"[^A-Za-z0-9_<>*].*$")
_SLOTTED_HEAD = re.compile(r"^.*[>}]")
_SLOTTED_TAIL = re.compile(r"[<{].*$")


def generalise(values: Sequence[str]) -> str:
    """One wildcard standing for ``values``, inside the punctuation they all share; or, for
    values that differ only in their slot tokens, the named slots."""
    slotted = any("{" in v and SLOT.search(v) for v in values)
    if slotted:
        slots = _generalise_slots(values)
        if slots is not None:
            return slots
    # around slot tokens, cut only after a tag or a slot ends (``<DOC>{code:ab}`` and ``<DOC>{code:ac}``)
    head = _cut(os.path.commonprefix(list(values)), _SLOTTED_HEAD if slotted else _HEAD)
    rest = [v[len(head):][::-1] for v in values]
    tail = _cut(os.path.commonprefix(rest)[::-1], _SLOTTED_TAIL if slotted else _TAIL)
    if any(len(v) <= len(head) + len(tail) for v in values):
        return WILDCARD
    return head + WILDCARD + tail


def _generalise_slots(values: Sequence[str]) -> str | None:
    splits = [SLOT.split(v) for v in values]
    if len(splits[0]) == 1 or len({len(p) for p in splits}) != 1:
        return None
    out = []
    for i, col in enumerate(zip(*splits)):
        same = len(set(col)) == 1
        if i % 3 == 0:
            if not same:
                return None
            out.append(col[0])
        elif i % 3 == 1:
            if not same:
                return None
        else:
            name = splits[0][i - 1]
            out.append("{%s:%s}" % (name, col[0]) if same else "{%s}" % name)
    return "".join(out)


def _cut(text: str, rx: re.Pattern[str]) -> str:
    m = rx.search(text)
    return m.group(0) if m else ""


def _split_bucket(
    members: list[int], units: Sequence[tuple[str, ...]], weights: Sequence[int], params: ClusterParams, wildcards: frozenset[str],
    start: int = 0,
) -> list[Group]:
    """Split a bucket on constant-looking positions; positions before ``start`` (a first word
    that is a field) are never split on: they stay variables."""
    out: list[Group] = []
    stack = [members]
    while stack:
        idx = stack.pop()
        rows = [units[i] for i in idx]
        cols = [(pos, col) for pos, col in enumerate(zip(*rows)) if pos >= start and len(set(col)) > 1]
        split = _constant_position(idx, cols, weights, params, wildcards)
        if split is None:
            split = _key_position(cols, params)
        if split is None:
            pattern = pattern_of(rows)
            if start:  # a field before ``start`` is a variable, also where this group's lines share its word
                pattern = (*(field_token(col) for col in list(zip(*rows))[:start]), *pattern[start:])
            if params.chat_turns and len(idx) > 1 and _no_static_text(pattern, rows, wildcards):
                out.extend(Group([i], units[i]) for i in idx)  # prompts that share a length, nothing else
                continue
            out.append(Group(idx, pattern))
            continue
        parts: dict[str, list[int]] = defaultdict(list)
        for i in idx:
            parts[units[i][split]].append(i)
        stack.extend(parts[v] for v in sorted(parts, reverse=True))
    return out


def _no_static_text(pattern: tuple[str, ...], rows: Sequence[Sequence[str]], wildcards: frozenset[str]) -> bool:
    """Whether a pattern has no constant word but its first (the word its bucket shares: ``user:``, or a
    prompt's first word, ``Please``) and its chat's structure (turn labels, the fences of attached files),
    and its prompts have nothing else in common either: it is long (a template's prompts share its static
    text), or its prompts hold their code slots at different places (one template's prompts of one length
    hold them at the same places; a user's short messages hold none). A long pattern with one constant
    word more (``You are <*> <*> ...``: two system prompts that open alike) has no static text either."""
    if not structure_only(pattern[1:], wildcards):
        # a long prompt's template shares many words; one more (``You are`` ...) is a phrase any two prompts may open with
        return len(pattern) > MAX_REQUEST_WORDS and sum(not structure_only((tok,), wildcards) for tok in pattern[1:]) <= 1
    return len(pattern) > MAX_REQUEST_WORDS or len({_slot_places(row) for row in rows}) > 1


def _slot_places(row: Sequence[str]) -> tuple[int, ...]:
    return tuple(k for k, tok in enumerate(row) if "{" in tok and SLOT.search(tok))


def _constant_position(
    idx: list[int], cols: list[tuple[int, tuple[str, ...]]], weights: Sequence[int], params: ClusterParams, wildcards: frozenset[str]
) -> int | None:
    """The position with the fewest distinct words among those that look like constants."""
    best: tuple[int, int] | None = None
    for pos, col in cols:
        distinct = len(set(col))
        if best is not None and distinct >= best[0]:
            continue
        values: Counter[str] = Counter()
        for i, v in zip(idx, col):
            values[v] += weights[i]
        if not is_variable(values, sum(values.values()), params, wildcards):
            best = (distinct, pos)
    return None if best is None else best[1]


def _key_position(cols: list[tuple[int, tuple[str, ...]]], params: ClusterParams) -> int | None:
    """A position whose word decides the words at several other differing positions: the
    units are different templates that happen to share a length (not one template with many
    values), so they are split there even when it takes many words."""
    if len(cols) < params.min_determined + 1:
        return None
    n = len(cols[0][1])
    ranked = sorted((len(set(col)), pos, col) for pos, col in cols)
    best: tuple[int, int] | None = None
    for distinct, pos, col in ranked[: params.key_candidates]:
        if 2 * distinct > n:
            break
        determined = sum(1 for other, ocol in cols if other != pos and _determines(col, ocol))
        if determined >= params.min_determined and (best is None or determined > best[0]):
            best = (determined, pos)
    return None if best is None else best[1]


def _determines(key: Sequence[str], other: Sequence[str]) -> bool:
    seen: dict[str, str] = {}
    for k, v in zip(key, other):
        if seen.setdefault(k, v) != v:
            return False
    return True


def _merge_gaps(
    groups: list[Group], weights: Sequence[int], params: ClusterParams, wildcards: frozenset[str], structure: StructureFn = lambda g: (),
    common: frozenset[str] = frozenset(),
) -> list[Group]:
    """Merge templates that share a frame (the same words before and after) and differ only in
    the one region between, when that region takes many values of any length ("Opened project
    <*> in <*> ms" whatever the number of words in the project's name).

    A frame needs ``min_context_tokens`` constant words, and it holds only the templates whose
    region is no longer than that, so a shared header never swallows the messages after it;
    or, for a region of mostly one-off values (free text), one constant word. Only templates of
    the same ``structure`` (their chat turns) merge. Words nearly every line has (``common``: a
    logger's name in each line) are no context; nor, for free text, a head of a chat's structure alone
    (turn labels, fences, slots: every chat with files has it, and the words that end two templates'
    requests may be alike).
    """
    # a slot token seen in one unit only is no evidence of static text: read it as its named slot
    pats = [collapse_wildcards(tuple(slot_names(t) for t in g.pattern) if len(g.members) == 1 else g.pattern) for g in groups]
    lines = [sum(weights[i] for i in g.members) for g in groups]
    by_first: dict[str, list[int]] = defaultdict(list)
    by_last: dict[str, list[int]] = defaultdict(list)
    for k, p in enumerate(pats):
        if len(p) > 1:
            by_first[p[0]].append(k)
            by_last[p[-1]].append(k)
    candidates: set[tuple[tuple[str, ...], tuple[str, ...]]] = set()
    # a chat's first word is its turn label, no event's word: only such a bucket is searched deeper
    buckets = [b for word, bucket in by_first.items() for b in frame_buckets(bucket, pats, deeper=word in TURN_LABELS)]
    buckets += [b for bucket in by_last.values() for b in frame_buckets(bucket, pats, deeper=False)]
    for bucket in buckets:
        for x, a in enumerate(bucket):
            for b in bucket[x + 1 :]:
                frame = shared_frame(pats[a], pats[b])
                if frame is not None:
                    candidates.add(frame)
    if params.chat_turns:
        candidates |= last_turn_heads(pats)
    frames = {f for f in candidates if frame_words(f, wildcards) >= params.min_context_tokens or frame_chars(f, wildcards) >= params.min_context_chars}
    parent = list(range(len(groups)))
    for head, tail in sorted(frames, key=lambda f: (-len(f[0]) - len(f[1]), f)):
        pool = by_first[head[0]] if head else by_last[tail[-1]]
        context = frame_words((head, tail), wildcards)
        classes: dict[tuple[str, ...], list[int]] = defaultdict(list)
        for k in pool:
            if in_frame(pats[k], head, tail):
                classes[structure(groups[k])].append(k)
        # an open frame (no head, or no tail) only frames one word: the first or last word of a line
        limit = context if head and tail else 1
        enough = context >= params.min_context_tokens or (
            not (head and tail) and context >= 2 and frame_chars((head, tail), wildcards) >= params.min_context_chars)
        for framed in classes.values():
            short = [k for k in framed if len(pats[k]) - len(head) - len(tail) <= limit]
            if enough and _variable_region(short, pats, lines, head, tail, params, wildcards, unique=False):
                _join(parent, short)
            elif (
                (head and (tail or (params.chat_turns and last_turns_request(framed, pats, head)))
                 or not head and params.chat_turns and opening_request(framed, pats, tail))
                # a chat's turn labels, fences and slots around a region frame no free text: every chat has them
                and not (params.chat_turns and structure_only(head or tail, wildcards))
                and (frame_chars((head, tail), wildcards, common) >= params.min_context_chars
                     # a label of a few short words before the request that ends a prompt (``I want a:``)
                     or not tail and frame_words((head, tail), wildcards, common) >= params.min_context_tokens)
                and _variable_region(framed, pats, lines, head, tail, params, wildcards, unique=True)
            ):
                _join(parent, framed)
    merged: dict[int, list[int]] = defaultdict(list)
    for k in range(len(groups)):
        merged[find_root(parent, k)].append(k)
    out = []
    for ks in merged.values():
        if len(ks) == 1:
            out.append(groups[ks[0]])
            continue
        parts = [part for k in ks for part in (groups[k].parts or [groups[k]])]
        pattern, head, tail = _frame_pattern([pats[k] for k in ks])
        out.append(Group(sorted(i for p in parts for i in p.members), pattern, parts, (head, tail)))
    return out


def _variable_region(
    members: list[int], pats: list[tuple[str, ...]], lines: list[int], head: tuple[str, ...], tail: tuple[str, ...],
    params: ClusterParams, wildcards: frozenset[str], unique: bool,
) -> bool:
    """Whether the regions the frame holds are one variable: many distinct values; with
    ``unique``, also mostly values seen once (free text, not other templates' messages)."""
    if len(members) < 2:
        return False
    middles: Counter[str] = Counter()
    varied: set[str] = set()  # regions mostly wildcards already: each of their lines has a value of its own
    for k in members:
        region = pats[k][len(head) : len(pats[k]) - len(tail)]
        middle = " ".join(region)
        middles[middle] += lines[k]
        if _mostly_masks(region, wildcards):
            varied.add(middle)
    total = sum(middles.values())
    distinct = sum(n if m in varied else 1 for m, n in middles.items())
    if _shared_phrase(middles) or any(TEMPLATE_BOUNDARY.search(m) for m in middles):
        return False  # a region holding a model sentinel (``<|im_end|>``) is structure, not one value
    if unique and (distinct < params.unique_region_ratio * total or any(_structured(m, wildcards) for m in middles)):
        return False
    return is_variable(middles, total, params, wildcards, region=True)


def _mostly_masks(region: Sequence[str], wildcards: frozenset[str]) -> bool:
    """Whether a region holds a wildcard and no more constant words than masked ones (``<*>``,
    ``my <*>``): a value already varied. A region with constant words beside its masks
    (``instance <*> create tag``) is a template's text, one value however many lines hold it."""
    if WILDCARD not in region:
        return False
    masked = sum(1 for tok in region if has_mask(tok, wildcards))
    return len(region) - masked <= masked


def _shared_phrase(middles: Counter[str]) -> bool:
    """Whether a pair of adjacent words recurs in more than half the distinct regions: static
    text of some template inside them, not free text."""
    seen: Counter[tuple[str, str]] = Counter()
    for middle in middles:
        words = middle.split(" ")
        seen.update({pair for pair in zip(words, words[1:]) if WILDCARD not in pair})
    return bool(seen) and max(seen.values()) * 2 > len(middles)


def _structured(middle: str, wildcards: frozenset[str]) -> bool:
    """A region with several slots or code blocks: a template's body, not free text (a user's
    message may hold one fenced block)."""
    return middle.count("```") > 2 or len(NAMED.findall(middle)) > 2


def _join(parent: list[int], members: list[int]) -> None:
    root = find_root(parent, members[0])
    for k in members[1:]:
        parent[find_root(parent, k)] = root


_STATIC_PROMPTS = 5
"""A whole prompt read as one code slot and logged verbatim this many times is static text (as a line that many
prompts hold is an anchor, :data:`logmine.stages.templates.line_forms.MIN_ANCHOR_PROMPTS`)."""

def _frame_pattern(pats: list[tuple[str, ...]]) -> tuple[tuple[str, ...], int, int]:
    """Shared head, one wildcard for the regions between, shared tail; and the lengths of
    head and tail. Regions of one word keep the punctuation they share (``<*>:``)."""
    h = 0
    while all(len(p) > h for p in pats) and len({p[h] for p in pats}) == 1:
        h += 1
    t = 0
    while all(len(p) > h + t for p in pats) and len({p[-1 - t] for p in pats}) == 1:
        t += 1
    first = pats[0]
    head, tail = first[:h], first[len(first) - t :]
    middles = [p[h : len(p) - t] for p in pats]
    middle = generalise([m[0] for m in middles]) if all(len(m) == 1 for m in middles) else WILDCARD
    if middle == WILDCARD and head and head[-1] == WILDCARD:
        head = head[:-1]
    if middle == WILDCARD and tail and tail[0] == WILDCARD:
        tail = tail[1:]
    return (*head, middle, *tail), len(head), len(tail)


def find_root(parent: list[int], k: int) -> int:
    """The root of ``k`` in a union-find forest (path halving)."""
    while parent[k] != k:
        parent[k] = parent[parent[k]]
        k = parent[k]
    return k


def _merge_lengths(groups: list[Group], structure: StructureFn = lambda g: ()) -> list[Group]:
    """Merge templates whose patterns are equal with variable-length wildcards (and whose
    ``structure``, their chat turns, is the same)."""
    by_key: dict[tuple[tuple[str, ...], tuple[str, ...]], list[Group]] = defaultdict(list)
    for g in groups:
        by_key[(collapse_lists(g.pattern), structure(g))].append(g)
    out = []
    for (key, _), same in by_key.items():
        by_len: dict[int, list[Group]] = defaultdict(list)
        for g in same:
            by_len[len(g.pattern)].append(g)
        parts = [_union(gs) for _, gs in sorted(by_len.items())]
        if len(parts) == 1:
            out.append(parts[0])
        else:
            out.append(Group(sorted(i for g in parts for i in g.members), key, parts))
    return out


def _union(groups: list[Group]) -> Group:
    if len(groups) == 1:
        return groups[0]
    return Group(sorted(i for g in groups for i in g.members), pattern_of([g.pattern for g in groups]))


def cluster(
    units: Sequence[tuple[str, ...]],
    weights: Sequence[int],
    params: ClusterParams | None = None,
    wildcards: frozenset[str] = frozenset({WILDCARD}),
    members: Sequence[int] | None = None,
) -> list[Group]:
    """Partition ``units`` (or the subset ``members``) into templates, sorted by pattern."""
    params = params or ClusterParams()
    live = list(range(len(units)) if members is None else members)
    # a chat's units start with their turns: no field there
    start, common = (0, frozenset()) if params.chat_turns else leading_fields(units, weights, live, params.min_context_tokens, wildcards)
    buckets: dict[tuple[int, str], list[int]] = defaultdict(list)
    for i in live:
        toks = units[i]
        # a prompt that is one block of code, the same in many prompts, is static text: a template of its own
        if params.chat_turns:
            word = toks[0] if len(toks) == 1 and weights[i] >= _STATIC_PROMPTS and SLOT.fullmatch(toks[0]) else bucket_word(toks, start, wildcards, common)
        else:  # a log line's event word up to a value it holds: ``setLightsOn(`` whatever it is set to
            word = word_head(bucket_word(toks, start, wildcards, common))
        buckets[(len(toks), word, _sentinels(toks), _turn_positions(toks) if params.chat_turns else ())].append(i)
    groups: list[Group] = []
    for key in sorted(buckets):
        idx = sorted(buckets[key], key=lambda i: units[i])
        groups.extend(_split_bucket(idx, units, weights, params, wildcards, start))
    structure: StructureFn = (lambda g: turns(units[g.members[0]])) if params.chat_turns else (lambda g: ())
    groups = _merge_gaps(_merge_lengths(groups, structure), weights, params, wildcards, structure, frozenset(w for _, w in common if LETTER.search(w)))
    for g in groups:
        g.members.sort()
    return sorted(groups, key=lambda g: (g.pattern, g.members[0] if g.members else -1))
