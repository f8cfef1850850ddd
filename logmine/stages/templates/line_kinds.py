"""The kind of one line of a prompt read alone (or a piece of one between fixed pieces): code, prose, a
Markdown rule, a line of marks, an indented line. :mod:`~logmine.stages.templates.bodies` corrects the kinds by
their context (bodies, docstrings, lists, prose between code lines) and makes code regions of them.
"""

from __future__ import annotations

import re

from logmine.code import SUPPORTED_LANGUAGES, error_count, parse
from logmine.prompt_syntax import FENCE_LINE, ROLE_TAG_LINE, TAG_OR_SENTINEL

FIXED = re.compile(
    r"(\{(?:prefix|suffix|selection|file_path|language|code\d*|diff\d*)\}"  # placeholders
    r"|\{[a-z_]+:[a-z]{6,}\}"  # slot tokens
    f"|{TAG_OR_SENTINEL}"  # model sentinels and tags (logmine.prompt_syntax)
    f"|{FENCE_LINE})"  # fence lines
)
"""Pieces a code region never swallows: placeholders, sentinels, tags, fence lines."""

_PROSE_WORD = re.compile(r"^[\"'(*\[]*[A-Za-z][A-Za-z'’-]*[.,:;!?\"')*\]]*$")
_CODE_CHARS = re.compile(r"[=;{}\\]|\(\)|->|::|\+\+|\.\w+\(|^\s*(?:#|//|/\*|\*|<!--|@)|[(\[]\s*$")
_LANGUAGE_NAME = re.compile(r"(?<![\w+#])[A-Z](?:\+\+|#)(?![\w+#])")
"""A language's name of one capital and ``++`` or ``#`` (``C++``, ``C#``, ``F#``): a word in prose,
read as ``C`` when a line's kind is decided (``The language is: C++.`` is an instruction, not code)."""
_HEADER = re.compile(r"^#{2,} \S")
"""A markdown header (``### Instruction:``): text, where ``# ...`` alone may be a code comment."""
RULE = re.compile(r"(?:---|\*\*\*|___)[ \t]*")
"""A line of ``---`` (or ``***``, ``___``) alone: a Markdown rule, a template's separator of its parts
(``{instructions}`` / ``---`` / ``SELECTIONS`` / ``{code}``), text; code seldom holds one alone. Three
marks only: a longer run is as likely a docstring's underline (``Parameters`` / ``----------``)."""
MARKS = re.compile(r"([=*_#-])\1{2,}[ \t]*")
"""A line of one mark alone, other than a Markdown rule (:data:`RULE`): ``======`` around a template's value, or
a docstring's underline (:func:`_mark_lines`)."""
_SECTION = re.compile(r"([=#*~-])\1{2,}[ \t]*[A-Za-z][A-Za-z'/-]*(?:[ \t]+[A-Za-z][A-Za-z'/-]*){0,3}[ \t]*(?:\1{2,}[ \t]*)?")
"""A section's heading between runs of one mark (``===Tables``, ``=== Response Guidelines ===``, ``---- Notes``):
up to four words after three marks or more, text. (A line of marks alone is a rule, :data:`RULE`.)"""
_MARKDOWN = re.compile(r"^(?:(?:[*+-]|\d{1,2}[.)]|#)[ \t]+(?=\S)|(?=\*\*[^\s*][^\n]*?\*\*))")
"""The markup a Markdown prose line may start with: a bullet (``*``, ``-``, ``+``, ``1.``), a
heading's ``#``, bold (``**Note:**``, or ``**Files: **`` with a space inside its closing marks, as a
template writes it); the rest, bold and backticks dropped, is judged as prose."""
_PUNCTUATION = re.compile(r"[.,:;!?)\]'\"]{1,3}[ \t]*")
"""Punctuation alone after a placeholder on its line (``from {file_path}:``): text."""


def line_kind(piece: str, at_line_start: bool, language: str | None) -> str:
    """fixed | space | code | text | indented (an indented line: code, or text in a text indented
    as a whole, :func:`_indented_prose`)."""
    if FIXED.fullmatch(piece):
        return "fixed"
    piece = _LANGUAGE_NAME.sub("C", piece)
    if not piece.strip():
        return "space"
    if at_line_start and (piece[:2] == "  " or piece[:1] == "\t"):
        # indentation makes code, unless the whole text is indented prose (:func:`_indented_prose`)
        return "indented"
    if (at_line_start and ROLE_TAG_LINE.fullmatch(piece)) or (not at_line_start and _PUNCTUATION.fullmatch(piece)):
        return "text"
    if _HEADER.match(piece) or (at_line_start and (RULE.fullmatch(piece) or _SECTION.fullmatch(piece))):
        return "text"
    if at_line_start and MARKS.fullmatch(piece):
        return "marks"
    markdown = _markdown_kind(piece, at_line_start)
    if markdown is not None:
        return markdown
    if _CODE_CHARS.search(piece):
        return "code"
    return _prose_kind(piece, language)


def _markdown_kind(piece: str, at_line_start: bool) -> str | None:
    """An unindented line that starts with Markdown markup (a bullet, a heading, bold) is text
    when the rest, bold markers and backticks dropped, is prose (``**Rules**``, ``- Be brief.``);
    None when it is not such a line. A ``# `` line next to a code line is a comment (:func:`_comments`)."""
    markup = _MARKDOWN.match(piece) if at_line_start else None
    if markup is None:
        return None
    rest = piece[markup.end() :].replace("**", "").replace("`", "")
    if not rest.strip() or _CODE_CHARS.search(rest):
        return "code"
    return _prose_kind(rest, None)


def _prose_kind(piece: str, language: str | None) -> str:
    words = _list_words(piece.split())
    plain = sum(bool(_PROSE_WORD.match(w)) for w in words)
    # a sentence, or a word or two of plain text (a role name, a short request)
    prose = (len(words) >= 3 and plain >= 0.75 * len(words)) or (len(words) <= 2 and plain == len(words))
    if prose and language is not None and _parses_as_code(piece.strip(), language):
        return "code"
    return "text" if prose else "code"


_PATH_WORD = re.compile(r"^[\w.-]*[/.][\w./-]*\w$")
"""A path or a dotted name (``src/a.py``, ``os.path``): an item of a list of values."""


def _list_words(words: list[str]) -> list[str]:
    """Words with a comma-separated list of paths or dotted names (``a/b.py, c/d.py, e/f.py``) read
    as one word: a line's kind is the same whatever the list's length (a value's items)."""
    out: list[str] = []
    for w in words:
        if out and out[-1].endswith(",") and _PATH_WORD.match(out[-1][:-1]) and _PATH_WORD.match(w.rstrip(",")):
            out[-1] = w
        else:
            out.append(w)
    return out


_PARSE_CACHE: dict[tuple[str, str], bool] = {}


def _parses_as_code(line: str, language: str) -> bool:
    """Whether a prose-looking line parses cleanly as a statement of ``language``
    (``return x if y else z``, ``import os``)."""
    key = (language, line)
    hit = _PARSE_CACHE.get(key)
    if hit is None:
        hit = False
        if language in SUPPORTED_LANGUAGES:
            root = parse(line, language).root_node
            first = root.named_children[0] if root.named_child_count else None
            # a statement, not a bare expression: a quoted sentence parses as a string too
            hit = error_count(root) == 0 and first is not None and first.type not in ("expression_statement", "comment")
        if len(_PARSE_CACHE) > 50_000:
            _PARSE_CACHE.clear()
        _PARSE_CACHE[key] = hit
    return hit
