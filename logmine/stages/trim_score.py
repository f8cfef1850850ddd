"""Scoring units for :mod:`logmine.stages.trim`: which names code uses, and each unit's score.

``score = ast_weight x importance + (1 - ast_weight) x recency`` (0.7 / 0.3 by default):

- importance: the unit's kind (:data:`KIND_WEIGHT`), plus ``near_weight`` when it defines a
  name the last ``near_lines`` lines use (or the identifier being typed at the cursor starts
  one of its names: ``partial_weight``), else ``unit_weight`` when the rest of the unit
  enclosing the cursor (and the class headers around it) uses one; capped at 1;
- recency: 1 for units the code near the cursor refers to, else ``use_decay ** k`` with k the
  number of units between the cursor and the latest unit using the unit's names (the file's
  own least-recently-used order), raised to ``lru_decay ** rank`` for symbols the session
  edited recently; times the file's least-recently-used factor among the files the session
  opened or edited (from the ``events`` table).

What does not change while the cursor stays on its line is computed once (:class:`Plan`);
per request only the cursor's line is read.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from logmine.stages.trim_units import _C_STRIP, IDENT, STRIP, Unit, code_only

BARE = re.compile(r"(?<![\w$.])(?<!->)(?<!::)[A-Za-z_$][\w$]*")
ATTR = re.compile(r"(?:\.|->|::)([A-Za-z_$][\w$]*)")
PARTIAL = re.compile(r"(?:\.|->|::)?[\w$]*$")
"""The identifier being typed at the cursor, with the ``.`` / ``->`` / ``::`` before it."""
_WORD_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$"


def typed_word(line: str) -> tuple[str, bool]:
    """The identifier being typed at the end of ``line`` (its last 64 characters) and whether a
    ``.`` / ``->`` / ``::`` precedes it: what :data:`PARTIAL` finds, without a regex for ASCII text."""
    tail = line[-64:]
    if not tail.isascii():
        m = PARTIAL.search(tail)
        word = m.group().lstrip(".-:>") if m else ""
        return word, m is not None and m.group() != word
    rest = tail.rstrip(_WORD_CHARS)
    return tail[len(rest) :], rest.endswith((".", "->", "::"))


KIND_WEIGHT = {"import": 0.3, "definition": 0.25, "statement": 0.1, "comment": 0.0, "fragment": 0.0}


def identifiers(text: str, language: str | None = None) -> set[str]:
    """Identifiers of code text, outside strings and comments."""
    return set(IDENT.findall(code_only(text, language)))


def uses(text: str, language: str | None = None) -> tuple[set[str], set[str]]:
    """``(bare, attributes)``: identifiers used bare, and those used after ``.`` / ``->`` / ``::``."""
    return split_uses(code_only(text, language))


def split_uses(code: str) -> tuple[set[str], set[str]]:
    """:func:`uses` of text whose strings and comments are already blanked out."""
    return set(BARE.findall(code)), set(ATTR.findall(code))


def _keep_lines(rx: re.Pattern[str]) -> Callable[[str], str]:
    """Blank strings and comments out, keeping offsets (newlines stay)."""
    def blank(text: str) -> str:
        return rx.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)
    return blank


_C_KEEP = _keep_lines(_C_STRIP)
STRIP_KEEP = {lang: _keep_lines(rx) for lang, rx in STRIP.items()}


def blank_keeping_offsets(text: str, language: str | None) -> str:
    """``text`` with strings and comments replaced by spaces (newlines kept)."""
    return STRIP_KEEP.get(language or "", _C_KEEP)(text)


def references(u: Unit, bare: set[str], attrs: set[str]) -> bool:
    """Whether code using ``bare`` names and ``attrs`` members refers to something ``u`` defines."""
    return not u.defines.isdisjoint(bare) or (bool(u.members) and not u.members.isdisjoint(attrs))


@dataclass(eq=False)
class Plan:
    """Per cursor shape: candidate units, their scores before the cursor's line counts, name indexes."""

    opener: str
    """The string or comment left open at the start of the cursor's line."""
    cand: list[int] = field(default_factory=list)
    base: dict[int, tuple[float, float, float]] = field(default_factory=dict)
    """(importance, recency, kind weight) from the complete lines."""
    near: set[int] = field(default_factory=set)
    bare: dict[str, list[int]] = field(default_factory=dict)
    attr: dict[str, list[int]] = field(default_factory=dict)
    names: list[str] = field(default_factory=list)
    units: list[Unit] | None = None
    orders: dict[float, list[tuple[float, int]]] = field(default_factory=dict)
    """Per file factor, ``(score, unit)`` of the candidates from the base values alone, best first."""

    def defines_of(self, i: int) -> frozenset[str]:
        return self.units[i].defines if self.units is not None else frozenset()

    def partial(self, line: str, limit: int) -> set[int]:
        """Units defining a name that starts with the identifier typed at the cursor (when at most ``limit`` do)."""
        word, member = typed_word(line)
        if not word or word[0].isdigit():
            return set()
        index = self.attr if member else self.bare
        out: set[int] = set()
        at = bisect.bisect_left(self.names, word)
        while at < len(self.names) and self.names[at].startswith(word):
            out.update(index.get(self.names[at], ()))
            if len(out) > limit:
                return set()
            at += 1
        return out


