"""Template text as segments, sentence splitting, and the instruction-coverage fidelity.

Fidelity is NOT the cosine of two rendered prompts (the code in the slots dominates that, and
all-MiniLM-L6-v2 reads only the first 256 word pieces). It is *instruction coverage*: split
the original template's static text into sentences/clauses; for each, take the best cosine
similarity to any sentence of the compressed template; average, weighted by the sentence's
tokens. A best similarity below ``floor`` counts as 0: an unrelated sentence does not half
cover a lost instruction. Dropping a unique instruction lowers the score by about its token
share; dropping a repeated one does not lower it at all.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from logmine.prompt_syntax import FENCE, FIM_MARKER, ROLE_LABEL, TURN_MARKER
from logmine.runtime.trim.units import count_tokens

Embedder = Callable[[list[str]], np.ndarray]
"""Maps texts to L2-normalised vectors (one row per text)."""
TokenCounter = Callable[[list[str]], list[int]]
"""Maps texts to their token counts."""

SLOT_RE = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
# Sentence / clause boundaries: end punctuation followed by space, and line breaks; a list
# number ("1.") or an abbreviation ("e.g.") before the space does not end a sentence.
_BOUNDARY = re.compile(r"(?<=[.!?])[ \t]+|\n")
_NOT_END = re.compile(r"(?:^|\s)(?:\d{1,3}\.|(?:[A-Za-z]\.){2,}|etc\.|vs\.|cf\.|approx\.)$", re.I)
_EDGE = " \t\n-*•>#"


@dataclass(frozen=True)
class Segment:
    """A piece of a template: static text, or a slot (``slot`` holds its name)."""

    text: str
    slot: str | None = None


LITERALS = {"{{ '{%' }}": "{%", "{{ '\\r' }}": "\r"}
"""How static text spells what Jinja2 would otherwise change: a ``{%`` that would end a
``{% raw %}`` block (``{% endraw %}`` in the text), and a carriage return (Jinja2 turns
``\\r\\n`` and ``\\r`` in template text into ``\\n``)."""
_SPELLING = {v: k for k, v in LITERALS.items()}
_PIECE_RE = re.compile(
    r"\{% raw %\}(.*?)\{% endraw %\}|" + "|".join(re.escape(k) for k in LITERALS)
    + r"|\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}", re.S)
_JINJA_DELIMS = re.compile(r"\{\{|\{%|\{#|\}\}|%\}|#\}")
_SPECIAL = re.compile(r"(\{%(?=[-+]?\s*endraw)|\r)")
"""A ``{%`` that Jinja2 would read as the end of a raw block, and a carriage return."""


def segments(source: str) -> list[Segment]:
    """Split a Jinja2 template into static and slot segments.

    Static text is literal (``{% raw %}`` blocks unwrapped); adjacent static pieces are merged.
    """
    out: list[Segment] = []
    pos = 0

    def static(text: str) -> None:
        if not text:
            return
        if out and out[-1].slot is None:
            out[-1] = Segment(out[-1].text + text)
        else:
            out.append(Segment(text))

    for m in _PIECE_RE.finditer(source):
        static(source[pos : m.start()])
        if m.group(0) in LITERALS:
            static(LITERALS[m.group(0)])
        elif m.group(2) is None:
            static(m.group(1))
        else:
            out.append(Segment(m.group(0), m.group(2)))
        pos = m.end()
    static(source[pos:])
    return out


def escape_static(text: str) -> str:
    """Literal text as Jinja2 source: wrapped in ``{% raw %}`` when it holds Jinja delimiters.

    Text ending in ``{`` is wrapped too (before a slot it would read as ``{{{``); a ``{%`` that
    would close the raw block early and a carriage return are written as :data:`LITERALS`
    between the pieces. :func:`segments` reads all of these back.
    """
    out = []
    for piece in _SPECIAL.split(text):
        if piece in _SPELLING:
            out.append(_SPELLING[piece])
        elif _JINJA_DELIMS.search(piece) or piece.endswith("{"):
            out.append("{% raw %}" + piece + "{% endraw %}")
        else:
            out.append(piece)
    return "".join(out)


def join(parts: Sequence[Segment]) -> str:
    """Segments back to Jinja2 source."""
    return "".join(p.text if p.slot else escape_static(p.text) for p in parts)


def static_text(source: str) -> str:
    """The template's own text, slots removed (joined by newlines)."""
    return "\n".join(s.text for s in segments(source) if s.slot is None)


# -- lines of a template: prose (instructions), code, structure ------------------------------------
STRUCTURAL_LINE = re.compile(r"^\s*(?:```[\w+-]*|~~~[\w+-]*|</?[\w|:-]+>|<\|[^|]+\|>\w*|\[/?[A-Z_]+\]|[^\w\s]*|\w+:|/[a-z][\w-]*)\s*$")
"""Lines that are structure, not instructions: fences, tags, sentinels, role labels, punctuation, a
slash command alone on its line (``/explain``)."""
_CODE_HINT = re.compile(
    r"[{};=<>`|\\]|\w\(|\)\s*$|::|->|[:,(\[]\s*$|^\s*(?:#|//|/\*|\*\s|@)|\"\"\"|\'\'\'"  # punctuation of code
    r"|[A-Za-z_]\w*\.[A-Za-z_]\w+|[a-z0-9]_\w|[a-z][A-Z]"  # dotted names, snake_case, camelCase
    r"|^\s*(?:import|from|def|class|return|if|elif|else|for|while|try|except|with|raise|async|await|const|let|var|"
    r"function|export|public|private|protected|static|package|func|fn|use|impl|struct|pub|mod|type|interface)\b"
)
_BULLET = re.compile(r"^\s*(?:[-*•]|\d{1,3}[.)])\s+")


def has_turns(text: str) -> bool:
    """Whether ``text`` holds a role label at the start of a line (a chat turn boundary)."""
    return bool(ROLE_LABEL.search(text))


_HEADING = re.compile(r"^#{2,6}[ \t]+(?=\S)")
"""A Markdown heading (``## How to answer``): prose when its words are (``# x`` alone reads as a code comment)."""


_MENTION = re.compile(r"`[^`\n]{1,60}`|</?[A-Za-z][\w-]*/?>")
"""A tag or a quoted name mentioned in a sentence (``enclosed in <USERSELECTION></USERSELECTION> tags``)."""
_SENTENCE = re.compile(r"^[A-Z][a-z]+(?:,? [A-Za-z][a-z'’]*){3,}")
"""The start of a sentence of prose: a capitalised word and three more plain words."""


def is_prose(line: str) -> bool:
    """A line of instructions in natural language: no code punctuation, mostly words; not indented
    unless it is a sentence (``     Review the following code, ...``). Tags and quoted names that a
    sentence mentions do not make it code."""
    if heading := _HEADING.match(line):
        line = line[heading.end() :]
    if STRUCTURAL_LINE.match(line) or FIM_MARKER.search(line) or has_turns(line) or TURN_MARKER.search(line):
        return False
    body = _BULLET.sub("", line)
    sentence = bool(_SENTENCE.match(body.strip())) and body.rstrip()[-1:] in ".:!?"
    if sentence:
        body = _MENTION.sub("TAG", body)
    if (re.match(r"(?:[ ]{2,}|\t)\S", line) and not sentence) or _CODE_HINT.search(body.lstrip() if sentence else body):
        return False
    words = re.findall(r"[A-Za-z]+", line)
    if len(words) < 2:  # one word is prose only as a sentence ("Done."); "pass" or "else" is code
        return bool(re.fullmatch(r"[A-Za-z]+[.!?]", _BULLET.sub("", line).strip()))
    return sum(len(w) + 1 for w in words) >= 0.7 * len(line.strip())


@dataclass(frozen=True)
class Line:
    """A line (or, next to a slot, a piece of one) of a template's static text."""

    seg: int
    """Index of its segment."""
    index: int
    """Index of the line within the segment's text split on newlines."""
    text: str
    kind: str
    """``prose`` (instructions, editable), ``partial`` (shares its line with a slot), ``blank``,
    ``structure`` (fences, tags, role labels, sentinels) or ``code`` (inside a fence, or code-like)."""
    head: int = 0
    """Where the prose starts: after a role label the line begins with (``user: Be brief.``)."""


def template_lines(parts: Sequence[Segment]) -> list[Line]:
    """Classify every line of static text; fences are tracked across slots."""
    out: list[Line] = []
    in_fence = False
    at_line_start = True
    for n, seg in enumerate(parts):
        if seg.slot:
            at_line_start = False
            continue
        pieces = seg.text.split("\n")
        for i, text in enumerate(pieces):
            starts = i > 0 or at_line_start
            whole = starts and (i < len(pieces) - 1 or n == len(parts) - 1)
            if starts and FENCE.match(text):
                in_fence = not in_fence
                kind = "structure"
            elif in_fence:
                kind = "code"
            elif not whole:
                label = ROLE_LABEL.match(text) if starts else None
                out.append(Line(n, i, text, "partial", label.end() if label else 0))
                continue
            elif not text.strip():
                kind = "blank"
            elif is_prose(text):
                kind = "prose"
            elif (label := ROLE_LABEL.match(text)) and is_prose(text[label.end() :]):
                out.append(Line(n, i, text, "prose", label.end()))
                continue
            elif STRUCTURAL_LINE.match(text) or FIM_MARKER.search(text) or has_turns(text):
                kind = "structure"
            else:
                kind = "code"
            out.append(Line(n, i, text, kind))
        at_line_start = seg.text.endswith("\n")
    return _code_region(out)


def _code_region(lines: list[Line]) -> list[Line]:
    """Unfenced code (a template that quotes code without a fence): everything from its first code
    line to its last is code too (docstrings and comments there read like prose)."""
    code = [k for k, line in enumerate(lines) if line.kind == "code"]
    if not code:
        return lines
    return [Line(x.seg, x.index, x.text, "code") if code[0] < k < code[-1] and x.kind in ("prose", "blank") else x
            for k, x in enumerate(lines)]


def instruction_text(source: str) -> str:
    """The template's instructions: prose lines and the text beside slots, without code or structure."""
    return "\n".join(line.text[line.head :] for line in template_lines(segments(source)) if line.kind in ("prose", "partial"))


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each sentence of ``text``: stripped of bullets and spaces, empty or
    punctuation-only pieces left out."""
    out, start = [], 0
    for m in _BOUNDARY.finditer(text):
        if m.group(0) != "\n" and _NOT_END.search(text[start : m.start()]):
            continue
        _add_span(text, start, m.start(), out)
        start = m.end()
    _add_span(text, start, len(text), out)
    return out


def _add_span(text: str, a: int, b: int, out: list[tuple[int, int]]) -> None:
    while a < b and text[a] in _EDGE:
        a += 1
    while b > a and text[b - 1] in _EDGE:
        b -= 1
    if a < b and re.search(r"[A-Za-z0-9]", text[a:b]):
        out.append((a, b))


def sentences(text: str) -> list[str]:
    """Sentences and clauses of static text, stripped, without empty or punctuation-only pieces."""
    return [text[a:b] for a, b in sentence_spans(text)]


def coverage(
    original: Sequence[str],
    compressed: Sequence[str],
    embedder: Embedder,
    count_tokens: TokenCounter,
    floor: float = 0.5,
) -> float:
    """Token-weighted mean over ``original`` sentences of their best cosine in ``compressed``."""
    if not original:
        return 1.0
    if not compressed:
        return 0.0
    vecs = embedder(list(original) + list(compressed))
    a, b = vecs[: len(original)], vecs[len(original) :]
    best = (a @ b.T).max(axis=1)
    best = np.where(best >= floor, np.clip(best, 0.0, 1.0), 0.0)
    weights = np.asarray(count_tokens(list(original)), dtype=np.float64)
    weights = np.maximum(weights, 1.0)
    return float((best * weights).sum() / weights.sum())


class CachedEmbedder:
    """Wraps an embedder with a per-text cache (compression re-embeds the same sentences a lot)."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.cache: dict[str, np.ndarray] = {}

    def __call__(self, texts: list[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self.cache))
        if missing:
            for text, vec in zip(missing, self.embedder(missing), strict=True):
                self.cache[text] = np.asarray(vec, dtype=np.float32)
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        return np.stack([self.cache[t] for t in texts])


def whitespace_tokens(texts: list[str]) -> list[int]:
    """A crude token count (words and punctuation, as context trimming counts them), for tests."""
    return [count_tokens(t) for t in texts]
