"""Upper bounds of trimming F1: the oracles' choices on small contexts whose truth is known by hand."""

from __future__ import annotations

import pytest

from logmine.runtime.trim.trimmer import TrimConfig, Trimmer
from logmine.runtime.trim.oracle import best_cutoff, best_subset, bounds, visible
from logmine.runtime.trim.units import Unit

CODE = "import os\nimport sys\n\nLIMIT = 3\n\ndef helper(x):\n    return x\n\ndef main():\n    y = helper(1)\n    return LIM"
"""Units: 0 ``import os``, 1 ``import sys``, 2 ``LIMIT``, 3 ``helper``, 4 ``main`` (the cursor's unit)."""


def _units(tokens: list[int]) -> list[Unit]:
    return [Unit(i, i + 1, "definition", "x", frozenset({f"n{i}"}), t) for i, t in enumerate(tokens)]


def test_visible_signals_of_each_unit() -> None:
    t = Trimmer(TrimConfig(budget_tokens=256))
    r = t.prefix(CODE, "python", "a.py")
    seen = visible(r.units, sorted(r.path), CODE.encode(), "python", ["helper"])
    # helper is called in main; LIM is being typed; helper was edited earlier; no class encloses the cursor
    assert seen == {"uses": {3}, "typed": {2}, "class": set(), "recent": {3}, "import": {0, 1}}


def test_bounds_of_a_request() -> None:
    t = Trimmer(TrimConfig(budget_tokens=256))
    # the completion finishes LIMIT and uses os: truth {LIMIT, os}; ours keeps LIMIT
    b, _, path = bounds(CODE, "python", "IT + os.sep", t, "a.py", ["helper"])
    assert path == [4]
    assert (b.truth, b.path_over_budget) == (2, False)
    assert b.ours == pytest.approx(2 / 3)
    assert b.cutoff == pytest.approx(2 / 3)  # LIMIT alone: P 1, R 1/2
    assert b.visible_narrow == pytest.approx(2 / 3)  # os is seen by no code signal
    assert (b.visible, b.budget) == (1.0, 1.0)  # imports count as a signal
    assert b.covered == {"uses": 0, "typed": 1, "class": 0, "recent": 0, "import": 1, "narrow": 1, "any": 2}


def test_bounds_when_the_path_is_over_budget() -> None:
    t = Trimmer(TrimConfig(budget_tokens=5))
    b, _, _ = bounds(CODE, "python", "IT + os.sep", t, "a.py")
    assert b.path_over_budget
    assert (b.cutoff, b.visible_narrow, b.visible, b.budget) == (0.0, 0.0, 0.0, 0.0)


def test_best_subset_keeps_the_most_units_that_fit() -> None:
    units = _units([5, 2, 3, 9])
    assert best_subset({0, 1, 2, 3}, units, 10) == {0, 1, 2}
    assert best_subset({0, 3}, units, 8) == {0}
    assert best_subset({0}, units, -1) == set()


def test_best_cutoff_scans_the_prefixes_of_the_ranking() -> None:
    units = _units([4, 4, 4, 4])
    order = [(0.9, 0), (0.8, 1), (0.7, 2), (0.6, 3)]
    assert best_cutoff(order, units, 16, {1, 3}) == pytest.approx(2 * 2 / (4 + 2))  # all four: P 1/2, R 1
    assert best_cutoff(order, units, 16, {0}) == 1.0
    assert best_cutoff(order, units, 8, {2}) == 0.0  # unit 2 does not fit after 0 and 1
    assert best_cutoff(order, _units([4, 9, 4, 4]), 8, {2}) == pytest.approx(2 / 3)  # unit 1 is skipped, 2 fits
