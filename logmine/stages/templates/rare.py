"""Rare templates taken in by a frequent template whose pattern matches them.

A template of a prompt or two (whose code ended in a comment or a docstring, read as text; whose value had
more words than its template's other prompts) joins a frequent template whose static text it holds in order,
at consolidation (:func:`absorb_rare`) and as later lines arrive (:class:`Hosts`).
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable

from logmine.masking import WILDCARD
from logmine.prompt_syntax import MODEL_FORMAT, SENTINEL
from logmine.stages.templates.cluster import SLOT, Group, turns
from logmine.stages.templates.line_forms import MIN_ANCHOR_PROMPTS, MIN_SIGNATURE_CHARS
from logmine.stages.templates.state import MinerState, group_text

RARE_SHARE = 0.05
"""A template is rare below ``MIN_ANCHOR_PROMPTS`` prompts, or below this share of a template whose pattern
matches it (:func:`absorb_rare`)."""
MIN_HOST_SENTINELS = 2
"""A template whose static text is shorter than ``MIN_SIGNATURE_CHARS`` still takes in rare prompts
(:func:`absorb_rare`) when it holds this many model sentinels or tags (``<PRE> {code} <SUF>{code} <MID>``):
a model's prompt format is specific however little text it has."""


def absorb_rare(groups: list[Group], state: MinerState) -> list[Group]:
    """A rare template joins a template of more prompts whose pattern matches its text: its static
    text (``MIN_SIGNATURE_CHARS`` or more, or ``MIN_HOST_SENTINELS`` sentinels) all there, in order,
    and each of its variables standing for some text that holds no model sentinel (but one that
    fewer than ``MIN_ANCHOR_PROMPTS`` prompts hold: a tag inside code, ``<output_dir>``, is no
    model's format, which recurs in every prompt of its template). Rare: fewer than ``MIN_ANCHOR_PROMPTS``
    prompts, or fewer than ``RARE_SHARE`` of the matching template's (a stray of a template
    grows with the log, so an absolute count alone stops taking it in at volume), with the same
    chat turns. The most specific such template wins (the most static text). Where none matches, one whose
    pattern matches once a word beside a wildcard goes into it (:func:`_loosened`) takes it in, and reads so."""
    weights = [sum(state.weights[i] for i in g.members) for g in groups]
    texts = [group_text(g, state) for g in groups]
    structure = [turns(state.tokens[g.members[0]]) for g in groups]
    seen: Counter[str] = Counter()
    for k, text in enumerate(texts):
        for sentinel in set(MODEL_FORMAT.findall(text)):
            seen[sentinel] += weights[k]
    stray = frozenset(t for t, n in seen.items() if n < MIN_ANCHOR_PROMPTS)
    frequent = [k for k, w in enumerate(weights) if w >= MIN_ANCHOR_PROMPTS]
    static = {k: len(_WS.sub("", _VARIABLE.sub("", texts[k]))) for k in frequent}
    patterns = {k: _literal_pieces(texts[k]) for k in frequent if _specific(texts[k], static[k])}
    patterns = {k: p for k, p in patterns.items() if len(p) > 1}
    order = sorted(patterns, key=lambda k: (-static[k], -weights[k], texts[k]))
    into: dict[int, list[int]] = defaultdict(list)
    absorbed: set[int] = set()
    logged: dict[int, list[str]] = {}

    def logged_pieces(b: int, slot_text: Callable[[str], str | None]) -> list[str]:
        """A host's static pieces with its slot tokens read as their texts, worked out once."""
        if b not in logged:
            logged[b] = [_expanded(p, slot_text) for p in _VARIABLE.split(texts[b])]
        return logged[b]

    loosened: dict[int, str] = {}  # a host whose words beside a wildcard went into it: its text so
    loose: dict[int, list[tuple[list[str], str]]] = {}  # a host's wider patterns (:func:`_loosened`), worked out once
    for k in sorted(range(len(groups)), key=lambda k: (weights[k], texts[k])):  # the rarest first
        if k in into:
            continue  # a host stays
        flat = _flat(texts[k])
        host = next((b for b in order if b != k and b not in absorbed and structure[b] == structure[k] and _matches(patterns[b], flat, stray)), None)
        slot_text = state.slot_text
        if host is None and slot_text is not None and SLOT.search(texts[k]):
            # a value read as code may have taken static lines into its slot: its text, as logged
            wide = _expanded(texts[k], slot_text)
            host = next((b for b in order if b != k and b not in absorbed and structure[b] == structure[k]
                         and _matches(logged_pieces(b, slot_text), wide, stray)), None)
        wider = None
        if host is None:
            # a value of more words than the host's prompts hold: a word beside its wildcard is the value's too
            for b in order:
                if b != k and b not in absorbed and structure[b] == structure[k]:
                    if b not in loose:
                        loose[b] = _loosened(loosened.get(b, texts[b]))
                    wider = next((text for pieces, text in loose[b] if _matches(pieces, flat, stray)), None)
                    if wider is not None:
                        host = b
                        break
        if host is not None and (weights[k] < MIN_ANCHOR_PROMPTS or weights[k] < RARE_SHARE * weights[host]):
            if wider is not None:
                loosened[host] = wider
                loose.pop(host, None)
            into[host].append(k)
            absorbed.add(k)
    if not into:
        return groups
    out = []
    for k, g in enumerate(groups):
        if k in absorbed:
            continue
        if k in into:
            members = [g] + [groups[j] for j in into[k]]
            parts = [p for m in members for p in (m.parts or [m])]
            g = Group(sorted(i for m in members for i in m.members), g.pattern, parts, None, loosened.get(k, texts[k]))
        out.append(g)
    return out


