"""Upper bounds of context trimming's F1: what a trimmer that knew the truth could score.

For one logged request, with the truth of :mod:`logmine.runtime.trim.evaluate` (the units off the
cursor's path that define a name the completion uses) and the budget left once the cursor's
path is kept (nothing when the path alone is over budget, as :class:`~logmine.runtime.trim.trimmer.Trimmer`
does):

- **cutoff**: our ranking, the best per-request cutoff. The units our ranking would keep with no
  cut and no ``max_kept`` (best score first, skipping those that no longer fit) form a sequence;
  the best F1 of any of its prefixes (keeping none included).
- **visible**: the best F1 of any set of units that fits the budget and holds only units that some
  signal available at request time singles out (:func:`visible`): the referenced visible units,
  smallest first (keeping only referenced units, F1 grows with their number, so this is optimal).
- **budget**: the same over all referenced units (the budget is the only limit).

F1 is averaged over the requests whose completion references a unit, like the strict figure.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from logmine.runtime.trim.trimmer import Trimmer
from logmine.runtime.trim.evaluate import f1, referenced_units
from logmine.runtime.trim.score import identifiers, lru_factor, ranked, typed_word
from logmine.runtime.trim.base import Unit

SIGNALS = ("uses", "typed", "class", "recent", "import")
"""The signals of :func:`visible`, in the order their coverage is reported."""


@dataclass(frozen=True)
class Bounds:
    """One request's F1 of our trimming and of each oracle (None: nothing referenced), and coverage."""

    ours: float | None
    cutoff: float | None
    visible_narrow: float | None
    """The visible oracle with the signals read from the code alone: ``uses``, ``typed``, ``class``."""
    visible: float | None
    """The visible oracle with every signal (``recent`` and ``import`` too)."""
    budget: float | None
    truth: int
    covered: dict[str, int]
    """Per signal, how many referenced units it singles out (``any``: some signal)."""
    path_over_budget: bool


def visible(units: Sequence[Unit], path: Sequence[int], data: bytes, language: str | None,
            recent_names: Iterable[str] = ()) -> dict[str, set[int]]:
    """Per signal, the units off the cursor's path that it singles out:

    - ``uses``: a name the unit defines (or a member it defines) occurs in the code between the
      unit's end and the cursor (outside strings and comments; the cursor's line included);
    - ``typed``: a name it defines starts with the identifier being typed at the cursor (any
      number of units may match; after ``.`` / ``->`` / ``::`` its members);
    - ``class``: it is a member of a class enclosing the cursor;
    - ``recent``: it defines a name of the unit that enclosed an earlier cursor of the session
      (``recent_names``: the recently edited symbols);
    - ``import``: it is an import.
    """
    pathset = set(path)
    cand = [i for i, u in enumerate(units) if i not in pathset and (u.defines or u.members)]
    out: dict[str, set[int]] = {s: set() for s in SIGNALS}
    # identifiers used after each unit's end: the text between unit ends, read once, unioned from the cursor back
    ends = sorted({units[i].end for i in cand})
    after: dict[int, set[str]] = {}
    seen: set[str] = set()
    stop = len(data)
    for end in reversed(ends):
        seen = seen | identifiers(data[end:stop].decode("utf-8", "replace"), language)
        after[end], stop = seen, end
    line = data[data.rfind(b"\n") + 1 :].decode("utf-8", "replace")
    word, member = typed_word(line)
    if word[:1].isdigit():
        word = ""
    first_header = min(path[:-1]) if len(path) > 1 else None
    recent = set(recent_names)
    for i in cand:
        u = units[i]
        names = u.defines | u.members
        if not names.isdisjoint(after[u.end]):
            out["uses"].add(i)
        if word and any(n.startswith(word) for n in (u.members if member else u.defines)):
            out["typed"].add(i)
        if first_header is not None and i > first_header:
            out["class"].add(i)
        if not u.defines.isdisjoint(recent):
            out["recent"].add(i)
        if u.kind == "import":
            out["import"].add(i)
    return out


def best_subset(candidates: Iterable[int], units: Sequence[Unit], room: int) -> set[int]:
    """The most units of ``candidates`` that fit ``room`` tokens: the smallest first."""
    kept, used = set(), 0
    for i in sorted(candidates, key=lambda i: (units[i].tokens, i)):
        if used + units[i].tokens > room:
            break
        kept.add(i)
        used += units[i].tokens
    return kept


def best_cutoff(order: Iterable[tuple[float, int]], units: Sequence[Unit], room: int, truth: set[int]) -> float:
    """The best F1 of a prefix of the units ``order`` keeps while they fit ``room`` (keeping none: 0)."""
    best, used, kept, hits = 0.0, 0, 0, 0
    for _, i in order:
        t = units[i].tokens
        if used + t > room:
            continue
        used, kept = used + t, kept + 1
        if i in truth:
            hits += 1
            best = max(best, 2 * hits / (kept + len(truth)))
    return best


def bounds(code: str, language: str, completion: str, trimmer: Trimmer, file_path: str | None = None,
           recent_names: Iterable[str] = (), recent_files: Sequence[str] = ()) -> tuple[Bounds, list[Unit], list[int]]:
    """The :class:`Bounds` of one request, and its units and cursor path (for the caller's session state)."""
    result = trimmer.prefix(code, language, file_path, recent_files)
    units, path = result.units, sorted(result.path)
    truth = referenced_units(units, result.path, completion, language, code)
    ours = f1(set(result.kept) - result.path, truth) if truth else None
    if not truth or not path:
        return Bounds(ours, None, None, None, None, 0, {}, False), units, path
    data = code.encode("utf-8")
    room = trimmer.config.budget_tokens - sum(units[i].tokens for i in path)
    over = room < 0
    room = max(room, -1)  # over budget: nothing off the path fits
    layout_units, layout_path, memo = trimmer.layout(data, language, file_path)
    plan = trimmer._plan(data, layout_units, layout_path, memo, language, file_path)
    line = data[data.rfind(b"\n") + 1 :].decode("utf-8", "replace")
    factor = lru_factor(recent_files, file_path, trimmer.config.lru_decay)
    order = ranked(plan, line, language, factor, (), trimmer.config)
    seen = visible(units, path, data, language, recent_names)
    narrow = seen["uses"] | seen["typed"] | seen["class"]
    wide = narrow | seen["recent"] | seen["import"]
    covered = {s: len(truth & seen[s]) for s in SIGNALS} | {"narrow": len(truth & narrow), "any": len(truth & wide)}
    return Bounds(
        ours,
        best_cutoff(order, units, room, truth) if not over else 0.0,
        f1(best_subset(truth & narrow, units, room), truth) if not over else 0.0,
        f1(best_subset(truth & wide, units, room), truth) if not over else 0.0,
        f1(best_subset(truth, units, room), truth) if not over else 0.0,
        len(truth), covered, over,
    ), units, path
