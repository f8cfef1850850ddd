"""Code in a prompt found by its shape, and the slot tokens that stand for it.

Code the log record does not carry is found by its shape: fenced blocks, the regions between
fill-in-the-middle sentinels, and paragraphs that parse as code with tree-sitter become typed
slots (``{code}``, ``{code2}``, ``{diff}``); :func:`logmine.stages.templates.prompts.skeleton`
calls :meth:`SlotStore.skeleton` once the record's own values are placeholders.

Code found by its shape might be static (an example inside the template), so it first
becomes a slot token ``{code:<id>}`` (id: a content hash in letters, which the masking rules
leave alone): where its values differ the miner turns it into the slot ``{code}``, where it
never changes the text is put back. A template's second and later code slots are numbered
(``{code2}``).
"""

from __future__ import annotations

import bisect
import hashlib
import re
from collections.abc import Callable, Iterable

from logmine.prompt_syntax import FIM_START
from logmine.stages.templates.cluster import SLOT
from logmine.stages.templates.line_kinds import FIXED, MARKS, RULE, line_kind
from logmine.stages.templates.spans import body_spans, docstring_spans, fim_headers, inside

_DIFF_LINE = re.compile(r"^(?:[+\- ]|@@|diff --git|index [0-9a-f]|--- |\+\+\+ )")