def build_plan(units: list[Unit], path: list[int], near: tuple[set[str], set[str]], whole: tuple[set[str], set[str]],
               opener: str, config: Any) -> Plan:
    """The :class:`Plan` of a layout, from the names the near lines and the rest of the cursor's unit use."""
    pathset = set(path)
    later = last_uses(units, pathset)
    plan = Plan(opener=opener, units=units)
    near_bare, near_attrs = near
    whole_bare, whole_attrs = whole
    for i, u in enumerate(units):
        defines, members = u.defines, u.members
        if not (defines or members) or i in pathset:
            continue
        kind = KIND_WEIGHT.get(u.kind, 0.0)
        imp, rec = kind, 0.0
        # references(u, *near), then references(u, *whole), inlined
        if not defines.isdisjoint(near_bare) or (members and not members.isdisjoint(near_attrs)):
            imp, rec = kind + config.near_weight, 1.0
            plan.near.add(i)
        elif not defines.isdisjoint(whole_bare) or (members and not members.isdisjoint(whole_attrs)):
            imp, rec = kind + config.unit_weight, 1.0
        elif later[i] >= 0:
            rec = config.use_decay ** later[i]
        plan.cand.append(i)
        plan.base[i] = (imp, rec, kind)
        for name in u.defines:
            plan.bare.setdefault(name, []).append(i)
        for name in u.members:
            plan.attr.setdefault(name, []).append(i)
    plan.names = sorted(set(plan.bare) | set(plan.attr))
    return plan


def score(plan: Plan, line: str, language: str | None, file_factor: float, recent_symbols: Sequence[str],
          config: Any) -> dict[int, float]:
    """The score of each candidate unit once the cursor's ``line`` is read."""
    changed = _changed(plan, line, language, file_factor, recent_symbols, config)
    w = config.ast_weight
    out = {}
    for i in plan.cand:
        s = changed.get(i)
        if s is None:
            imp, rec, _ = plan.base[i]
            s = w * min(imp, 1.0) + (1 - w) * rec * file_factor
        out[i] = s
    return out


def ranked(plan: Plan, line: str, language: str | None, file_factor: float, recent_symbols: Sequence[str],
           config: Any) -> Iterator[tuple[float, int]]:
    """``(score, unit)`` of the candidates, best first (ties: the later unit first), as :func:`score`
    gives them; lazily: only the units the cursor's line changes are scored per request, the others
    come in an order kept per plan and file factor."""
    base = plan.orders.get(file_factor)
    if base is None:
        w = config.ast_weight
        base = plan.orders[file_factor] = sorted(
            ((w * min(imp, 1.0) + (1 - w) * rec * file_factor, i) for i, (imp, rec, _) in plan.base.items()), reverse=True)
    changed = _changed(plan, line, language, file_factor, recent_symbols, config)
    if not changed:
        yield from base
        return
    extra = sorted(((s, i) for i, s in changed.items()), reverse=True)
    j, n = 0, len(extra)
    for item in base:
        if item[1] in changed:
            continue
        while j < n and extra[j] > item:
            yield extra[j]
            j += 1
        yield item
    yield from extra[j:]


def _changed(plan: Plan, line: str, language: str | None, file_factor: float, recent_symbols: Sequence[str],
             config: Any) -> dict[int, float]:
    """Scores of the candidates whose importance or recency the cursor's line or the session's recent
    symbols change (the others keep their plan's base values)."""
    bare, attrs = uses(plan.opener + line, language)
    hits: set[int] = set()
    for name in bare:
        hits.update(plan.bare.get(name, ()))
    for name in attrs:
        hits.update(plan.attr.get(name, ()))
    hits -= plan.near
    partial = plan.partial(line, config.partial_matches)
    sym_rank = {s: r for r, s in enumerate(reversed(recent_symbols))} if recent_symbols else None
    todo = hits | partial
    if sym_rank:
        todo.update(i for i in plan.cand if not plan.defines_of(i).isdisjoint(sym_rank))
    w = config.ast_weight
    out = {}
    for i in todo:
        imp, rec, kind = plan.base[i]
        if i in hits:
            imp, rec = kind + config.near_weight, 1.0
        if i in partial:
            imp, rec = imp + config.partial_weight, 1.0
        if sym_rank:
            ranks = [sym_rank[d] for d in plan.defines_of(i) if d in sym_rank]
            if ranks:
                rec = max(rec, config.lru_decay ** min(ranks))
        out[i] = w * min(imp, 1.0) + (1 - w) * rec * file_factor
    return out


def last_uses(units: list[Unit], path: set[int]) -> list[int]:
    """Per unit, the number of units between the cursor and the latest other unit using one of its
    names (-1 when no other unit does); the cursor's path is left to the near/whole signals."""
    wanted: set[str] = set()  # only the names of candidates matter
    for i, u in enumerate(units):
        if i not in path and (u.defines or u.members):
            wanted.update(u.defines)
            wanted.update(u.members)
    last: dict[str, int] = {}
    prev: dict[str, int] = {}
    for i, u in enumerate(units):
        if i in path:
            continue
        for name in u.idents & wanted:
            j = last.get(name)
            if j is not None:
                prev[name] = j
            last[name] = i
    n = len(units)
    out = []
    for i, u in enumerate(units):
        best = -1
        for name in u.defines | u.members if (u.defines or u.members) and i not in path else ():
            j = last.get(name, -1)
            if j == i:
                j = prev.get(name, -1)
            if j > best:
                best = j
        out.append(n - 1 - best if best >= 0 else -1)
    return out


def nth_line_back(data: bytes, pos: int, lines: int) -> int:
    for _ in range(max(lines, 0)):
        if pos <= 0:
            return 0
        pos = data.rfind(b"\n", 0, pos - 1) + 1
    return pos


def lru_factor(recent: Sequence[str], item: str | None, decay: float) -> float:
    """``decay ** k`` for the k-th most recently used item; 0 when absent; 1 with no history."""
    if not recent or item is None:
        return 1.0
    try:
        return decay ** list(reversed(recent)).index(item)
    except ValueError:
        return 0.0
