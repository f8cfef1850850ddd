"""Top-level units of a code context, from tree-sitter, for :mod:`logmine.stages.trim`.

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

Parsed segments are cached by content (all but a stream's last one, which changes at every new
line), and each segment of a file keeps its tree so that the next request re-parses
incrementally (``tree.edit``); the caches give the same units as a cold parse (a property test
checks it). Scanning lives in :mod:`logmine.stages.trim_scan`,
what a unit defines in :mod:`logmine.stages.trim_defs`.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field, fields

from logmine.code import GRAMMARS, error_count, get_parser
from logmine.stages import trim_defs
from logmine.stages.trim_scan import _DECLARATION, INDENT, SYNTAX, Lexed, Segment, scan

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


# -- parsing a segment --------------------------------------------------------------------------
Raw = tuple
"""A unit of a parsed segment as the tuple of :class:`Unit`'s fields, offsets relative to the segment
(cached segments hold these; a :class:`Unit` is built once it is placed in a context, :func:`_place`)."""
_NONE: frozenset[str] = frozenset()


def _frozen(names: list[str]) -> frozenset[str]:
    """``frozenset(names)``, sharing one empty set (fewer objects for the garbage collector to track)."""
    return frozenset(names) if names else _NONE


@dataclass(slots=True)
class Level:
    """Units at one block level of a parsed segment; the last one may open into the next level."""

    units: list[Raw]
    header: Raw | None = None
    """The last unit's header (up to its body) when it is a container."""
    member_indent: int = 0
    members: Level | None = None


@dataclass(slots=True)
class Parsed:
    """A parsed segment, offsets relative to its start."""

    top: Level
    errors: int


