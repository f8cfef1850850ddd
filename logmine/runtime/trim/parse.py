"""Parsing a segment of a code context to units, for :mod:`logmine.runtime.trim.units`.

Parsed segments are cached by content (all but a stream's last one, which changes at every new
line), and each segment of a file keeps its tree so that the next request re-parses
incrementally (``tree.edit``); the caches give the same units as a cold parse (a property test
checks it).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from logmine.code import error_count, get_parser
from logmine.runtime.trim import defs as trim_defs
from logmine.runtime.trim.scan import SYNTAX, Lexed, Segment
from logmine.runtime.trim.base import _NONE, IDENT, LAZY, Raw, _frozen, code_only, count_tokens


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