_FIRST_WORD = re.compile(r"^\s*[^\s{}<>]+")
_LAST_WORD = re.compile(r"[^\s{}<>]+\s*$")


def _loosened(text: str) -> list[tuple[list[str], str]]:
    """``text``'s wider patterns, each as its static pieces (:func:`_matches`) and its text: the word on one side
    of a wildcard, or on both, gone into it. ``You are a <*> SQL expert.`` as ``You are a <*> expert.`` matches
    ``You are a T-SQL / Microsoft SQL Server expert.``, a value of a few words whose last word most of its values
    share. Each wildcard alone (after it, before it, both), then all of them; only those left with
    ``MIN_SIGNATURE_CHARS`` of static text."""
    parts = _VARIABLE.split(text)
    between = _VARIABLE.findall(text)
    wild = [j for j, v in enumerate(between) if v == WILDCARD]
    tries = [[(j, side)] for j in wild for side in ("after", "before")] + [[(j, "after"), (j, "before")] for j in wild]
    if len(wild) > 1:
        tries.append([(j, side) for j in wild for side in ("after", "before")])
    out = []
    for sides in tries:
        wider = list(parts)
        for j, side in sides:
            if side == "after":
                wider[j + 1] = _FIRST_WORD.sub("", wider[j + 1], count=1)
            else:
                wider[j] = _LAST_WORD.sub("", wider[j], count=1)
        pieces = [_flat(p) for p in wider]
        if sum(map(len, pieces)) >= MIN_SIGNATURE_CHARS:
            out.append((pieces, "".join(p + (between[i] if i < len(between) else "") for i, p in enumerate(wider))))
    return out


def _expanded(text: str, slot_text: Callable[[str], str | None]) -> str:
    """``text`` without whitespace, each slot token read as the text it stands for (its slot name
    where that is not kept)."""
    return _WS.sub("", SLOT.sub(lambda m: slot_text(m.group(2)) or "{%s}" % m.group(1), text))


