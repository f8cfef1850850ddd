"""Lines of a prompt with one variable word: the line read with that word a wildcard.

A long static prompt split by a word placeholder's values (``Always reply to the user in {language}.``)
has few prompts per template, and its line with a rare value is no anchor
(:mod:`logmine.stages.templates.anchors`): the line's form with that word a wildcard is, where the same
lines frame it with many words at that place. Also the markers and patterns the anchors share.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict

from logmine.masking import WILDCARD

MIN_ANCHOR_PROMPTS = 5
"""A line is static (an anchor) when at least this many prompts hold it verbatim, and it has
``MIN_ANCHOR_CHARS`` characters besides masks..."""
MIN_ANCHOR_CHARS = 8
"""...(``</s>`` or a lone fence is no anchor)."""
MIN_SIGNATURE_CHARS = 32
"""Templates merge by their anchors (:mod:`logmine.stages.templates.anchors`), or take in rare prompts by their
pattern (:mod:`logmine.stages.templates.rare`), only when these hold this much static text."""
MAX_LINE_WORDS = 16
"""A line read for a variable word has at most this many words."""

INLINE = "\x01"
"""Marks a sentinel that is an anchor inside its line (found anywhere, not as a whole line)."""
TURN = "\x02"
"""Marks a chat turn's label, an anchor at the start of a line whatever its count."""


_WORD = re.compile(r"\S+")
_TRAILING = ".,:;!?)]'\""

_SLOTS = re.compile(r"\{[a-z_]+\d*(?::[a-z]{6,})?\}")
"""Slots and slot tokens (``{code}``, ``{code:abcdef}``)."""
_MASKS = re.compile(r"<\*>|" + _SLOTS.pattern)


MIN_LINE_VALUES = 5
"""A word of a line takes this many values between the same two lines (:func:`_variable_lines`), in
a line of at most ``MAX_LINE_WORDS`` words,..."""
FORM_SHARE = 0.5
"""...held, in that form, by at least this share of the prompts whose lines the same two lines frame (a
template's line is; a user's request between two static lines whose words recur, ``<*> the loop so
that it works on Windows too``, is one form of many)."""
_ESCAPED_WILDCARD = re.escape(WILDCARD)


def _variable_lines(all_lines: object) -> dict[tuple[str, str, str], str]:
    """Lines with one variable word inside static text, by ``(line before, line, line after)``: the
    line with that word a wildcard (``Always reply to the user in <*>.``), where the same two lines
    frame the line with ``MIN_LINE_VALUES`` or more words at that place, and that form is held by
    ``FORM_SHARE`` of the prompts they frame (a variable, however few prompts hold each value: a long
    system prompt split by its values has few prompts per template, and its line with a rare value
    is no anchor). A word may also be framed by one static line alone, where the line on its other side is a
    value (``User's last message: ...``). A word that holds a mask (``Windows-<*>-SP0``: masking found a value
    in it) is a variable with ``MIN_MASKED_VALUES`` values. Lines that open a chat's turn (a user's request) and
    sentinel pieces are not read so; a frame needs a static line."""
    triples: Counter[tuple[str, str, str]] = Counter()
    for ls in all_lines:  # type: ignore[attr-defined]
        for j, line in enumerate(ls):
            if 0 < j < len(ls) - 1 and line[:1] not in (INLINE, TURN) and len(line) >= MIN_ANCHOR_CHARS:
                triples[(ls[j - 1], line, ls[j + 1])] += 1
    framed: Counter[tuple[str | None, str | None]] = Counter()
    for (prev, _, nxt), n in triples.items():
        for frame in _frames(prev, nxt):
            framed[frame] += n
    values: dict[tuple[str | None, str, str | None], set[str]] = defaultdict(set)
    held: Counter[tuple[str | None, str, str | None]] = Counter()
    found: list[tuple[tuple[str, str, str], list[tuple[str, str]]]] = []
    for (prev, line, nxt), n in triples.items():
        if not (_static(prev) or _static(nxt)):
            continue
        forms = _forms(line)
        found.append(((prev, line, nxt), forms))
        for form, value in forms:
            for before, after in _frames(prev, nxt):
                values[(before, form, after)].add(value)
                held[(before, form, after)] += n
    out = {}
    for (prev, line, nxt), forms in found:
        for form, _ in forms:
            keys = [((before, form, after), (before, after)) for before, after in _frames(prev, nxt)]
            if any(_variable(values[key], held[key], framed[frame]) for key, frame in keys):
                out[(prev, line, nxt)] = form
                break
    return out


