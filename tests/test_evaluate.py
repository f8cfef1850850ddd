"""The grouping metrics the benches report (GA over all lines and over a part of them)."""

from __future__ import annotations

from logmine.evaluate import grouping_accuracy, grouping_accuracy_of

TRUTH = ["a", "a", "b", "b", "c"]
PARSED = [1, 1, 2, 3, 3]  # a right; b split; the second b merged with c


def test_ga_counts_the_lines_of_exactly_recovered_groups() -> None:
    assert grouping_accuracy(TRUTH, PARSED) == 2 / 5


def test_ga_of_a_part_judges_each_line_in_the_whole_parse() -> None:
    assert grouping_accuracy_of(TRUTH, PARSED, [True, True, False, False, False]) == 1.0
    assert grouping_accuracy_of(TRUTH, PARSED, [False, False, True, True, True]) == 0.0
    # c's line alone is wrong: its parsed group also holds a b, though no line of b is in the part
    assert grouping_accuracy_of(TRUTH, PARSED, [False, False, False, False, True]) == 0.0
    parts = [i < 2 for i in range(5)]
    whole = grouping_accuracy_of(TRUTH, PARSED, parts) * 2 + grouping_accuracy_of(TRUTH, PARSED, [not p for p in parts]) * 3
    assert whole / 5 == grouping_accuracy(TRUTH, PARSED)
    assert grouping_accuracy_of(TRUTH, PARSED, [False] * 5) == 1.0
    # an unlabelled line counts nowhere, as in grouping_accuracy
    assert grouping_accuracy_of([*TRUTH, None], [*PARSED, 1], [True] * 6) == grouping_accuracy(TRUTH, PARSED)