class UnitParser:
    """Parses segments to units, caching by content and re-parsing each file's last segment incrementally."""

    def __init__(self, max_segments: int = 4096, max_files: int = 512, count: Callable[[str], int] = count_tokens) -> None:
        self.count = count
        self.segments: OrderedDict[tuple, Parsed] = OrderedDict()
        self.files: OrderedDict[tuple, tuple[bytes, object]] = OrderedDict()
        self.lexed: dict[tuple, Lexed] = {}
        self.infos: dict[tuple, tuple[str, frozenset[str], int]] = {}
        self.max_segments, self.max_files = max_segments, max_files
        self.incremental = True
        self.stats = {"cached": 0, "incremental": 0, "cold": 0}

    def parse_segment(self, data: bytes, seg: Segment, language: str, key: str | None, slot: int) -> Parsed:
        """Units of one segment; ``slot`` tells a file's segments apart for incremental re-parsing."""
        region = data[seg.start : seg.end]
        ckey = (language, region, seg.closers)
        hit = self.segments.get(ckey)
        if hit is not None:
            self.segments.move_to_end(ckey)
            self.stats["cached"] += 1
            return hit
        best = None
        syn = SYNTAX[language]
        pads = syn.pads
        if len(pads) > 1 and syn.member_start.match(region):
            pads = pads[::-1]  # indented code, a class member, a function's statement: wrapper first
        for pad, tail in pads:
            if pad and syn.indented and not region[:1].isspace():
                continue
            text = pad + region + seg.closers + tail
            tree = self._tree(text, language, (key, pad, slot) if key is not None else None)
            root = tree.root_node
            parsed = Parsed(self._level(root, text, len(pad), len(region), language, bool(pad)), error_count(root, limit=20))
            if best is None or parsed.errors < best.errors:
                best = parsed
            if not root.has_error:
                break
        if key is None or slot != -1:  # a stream's last segment changes at every new line: rarely seen again
            self.segments[ckey] = best
            while len(self.segments) > self.max_segments:
                self.segments.popitem(last=False)
        return best

    def _tree(self, text: bytes, language: str, fkey: tuple | None) -> object:
        parser = get_parser(language)
        old = self.files.pop((language, fkey), None) if fkey is not None and self.incremental else None
        if old is not None and old[1].root_node.has_error:
            old = None  # an edited erroneous tree mostly parses with errors again, and those are redone cold
        changes = edits(old[0], text) if old is not None else []
        if old is not None and sum(e[1] - e[0] for e in changes) > 3 * len(old[0]) // 4:
            old = None  # the window jumped: nothing to reuse, and an edited tree parses slower than none
        if old is None:
            tree = parser.parse(text)
            self.stats["cold"] += 1
        else:
            tree = old[1].copy()
            for edit in changes:
                tree.edit(*edit)
            tree = parser.parse(text, tree)
            self.stats["incremental"] += 1
            if tree.root_node.has_error:
                # Error recovery after an edit may differ from a cold parse's: keep results
                # independent of history by parsing erroneous text from scratch.
                tree = parser.parse(text)
                self.stats["cold"] += 1
        if fkey is not None and self.incremental:
            self.files[(language, fkey)] = (text, tree)
            if len(self.files) > self.max_files:
                self.files.popitem(last=False)
        return tree

    def _level(self, node, text: bytes, offset: int, limit: int, language: str, padded: bool) -> Level:  # noqa: ANN001
        if padded:
            wrapper = node.children[0] if node.child_count else None
            body = wrapper.child_by_field_name("body") if wrapper is not None else None
            children = _members(body) if body is not None else node.children
        else:
            children = node.children
        units: list[Raw] = []
        pending = None  # attributes glued to the next item (Rust #[...])
        last_node = None
        kids = []  # (node, type, start, end: the node's, or a following ";"'s)
        top = limit + offset
        for c in children:
            t = c.type
            if t == ";":
                if kids:
                    kids[-1] = (*kids[-1][:3], c.end_byte)
                continue
            start, end = c.start_byte, c.end_byte
            if start < top and end > offset:
                kids.append((c, t, start, end))
        final = len(kids) - 1
        rust = language == "rust"
        for k, (child, t, start, end) in enumerate(kids):
            if rust and k < final and t in ("attribute_item", "inner_attribute_item"):
                pending = pending if pending is not None else start
                continue
            # the last unit changes with every new line and is usually the cursor's: count it lazily
            units.append(self._unit(child, t, text, offset, min(end, top), language,
                                    pending if pending is not None else start, k == final))
            pending, last_node = None, child
        level = Level(units)
        if last_node is not None:
            body = _container_body(last_node)
            if body is not None:
                level.header = self._header(last_node, body, units[-1][0], text, offset, limit, language)
                level.member_indent = _member_indent(text, body, offset, limit)
                sub = self._level_of(body, text, offset, limit, language)
                level.members = sub
        return level

    def _level_of(self, body, text: bytes, offset: int, limit: int, language: str) -> Level:  # noqa: ANN001
        """The members of a container: what they define is reached through ``self.`` / ``this.`` too."""
        level = self._level(_Children(_members(body)), text, offset, limit, language, False)
        level.units = [_as_member(u) for u in level.units]
        return level

    def _header(self, node, body, start: int, text: bytes, offset: int, limit: int, language: str) -> Raw:  # noqa: ANN001
        """A container's header: from its start to the end of the line its body starts on."""
        head_end = _line_end(text, body.start_byte, offset, limit)
        header_text = text[start + offset : head_end + offset]
        # what a clean container's header defines (its name) is read from the header alone
        hkey = (language, "header", node.type, header_text) if not node.has_error else None
        info = self.infos.get(hkey) if hkey is not None else None
        if info is None:
            info = (trim_defs.defines_of(node, language, members=False)[0], self.count(header_text.decode("utf-8", "replace")))
            if hkey is not None and self.max_segments:
                self.infos[hkey] = info
        return (start, head_end, "definition", node.type, info[0], info[1], _NONE, _NONE)

    def _unit(self, node, node_type: str, text: bytes, offset: int, end: int, language: str, start: int,  # noqa: ANN001
              lazy: bool) -> Raw:
        """The unit of ``node`` over ``[start, end)`` (to the start of its line when only blanks precede it)."""
        line_start = text.rfind(b"\n", offset, start) + 1
        if line_start < offset:
            line_start = offset
        if not text[line_start:start].strip():
            start = line_start
        chunk = text[start:end]
        # A node with a parse error may read differently in another tree: only clean nodes are cached.
        ikey = (language, node_type, chunk) if not node.has_error else None
        info = self.infos.get(ikey) if ikey is not None else None
        if info is None:
            kind = trim_defs.classify(node)
            names, attrs = trim_defs.defines_of(node, language) if kind != "comment" else (_NONE, _NONE)
            if kind == "statement" and (names or attrs):
                kind = "definition"
            if lazy:
                return (start - offset, end - offset, kind, node_type, names, LAZY, attrs, _NONE)
            decoded = chunk.decode("utf-8", "replace")
            idents = _frozen(IDENT.findall(code_only(decoded, language))) if kind not in ("comment", "import") else _NONE
            info = (kind, names, self.count(decoded), attrs, idents)
            if len(self.infos) > 200_000 or not self.max_segments:  # no memory at all when not caching
                self.infos.clear()
            if ikey is not None:
                self.infos[ikey] = info
        return (start - offset, end - offset, info[0], node_type, info[1], info[2], info[3], info[4])