def is_pattern(text: str) -> bool:
    """Whether a template text has a variable and ``MIN_SIGNATURE_CHARS`` of static text: a template
    that may take in prompts arriving later (:class:`Hosts`). A template of sentinels alone takes in
    rare prompts of its own batch (:func:`absorb_rare`), not later ones: at volume it took in prompts of
    other templates (GA 0.918 -> 0.878 at 100,000 prompts)."""
    return _VARIABLE.search(text) is not None and len(_WS.sub("", _VARIABLE.sub("", text))) >= MIN_SIGNATURE_CHARS


def _specific(text: str, static: int) -> bool:
    """Whether a template's static text (``static`` characters) is specific enough to take in other
    prompts: ``MIN_SIGNATURE_CHARS`` of text, or ``MIN_HOST_SENTINELS`` model sentinels or tags."""
    return static >= MIN_SIGNATURE_CHARS or len(SENTINEL.findall(_VARIABLE.sub(" ", SLOT.sub(" ", text)))) >= MIN_HOST_SENTINELS


def host_pieces(text: str, weight: int) -> list[str] | None:
    """The static pieces of a template that may take in other prompts (see :func:`absorb_rare`):
    ``MIN_ANCHOR_PROMPTS`` prompts or more and :func:`is_pattern`."""
    return _literal_pieces(text) if weight >= MIN_ANCHOR_PROMPTS and is_pattern(text) else None


_WS = re.compile(r"\s+")
_VARIABLE = re.compile(r"<\*>|\{[a-z_]+\d*\}")
"""A template's variables: wildcards and named slots (a slot token ``{code:id}`` is static text)."""


def _literal_pieces(text: str) -> list[str]:
    """The static text of a template between its variables, whitespace left out (a template
    reads any whitespace run as any whitespace)."""
    return [_flat(piece) for piece in _VARIABLE.split(text)]


def _flat(text: str) -> str:
    """``text`` without whitespace, slot tokens read as their slot names (a static code span
    of one template may be a slot of a rare one, merged by its anchors)."""
    return _WS.sub("", SLOT.sub(r"{\1}", text))


def _matches(pieces: list[str], text: str, stray: frozenset[str] = frozenset()) -> bool:
    """Whether ``text`` (whitespace left out) is the pieces in order with some text between each
    two that holds no model sentinel but those of ``stray`` (leftmost placement of each piece)."""
    first, last = pieces[0], pieces[-1]
    if not text.startswith(first) or not text.endswith(last) or len(text) < len(first) + len(last):
        return False
    pos, end = len(first), len(text) - len(last)
    for piece in pieces[1:-1]:
        at = text.find(piece, pos + 1, end)
        if at < 0 or _holds_format(text, pos, at, stray):
            return False
        pos = at + len(piece)
    return pos < end and not _holds_format(text, pos, end, stray)


def _holds_format(text: str, start: int, end: int, stray: frozenset[str]) -> bool:
    """Whether ``text[start:end]`` holds a model sentinel not in ``stray``."""
    return any(m.group(0) not in stray for m in MODEL_FORMAT.finditer(text, start, end))


class Hosts:
    """The frequent consolidated templates of a regrouping miner (prompts), by the start of their
    static text: a later line their pattern matches joins them (see
    :func:`absorb_rare`, the same rule at consolidation)."""

    KEY = 16

    def __init__(self) -> None:
        self.by_start: dict[str, list[tuple[int, list[str], int]]] = {}
        self.scan: list[tuple[int, list[str], int]] = []

    def add(self, text: str, weight: int, unit: int) -> None:
        pieces = host_pieces(text, weight)
        if pieces is None:
            return
        entry = (-sum(map(len, pieces)), pieces, unit)
        where = self.by_start.setdefault(pieces[0][: self.KEY], []) if len(pieces[0]) >= self.KEY else self.scan
        where.append(entry)
        where.sort(key=lambda e: (e[0], e[2]))

    def find(self, line: str) -> int | None:
        flat = _flat(line)
        for _, pieces, unit in (*self.by_start.get(flat[: self.KEY], ()), *self.scan):
            if _matches(pieces, flat):
                return unit
        return None
