"""Template-mining accuracy metrics, as the log-parsing benchmark's evaluators compute them.

Every function takes two equally long sequences, one label per log line: ``truth`` (the true
template or event id of each line) and ``parsed`` (the group id a parser gave it); the
template-level metrics also take the template string of each line on both sides. Lines whose
true label is empty or None are dropped first. See ``../shared/benchmarks/README.md``.

- GA: a true group is correct when the lines of exactly one parsed group are exactly its lines;
  GA = lines in correct groups / N.
- Pairwise F1 over pairs of lines put in the same group.
- FGA: harmonic mean of PGA = correct groups / parsed groups and RGA = correct groups / true groups.
- PA: lines whose parsed template string equals the true template / N.
- FTA: harmonic mean of PTA and RTA, where a parsed template is correct when its group is
  correct and its template string equals the true template.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Scores:
    """All metrics of one parse against one ground truth."""

    ga: float
    """Grouping accuracy."""
    pairwise_precision: float
    pairwise_recall: float
    pairwise_f1: float
    fga: float
    """F1 of grouping accuracy over groups (PGA, RGA)."""
    pa: float
    """Parsing accuracy: exact template strings, per line."""
    fta: float
    """F1 of template accuracy over templates (PTA, RTA)."""
    lines: int
    true_groups: int
    parsed_groups: int

    def to_json(self) -> dict[str, float | int]:
        return asdict(self)


def _drop_unlabelled(truth: Sequence[Hashable], *others: Sequence[Hashable]) -> list[list[Hashable]]:
    if any(len(o) != len(truth) for o in others):
        raise ValueError("truth and parsed labels must have the same length")
    keep = [i for i, t in enumerate(truth) if t is not None and t != ""]
    return [[seq[i] for i in keep] for seq in (truth, *others)]


def _groups(labels: Sequence[Hashable]) -> dict[Hashable, list[int]]:
    out: dict[Hashable, list[int]] = defaultdict(list)
    for i, label in enumerate(labels):
        out[label].append(i)
    return out


def _correct_groups(truth: Sequence[Hashable], parsed: Sequence[Hashable]) -> dict[Hashable, Hashable]:
    """Parsed group -> true group, for every parsed group whose lines are exactly one true group."""
    true_sizes = Counter(truth)
    out = {}
    for label, rows in _groups(parsed).items():
        truths = {truth[i] for i in rows}
        if len(truths) == 1:
            (t,) = truths
            if true_sizes[t] == len(rows):
                out[label] = t
    return out


def grouping_accuracy(truth: Sequence[Hashable], parsed: Sequence[Hashable]) -> float:
    """GA: the share of lines whose true group is exactly one parsed group."""
    truth, parsed = _drop_unlabelled(truth, parsed)
    if not truth:
        return 1.0
    sizes = Counter(parsed)
    return sum(sizes[p] for p in _correct_groups(truth, parsed)) / len(truth)


def grouping_accuracy_of(truth: Sequence[Hashable], parsed: Sequence[Hashable], part: Sequence[bool]) -> float:
    """GA over the lines where ``part`` is true (say, the lines of one fold's templates), each line
    judged in the whole parse: right when its true group is exactly one parsed group. Unlabelled
    lines count nowhere, as in :func:`grouping_accuracy` (which this is over every line)."""
    truth, parsed, part = _drop_unlabelled(truth, parsed, part)
    right = _correct_groups(truth, parsed)
    lines = [p for p, keep in zip(parsed, part, strict=True) if keep]
    return sum(p in right for p in lines) / len(lines) if lines else 1.0


def _pairs(sizes: Sequence[int]) -> int:
    return sum(n * (n - 1) // 2 for n in sizes)


def pairwise_scores(truth: Sequence[Hashable], parsed: Sequence[Hashable]) -> tuple[float, float, float]:
    """Precision, recall and F1 over pairs of lines that share a group."""
    truth, parsed = _drop_unlabelled(truth, parsed)
    both = _pairs(list(Counter(zip(truth, parsed)).values()))
    parsed_pairs, true_pairs = _pairs(list(Counter(parsed).values())), _pairs(list(Counter(truth).values()))
    precision = both / parsed_pairs if parsed_pairs else 1.0
    recall = both / true_pairs if true_pairs else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def _f1(correct: int, parsed: int, true: int) -> float:
    p = correct / parsed if parsed else 0.0
    r = correct / true if true else 0.0
    return 2 * p * r / (p + r) if p + r else 0.0


def group_f1(truth: Sequence[Hashable], parsed: Sequence[Hashable]) -> float:
    """FGA: F1 of correct groups over parsed groups (PGA) and true groups (RGA)."""
    truth, parsed = _drop_unlabelled(truth, parsed)
    return _f1(len(_correct_groups(truth, parsed)), len(set(parsed)), len(set(truth)))


def parsing_accuracy(true_templates: Sequence[str], parsed_templates: Sequence[str]) -> float:
    """PA: the share of lines whose parsed template equals the true one exactly (outer spaces aside)."""
    truth, parsed = _drop_unlabelled(true_templates, parsed_templates)
    if not truth:
        return 1.0
    return sum(str(t).strip() == str(p).strip() for t, p in zip(truth, parsed)) / len(truth)


def template_f1(true_templates: Sequence[str], parsed: Sequence[Hashable], parsed_templates: Sequence[str]) -> float:
    """FTA: F1 of correct templates (correct group and equal string) over parsed and true templates."""
    truth, parsed, texts = _drop_unlabelled(true_templates, parsed, parsed_templates)
    correct = 0
    first = {p: i for i, p in reversed(list(enumerate(parsed)))}
    for p, t in _correct_groups(truth, parsed).items():
        correct += str(texts[first[p]]).strip() == str(t).strip()
    return _f1(correct, len(set(parsed)), len(set(truth)))


def score(true_templates: Sequence[str], parsed: Sequence[Hashable], parsed_templates: Sequence[str] | None = None) -> Scores:
    """Every metric at once. ``parsed_templates`` defaults to the parsed ids (PA/FTA then mean little)."""
    texts = list(parsed_templates) if parsed_templates is not None else [str(p) for p in parsed]
    truth, ids, texts = _drop_unlabelled(true_templates, parsed, texts)
    precision, recall, f1 = pairwise_scores(truth, ids)
    return Scores(
        ga=grouping_accuracy(truth, ids),
        pairwise_precision=precision,
        pairwise_recall=recall,
        pairwise_f1=f1,
        fga=group_f1(truth, ids),
        pa=parsing_accuracy(truth, texts),
        fta=template_f1(truth, ids, texts),
        lines=len(truth),
        true_groups=len(set(truth)),
        parsed_groups=len(set(ids)),
    )
