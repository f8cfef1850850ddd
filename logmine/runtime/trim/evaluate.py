"""Measuring context trimming: F1 of the kept units against the units a logged completion references.

Truth for one logged request: the units off the cursor's path (the unit enclosing the cursor
and the class headers around it are always kept, so they count on neither side) that define
a name the completion uses (:func:`~logmine.runtime.trim.score.references`: a bare name it
defines, or a member used after ``.`` / ``::``). The completion is read in the state the
prefix leaves it in: inside a docstring or comment its prose is not code, and an identifier
the cursor splits (``Sty|le``) is read whole. F1 is ``None`` when the completion references
no unit (averages leave such requests out). The baseline keeps the nearest lines that fit the
same budget; it is scored on the same units (a unit counts as kept when the lines overlap it).

Beside this strict figure, :class:`Evaluation` carries a *literal* one, closer to the words "the
units the completion references (identifiers used in it and defined in the context)": the units
on the cursor's path (the enclosing unit and the class headers around it) also count, on both
sides, when the completion uses a name they define. Trimming keeps them (the headers are dropped
only when the cursor's unit alone is over budget), so the literal figure is mostly the higher one;
it is reported, not tuned for.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from logmine.runtime.trim.trimmer import TrimConfig, Trimmer, _trimmer
from logmine.runtime.trim.score import PARTIAL, references, uses
from logmine.runtime.trim.base import Unit, count_tokens, open_delimiter


def completion_uses(prefix: str, completion: str, language: str | None = None) -> tuple[set[str], set[str]]:
    """Identifiers the completion uses, read in the state the prefix leaves (inside a docstring,
    a comment or a string, the completion's text up to the closing delimiter is not code)."""
    tail = prefix[prefix.rfind("\n", 0, max(0, len(prefix) - 4000)) + 1 :] if len(prefix) > 4000 else prefix
    opener = open_delimiter(tail, language)
    if not opener and re.match(r"[\w$]", completion):
        opener = PARTIAL.search(tail).group()  # the identifier the cursor splits is the completion's too
    return uses(opener + completion, language)


def nearest_lines(code: str, budget_tokens: int, count: Callable[[str], int] = count_tokens) -> str:
    """The baseline: the lines just before the cursor that fit the budget."""
    lines = code.splitlines(keepends=True)
    kept, used = [], 0
    for line in reversed(lines):
        t = count(line)
        if used + t > budget_tokens:
            break
        kept.append(line)
        used += t
    return "".join(reversed(kept))


def referenced_units(units: list[Unit], path: set[int], completion: str, language: str | None = None,
                     prefix: str | None = None) -> set[int]:
    """Units off the cursor's path defining a name that the completion uses (outside strings/comments):
    a bare name it defines, or a member it defines used after ``.`` / ``::``."""
    bare, attrs = uses(completion, language) if prefix is None else completion_uses(prefix, completion, language)
    return {i for i, u in enumerate(units) if i not in path and references(u, bare, attrs)}


def referenced_path(units: list[Unit], path: set[int], completion: str, language: str | None, prefix: str) -> set[int]:
    """The units on the cursor's path (enclosing unit, class headers) defining a name the completion uses:
    what the literal figure adds to both sides."""
    bare, attrs = completion_uses(prefix, completion, language)
    return {i for i in path if references(units[i], bare, attrs)}


def f1(kept: set[int], truth: set[int]) -> float | None:
    """F1 of kept units against the referenced ones; None when neither has any unit."""
    if not kept and not truth:
        return None
    tp = len(kept & truth)
    if tp == 0:
        return 0.0
    p, r = tp / len(kept), tp / len(truth)
    return 2 * p * r / (p + r)


@dataclass(frozen=True)
class Evaluation:
    """One context's outcome: F1 of trimming and of the baseline (None: nothing referenced), and counts."""

    f1: float | None
    f1_baseline: float | None
    kept: int
    truth: int
    hits: int
    baseline_kept: int
    baseline_hits: int
    f1_literal: float | None = None
    """F1 with the cursor's path counted on both sides when the completion uses a name it defines."""
    f1_baseline_literal: float | None = None
    """The baseline's F1 counted the same way (a path unit counts as kept when the lines overlap it)."""


def evaluate(code: str, language: str, completion: str, config: TrimConfig | None = None,
             trimmer: Trimmer | None = None, file_path: str | None = None, recent_files: Sequence[str] = ()) -> Evaluation:
    """Trim ``code`` and score the kept units against those ``completion`` references (cursor path excluded)."""
    t = trimmer or _trimmer(config)
    result = t.prefix(code, language, file_path, recent_files)
    truth = referenced_units(result.units, result.path, completion, language, code)
    kept = set(result.kept) - result.path
    base_text = nearest_lines(code, t.config.budget_tokens, t.count)
    base_start = len(code.encode("utf-8")) - len(base_text.encode("utf-8"))
    base = {i for i, u in enumerate(result.units) if i not in result.path and u.end > base_start}
    own = referenced_path(result.units, result.path, completion, language, code)
    own_kept = own & set(result.kept)  # the headers are dropped when the cursor's unit alone is over budget
    own_base = {i for i in own if result.units[i].end > base_start}
    literal = (f1(kept | own_kept, truth | own), f1(base | own_base, truth | own)) if truth or own else (None, None)
    if not truth:
        return Evaluation(None, None, len(kept), 0, 0, len(base), 0, *literal)
    return Evaluation(f1(kept, truth), f1(base, truth), len(kept), len(truth), len(kept & truth), len(base),
                      len(base & truth), *literal)
