"""Prompt templates merged by their static lines.

The word-level miner splits a free-text region (a user's request, a chat message with or
without a pasted code block) by its words and lengths. Across many prompts, though, a
template's static lines recur verbatim while the text between them does not: templates whose
prompts have the same static lines in the same order are one template.
"""

from __future__ import annotations

import os
import re
from collections import Counter, defaultdict

from logmine.masking import WILDCARD
from logmine.stages.templates import MinerState, group_text, render
from logmine.stages.templates_cluster import SLOT, Group

MIN_ANCHOR_PROMPTS = 5
"""A line is static (an anchor) when at least this many prompts hold it verbatim..."""
MIN_ANCHOR_CHARS = 8
"""...and it has this many characters besides masks (``</s>`` or a lone fence is no anchor)."""
MIN_SIGNATURE_CHARS = 32
"""Templates merge by their anchors only when these hold this much text."""
GAP = "\x00"


def merge_by_anchors(groups: list[Group], state: MinerState) -> list[Group]:
    """Merge templates whose prompts have the same static lines, in the same order, with
    variable text between them: a free-text region the word-level miner split by its words
    (a user's request, a chat message with or without a pasted code block) is one variable here.

    A static line (an anchor) is one that at least ``MIN_ANCHOR_PROMPTS`` prompts hold
    verbatim (masked); fence lines never are (a code block may be optional). Two templates
    merge when the anchors most of their prompts have are the same."""
    units = sorted({i for g in groups for i in g.members})
    lines = {u: _anchor_lines(render(state.tokens[u], state.seps[u])) for u in units}
    df: Counter[str] = Counter()
    for u in units:
        for line in set(lines[u]):
            df[line] += state.weights[u]
    families: dict[object, list[int]] = defaultdict(list)
    for k, g in enumerate(groups):
        votes: Counter[tuple[str, ...]] = Counter()
        for u in g.members:
            votes[_signature(lines[u], df)] += state.weights[u]
        signature = min(votes, key=lambda sig: (-votes[sig], sig))
        strong = GAP in signature and sum(len(a) for a in signature if a != GAP) >= MIN_SIGNATURE_CHARS
        families[signature if strong else k].append(k)
    out = []
    for ks in families.values():
        if len(ks) == 1:
            out.append(groups[ks[0]])
            continue
        members = [groups[k] for k in ks]
        parts = [p for g in members for p in (g.parts or [g])]
        texts = [SLOT.sub(r"{\1}", group_text(g, state)) for g in members]
        text = _anchored_text(_common_signature(texts, df), texts)
        out.append(Group(sorted(i for g in members for i in g.members), min(g.pattern for g in members), parts, None, text))
    return out


def _anchor_lines(text: str) -> list[str]:
    """The non-blank lines of a prompt, slot tokens read as their slot names: the candidates
    for static text."""
    return [line.rstrip() for line in SLOT.sub(r"{\1}", text).split("\n") if line.strip()]


def _common_signature(texts: list[str], df: Counter[str]) -> tuple[str, ...]:
    """The anchors every text holds, in order (the template texts of merged groups)."""
    signatures = [[a for a in _signature(_anchor_lines(t), df) if a != GAP] for t in texts]
    common = signatures[0]
    for other in signatures[1:]:
        common = _lcs(common, other)
    out: list[str] = []
    for a in common:
        out += [GAP, a]
    return (*out, GAP)


def _lcs(a: list[str], b: list[str]) -> list[str]:
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) - 1, -1, -1):
        for j in range(len(b) - 1, -1, -1):
            table[i][j] = table[i + 1][j + 1] + 1 if a[i] == b[j] else max(table[i + 1][j], table[i][j + 1])
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        if a[i] == b[j]:
            out.append(a[i])
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return out


def _is_anchor(line: str, df: Counter[str]) -> bool:
    return df[line] >= MIN_ANCHOR_PROMPTS and len(_MASKS.sub("", line).strip()) >= MIN_ANCHOR_CHARS and not line.lstrip().startswith(("```", "~~~"))


_MASKS = re.compile(r"<\*>|\{[a-z_]+\d*(?::[a-z]{6,})?\}")


def _signature(lines: list[str], df: Counter[str]) -> tuple[str, ...]:
    out: list[str] = []
    for line in lines:
        if _is_anchor(line, df):
            out.append(line)
        elif not out or out[-1] != GAP:
            out.append(GAP)
    return tuple(out)


def _anchored_text(signature: tuple[str, ...], texts: list[str]) -> str:
    """The template over ``texts``: the anchor lines as they are; each region between them
    kept when every text has the same, else a wildcard (a named slot if it is one slot in all)."""
    anchors = [a for a in signature if a != GAP]
    pieces = [_split_at(t, anchors) for t in texts]
    out = []
    for i, col in enumerate(zip(*pieces)):
        if i % 2 == 1 or len(set(col)) == 1:
            out.append(col[0])
            continue
        names = {m.group(1) for c in col if (m := _ONE_SLOT.fullmatch(c.strip()))}
        lead = os.path.commonprefix([c[: len(c) - len(c.lstrip())] for c in col])
        trail = os.path.commonprefix([c[len(c.rstrip()) :][::-1] for c in col])[::-1]
        slot = "{%s}" % names.pop() if len(names) == 1 and all(_ONE_SLOT.fullmatch(c.strip()) for c in col) else WILDCARD
        out.append(lead + slot + trail)
    return "".join(out)


_ONE_SLOT = re.compile(r"\{([a-z_]+)\d*(?::[a-z]{6,})?\}")


def _split_at(text: str, anchors: list[str]) -> list[str]:
    """``[region, anchor, region, anchor, ..., region]`` with each anchor a whole line of ``text``."""
    out, pos = [], 0
    for anchor in anchors:
        m = re.compile(r"(?m)^" + re.escape(anchor) + r"[ \t]*$").search(text, pos)
        if m is None:  # cannot happen for a text the signature came from
            raise ValueError(f"anchor {anchor!r} not found")
        out += [text[pos : m.start()], text[m.start() : m.end()]]
        pos = m.end()
    out.append(text[pos:])
    return out
