"""Scoring units for :mod:`logmine.runtime.trim.trimmer`: which names code uses, and each unit's score.

``score = ast_weight x importance + (1 - ast_weight) x recency`` (0.7 / 0.3 by default):

- importance: the probability that the completion references the unit, from a logistic
  regression over the unit's features (:data:`IMPORTANCE`: its kind; whether it defines a name
  the last ``near_lines`` lines use, else one the rest of the unit enclosing the cursor uses;
  one the cursor's line uses; one starting with the identifier typed at the cursor; how recently
  and by how many units its names were used; whether it is a member of a class enclosing the
  cursor; its distance to the cursor, size and number of names). The weights were fitted once
  on the tuning set (``bench/trim.py --fit``) and are plain constants here;
- recency: 1 for units the code near the cursor refers to, else ``use_decay ** k`` with k the
  number of units between the cursor and the latest unit using the unit's names (the file's
  own least-recently-used order), raised to ``lru_decay ** rank`` for symbols the session
  edited recently; times the file's least-recently-used factor among the files the session
  opened or edited (from the ``events`` table).

The suffix and declarations slots score importance by rule instead (:data:`KIND_WEIGHT` plus
``near_weight`` when the code at the cursor uses a name the unit defines).

What does not change while the cursor stays on its line is computed once (:class:`Plan`);
per request only the cursor's line is read.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from logmine.runtime.trim.base import _C_STRIP, IDENT, STRIP, Unit, code_only

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
"""Rule importance of the suffix and declarations slots, per unit kind."""

FEATURES = ("import", "definition", "near", "whole", "cursor_line", "typed", "later", "unused", "class_member",
            "log_distance", "log_tokens", "log_names", "log_users")
"""The features of a prefix unit's importance (see :func:`unit_features` for their definitions)."""
IMPORTANCE_BIAS = -2.820
IMPORTANCE = {"import": -1.222, "definition": -1.148, "near": 2.233, "whole": 1.286, "cursor_line": 0.152, "typed": 2.106,
              "later": 2.683, "unused": 1.016, "class_member": 0.011, "log_distance": -0.283, "log_tokens": -0.290,
              "log_names": 0.877, "log_users": 0.277}
"""Logistic regression weights of :data:`FEATURES`, fitted on the tuning set (pydantic) by
``bench/trim.py --fit``; importance is ``1 / (1 + exp(-(IMPORTANCE_BIAS + sum(weight x feature))))``."""


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
    """(importance, recency, importance's logit) from the complete lines (the logit is 0 under rule importance)."""
    mass: float = 0.0
    """The sum of the candidates' importance from the complete lines (the expected number of referenced units)."""
    smallest: int = 0
    """The fewest tokens of a candidate."""
    features: dict[int, tuple[float, ...]] | None = None
    """Per candidate, its :data:`FEATURES` from the complete lines (only when built with ``record``)."""
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
               opener: str, config: Any, record: bool = False) -> Plan:
    """The :class:`Plan` of a layout, from the names the near lines and the rest of the cursor's unit use;
    ``record`` keeps each candidate's features (for fitting :data:`IMPORTANCE`)."""
    pathset = set(path)
    later, users = last_uses(units, pathset)
    plan = Plan(opener=opener, units=units, features={} if record else None)
    near_bare, near_attrs = near
    whole_bare, whole_attrs = whole
    first_header = path[0] if len(path) > 1 else len(units)
    n, decay, exp = len(units), config.use_decay, math.exp
    log1p = _LOG1P.__getitem__ if n < len(_LOG1P) else math.log1p  # of counts of units: below n
    w = IMPORTANCE
    w_import, w_def, w_near, w_whole = w["import"], w["definition"], w["near"], w["whole"]
    w_later, w_unused, w_class = w["later"], w["unused"], w["class_member"]
    w_dist, w_tokens, w_names, w_users = w["log_distance"], w["log_tokens"], w["log_names"], w["log_users"]
    mass, smallest = 0.0, 1 << 30
    for i, u in enumerate(units):
        defines, members = u.defines, u.members
        if not (defines or members) or i in pathset:
            continue
        kind = u.kind
        z = IMPORTANCE_BIAS + (w_import if kind == "import" else w_def if kind == "definition" else 0.0)
        is_near = is_whole = False
        rec = 0.0
        # references(u, *near), then references(u, *whole), inlined
        if not defines.isdisjoint(near_bare) or (members and not members.isdisjoint(near_attrs)):
            z, rec, is_near = z + w_near, 1.0, True
            plan.near.add(i)
        elif not defines.isdisjoint(whole_bare) or (members and not members.isdisjoint(whole_attrs)):
            z, rec, is_whole = z + w_whole, 1.0, True
        elif later[i] >= 0:
            rec = decay ** later[i]
            z += w_later * rec
        else:
            z += w_unused
        if i > first_header:
            z += w_class
        t, names = u.tokens, len(defines) + len(members)
        if t < smallest:
            smallest = t
        z += (w_dist * log1p(n - 1 - i) + w_users * log1p(users[i]) + w_tokens * (_LOG1P[t] if t < 1024 else math.log1p(t))
              + w_names * (_LOG1P[names] if names < 1024 else math.log1p(names)))
        imp = 1.0 / (1.0 + exp(-z))
        mass += imp
        if record:
            plan.features[i] = unit_features(u, is_near, is_whole, rec, later[i] < 0, i > first_header, n - 1 - i, users[i])
        plan.cand.append(i)
        plan.base[i] = (imp, rec, z)
        for name in defines:
            plan.bare.setdefault(name, []).append(i)
        for name in members:
            plan.attr.setdefault(name, []).append(i)
    plan.mass, plan.smallest = mass, smallest
    plan.names = sorted(set(plan.bare) | set(plan.attr))
    return plan


