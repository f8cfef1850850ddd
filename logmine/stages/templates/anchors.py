"""Prompt templates merged by their static lines.

The word-level miner splits a free-text region (a user's request, a chat message with or
without a pasted code block) by its words and lengths. Across many prompts, though, a
template's static lines recur verbatim while the text between them does not: templates whose
prompts have the same static lines in the same order are one template.

A rare template (a prompt or two whose code ended in a comment or a docstring, read as text)
joins a frequent one whose pattern matches it: :func:`logmine.stages.templates.rare.absorb_rare`.
"""

from __future__ import annotations

import os
import re
from collections import Counter, defaultdict

from logmine.masking import WILDCARD
from logmine.prompt_syntax import CHAT_TURN, MODEL_FORMAT
from logmine.stages.templates.state import MinerState, group_text, render
from logmine.stages.templates.cluster import SLOT, Group, turns
from logmine.stages.templates.middles import join_varying_middles
from logmine.stages.templates.line_forms import (
    _ESCAPED_WILDCARD, _LETTER, _MASKS, _TRAILING, _WORD, INLINE, MAX_LINE_WORDS, MIN_ANCHOR_CHARS, MIN_ANCHOR_PROMPTS,
    MIN_SIGNATURE_CHARS, TURN, _generalised, _variable_lines,
)
from logmine.stages.templates.rare import _VARIABLE, _WS, absorb_rare

GAP = "\x00"


def merge_by_anchors(groups: list[Group], state: MinerState) -> list[Group]:
    """Merge templates whose prompts have the same static lines, in the same order, with
    variable text between them: a free-text region the word-level miner split by its words
    (a user's request, a chat message with or without a pasted code block) is one variable here.

    A static line (an anchor) is one that at least ``MIN_ANCHOR_PROMPTS`` prompts hold
    verbatim (masked); fence lines never are (a code block may be optional). Two templates
    merge when the anchors most of their prompts have are the same, and so are their chat turns
    (:func:`logmine.stages.templates.cluster.turns`: a chat with one more file is another template).
    Templates whose anchors are fewer than ``MIN_SIGNATURE_CHARS`` (a short line, or the label a line
    opens with: ``User Request:``, ``USER QUERY: {request}``) merge only where the text between them
    is free (:func:`_free_text`)."""
    units = sorted({i for g in groups for i in g.members})
    lines = {u: _anchor_lines(render(state.tokens[u], state.seps[u])) for u in units}
    forms = _variable_lines(lines.values())
    if forms:
        lines = {u: _generalised(ls, forms) for u, ls in lines.items()}
    df: Counter[str] = Counter()
    for u in units:
        for line in set(lines[u]):
            df[line] += state.weights[u]
    lines = _values_in_free_regions(lines, df, state.weights)
    labels = _labels(lines, df, state.weights)
    families: dict[object, list[int]] = defaultdict(list)
    weak: dict[object, list[int]] = defaultdict(list)
    signature_of: dict[int, tuple[str, ...]] = {}
    for k, g in enumerate(groups):
        votes: Counter[tuple[str, ...]] = Counter()
        for u in g.members:
            votes[_signature(lines[u], df)] += state.weights[u]
        signature = signature_of[k] = min(votes, key=lambda sig: (-votes[sig], sig))
        static = sum(len(a) for a in signature if a != GAP and a[:1] != TURN)
        key = (turns(state.tokens[g.members[0]]), signature)
        if GAP in signature and static >= MIN_SIGNATURE_CHARS:
            families[key].append(k)
        elif GAP in signature:
            votes = Counter()
            for u in g.members:
                votes[_signature(lines[u], df, labels)] += state.weights[u]
            signature = min(votes, key=lambda sig: (-votes[sig], sig))
            if any(a != GAP and a[:1] != TURN for a in signature):
                weak[(key[0], signature)].append(k)
            else:
                families[k].append(k)
        else:
            families[k].append(k)
    for key, ks in weak.items():
        if len(ks) > 1 and _free_text([u for k in ks for u in groups[k].members], lines, df, state.weights):
            families[("labels", key)] = ks
        else:
            for k in ks:
                families[k].append(k)
    _join_middles(families, groups, signature_of, state)
    out = []
    for key, ks in families.items():
        if len(ks) == 1:
            out.append(groups[ks[0]])
            continue
        members = [groups[k] for k in ks]
        parts = [p for g in members for p in (g.parts or [g])]
        texts = [SLOT.sub(r"{\1}", group_text(g, state)) for g in members]
        by_labels = isinstance(key, tuple) and key[0] == "labels"
        text = _anchored_text(_common_signature(texts, df, forms, labels if by_labels else None), texts)
        out.append(Group(sorted(i for g in members for i in g.members), min(g.pattern for g in members), parts, None, text))
    return absorb_rare(merge_one_word(out, state), state)


