"""Scanning a code context without parsing it, for :mod:`logmine.runtime.trim.units`.

Strings, comments, brackets and newlines are found with one regular expression per language;
from them, the line starts at bracket depth 0 and where a context leaves a block it does not
show (an unmatched closer, a dedent below every earlier line). Those cut the context into
segments that tree-sitter can parse cleanly. Lexing is kept per file: the next context of the
file (lines dropped at the top, lines added at the bottom) re-lexes only what is new.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

INDENT = re.compile(rb"[ \t]*")


@dataclass(frozen=True, slots=True)
class Syntax:
    """How to scan a language without parsing it."""

    tokens: re.Pattern[bytes]
    """Strings and comments (whole, multi-line ones too), brackets and newlines."""
    indented: bool = False
    """Blocks by indentation (Python)."""
    pads: tuple[tuple[bytes, bytes], ...] = ((b"", b""),)
    """Wrappers (before, after) to try, in order, for a segment that does not start at top level."""
    block_comments: bool = True
    """``/* ... */`` comments (a context may open inside one)."""
    member_start: re.Pattern[bytes] = re.compile(rb"(?!)")
    """A segment starting like this is parsed inside the wrapper first."""


_FLAT = rb"[^()\[\]{}\"'`#/\n]*"
_BR = rb"|\(" + _FLAT + rb"\)|\[" + _FLAT + rb"\]|\{" + _FLAT + rb"\}|[(\[{]|[)\]}]|\n[ \t]*"
"""Brackets (a pair on one line with no bracket, quote, comment start or newline inside is one token,
which changes nothing), and newlines with the indentation after them."""
_SQ = rb"\"(?:\\.|[^\"\\\n])*\"?|'(?:\\.|[^'\\\n])*'?"
_BLOCK = rb"/\*[\s\S]*?(?:\*/|\Z)|//[^\n]*|"


def _tokens(pattern: bytes, first: bytes) -> re.Pattern[bytes]:
    """``pattern`` behind a lookahead on the characters its tokens can start with (``first``, quotes,
    brackets, newline): the same tokens, but the regex engine skips to the candidate positions."""
    return re.compile(rb"(?=[" + first + rb"\"'()\[\]{}\n])(?:" + pattern + rb")")


SYNTAX: dict[str, Syntax] = {
    "python": Syntax(_tokens(rb'"""[\s\S]*?(?:"""|\Z)|' + rb"'''[\s\S]*?(?:'''|\Z)|#[^\n]*|" + _SQ + _BR, b"#"), True,
                     ((b"", b""), (b"class _:\n", b"")), False, re.compile(rb"[ \t]")),
    "java": Syntax(_tokens(rb'"""[\s\S]*?(?:"""|\Z)|' + _BLOCK + _SQ + _BR, b"/")),
    "javascript": Syntax(_tokens(rb"`(?:\\[\s\S]|[^`\\])*(?:`|\Z)|" + _BLOCK + _SQ + _BR, b"`/"),
                         pads=((b"", b""), (b"class _ {\n", b"\n}")), member_start=re.compile(
                             rb"\s*(?:(?:static|async|get|set|public|private|protected|readonly|override|abstract)\s+)*"
                             rb"(?!(?:if|for|while|switch|catch|function|return)\b)[#\w$]+\s*(?:\([^)\n]*\)\s*(?::[^{\n]*)?\{|[?!]?:)")),
    "go": Syntax(_tokens(rb"`[^`]*(?:`|\Z)|" + _BLOCK + _SQ + _BR, b"`/"), pads=((b"", b""), (b"func _() {\n", b"\n}")),
                 member_start=re.compile(rb"\s*(?!(?:func|type|var|const|import|package)\b|//|/\*)\S")),
    "rust": Syntax(_tokens(rb'(?<![A-Za-z0-9_])b?r(#*)"[\s\S]*?(?:"\1|\Z)|' + _BLOCK
                           + rb"\"(?:\\[\s\S]|[^\"\\])*(?:\"|\Z)|'(?:\\[^'\n]{1,10}|[^'\\\n])'" + _BR, b"/br")),
}
SYNTAX["typescript"] = SYNTAX["tsx"] = SYNTAX["javascript"]
_CLOSE = {ord("("): b")", ord("["): b"]", ord("{"): b"}"}
_CONTINUATION = re.compile(rb"(?:else|elif|except|finally|case)\b|[.?:+\-*/&|,)\]}=<>]")
_DECLARATION = re.compile(
    rb"(?:package|import|use|from|func|fn|pub|class|def|async|public|private|protected|static|export|const|let|var|"
    rb"function|type|interface|struct|impl|enum|mod|trait|@|#\[)\b"
)


@dataclass(slots=True)
class Segment:
    """A run of the context at one block level: ``[frag, start)`` is unparsed, ``[start, end)`` is parsed."""

    frag: int
    start: int
    end: int
    closers: bytes = b""
    parse: bool = True


@dataclass(slots=True)
class Scan:
    """What scanning the complete lines of a context found."""

    segments: list[Segment]
    depth: int
    """Brackets still open at the end of the last segment."""
    last_indent: int
    """Indentation of the last logical line (Python)."""


@dataclass(slots=True)
class Lexed:
    """Phase one of a scan: line starts at depth 0 (and where their code starts), unmatched closers,
    and the state at the end; kept per file so that the next context re-scans only what is new."""

    data: bytes
    head: int
    lines: list[int]
    inds: list[int]
    cuts: list[tuple[int, int, bool]]
    stack: list[int]
    closer: bytes = b""
    open_at: int = -1
    meta: dict[int, tuple[bool, bool, bool]] = field(default_factory=dict)
    """Per line start (lazily, for :func:`_safe_start`): starts a declaration, continues a statement,
    ends a statement."""


def scan(data: bytes, language: str, prev: Lexed | None = None) -> tuple[Scan, Lexed]:
    """Cut ``data`` (complete lines, the cursor's line excluded) into segments; see the module docstring.

    ``prev``, the previous context's lexing of the same file, is reused when ``data`` only drops
    whole lines from its start and appends lines (the same result as scanning from scratch).
    """
    syn = SYNTAX[language]
    lx = lex(data, syn, prev)
    closers = lx.closer + b"".join(_CLOSE[c] for c in reversed(lx.stack))
    if syn.indented:
        cuts, last_indent = _indent_cuts(data, lx, lx.cuts)
    else:
        cuts, last_indent = lx.cuts, 0
    return Scan(_segments(data, lx, cuts, closers, syn), len(lx.stack), last_indent), lx


def lex(data: bytes, syn: Syntax, prev: Lexed | None = None) -> Lexed:
    """Phase one of :func:`scan`."""
    head = _skip_open_head(data, syn)
    if prev is not None:
        got = _continue(data, head, prev)
        if got is not None:
            _lex_from(got[0], syn, got[1])
            return got[0]
    lx = Lexed(data, head, [], [], [] if head == 0 else [(head, head, True)], [])
    if head == 0:
        lx.lines.append(0)
        lx.inds.append(INDENT.match(data, 0).end())
    _lex_from(lx, syn, head)
    return lx


def _continue(data: bytes, head: int, prev: Lexed) -> tuple[Lexed, int] | None:
    """``prev`` moved onto ``data`` when ``data`` is ``prev.data`` less whole lines at the start plus more
    at the end, and where lexing resumes (None: start over)."""
    old = prev.data
    if head != prev.head or len(old) < 64:
        return None
    if data.startswith(old):
        k = 0
    else:
        k = old.find(data[:64], 1)
        if k <= 0 or head != 0 or not data.startswith(old[k:]):
            return None
        at = bisect.bisect_left(prev.lines, k)
        if at >= len(prev.lines) or prev.lines[at] != k:
            return None  # the old scan was not at a clean line start there
    end = len(old) - k
    keep = bisect.bisect_left(prev.lines, k)
    lines = [x - k for x in prev.lines[keep:]]
    inds = [x - k for x in prev.inds[keep:]]
    if lines and lines[-1] == end:  # the old last line start: its indentation may go on
        inds[-1] = INDENT.match(data, end).end()
    cuts = [(a - k, b - k, c) for a, b, c in prev.cuts if a >= k]
    resume = prev.open_at - k if prev.open_at >= 0 else end
    meta = {x - k: v for x, v in prev.meta.items() if k <= x < len(old) - 1}
    return Lexed(data, head, lines, inds, cuts, list(prev.stack), meta=meta), resume


def _lex_from(lx: Lexed, syn: Syntax, pos: int) -> None:
    data = lx.data
    stack, lines, inds, cuts = lx.stack, lx.lines, lx.inds, lx.cuts
    n = len(data)
    last = None
    restart = True
    while restart:
        restart = False
        for m in syn.tokens.finditer(data, pos):
            at = m.start()
            c = data[at]
            if c == 10:  # newline and indentation
                if not stack:
                    lines.append(at + 1)
                    inds.append(m.end())
            elif c in _OPEN:
                if m.end() == at + 1:  # else a flat pair
                    stack.append(c)
            elif c in _CLOSING:
                if stack:
                    stack.pop()
                    continue
                nl = data.find(b"\n", at)
                pos = n if nl < 0 else nl + 1
                cuts.append((at, pos, c != 125))  # after ) or ]: the head was inside a call
                lines.append(pos)
                inds.append(INDENT.match(data, pos).end())
                last, restart = None, pos < n
                break
            else:
                last = m
    lx.closer, lx.open_at = b"", -1
    if last is not None and last.end() == n:
        lx.closer = _unterminated(last.group())
        if lx.closer:
            lx.open_at = last.start()


_OPEN = frozenset(b"([{")
_CLOSING = frozenset(b")]}")
_RAW = re.compile(rb'b?r(#*)"')


def _unterminated(tok: bytes) -> bytes:
    """The closer a string or comment running to the end of the data still needs (b"" if closed)."""
    for opener, close in ((b'"""', b'"""'), (b"'''", b"'''"), (b"/*", b"*/"), (b"`", b"`")):
        if tok.startswith(opener):
            done = len(tok) >= len(opener) + len(close) and tok.endswith(close)
            return b"" if done else close
    raw = _RAW.match(tok)
    if raw:
        close = b'"' + raw.group(1)
        return b"" if len(tok) > raw.end() and tok.endswith(close) else close
    if tok.startswith(b'"') and b"\n" in tok:  # a Rust string spanning lines
        return b"" if len(tok) > 1 and tok.endswith(b'"') and not tok.endswith(b'\\"') else b'"'
    return b""


def _skip_open_head(data: bytes, syn: Syntax) -> int:
    """Where code starts when the context opens inside a block comment or a docstring (else 0)."""
    if syn.block_comments:
        close, open_ = data.find(b"*/"), data.find(b"/*")
        if close >= 0 and (open_ < 0 or close < open_):
            return close + 2
    if syn.indented:
        for quote in (b'"""', b"'''"):
            first = data.find(quote)
            if first >= 0 and _closes_docstring(data, first):
                return first + 3
    return 0


def _closes_docstring(data: bytes, at: int) -> bool:
    """Whether the first triple quote of a context closes a docstring the window opened inside."""
    line_start = data.rfind(b"\n", 0, at) + 1
    before = data[line_start:at].strip()
    if before:
        stem = before.rstrip(b"rRbBuUfF")
        prefixed = len(stem) < len(before) and (not stem or not stem[-1:].isalnum())
        return not prefixed and not before.endswith((b"=", b"(", b",", b"[", b"{", b":"))
    line_end = data.find(b"\n", at)
    if data[at + 3 : line_end if line_end >= 0 else len(data)].strip():
        return False  # """Summary on the opening line
    prev = data[:line_start].rstrip()
    return bool(prev) and not prev.endswith(b":")


def _indent_cuts(data: bytes, lx: Lexed, cuts: list[tuple[int, int, bool]]) -> tuple[list, int]:
    """Add a cut before each logical line indented less than every logical line before it (Python)."""
    out = list(cuts)
    floor = None
    last_indent = 0
    cut_at = {c[1] for c in cuts}
    n = len(data)
    for ls, ind in zip(lx.lines, lx.inds):
        if ind >= n or data[ind] in b"\n#":
            continue
        indent = ind - ls
        last_indent = indent
        if ls in cut_at:
            floor = indent
        elif floor is None or indent < floor:
            if floor is not None:
                out.append((ls, ls, False))
            floor = indent
    out.sort()
    return out, last_indent


def _segments(data: bytes, lx: Lexed, cuts: list, closers: bytes, syn: Syntax) -> list[Segment]:
    bounds = [(0, None)] + [(nxt, (end, bracket)) for end, nxt, bracket in cuts]
    segs = []
    for i, (start, _) in enumerate(bounds):
        nxt = bounds[i + 1][1] if i + 1 < len(bounds) else None
        end = nxt[0] if nxt else len(data)
        if start >= end:
            continue
        if nxt and nxt[1]:  # ended by an unmatched ) or ]: a continuation, not code to parse
            segs.append(Segment(start, end, end, parse=False))
            continue
        safe = start if i > 0 else _safe_start(data, lx, start, end, syn)
        segs.append(Segment(start, safe, end, b"" if nxt else closers, safe < end))
    return segs


def _safe_start(data: bytes, lx: Lexed, start: int, end: int, syn: Syntax) -> int:
    """The first line of the opening segment where a statement surely starts."""
    lines, inds = lx.lines, lx.inds
    lo, hi = bisect.bisect_left(lines, start), bisect.bisect_left(lines, end)
    base = None
    if syn.indented:
        base = min((inds[j] - lines[j] for j in range(lo, hi) if inds[j] < end and data[inds[j]] not in b"\n#"), default=0)
    prev_ok = False
    meta = lx.meta
    for j in range(lo, hi):  # mostly a few lines: no list of rows
        ls, ind = lines[j], inds[j]
        if ind >= end or data[ind] == 10:
            prev_ok = True
            continue
        flags = meta.get(ls)
        if flags is None:
            head = data[ind : ind + 12]
            line_end = data.find(b"\n", ind)
            text = data[ind : line_end if 0 <= line_end < end else end].rstrip()
            flags = (_DECLARATION.match(head) is not None, _CONTINUATION.match(head) is not None,
                     _ends_statement(text, syn))
            if 0 <= line_end < end:  # a whole line: the same in the next context of the file
                meta[ls] = flags
        ok = (ls == 0 and not data[:1].isspace()) or prev_ok or flags[0]
        if base is not None and ind - ls != base:
            ok = False
        if ok and not flags[1]:
            return ls
        prev_ok = flags[2]
    return end


def _ends_statement(line: bytes, syn: Syntax) -> bool:
    if not line or line.startswith((b"//", b"#", b"*", b"/*")):
        return True
    last = line[-1:]
    if syn.indented:
        return last != b"\\" and last != b","
    return last in b";{}" or (last.isalnum() or last in b")\"'`]") and syn.pads[-1][0] != b""
