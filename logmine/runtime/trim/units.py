"""Top-level units of a code context, from tree-sitter, for :mod:`logmine.runtime.trim.trimmer`.

A logged context is a window of a file: it may start inside a function, a class body, a
docstring or a bracket, and it ends at the cursor, usually mid-statement. Parsed as is,
tree-sitter's error recovery both costs milliseconds and wraps good code in ERROR nodes.
So a context is first *scanned* (strings, comments, brackets, indentation; no parse) and cut
into segments where the code leaves an enclosing block the window does not show (an
unmatched closer, a dedent below everything before). Each segment is parsed on its own:
code indented below top level gets a synthetic wrapper (``class _:``, ``class _ {``,
``func _() {``), unclosed brackets at the cursor get synthetic closers. The cursor's line
is left out of the parse (it changes at every keystroke) and joined to the unit it
continues, found from its indentation or bracket depth.

Scanning lives in :mod:`logmine.runtime.trim.scan`, parsing a segment (and its caches) in
:mod:`logmine.runtime.trim.parse`, what a unit defines in :mod:`logmine.runtime.trim.defs`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields

from logmine.code import GRAMMARS
from logmine.runtime.trim import defs as trim_defs
from logmine.runtime.trim.scan import _DECLARATION, INDENT, SYNTAX, scan

from logmine.runtime.trim.base import (  # noqa: F401 - re-exported: the unit primitives
    _C_STRIP, _NONE, IDENT, LAZY, STRIP, TOKEN, Raw, Unit, _frozen, code_only, count_tokens, finish, open_delimiter,
)
from logmine.runtime.trim.parse import Level, UnitParser

# -- from a scan and parsed segments to the units of a context ----------------------------------
@dataclass(slots=True)
class Outline:
    """The units of the complete lines of a context, ready to be joined with a cursor line."""

    before: list[Unit]
    """Units of every segment but the last (absolute offsets)."""
    last: Level | None
    last_offset: int
    indented: bool
    depth: int
    last_indent: int
    base_indent: int
    body: bytes = b""
    language: str = ""
    count: Callable[[str], int] = count_tokens
    first_end: int = -1
    """End of the first segment when the context leaves the block it starts in (else -1)."""
    cache: dict = field(default_factory=dict)


def outline(body: bytes, language: str, parser: UnitParser, key: str | None = None) -> Outline:
    """The outline of ``body`` (the context up to the start of the cursor's line)."""
    lkey = (language, key)
    sc, lx = scan(body, language, parser.lexed.pop(lkey, None) if key is not None and parser.incremental else None)
    if key is not None and parser.incremental:
        parser.lexed[lkey] = lx
        if len(parser.lexed) > parser.max_files:
            parser.lexed.pop(next(iter(parser.lexed)))
    before: list[Unit] = []
    last_level, last_offset = None, len(body)
    for i, seg in enumerate(sc.segments):
        if seg.frag < seg.start:
            before.append(_fragment(body, seg.frag, seg.start, language, parser))
        if not seg.parse:
            continue
        is_last = i == len(sc.segments) - 1
        parsed = parser.parse_segment(body, seg, language, key, -1 if is_last else i)
        if is_last:
            last_level, last_offset = parsed.top, seg.start
        else:
            # a closed function body's bindings are not in scope at the cursor
            local = not any(u[3] in trim_defs.SCOPE_KINDS or u[2] == "import" for u in parsed.top.units)
            infos = parser.infos if parser.max_segments else None
            before.extend(_place(u, seg.start, local) if u[5] != LAZY
                          else finish(_place(u, seg.start, local), body, language, parser.count, infos)
                          for u in parsed.top.units)
    base = 0
    if last_level is not None and SYNTAX[language].indented:
        base = INDENT.match(body, last_offset).end() - last_offset
    return Outline(before, last_level, last_offset, SYNTAX[language].indented, sc.depth if last_level else 0,
                   sc.last_indent, base, body=body, language=language, count=parser.count,
                   first_end=sc.segments[0].end if len(sc.segments) > 1 else -1)


def _fragment(data: bytes, start: int, end: int, language: str, parser: UnitParser) -> Unit:
    chunk = data[start:end]
    key = (language, "fragment", chunk)
    info = parser.infos.get(key)
    if info is None:
        text = chunk.decode("utf-8", "replace")
        info = (parser.count(text), _frozen(IDENT.findall(code_only(text, language))))
        if parser.max_segments:
            parser.infos[key] = info
    return Unit(start, end, "fragment", "fragment", _NONE, info[0], _NONE, info[1])


_SET = tuple(Unit.__dict__[f.name].__set__ for f in fields(Unit))
_new = object.__new__


def _place(u: Raw, by: int, local: bool = False) -> Unit:
    """The :class:`Unit` of a segment's unit that starts ``by`` bytes into the context
    (``local``: a closed function body's statement, whose bindings are out of scope).

    Built by setting its slots directly: the frozen dataclass's ``__init__`` (an ``object.__setattr__``
    per field) takes half again as long, and a context's units are built anew at every new line."""
    start, end, kind, node_type, defines, tokens, members, idents = u
    s_start, s_end, s_kind, s_type, s_defines, s_tokens, s_members, s_idents = _SET
    out = _new(Unit)
    s_start(out, start + by)
    s_end(out, end + by)
    s_kind(out, kind)
    s_type(out, node_type)
    s_defines(out, _NONE if local else defines)
    s_tokens(out, tokens)
    s_members(out, _NONE if local else members)
    s_idents(out, idents)
    return out


def place_cursor(ol: Outline, data: bytes, cursor_line: int, count: Callable[[str], int] = count_tokens,
                 count_region: Callable[[bytes], int] | None = None) -> tuple[list[Unit], list[int]]:
    """Units of the whole context and the indices on the cursor's path (headers, then the cursor unit)."""
    line = data[cursor_line:]
    if ol.indented:
        stripped = INDENT.match(line).end()
        indent = ol.last_indent + 1 if ol.depth else stripped
    else:
        indent = 0
    ckey = (indent, ol.depth)
    shape = ol.cache.get(ckey)
    if shape is None:
        units, path, continued = _shape(ol, indent)
        body_tokens = 0
        if continued is not None:
            region = data[units[continued].start : cursor_line]
            body_tokens = count_region(region) if count_region else count(region.decode("utf-8", "replace"))
        shape = ol.cache[ckey] = (units, path, continued, body_tokens)
    units, path, continued, body_tokens = shape
    units = list(units)
    end = len(data)
    line_tokens = count(line.decode("utf-8", "replace"))
    if continued is not None:
        u = units[continued]
        units[continued] = _place((u.start, end, u.kind, u.node_type, u.defines, body_tokens + line_tokens, u.members,
                                   u.idents), 0)
        path = path + [continued]
    else:
        kind = "definition" if _DECLARATION.match(line.lstrip()) else "statement"
        units.append(_place((cursor_line, end, kind, "cursor", _NONE, line_tokens, _NONE, _NONE), 0))
        path = path + [len(units) - 1]
    return units, path


def _shape(ol: Outline, indent: int) -> tuple[list[Unit], list[int], int | None]:
    """Units, header path, and the index of the unit the cursor continues (None: a new unit)."""
    units = list(ol.before)
    path: list[int] = []
    level, off = ol.last, ol.last_offset
    remaining, base = ol.depth, ol.base_indent
    while level is not None:
        if not level.units:
            return units, path, None
        if ol.indented:
            new_unit = indent <= base
            deeper = level.members is not None and indent >= level.member_indent and indent > base
        else:
            new_unit = remaining == 0
            deeper = level.members is not None and remaining >= 1
        if new_unit:
            units.extend([_place(u, off) for u in level.units[:-1]])
            units.append(finish(_place(level.units[-1], off), ol.body, ol.language, ol.count))
            return units, path, None
        if not deeper:
            units.extend([_place(u, off) for u in level.units])
            return units, path, len(units) - 1
        units.extend([_place(u, off) for u in level.units[:-1]])
        path.append(len(units))
        units.append(_place(level.header, off))
        base, remaining = level.member_indent, remaining - 1
        level = level.members
    return units, path, None


def supported(language: str | None) -> bool:
    return language in SYNTAX and language in GRAMMARS


# -- without a grammar, and back to text --------------------------------------------------------
def line_units(data: bytes, count: Callable[[str], int]) -> list[Unit]:
    """The fallback for languages without a grammar: one unit per line."""
    out, pos = [], 0
    for line in data.splitlines(keepends=True):
        out.append(Unit(pos, pos + len(line), "statement", "line", frozenset(), count(line.decode("utf-8", "replace"))))
        pos += len(line)
    return out


def emit(data: bytes, units: list[Unit], kept: list[int], cut_start: int | None) -> str:
    """The text of the ``kept`` units in source order, adjacent ones with the whitespace between them
    (the last one from ``cut_start`` when given)."""
    parts: list[bytes] = []
    prev_end = None
    for i in kept:
        u = units[i]
        start = cut_start if cut_start is not None and i == kept[-1] else u.start
        if prev_end is not None:
            gap = data[prev_end:start]
            if start >= prev_end and not gap.strip():
                parts.append(gap)
            elif not parts[-1].endswith(b"\n"):
                parts.append(b"\n")
        parts.append(data[start : u.end])
        prev_end = u.end
    return b"".join(parts).decode("utf-8", "replace")


def emit_ranges(data: bytes, ranges: list[tuple[int, int]]) -> str:
    """The text of byte ``ranges`` (sorted by start; overlapping ones merged), adjacent ones with the whitespace
    between them, others on lines of their own (as :func:`emit` joins units)."""
    merged: list[list[int]] = []
    for a, b in ranges:
        if b <= a:
            continue
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    parts: list[bytes] = []
    prev_end = None
    for a, b in merged:
        if prev_end is not None:
            gap = data[prev_end:a]
            if not gap.strip():
                parts.append(gap)
            elif not parts[-1].endswith(b"\n"):
                parts.append(b"\n")
        parts.append(data[a:b])
        prev_end = b
    return b"".join(parts).decode("utf-8", "replace")