def _frames(prev: str, nxt: str) -> list[tuple[str | None, str | None]]:
    """The frames of a line between ``prev`` and ``nxt``: both lines, and each static one alone (a line
    next to a value, ``User's last message: ...``, frames nothing with it)."""
    return [(prev, nxt)] + ([(prev, None)] if _static(prev) else []) + ([(None, nxt)] if _static(nxt) else [])


def _variable(values: set[str], held: int, framed: int) -> bool:
    """Whether a word's place is a variable: enough values, in a form held by ``FORM_SHARE`` of the lines
    framed so, by two lines or by one static line alone (``Modality: "image".`` between a task and
    ``Programming Language: "Ruby"``, both values: each variable line frames the other with a value).
    Plain words framed by one line were held back in the eighth round, when they lowered the then
    held-out fold G; with that round's rules in place they raise G and the held-out H (docs/benchmarks.md,
    ninth round)."""
    masked = all(WILDCARD in v for v in values)
    least = MIN_MASKED_VALUES if masked else MIN_LINE_VALUES
    return len(values) >= least and held >= FORM_SHARE * framed


def _static(line: str) -> bool:
    return line[:1] not in (INLINE, TURN) and len(_MASKS.sub("", line).strip()) >= MIN_ANCHOR_CHARS


def _forms(line: str) -> list[tuple[str, str]]:
    """``(the line with one word a wildcard, that word)`` for each plain word of a line of two to
    ``MAX_LINE_WORDS`` words (punctuation after a word stays text: ``in <*>.``, ``[Provider: <*>]``), then,
    in a line of three or more, the same for each two adjacent plain words with no punctuation between
    (``Modality: <*>".`` of ``Modality: "mind map".``): one-word forms first, so the first found variable
    keeps a static word beside a one-word value."""
    words = list(_WORD.finditer(line))
    if not 2 <= len(words) <= MAX_LINE_WORDS:
        return []
    values = [m.group(0).rstrip(_TRAILING) for m in words]
    plain = [bool(v and _LETTER.search(v) and not _SLOTS.search(v) and ("<" not in v or _MASKED.fullmatch(v))) for v in values]
    out = [(line[: m.start()] + WILDCARD + line[m.start() + len(v) :], v) for m, v, p in zip(words, values, plain, strict=True) if p]
    # then two plain words, the first with no punctuation after it: a value of two words (``"mind map".``)
    for k in range(len(words) - 1 if len(words) > 2 else 0):
        if plain[k] and plain[k + 1] and values[k] == words[k].group(0):
            end = words[k + 1].start() + len(values[k + 1])
            out.append((line[: words[k].start()] + WILDCARD + line[end:], line[words[k].start() : end]))
    return out


_LETTER = re.compile(r"[A-Za-z]")
_MASKED = re.compile(r"[^<>\s]*(?:<\*>[^<>\s]*)+")
"""A word that holds a mask and no other tag (``Windows-<*>-SP0``)."""
MIN_MASKED_VALUES = 2
"""A word that holds a mask is a variable of its line with this many values (:func:`_variable_lines`):
masking found a value in it (``System Operating System: Windows-<*>-SP0``, ``... macOS-<*>-arm64``)."""


def _generalised(lines: list[str], forms: dict[tuple[str, str, str], str]) -> list[str]:
    """``lines`` with each line of one variable word (:func:`_variable_lines`) read as its form."""
    return [forms.get((lines[j - 1], line, lines[j + 1]), line) if 0 < j < len(lines) - 1 else line for j, line in enumerate(lines)]