class SlotStore:
    """The text behind each slot token, kept while it may still be static (bounded).

    Working out a text's skeleton (:meth:`make`) is pure: the same text gives the same skeleton and
    slot tokens whoever asks, so worker processes can make skeletons (:mod:`~logmine.stages.templates.parallel`).
    Which texts the store keeps is decided by :meth:`count`, called once per skeleton in the prompts'
    order: in one process by :meth:`skeleton`, with workers by the process that mines, so the
    store, and the templates restored from it, are the same however many processes made the skeletons."""

    def __init__(self, max_entries: int = 20_000) -> None:
        self.max_entries = max_entries
        self.texts: dict[str, str] = {}
        self.seen: dict[str, int] = {}
        self.skeletons: dict[tuple[str | None, str], tuple[str, SlotTexts]] = {}
        self.made: SlotTexts | None = None
        """While a list: the slot texts of every skeleton made are collected in it, not counted (a worker's store)."""

    def token(self, name: str, text: str) -> str:
        sid = slot_id(text)
        self.count([(sid, text)])
        return "{%s:%s}" % (name, sid)

    def skeleton(self, text: str, language: str | None) -> str:
        """``text`` with its code regions as slot tokens, their texts counted (or collected, see :attr:`made`)."""
        done, texts = self.make(text, language)
        if self.made is not None:
            self.made.extend(texts)
        else:
            self.count(texts)
        return done

    def make(self, text: str, language: str | None) -> tuple[str, SlotTexts]:
        """``text``'s skeleton and the ``(slot id, text)`` of its slot tokens, in order. Prompts that are
        equal once the record's values are out (every FIM prompt of a template) are worked out once."""
        key = (language, text)
        done = self.skeletons.get(key)
        if done is None:
            texts: SlotTexts = []
            done = code_regions(text, texts, language), texts
            if len(self.skeletons) >= _CACHE_SIZE:
                self.skeletons.clear()
            self.skeletons[key] = done
        return done

    def count(self, texts: Iterable[tuple[str, str]]) -> None:
        """One more sighting of each slot text; a new one is kept, the store pruned first when full."""
        for sid, text in texts:
            if sid in self.seen:
                self.seen[sid] += 1
            else:
                if len(self.texts) >= self.max_entries:
                    self._prune()
                self.texts[sid] = text
                self.seen[sid] = 1

    def _prune(self) -> None:
        # the texts seen more than once, the latest half of the store at most, in the order they
        # came (never a set's order: that changes with the process's hash seed, and so would the templates)
        keep = [k for k in self.texts if self.seen[k] > 1][-(self.max_entries // 2) :]
        self.texts = {k: self.texts[k] for k in keep}
        self.seen = {k: self.seen[k] for k in keep}

    def restore(self, template: str) -> str:
        """Put back the text of slot tokens that stayed constant; number repeated slots."""
        text = SLOT.sub(lambda m: self.texts.get(m.group(2), "{%s}" % m.group(1)), template)
        counts: dict[str, int] = {}

        def number(m: re.Match[str]) -> str:
            name = m.group(1)
            counts[name] = counts.get(name, 0) + 1
            return m.group(0) if counts[name] == 1 or name not in _NUMBERED else "{%s%d}" % (name, counts[name])

        return re.sub(r"\{([a-z_]+)\}", number, text)


_NUMBERED = frozenset({"code", "diff"})
_CACHE_SIZE = 50_000
_KINDS: dict[tuple[str | None, bool], dict[str, str]] = {}
"""The kind of each piece seen, by language and whether it starts a line (static lines recur in
every prompt of their template)."""


SlotTexts = list[tuple[str, str]]
"""The ``(slot id, text)`` of the slot tokens of a skeleton, in order."""


def slot_id(text: str) -> str:
    """A slot token's id: a hash of its text in letters, which the masking rules leave alone."""
    digest = hashlib.blake2b(text.encode(), digest_size=8).digest()
    return "".join(chr(97 + b % 26) for b in digest)


def code_regions(text: str, slots: SlotTexts, language: str | None = None) -> str:
    """Every run of code-like pieces (lines, or parts of lines between fixed pieces), with the
    blank space between them, becomes one slot token. A tag's body that holds code is one slot
    whole, the blank space at its edges included (it is the value's: a prefix ending in indentation)."""
    pieces = _pieces(text)
    headers = fim_headers(text)
    bodies = body_spans(text, headers)
    kinds = _kinds(pieces, text, language, bodies, headers)
    whole = _code_bodies(pieces, kinds, bodies)
    out: list[str] = []
    run: list[int] = []

    def flush() -> None:
        body = "".join([pieces[i][0] for i in run])
        start = pieces[run[0]][2]
        end = whole.get(start, -1)
        if start < end <= start + len(body):  # a body whole; the newline before a closing fence stays out
            out.append(_slot(body[: end - start], slots) + body[end - start :])
        elif body.strip():
            # newlines around the region stay outside the slot; its first line's indentation is code
            lead = _LEAD.match(body).group(0)  # type: ignore[union-attr]
            core = body[len(lead) :].rstrip()
            out.append(lead + _slot(core, slots) + body[len(lead) + len(core) :])
        else:
            out.append(body)
        run.clear()

    for i, kind in enumerate(kinds):
        if kind == "code" or (kind == "space" and run):
            run.append(i)
        else:
            if run:
                flush()
            out.append(pieces[i][0])
    if run:
        flush()
    return "".join(out)


def _kinds(
    pieces: list[tuple[str, bool, int]], text: str, language: str | None, bodies: list[tuple[int, int]], headers: list[tuple[int, int]]
) -> list[str]:
    """The kind of every piece (:func:`~logmine.stages.templates.line_kinds.line_kind`), then corrected by its
    context: inside ``bodies`` (:func:`~logmine.stages.templates.spans.body_spans`) or a docstring it is code
    whatever it looks like, inside a FIM header (``headers``, :func:`~logmine.stages.templates.spans.fim_headers`)
    text."""
    forced = bodies + docstring_spans(text, FIXED)
    kinds = []
    starts, inner = _KINDS.setdefault((language, True), {}), _KINDS.setdefault((language, False), {})
    for piece, at_line_start, offset in pieces:
        cache = starts if at_line_start else inner
        kind = cache.get(piece)
        if kind is None:
            kind = cache[piece] = line_kind(piece, at_line_start, language)
            if len(cache) >= _CACHE_SIZE:
                cache.clear()
        if kind in ("text", "marks") and forced and inside(offset, forced):
            kind = "code"
        kinds.append(kind)
    if "marks" in kinds:
        _mark_lines(pieces, kinds, bodies)
    if "indented" in kinds:
        _indented_prose(pieces, kinds, forced, language)
    if '="' in text:
        _attribute_lines(pieces, kinds, text)
    _inline_fixed(pieces, kinds)
    _smooth(pieces, kinds)
    _comments(pieces, kinds)
    _list_items(pieces, kinds)
    if headers:
        for i, (_, _, offset) in enumerate(pieces):
            if kinds[i] == "code" and inside(offset, headers):
                kinds[i] = "text"
    return kinds


def _mark_lines(pieces: list[tuple[str, bool, int]], kinds: list[str], bodies: list[tuple[int, int]]) -> None:
    """A line of one mark alone is text where it fences a value after a label (``problem description:`` /
    ``======`` / the value / ``======``: the line right before or after a body of ``bodies``,
    :func:`~logmine.stages.templates.spans.body_spans`), else code (a comment's rule, a docstring's underline).
    Read as code, the fences around a template's values joined them and the labels and instructions between
    them into one code span."""
    starts = {a for a, _ in bodies}
    ends = {b for _, b in bodies}
    for i, kind in enumerate(kinds):
        if kind == "marks":
            piece, _, offset = pieces[i]
            kinds[i] = "text" if offset + len(piece) + 1 in starts or offset - 1 in ends else "code"


def _indented_prose(pieces: list[tuple[str, bool, int]], kinds: list[str], forced: list[tuple[int, int]], language: str | None) -> None:
    """Indented lines are code, prose among them too (a comment's or docstring's words), unless
    every line of the text is indented prose outside ``forced``: a text indented as a whole (a
    system prompt indented by its template) is text; so are the lines of a template indented as a
    whole around a value (:func:`_indented_template`). Whether a line reads as prose is asked only
    here, of a text holding nothing but indented lines, and stops at the first that does not, and
    of a text whose first line is indented, from its ends: most indented lines are code among other
    lines, and asking each of them made the skeletons cost about a tenth more CPU (their code lines
    rarely recur, so the kind cache seldom answers)."""
    def prose(i: int, parse_as: str | None = None) -> bool:
        piece, _, offset = pieces[i]
        return not (forced and inside(offset, forced)) and line_kind(piece.lstrip(), True, parse_as) == "text"

    whole = all(k == "space" or (k == "indented" and prose(i)) for i, k in enumerate(kinds))
    kind = "text" if whole else "code"
    if not whole:
        # a line of the template does not parse as a statement (``return x`` reads as two words)
        _indented_template(pieces, kinds, lambda i: prose(i, language or "python"))
    kinds[:] = [kind if k == "indented" else k for k in kinds]


def _indented_template(pieces: list[tuple[str, bool, int]], kinds: list[str], prose: Callable[[int], bool]) -> None:
    """A text whose first line is its own (below), and that opens with a blank line (a string literal's first
    newline) or ends in such a line too, is a template indented as a whole, with a value among its lines
    (autodoc's ``\n    You are acting as ...`` / ``    code:`` / the file / ``    Response:``; MLE-agent's
    instructions before a JSON example): its own lines (indented prose, or a label and its value, :data:`_LABELLED`)
    from the first line on, and from the last line back, indented at least as deep as the first, are text, up to the
    first line that is not. The lines between stay code (the value, or the example: a docstring's prose among them
    too). A value that opens a prompt inside a docstring (a command's output, a file's window) has prose at its
    start only, and no blank line before it. Asked only of such texts, as :func:`_indented_prose` asks."""
    lines = [i for i, k in enumerate(kinds) if k != "space" and pieces[i][1]]

    def own(i: int) -> bool:  # a line of the template's own: indented prose, or a label and its value
        return kinds[i] == "indented" and (_LABELLED.match(pieces[i][0].lstrip()) is not None or prose(i))

    # a template's own text opens with a blank line (a string literal's first newline) or ends in prose too
    if len(lines) < 3 or not own(lines[0]) or not (any(pieces[i][0] == "\n" for i in range(lines[0])) or own(lines[-1])):
        return
    margin = len(pieces[lines[0]][0]) - len(pieces[lines[0]][0].lstrip())
    found: set[int] = set()
    for run in (lines, lines[::-1]):
        for i in run:
            piece = pieces[i][0]
            if i in found or len(piece) - len(piece.lstrip()) < margin or not own(i):
                break
            found.add(i)
    for i in found:
        kinds[i] = "text"


_LABELLED = re.compile(r"[A-Z][A-Za-z']*(?: [A-Za-z'][A-Za-z']*){0,11}: \S")
"""A line of a template indented as a whole that opens with a label's words and a colon (``The command to execute the
code: python a.py``): the template's text whatever its value reads like (a command read as code in some prompts and
as prose in others split the template)."""


def _comments(pieces: list[tuple[str, bool, int]], kinds: list[str]) -> None:
    """A ``# `` line read as text is a heading only when it stands apart, a blank line (or the
    text's edge) before and after it; else it is a comment of the code around it (``# Path: x``)."""
    for i, (piece, at_line_start, _) in enumerate(pieces):
        if kinds[i] != "text" or not at_line_start or piece[:2] != "# ":
            continue
        before = i == 0 or (pieces[i - 1][0] == "\n" and (i == 1 or pieces[i - 2][0] == "\n"))
        after = i + 1 == len(pieces) or (pieces[i + 1][0] == "\n" and (i + 2 == len(pieces) or pieces[i + 2][0] == "\n"))
        if not (before and after):
            kinds[i] = "code"


_ITEM = re.compile(r"^(?:([*+-])|\d{1,3}([.)]))[ \t]+\S")
"""A list item's marker at a line's start: a bullet, or a number and its mark (``1.``, ``2)``)."""


def _list_items(pieces: list[tuple[str, bool, int]], kinds: list[str]) -> None:
    """A list is one value: in a run of list items (consecutive lines, no blank line between, each
    opening with the same marker) of which two or more are code, the items read as prose are code
    too (``- Shell: SHELL=/bin/zsh`` then ``- The user is operating inside a git repository``: a
    value's optional item; read as text, it split the template by whether the value held it).
    A line holding a fixed piece (a placeholder, a tag, a fence) ends the run."""
    runs: list[tuple[object, list[tuple[int, int]]]] = []
    i = 0
    while i < len(pieces):
        if pieces[i][0] == "\n":  # a blank line
            i += 1
            continue
        start, end = _line_of(pieces, i)
        m = _ITEM.match(pieces[start][0]) if pieces[start][1] else None
        if m is not None and "fixed" not in kinds[start:end]:
            if runs and runs[-1][0] == m.groups() and runs[-1][1][-1][1] + 1 == start:
                runs[-1][1].append((start, end))
            else:
                runs.append((m.groups(), [(start, end)]))
        i = end + 1
    for _, run in runs:
        code = [all(k in ("code", "space") for k in kinds[a:b]) for a, b in run]
        if sum(code) >= 2 and not all(code):
            for a, b in run:
                kinds[a:b] = ["space" if k == "space" else "code" for k in kinds[a:b]]


def _line_of(pieces: list[tuple[str, bool, int]], i: int) -> tuple[int, int]:
    """The indices ``[start, end)`` of the pieces of piece ``i``'s line."""
    start = i
    while start > 0 and pieces[start - 1][0] != "\n":
        start -= 1
    end = i + 1
    while end < len(pieces) and pieces[end][0] != "\n":
        end += 1
    return start, end


_ATTRIBUTE = re.compile(r'(?m)^[a-z][\w-]*="[^"\n]*"[ \t]*$')
"""A whole unindented line ``key="value"``: a header of a context item (``title="..."``), text."""


def _attribute_lines(pieces: list[tuple[str, bool, int]], kinds: list[str], text: str) -> None:
    offsets = [offset for _, _, offset in pieces]
    for m in _ATTRIBUTE.finditer(text):
        i = bisect.bisect_left(offsets, m.start())
        while i < len(pieces) and pieces[i][2] < m.end():
            if kinds[i] == "code":
                kinds[i] = "text"
            i += 1


_INLINE_TAG = re.compile(r"</?[A-Z][A-Z0-9_]{1,30}/?>|</?[a-z]+_[a-z_]+>")
_INLINE_VALUE = re.compile(r"\{(?:file_path|language)\}")
_QUOTES = ("\"", "'", "`")


def _inline_fixed(pieces: list[tuple[str, bool, int]], kinds: list[str]) -> None:
    """Fixed pieces inside a line of code (code before them on their line, more text after) that
    are part of the code: a tag inside a string literal (next to a quote: ``print("<H3>")``), the
    file's name in a comment (``# ... but {file_path} historically``). A bare tag inside code,
    a self-closing marker (``<CURSOR/>``) and fill-in-the-middle sentinels stay structure."""
    for i, kind in enumerate(kinds):
        if kind != "fixed" or not _in_code(pieces, i):
            continue
        start, end = _line_of(pieces, i)
        if "code" in kinds[start:i] and any(pieces[j][0].strip() for j in range(i + 1, end)):
            kinds[i] = "code"


def _in_code(pieces: list[tuple[str, bool, int]], i: int) -> bool:
    """Whether fixed piece ``i`` may be code, by its own text and the characters next to it."""
    piece = pieces[i][0]
    if _INLINE_VALUE.fullmatch(piece):
        return True
    if not _INLINE_TAG.fullmatch(piece) or FIM_START.fullmatch(piece) or piece.endswith("/>"):
        return False  # a self-closing tag is a marker (<CURSOR/>), wherever it falls
    before = pieces[i - 1][0] if i else ""
    after = pieces[i + 1][0] if i + 1 < len(pieces) else ""
    glued = before[-1:].strip() != "" and after[:1].strip() != ""  # inside an expression: (?P<thousands_sep>,)
    return before.endswith(_QUOTES) or after.startswith(_QUOTES) or glued


def _code_bodies(pieces: list[tuple[str, bool, int]], kinds: list[str], bodies: list[tuple[int, int]]) -> dict[int, int]:
    """The spans of the code in ``bodies`` (:func:`~logmine.stages.templates.spans.body_spans`), cut at the fixed pieces inside
    (such as a cursor marker), blank space at their edges included; their blank pieces become code.
    (A blank line before a closing fence is the value's: a template that kept it would match only
    code ending in one.)"""
    spans = sorted(span for span in bodies if span[1] > span[0])
    whole: dict[int, int] = {}  # start -> end
    if not spans:
        return whole
    offsets = [offset for _, _, offset in pieces]
    for start, end in spans:
        segment: list[int] = []
        for i in range(bisect.bisect_left(offsets, start), len(pieces)):
            offset = offsets[i]
            if offset < end and kinds[i] != "fixed":
                segment.append(i)
            if segment and (offset >= end or kinds[i] == "fixed" or i == len(pieces) - 1):
                if any(kinds[j] == "code" for j in segment) and all(kinds[j] in ("code", "space") for j in segment):
                    whole[pieces[segment[0]][2]] = pieces[segment[-1]][2] + len(pieces[segment[-1]][0])
                    for j in segment:
                        kinds[j] = "code"
                segment = []
            if offset >= end:
                break
    return whole


_LEAD = re.compile(r"(?:[ \t]*\n)*")


def _pieces(text: str) -> list[tuple[str, bool, int]]:
    """``(piece, starts a line, offset)``: the text cut around fixed pieces and at line ends
    (each newline a piece of its own)."""
    out = []
    offset = 0
    start = True
    for i, part in enumerate(FIXED.split(text)):
        if not part:
            continue
        if i % 2:
            out.append((part, start, offset))
            offset += len(part)
            start = False
            continue
        for j, segment in enumerate(part.split("\n")):
            if j:
                out.append(("\n", False, offset))
                offset += 1
                start = True
            if segment:
                out.append((segment, start, offset))
                offset += len(segment)
                start = False
    return out


def _smooth(pieces: list[tuple[str, bool, int]], kinds: list[str]) -> None:
    """Prose between code lines (comments, docstrings: up to ``_MAX_PROSE_LINES`` lines, with no
    placeholder, sentinel or fence between) is code too."""
    code_at = [i for i, k in enumerate(kinds) if k == "code"]
    for a, b in zip(code_at, code_at[1:]):
        between = kinds[a + 1 : b]
        if ("text" in between and "fixed" not in between
                and not any(_fence_line(pieces[i], kinds[i]) for i in range(a + 1, b))):
            if "".join(p for p, _, _ in pieces[a + 1 : b]).count("\n") <= _MAX_PROSE_LINES:
                for i in range(a + 1, b):
                    if kinds[i] == "text":
                        kinds[i] = "code"
    _context_ends(pieces, kinds)
    _cursor_end(pieces, kinds)


def _fence_line(piece: tuple[str, bool, int], kind: str) -> bool:
    """Whether a piece is a line of marks that fences a value (:func:`_mark_lines`): prose across one is no
    comment between code lines but a template's text between two of its values. A Markdown rule
    (:data:`RULE`, text wherever it stands) counts too: prose across a rule is a template's part after it.
    (Counting only the fences of :func:`_mark_lines` was measured on 2026-12-08 and lost: fifteen folds,
    seed 0, J records 0.800 -> 0.771 before merging, E chat 0.946 -> 0.919 after.)"""
    return kind == "text" and piece[1] and MARKS.fullmatch(piece[0]) is not None


_CLOSED = re.compile(r"[.:;?!)\]\"'`>*]\s*$")
"""A line that ends a sentence, a label or markup (an instruction's last line)."""


def _cursor_end(pieces: list[tuple[str, bool, int]], kinds: list[str]) -> None:
    """Prose after the text's last code line up to its very end (no line break after it), with
    nothing fixed between, whose last line stops short (no sentence-ending or closing mark:
    ``def tes``, ``# If available, use C``) is the code's end: a completion prompt ends at the
    cursor, mid-line. A last line of one or two words (``import time``, ``return x``) may end in a
    line break: the cursor stands at the start of the next line. (A longer text ending in a line
    break, or a closed line, keeps its prose: an instruction; so do the last words after a label line,
    ``The language is:\npython``: a value, and after a closing tag, ``</file>``: the user's words.)"""
    last = len(kinds) - 1
    if last > 0 and pieces[last][0] == "\n" and len(pieces[last - 1][0].split()) <= 2:
        last -= 1
    if last < 0 or kinds[last] != "text" or _CLOSED.search(pieces[last][0]):
        return
    i = last
    while i >= 0 and kinds[i] in ("text", "space"):
        i -= 1
    if any(kinds[j] == "text" and (_LABEL_LINE.search(pieces[j][0]) or _CLOSING_TAG.fullmatch(pieces[j][0])) for j in range(i + 1, last)):
        return  # the last words are a label's value (``The language is:\npython``) or the user's after a closing tag (``</file>``)
    if i >= 0 and kinds[i] == "code" and "".join(p for p, _, _ in pieces[i + 1 : last]).count("\n") <= _MAX_PROSE_LINES:
        for j in range(i + 1, last + 1):
            kinds[j] = "code"


_CLOSING_TAG = re.compile(r"[ \t]*</[A-Za-z][\w-]*>[ \t]*")
"""A line that only closes a tag (``</file>``)."""
_LABEL_LINE = re.compile(r"^(?!\s*(?:#|//|\*|--))[^\n]*[A-Za-z]{2}:[ \t]*$")
"""Prose ending in a colon, not a comment: the label of a value on the lines after it."""


def _context_ends(pieces: list[tuple[str, bool, int]], kinds: list[str]) -> None:
    """Prose between a code line and a fill-in-the-middle or file sentinel (``<|fim_prefix|>``)
    is the end of a context file (its last docstring or comments), code whatever its length."""
    for f, kind in enumerate(kinds):
        if kind != "fixed" or not FIM_START.fullmatch(pieces[f][0]):
            continue
        i = f - 1
        while i >= 0 and kinds[i] in ("text", "space"):
            i -= 1
        if i >= 0 and kinds[i] == "code" and "text" in kinds[i + 1 : f]:
            for j in range(i + 1, f):
                if kinds[j] == "text":
                    kinds[j] = "code"


_MAX_PROSE_LINES = 12


def _slot(code: str, slots: SlotTexts) -> str:
    """The slot token for ``code`` (``{code:<id>}`` or ``{diff:<id>}``); its id and text appended to ``slots``."""
    lines = code.splitlines()
    diff = len(lines) > 1 and "@@" in code and sum(bool(_DIFF_LINE.match(x)) for x in lines) >= 0.8 * len(lines)
    sid = slot_id(code)
    slots.append((sid, code))
    return "{%s:%s}" % ("diff" if diff else "code", sid)
