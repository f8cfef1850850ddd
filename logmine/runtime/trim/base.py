"""The value types and text primitives the trimmer's modules share: :class:`Unit` (and its
tuple form), approximate token counts, identifiers, and code with strings and comments removed."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

TOKEN = re.compile(r"\w+|[^\w\s]")
IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")
_PY_STRIP = re.compile(r'"""[\s\S]*?(?:"""|$)|\'\'\'[\s\S]*?(?:\'\'\'|$)|"(?:\\.|[^"\\\n])*"?|\'(?:\\.|[^\'\\\n])*\'?|#[^\n]*')
_C_STRIP = re.compile(r'/\*[\s\S]*?(?:\*/|$)|//[^\n]*|"(?:\\.|[^"\\\n])*"?|\'(?:\\.|[^\'\\\n])*\'?|`[^`]*`?')
_RS_STRIP = re.compile(r'/\*[\s\S]*?(?:\*/|$)|//[^\n]*|"(?:\\[\s\S]|[^"\\])*"?|\'(?:\\.[^\'\n]*|[^\'\\\n])\'')
STRIP = {"python": _PY_STRIP, "rust": _RS_STRIP}
"""Strings and comments per language (C-like syntax for the others)."""


_STARTS = {"python": "\"'#", "rust": "/\"'"}
"""The characters a string or comment starts with, per language (C-like syntax for the others)."""
_C_STARTS = "/\"'`"


def code_only(text: str, language: str | None) -> str:
    """``text`` with strings and comments blanked out."""
    if len(text) > 64 and not any(c in text for c in _STARTS.get(language or "", _C_STARTS)):
        return text  # nothing to blank in a longer text: no need to run the pattern over it
    return STRIP.get(language or "", _C_STRIP).sub(" ", text)


_OPENERS = ('"""', "'''", "/*", "//", "#", '"', "'", "`")
_CLOSERS = {'"""': '"""', "'''": "'''", "/*": "*/", '"': '"', "'": "'", "`": "`"}


def open_delimiter(text: str, language: str | None) -> str:
    """The string or comment opener still open at the end of ``text`` ("" when none), so that
    code after it can be read in the right state (``open_delimiter(prefix) + completion``)."""
    last = None
    for last in STRIP.get(language or "", _C_STRIP).finditer(text):
        pass
    if last is None or last.end() != len(text):
        return ""
    tok = last.group()
    opener = next((o for o in _OPENERS if tok.startswith(o)), "")
    if opener in ("#", "//"):
        return opener
    close = _CLOSERS.get(opener)
    if close and (len(tok) < len(opener) + len(close) or not tok.endswith(close) or tok.endswith("\\" + close)):
        return opener
    return ""


LAZY = -1
"""Token count of a unit not counted yet (see :func:`finish`)."""


def _token_classes() -> bytes:
    """A byte table for ASCII text: word characters -> ``a``, whitespace -> space, the rest -> ``.``."""
    out = bytearray(b"." * 256)
    for i in range(128):
        c = chr(i)
        out[i] = ord(" ") if c.isspace() else ord("a") if c.isalnum() or c == "_" else ord(".")
    return bytes(out)


_CLASSES = _token_classes()


def count_tokens(text: str) -> int:
    """Approximate tokens: words and single punctuation characters (``len(TOKEN.findall(text))``).

    ASCII text is counted without building the tokens: each word is a run of word characters,
    started at the text's start or after a space or a punctuation character."""
    if not text.isascii():
        return len(TOKEN.findall(text))
    t = text.encode("ascii").translate(_CLASSES)
    return t.count(b".") + t.count(b" a") + t.count(b".a") + (t[:1] == b"a")


@dataclass(frozen=True, slots=True)
class Unit:
    """A unit of a context: byte span, kind (import | definition | statement | comment | fragment),
    the tree-sitter node type, the names it defines, its token count and the members it defines."""

    start: int
    end: int
    kind: str
    node_type: str
    defines: frozenset[str]
    """Names used bare (``x``, ``f()``, ``Type``)."""
    tokens: int
    members: frozenset[str] = frozenset()
    """Names used after ``.`` / ``::`` (class members, ``self.x`` attributes; methods are in both)."""
    idents: frozenset[str] = frozenset()
    """Identifiers the unit's code uses (outside strings and comments)."""


# -- units of parsed segments, as tuples --------------------------------------------------------
Raw = tuple
"""A unit of a parsed segment as the tuple of :class:`Unit`'s fields, offsets relative to the segment
(cached segments hold these; a :class:`Unit` is built once it is placed in a context, :func:`_place`)."""
_NONE: frozenset[str] = frozenset()


def _frozen(names: list[str]) -> frozenset[str]:
    """``frozenset(names)``, sharing one empty set (fewer objects for the garbage collector to track)."""
    return frozenset(names) if names else _NONE


def finish(u: Unit, body: bytes, language: str, count: Callable[[str], int], infos: dict | None = None) -> Unit:
    """A lazily built unit with its token count and identifiers filled in."""
    if u.tokens != LAZY:
        return u
    chunk = body[u.start : u.end]
    key = (language, "finish", u.kind, chunk)
    got = infos.get(key) if infos is not None else None
    if got is None:
        decoded = chunk.decode("utf-8", "replace")
        idents = _frozen(IDENT.findall(code_only(decoded, language))) if u.kind not in ("comment", "import") else _NONE
        got = (count(decoded), idents)
        if infos is not None:
            infos[key] = got
    return Unit(u.start, u.end, u.kind, u.node_type, u.defines, got[0], u.members, got[1])