def _join_middles(families: dict[object, list[int]], groups: list[Group], signature_of: dict[int, tuple[str, ...]], state: MinerState) -> None:
    """Join the families whose anchors differ only in lines that vary freely (:mod:`~logmine.stages.templates.middles`)."""
    anchors = {key: (turns(state.tokens[groups[ks[0]].members[0]]), tuple(a for a in signature_of[ks[0]] if a != GAP))
               for key, ks in families.items() if not (isinstance(key, tuple) and key[0] == "labels")}
    weights = {key: sum(state.weights[u] for k in families[key] for u in groups[k].members) for key in anchors}
    for n, joined in enumerate(join_varying_middles(anchors, weights, MIN_SIGNATURE_CHARS, TURN)):
        families[("middle", n)] = sorted(k for key in joined for k in families.pop(key))


def _free_text(units: list[int], lines: dict[int, list[str]], df: Counter[str], weights: list[int]) -> bool:
    """Whether prompts whose anchors are the same short lines (``User Request:``, fewer than
    ``MIN_SIGNATURE_CHARS``) differ by free text: the text between their anchors takes
    ``MIN_REGION_VALUES`` contents or more, ``REGION_RATIO`` of the prompts or more (a user's request the
    word-level miner split by its words and length). Templates told apart by a few static lines have
    few contents, each in many prompts."""
    contents: set[tuple[str, ...]] = set()
    for u in units:
        contents.add(tuple(line for line in lines[u] if not _is_anchor(line, df)))
    return len(contents) >= MIN_REGION_VALUES and len(contents) >= REGION_RATIO * sum(weights[u] for u in units)


FRAME_SHARE = 0.25
"""An anchor of a prompt frames its regions when this share of the median count of the prompt's
anchors hold it; an anchor held by fewer prompts is a line a value may bring (:func:`_values_in_free_regions`)..."""
MIN_REGION_VALUES = 5
"""...and it is a value where the region between the same two framing anchors takes this many
contents..."""
REGION_RATIO = 0.3
"""...that are this share of the prompts that region is in, or more (mostly contents of their own:
an issue's text whose sentences recur, not the few lines that tell templates apart)."""
VALUE = "\x03"
"""Marks a line read as part of a value: never an anchor."""