def _as_member(u: Raw) -> Raw:
    if not u[4] or u[4] <= u[6]:
        return u
    return (*u[:6], u[6] | u[4], u[7])


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


class _Children:
    """A stand-in node whose children are a container's members."""

    __slots__ = ("children",)

    def __init__(self, children: list) -> None:
        self.children = children


def _members(body) -> list:  # noqa: ANN001
    return [c for c in body.children if c.is_named or c.type not in ("{", "}", ":", ",")]


def _container_body(node):  # noqa: ANN001, ANN202
    return trim_defs.container_body(node)


def _line_end(text: bytes, pos: int, offset: int, limit: int) -> int:
    nl = text.find(b"\n", pos)
    end = limit + offset if nl < 0 else min(nl + 1, limit + offset)
    return end - offset


def _member_indent(text: bytes, body, offset: int, limit: int) -> int:  # noqa: ANN001
    for child in _members(body):
        if child.is_named and child.start_byte - offset < limit:
            return child.start_point[1]
    return 0


# -- edits between two versions of a file's last segment ----------------------------------------
def common_prefix(a: bytes, b: bytes) -> int:
    """Length of the common prefix of ``a`` and ``b`` (binary search over C comparisons)."""
    lo, hi = 0, min(len(a), len(b))
    if a[:hi] == b[:hi]:
        return hi
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def edits(old: bytes, new: bytes) -> list[tuple]:
    """``Tree.edit`` arguments turning ``old`` into ``new``: a deletion at the head when the
    window slid down, then one replacement between the common prefix and suffix."""
    from tree_sitter import Point

    def point(data: bytes, pos: int) -> Point:
        return Point(data.count(b"\n", 0, pos), pos - (data.rfind(b"\n", 0, pos) + 1))

    out = []
    probe = new[:64]
    if len(probe) == 64 and not old.startswith(probe):
        k = old.find(probe)
        if k > 0:
            out.append((0, k, 0, Point(0, 0), point(old, k), Point(0, 0)))
            old = old[k:]
    p = common_prefix(old, new)
    s = common_prefix(old[p:][::-1], new[p:][::-1])
    old_end, new_end = len(old) - s, len(new) - s
    if p != old_end or p != new_end:
        row = old.count(b"\n", 0, p)  # the same in new: they agree up to p
        out.append((p, old_end, new_end, Point(row, p - (old.rfind(b"\n", 0, p) + 1)),
                    Point(row + old.count(b"\n", p, old_end), old_end - (old.rfind(b"\n", 0, old_end) + 1)),
                    Point(row + new.count(b"\n", p, new_end), new_end - (new.rfind(b"\n", 0, new_end) + 1))))
    return out


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