_LOG1P = [math.log1p(k) for k in range(1024)]


def unit_features(u: Unit, near: bool, whole: bool, recency: float, unused: bool, class_member: bool, distance: int,
                  users: int, cursor_line: bool = False, typed: bool = False) -> tuple[float, ...]:
    """:data:`FEATURES` of a candidate unit: its kind (import, definition); whether it defines a name the
    near lines use (``near``), else one the rest of the cursor's unit uses (``whole``); one the cursor's
    line uses, not near (``cursor_line``); one starting with the identifier typed (``typed``); else the
    recency of its latest use (``later``) or that no other unit uses its names (``unused``); whether it
    is a member of a class enclosing the cursor; ``log1p`` of the units between it and the cursor, of
    its tokens, of its names and members, and of the most other units using one of its names."""
    plain = not (near or whole)
    return (float(u.kind == "import"), float(u.kind == "definition"), float(near), float(whole), float(cursor_line),
            float(typed), recency if plain else 0.0, float(plain and unused), float(class_member),
            math.log1p(distance), math.log1p(u.tokens), math.log1p(len(u.defines) + len(u.members)), math.log1p(users))


def importance(features: Sequence[float]) -> float:
    """The importance (probability of being referenced) of a unit with these :data:`FEATURES`."""
    z = IMPORTANCE_BIAS + sum(IMPORTANCE[f] * x for f, x in zip(FEATURES, features))
    return 1.0 / (1.0 + math.exp(-z))


def line_signals(plan: Plan, line: str, language: str | None, config: Any) -> tuple[set[int], set[int]]:
    """Candidates defining a name the cursor's ``line`` uses (not already near), and those matched by the
    identifier typed at the cursor."""
    bare, attrs = uses(plan.opener + line, language)
    hits: set[int] = set()
    for name in bare:
        hits.update(plan.bare.get(name, ()))
    for name in attrs:
        hits.update(plan.attr.get(name, ()))
    hits -= plan.near
    return hits, plan.partial(line, config.partial_matches)


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
            out[i] = w * min(imp, 1.0) + (1 - w) * rec * file_factor
        else:
            out[i] = s[0]
    return out