def _values_in_free_regions(lines: dict[int, list[str]], df: Counter[str], weights: list[int]) -> dict[int, list[str]]:
    """Lines a value brings, read as values although enough prompts hold them to be anchors. As a log
    grows, the sentences of a free-text value (an issue's text, drawn from what users write) recur in
    five prompts and more, and each prompt's anchors would be its own. Such a line is held by far fewer
    prompts than the prompt's other anchors (``FRAME_SHARE`` of their median count), and the region
    between the same two framing anchors takes many contents, most of them their own (``MIN_REGION_VALUES``,
    ``REGION_RATIO``): it is a variable, as :func:`logmine.stages.templates.cluster._variable_region` reads a region of words."""
    regions: dict[tuple[str, str], Counter[tuple[str, ...]]] = defaultdict(Counter)
    found: dict[int, list[tuple[tuple[str, str], tuple[str, ...], list[int]]]] = {}
    for u, ls in lines.items():
        anchored = [j for j, line in enumerate(ls) if _is_anchor(line, df)]
        counts = sorted(df[ls[j]] for j in anchored if ls[j][:1] != TURN)
        if not counts:
            continue
        floor = FRAME_SHARE * counts[len(counts) // 2]
        parts: list[tuple[tuple[str, str], tuple[str, ...], list[int]]] = []
        frame, inside = "", []
        for j in anchored:
            if ls[j][:1] == TURN or df[ls[j]] >= floor:
                if inside:
                    parts.append(((frame, ls[j]), tuple(ls[i] for i in inside), inside))
                frame, inside = ls[j], []
            else:
                inside.append(j)
        if inside:
            parts.append(((frame, ""), tuple(ls[i] for i in inside), inside))
        for key, content, _ in parts:
            regions[key][content] += weights[u]
        if parts:
            found[u] = parts
    free = {key for key, contents in regions.items()
            if len(contents) >= MIN_REGION_VALUES and len(contents) >= REGION_RATIO * sum(contents.values())}
    if not free:
        return lines
    out = dict(lines)
    for u, parts in found.items():
        drop = {j for key, _, inside in parts if key in free for j in inside}
        if drop:
            out[u] = [VALUE + line if j in drop else line for j, line in enumerate(lines[u])]
    return out


MIN_WORD_VALUES = 5
"""Templates that differ only in one word of one line merge when that word takes this many
values among them (:func:`merge_one_word`; one more than the clustering's constants,
``ClusterParams.max_constant_values``), in a line of at most ``MAX_LINE_WORDS`` words..."""
MIN_WORD_CONTEXT = 200
"""...and with this many characters of static text besides that word."""


def merge_one_word(groups: list[Group], state: MinerState) -> list[Group]:
    """Merge templates whose texts are the same but for one plain word of one short line, where
    that word is a variable: it takes ``MIN_WORD_VALUES`` or more values among them, or one of them
    has a wildcard there (the miner found that place variable in its prompts). That is a word
    placeholder inside a long static prompt (``Always reply to the user in {language}.``) whose
    prompts the miner split by the word, each value too rare for its line to be an anchor. The rest
    of the texts must be equal, slots and wildcards included, with ``MIN_WORD_CONTEXT`` characters of
    static text, and so must their chat turns: a few templates that differ in one word only stay
    apart, as a position of few words is a constant in the clustering."""
    texts = [SLOT.sub(r"{\1}", group_text(g, state)) for g in groups]
    buckets: dict[tuple[object, ...], dict[str, int]] = defaultdict(dict)
    for k, text in enumerate(texts):
        if len(_WS.sub("", _VARIABLE.sub("", text))) < MIN_WORD_CONTEXT:
            continue
        structure = turns(state.tokens[groups[k].members[0]])
        lines = text.split("\n")
        for j, line in enumerate(lines):
            words = list(_WORD.finditer(line))
            if not 3 <= len(words) <= MAX_LINE_WORDS or line[:1] in (INLINE, TURN):
                continue
            head, tail = "\n".join(lines[:j]), "\n".join(lines[j + 1 :])
            for m in words:
                value = m.group(0).rstrip(_TRAILING)
                if _PLAIN_WORD.fullmatch(value) or value == WILDCARD:  # a word, or one the miner made a wildcard
                    form = line[: m.start()] + WILDCARD + line[m.end() :]
                    buckets[(structure, j, head, form, tail)].setdefault(value, k)
    into: dict[int, int] = {}
    merged_text: dict[int, str] = {}
    for (_, j, head, form, tail), values in sorted(buckets.items(), key=lambda kv: (-len(kv[1]), kv[0][1:])):
        ks = sorted(set(values.values()) - into.keys())
        variable = len(values) >= MIN_WORD_VALUES or WILDCARD in values  # the miner found it a variable in one
        if not variable or len(ks) < 2 or values.get(WILDCARD, ks[0]) not in ks:
            continue
        for k in ks:
            into[k] = ks[0]
        lines = texts[ks[0]].split("\n")
        merged_text[ks[0]] = "\n".join([*lines[:j], form, *lines[j + 1 :]])
    if not into:
        return groups
    held: dict[int, list[Group]] = defaultdict(list)
    for k, host in into.items():
        held[host].append(groups[k])
    out = []
    for k, g in enumerate(groups):
        if into.get(k, k) != k:
            continue
        if k in merged_text:
            members = held[k]
            parts = [p for m in members for p in (m.parts or [m])]
            g = Group(sorted(i for m in members for i in m.members), min(m.pattern for m in members), parts, None, merged_text[k])
        out.append(g)
    return out


_PLAIN_WORD = re.compile(r"[A-Za-z][A-Za-z+#-]*")


_RECORD_SLOT = re.compile(r"\{(?:file_path|language)\}")
"""A record's own value on a line of static text (``## Code: {file_path}``): a variable like any other, so the
line is the same anchor in a log whose records do not carry the value (``## Code: src/app.py``, masked)."""


def _anchor_lines(text: str) -> list[str]:
    """The non-blank lines of a prompt, slot tokens read as their slot names: the candidates
    for static text. A line that holds a model sentinel and more is cut at its sentinels, each
    piece a candidate of its own (marked ``INLINE``): the sentinels of a prompt format are its
    static text wherever its values start and end (``<|file_sep|>{code}<|system_sep|>`` with
    the prefix on the same line or the next). A chat turn's label (``user: ``) is an anchor of its
    own (marked ``TURN``) whatever its count, and the rest of its line a candidate found after it:
    a chat's turns are its structure."""
    out: list[str] = []
    for line in SLOT.sub(r"{\1}", text).split("\n"):
        label = CHAT_TURN.match(line)
        lead = ""
        if label is not None:
            out.append(TURN + label.group(0))
            line, lead = line[label.end() :], INLINE
        if not line.strip():
            continue
        line = line.rstrip()
        if "<" not in line and "[" not in line or MODEL_FORMAT.fullmatch(line.strip()) or not MODEL_FORMAT.search(line):
            out.append(lead + (line if lead or "{" not in line else _RECORD_SLOT.sub(WILDCARD, line)))
            continue
        pos = 0
        for m in MODEL_FORMAT.finditer(line):
            if line[pos : m.start()].strip():
                out.append(INLINE + line[pos : m.start()])
            out.append(INLINE + m.group(0))
            pos = m.end()
        if line[pos:].strip():
            out.append(INLINE + line[pos:])
    return out


def _common_signature(
    texts: list[str], df: Counter[str], forms: dict[tuple[str, str, str], str], labels: Counter[str] | None = None,
) -> tuple[str, ...]:
    """The anchors every text holds, in order (the template texts of merged groups)."""
    signatures = [[a for a in _signature(_generalised(_anchor_lines(t), forms), df, labels) if a != GAP] for t in texts]
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
    if line[:1] == TURN:
        return True
    bare = line[1:] if line[:1] == INLINE else line
    static = _MASKS.sub("", bare).strip()
    return (df[line] >= MIN_ANCHOR_PROMPTS and len(static) >= MIN_ANCHOR_CHARS and _LETTER.search(static) is not None
            and not bare.lstrip().startswith(("```", "~~~")))


def _signature(lines: list[str], df: Counter[str], labels: Counter[str] | None = None) -> tuple[str, ...]:
    """A prompt's anchors in order, a ``GAP`` for each run of other lines between them. With ``labels``,
    a line that is no anchor but opens with a label that is (:func:`_labels`) gives that label, then a gap."""
    out: list[str] = []
    for line in lines:
        if _is_anchor(line, df):
            out.append(line)
            continue
        label = _label(line) if labels else None
        if label is not None and labels is not None and labels[label] >= MIN_ANCHOR_PROMPTS:
            out.append(label)
        if not out or out[-1] != GAP:
            out.append(GAP)
    return tuple(out)


_LABEL = re.compile(r"[A-Za-z][^:\n{}<>`*\x00-\x03]{0,39}:(?=[ \t]+\S)")
MAX_LABEL_WORDS = 4


def _label(line: str) -> str | None:
    """The label a line opens with (``USER QUERY:`` of ``USER QUERY: Rename the tests``): up to
    ``MAX_LABEL_WORDS`` words and a colon, ``MIN_ANCHOR_CHARS`` long, with text after it on the line;
    marked ``INLINE`` (an anchor found inside its line)."""
    m = _LABEL.match(line)
    if m is None or len(m.group(0)) < MIN_ANCHOR_CHARS or len(m.group(0).split()) > MAX_LABEL_WORDS:
        return None
    return INLINE + m.group(0)


def _labels(lines: dict[int, list[str]], df: Counter[str], weights: list[int]) -> Counter[str]:
    """How many prompts hold each label (:func:`_label`) on a line that is no anchor: a short
    template's static text where its value follows on the same line (``USER QUERY: {request}``)."""
    out: Counter[str] = Counter()
    for u, ls in lines.items():
        for label in {_label(line) for line in ls if not _is_anchor(line, df)} - {None}:
            out[label] += weights[u]  # type: ignore[index]
    return out


def _anchored_text(signature: tuple[str, ...], texts: list[str]) -> str:
    """The template over ``texts``: the anchor lines as they are; each region between them
    kept when every text has the same, else a wildcard (a named slot if it is one slot in all)."""
    anchors = [a for a in signature if a != GAP]
    pieces = [_split_at(t, anchors) for t in texts]
    out = []
    for i, col in enumerate(zip(*pieces)):
        if len(set(col)) == 1:
            out.append(col[0])
            continue
        if i % 2 == 1:  # a line of one variable word (:func:`_variable_lines`)
            out.append(anchors[i // 2])
            continue
        lead = _AFFIX_HEAD.match(os.path.commonprefix(col)).group(0)  # type: ignore[union-attr]
        rest = [c[len(lead) :][::-1] for c in col]
        trail = _AFFIX_TAIL.match(os.path.commonprefix(rest)).group(0)[::-1]  # type: ignore[union-attr]
        middles = [c[len(lead) : len(c) - len(trail)] for c in col]
        names = {m.group(1) for c in middles if (m := _ONE_SLOT.fullmatch(c.strip()))}
        # one slot in some texts, plain text (a value read as text) in the others: that slot
        plain = all(_ONE_SLOT.fullmatch(c.strip()) or not _VARIABLE.search(_ONE_SLOT.sub("", c)) and not _ONE_SLOT.search(c) for c in middles)
        named = names & _RECORD_SLOTS if len(names) > 1 else names
        slot = "{%s}" % named.pop() if len(named) == 1 and plain else WILDCARD
        out.append(lead + slot + trail)
    return "".join(out)


_AFFIX_HEAD = re.compile(r"(?s)(?:.*[\s>}])?")
"""The text every region starts with, kept up to its last whitespace, tag or slot end (never
inside a word, a tag or a slot)."""
_AFFIX_TAIL = re.compile(r"(?s)(?:.*[\s<{])?")
"""The same for the reversed common end (up to a whitespace, tag or slot start)."""


_RECORD_SLOTS = frozenset({"prefix", "suffix", "selection", "file_path", "language"})
"""Slots of a record's own values: where some texts have one and others a code slot (a log that
does not carry the value), the region is the record's slot."""
_ONE_SLOT = re.compile(r"\{([a-z_]+)\d*(?::[a-z]{6,})?\}")


def _split_at(text: str, anchors: list[str]) -> list[str]:
    """``[region, anchor, region, anchor, ..., region]`` with each anchor a whole line of ``text``."""
    out, pos = [], 0
    for anchor in anchors:
        if anchor.startswith(TURN):
            m = re.compile(r"(?m)^" + re.escape(anchor[1:])).search(text, pos)
            if m is None:
                raise ValueError(f"turn {anchor[1:]!r} not found")
            out += [text[pos : m.start()], m.group(0)]
            pos = m.end()
            continue
        if anchor.startswith(INLINE):
            at = text.find(anchor[1:], pos)
            if at < 0:
                raise ValueError(f"anchor {anchor[1:]!r} not found")
            out += [text[pos:at], anchor[1:]]
            pos = at + len(anchor) - 1
            continue
        m = re.compile(r"(?m)^" + re.escape(anchor).replace(_ESCAPED_WILDCARD, r"\S+?(?:[ \t]\S+?)?") + r"[ \t]*$").search(text, pos)
        if m is None:  # cannot happen for a text the signature came from
            raise ValueError(f"anchor {anchor!r} not found")
        out += [text[pos : m.start()], text[m.start() : m.end()]]
        pos = m.end()
    out.append(text[pos:])
    return out
