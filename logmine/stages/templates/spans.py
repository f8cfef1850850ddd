"""Spans of a prompt that hold code whatever their lines look like: fenced blocks, tag bodies, the
text after fill-in-the-middle and file sentinels (past a header of labelled comments), context
snippets, and docstrings
(:mod:`logmine.stages.templates.bodies` reads every line inside them as code)."""

from __future__ import annotations

import re

from logmine.prompt_syntax import (
    FIM_PREFIX_SENTINELS,
    FIM_START,
    FIM_SUFFIX_SENTINELS,
    SENTINEL,
    SNIPPET_HEADERS,
)

_FENCE_BODY = re.compile(r"(?m)^[ \t]*(```|~~~)[^\n`]*\n(.*?)(?:\n[ \t]*\1(?![\w`])|\Z)", re.DOTALL)
"""A fenced block's body: up to a closing fence (which a sentinel may follow: ```<end_of_turn>)
or, for a block left open (an assistant prefill), to the end."""
_DOCSTRING = re.compile(r'"""(?:[^"\\]|\\.|"(?!""))*?"""' + r"|'''(?:[^'\\]|\\.|'(?!''))*?'''", re.DOTALL)
"""A triple-quoted string (a docstring), whatever its prose: code."""
_TAG_BODY = re.compile(r"(?<!<)<([A-Z][A-Z0-9_]{1,30})>(.*?)</\1>(?!>)", re.DOTALL)
"""An upper-case tag's body (not Llama 2's ``<<SYS>> ... <</SYS>>``: a system prompt, text)."""

_MARKS_BODY = re.compile(r"(?m):[ \t]*\n(([=#*-])\2{2,})[ \t]*\n(.*?)\n\1(?!\2)[ \t]*$", re.DOTALL)
"""A value between two equal lines of marks after a label (``problem description:`` / ``======`` / the
value / ``======``): the template fences its value with them, whatever the value's lines look like."""


def body_spans(text: str, headers: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Character spans that each hold one code value whatever its lines look like: the bodies of
    fenced blocks, of upper-case tags (``<CONTEXTDOCUMENT>``) and of equal lines of marks after a label
    (:data:`_MARKS_BODY`), and the text after a
    fill-in-the-middle or file sentinel up to the next sentinel, past its header (``headers``, as
    :func:`fim_headers` finds them)."""
    spans = [m.span(2) for m in _FENCE_BODY.finditer(text)] if "```" in text or "~~~" in text else []
    if "</" in text:
        spans += [m.span(2) for m in _TAG_BODY.finditer(text)]
    if ":\n" in text or ": \n" in text:
        spans += [m.span(3) for m in _MARKS_BODY.finditer(text)]
    past = dict(headers)
    for m in FIM_START.finditer(text):
        nxt = SENTINEL.search(text, m.end())
        spans.append((past.get(m.end(), m.end()), nxt.start() if nxt else len(text)))
    if "\n" + SNIPPET_HEADERS[0] in text or text.startswith(SNIPPET_HEADERS):
        # a context snippet: from its header line (``+++++ path``) to the next one, the file's code
        heads = [m.start() for m in _SNIPPET_HEAD.finditer(text)]
        for a, b in zip(heads, heads[1:]):
            line_end = text.find("\n", a, b)
            if line_end >= 0:
                nxt = SENTINEL.search(text, line_end, b)
                spans.append((line_end + 1, nxt.start() if nxt else b))
    if (suffix := _FIM_SUFFIX.search(text)) and not _FIM_PREFIX.search(text, 0, suffix.start()):
        # no prefix sentinel before the suffix one (``{prefix}<|fim_suffix|>{suffix}<|fim_middle|>``):
        # the text up to it, from the sentinel before it or the start, is the prefix
        before = [m.end() for m in SENTINEL.finditer(text, 0, suffix.start())]
        spans.append((before[-1] if before else 0, suffix.start()))
    return spans


_SNIPPET_HEAD = re.compile("(?m)^(?:" + "|".join(map(re.escape, SNIPPET_HEADERS)) + ")")


_FIM_SUFFIX = re.compile("|".join(map(re.escape, FIM_SUFFIX_SENTINELS)))
_FIM_PREFIX = re.compile("|".join(map(re.escape, FIM_PREFIX_SENTINELS)))


_COMMENT_MARK = r"(?:#|//|--|;+)"
"""What opens a line comment in the languages a FIM template writes its header in."""
_HEADER_LINE = re.compile(_COMMENT_MARK + r"[ \t]*[A-Z][A-Za-z]*(?: [A-Za-z]+){0,2}:[ \t]+\S[^\n]*\n")
"""A comment that labels a value (``# Language: Python``, ``// File: src/a.ts``): a line a template
writes above the code of a fill-in-the-middle prompt."""
_HEADER_START = re.compile(f"(?:{_FIM_PREFIX.pattern}) ?{_COMMENT_MARK}")
"""A prefix sentinel with a comment right after it: the quick check before headers are looked for."""


def fim_headers(text: str) -> list[tuple[int, int]]:
    """The labelled comment lines right after each prefix sentinel (``<fim_prefix># Language: Python``
    then ``# Path: src/a.py``), each from the sentinel's end to the header's: the template's header of
    the file, not the code at the cursor. They stay text, so that templates differing only in their
    header (or having none) stay apart."""
    if not _HEADER_START.search(text):
        return []
    return [(m.end(), end) for m in _FIM_PREFIX.finditer(text) if (end := _past_header(text, m.end())) > m.end()]


def _past_header(text: str, at: int) -> int:
    """``at`` moved past the labelled comment lines (:data:`_HEADER_LINE`) that start there (after
    one space: ``<PRE> # Language: ...``), or ``at`` where there are none."""
    start = at + 1 if text.startswith(" ", at) else at
    end = start
    while (m := _HEADER_LINE.match(text, end)) is not None:
        end = m.end()
    return end if end > start else at


def docstring_spans(text: str, fixed: re.Pattern[str]) -> list[tuple[int, int]]:
    """Triple-quoted strings (docstrings): code whatever their prose (``fixed``: the placeholders,
    tags and sentinels none may hold)."""
    if '"""' not in text and "'''" not in text:
        return []
    return [m.span() for m in _DOCSTRING.finditer(text) if _docstring(text, m, fixed)]


def _docstring(text: str, m: re.Match[str], fixed: re.Pattern[str]) -> bool:
    """Whether a triple-quoted span is a docstring: it opens a line (after indentation) and
    holds no placeholder, tag, sentinel or fence (else its quotes close and open two others)."""
    line = text[text.rfind("\n", 0, m.start()) + 1 : m.start()]
    return not line.strip() and fixed.search(text, m.start(), m.end()) is None


def inside(offset: int, spans: list[tuple[int, int]]) -> bool:
    """Whether ``offset`` is in one of ``spans``."""
    return any(a <= offset < b for a, b in spans)