def ranked(plan: Plan, line: str, language: str | None, file_factor: float, recent_symbols: Sequence[str],
           config: Any, probs: dict[int, float] | None = None) -> Iterator[tuple[float, int]]:
    """``(score, unit)`` of the candidates, best first (ties: the later unit first), as :func:`score`
    gives them; lazily: only the units the cursor's line changes are scored per request, the others
    come in an order kept per plan and file factor. ``probs`` receives the importance of the units
    whose importance the cursor's line changes (the others keep their plan's)."""
    base = plan.orders.get(file_factor)
    if base is None:
        w = config.ast_weight
        base = plan.orders[file_factor] = sorted(
            ((w * min(imp, 1.0) + (1 - w) * rec * file_factor, i) for i, (imp, rec, _) in plan.base.items()), reverse=True)
    changed = _changed(plan, line, language, file_factor, recent_symbols, config, probs)
    if not changed:
        yield from base
        return
    extra = sorted(((s, i) for i, (s, _) in changed.items()), reverse=True)
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
             config: Any, probs: dict[int, float] | None = None) -> dict[int, tuple[float, float]]:
    """``(score, importance)`` of the candidates whose importance or recency the cursor's line or the
    session's recent symbols change (the others keep their plan's base values); ``probs`` receives
    the importance of those whose importance changes."""
    hits, partial = line_signals(plan, line, language, config)
    sym_rank = {s: r for r, s in enumerate(reversed(recent_symbols))} if recent_symbols else None
    todo = hits | partial
    if sym_rank:
        todo.update(i for i in plan.cand if not plan.defines_of(i).isdisjoint(sym_rank))
    w = config.ast_weight
    w_line, w_typed = IMPORTANCE["cursor_line"], IMPORTANCE["typed"]
    out = {}
    for i in todo:
        imp, rec, z = plan.base[i]
        if i in hits or i in partial:
            z += (w_line if i in hits else 0.0) + (w_typed if i in partial else 0.0)
            imp, rec = 1.0 / (1.0 + math.exp(-z)), 1.0
            if probs is not None:
                probs[i] = imp
        if sym_rank:
            ranks = [sym_rank[d] for d in plan.defines_of(i) if d in sym_rank]
            if ranks:
                rec = max(rec, config.lru_decay ** min(ranks))
        out[i] = (w * min(imp, 1.0) + (1 - w) * rec * file_factor, imp)
    return out


def expected_f1_cut(picks: Sequence[int], plan: Plan, probs: dict[int, float], unseen: float) -> int:
    """How many of ``picks`` (best first) to keep: the count that maximizes the expected F1 given that the
    completion references a unit, ``sum(importance of the kept) / (kept + expected referenced units)``
    with the referenced units expected from the candidates' importance plus ``unseen`` (at least 1)."""
    if len(picks) < 2:
        return len(picks)  # one unit (of positive importance) beats none
    base = plan.base
    mass = plan.mass + unseen
    for i, p in probs.items():
        mass += p - base[i][0]
    if mass < 1.0:
        mass = 1.0
    best, best_k, got, k = 0.0, 0, 0.0, 0
    for i in picks:
        p = probs.get(i)
        got += base[i][0] if p is None else p
        k += 1
        if got > best * (k + mass):  # got / (k + mass) > best
            best, best_k = got / (k + mass), k
    return best_k


def last_uses(units: list[Unit], path: set[int]) -> tuple[list[int], list[int]]:
    """Per unit, the number of units between the cursor and the latest other unit using one of its
    names (-1 when no other unit does), and the most other units using one of its names; the
    cursor's path is left to the near/whole signals."""
    wanted: set[str] = set()  # only the names of candidates matter
    for i, u in enumerate(units):
        if i not in path and (u.defines or u.members):
            wanted.update(u.defines)
            wanted.update(u.members)
    last: dict[str, int] = {}
    prev: dict[str, int] = {}
    count: dict[str, int] = {}
    for i, u in enumerate(units):
        if i in path:
            continue
        for name in u.idents & wanted:
            j = last.get(name)
            if j is not None:
                prev[name] = j
            last[name] = i
            count[name] = count.get(name, 0) + 1
    n = len(units)
    out, users = [], []
    for i, u in enumerate(units):
        best, most = -1, 0
        for name in u.defines | u.members if (u.defines or u.members) and i not in path else ():
            j = last.get(name, -1)
            if j == i:
                j = prev.get(name, -1)
            if j > best:
                best = j
            c = count.get(name, 0) - (name in u.idents)
            if c > most:
                most = c
        out.append(n - 1 - best if best >= 0 else -1)
        users.append(most)
    return out, users


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
