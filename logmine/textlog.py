"""Free-text logs as users have them: find the header of a line-oriented log, cut each line into
its header fields and its message, and keep a multi-line entry (a stack trace, a wrapped list)
with the line that opened it.

The header is found per file, not configured (:func:`detect_header`): the first lines are read
as a sequence of typed slots -- a timestamp of one of several shapes, a ``[thread]``, a level
word from a fixed set, a pid, a host, a logger or category -- with the separators between them
(``" - "``, ``" -- "``, ``": "``, ``","``, ``"|"``). The slot sequence most of those lines share
is the file's :class:`Header`, compiled to one regex, and a sequence counts only the lines its
regex parses whole (a grammar that could not read its own lines would make a file one entry).
It covers idea.log, log4j/logback layouts, Python logging, syslog, the JVM's unified logging,
Ray's logs and the like, without naming any of them. java.util.logging's default layout puts
the level and message on the entry's second line (``INFO: Started``): such a file's header is
the first line's and the level line completes the entry (:attr:`Header.level_line`).

:func:`entries` then reads every line: a line the header parses (or that starts with the
header's timestamp) opens an :class:`Entry`; any other line -- ``at ...`` frames, ``Caused by:``,
``... 9 more``, the text of a multi-line message, blank lines -- continues the open one. Lines
before the first header line form one entry without header fields. A file without a header
(no typed slot on most of its lines) is one entry per line, except that stack-trace lines
still join the line before them.

An entry's exception type (:func:`exception_type`) is the first
``pkg.Name(Exception|Error|Throwable|...)`` that opens one of its lines (after an optional
``Caused by:``), head message included: in a Java trace the exception that was logged (the
outermost), in a Python traceback the one raised last (its type closes the trace). When no
line has such a name, the first ``Caused by:`` names it.

Pure: values in, values out (no file is opened here).
"""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from logmine.jsonlog import JsonHeader, json_header
from logmine.masking import MONTH
from logmine.timestamps import TIMESTAMPS

__all__ = ["FIELDS", "Entry", "Header", "detect_header", "entries", "exception_type"]

LEVELS = ("TRACE", "DEBUG", "FINEST", "FINER", "FINE", "CONFIG", "INFO", "INFORMATION", "NOTICE", "WARN", "WARNING",
          "ERROR", "ERR", "SEVERE", "FATAL", "CRITICAL", "CRIT", "ALERT", "EMERG", "EMERGENCY", "VERBOSE", "PANIC")
"""Level words a header slot may hold (upper, lower or capitalised); single letters V D I W E F A
only in a header with a pid or thread slot before them (Android's logcat)."""
_UPPER_LEVELS = ("LOG",)
"""Level words read in upper case only (PostgreSQL's ``LOG:``; ``log`` opens messages)."""
_LEVEL_WORD = "|".join(sorted({w for lv in LEVELS for w in (lv, lv.lower(), lv.capitalize())} | set(_UPPER_LEVELS), key=len, reverse=True))
_LEVEL_RX = rf"(?:{_LEVEL_WORD})(?=[\s:\],|]|$)"
_LETTER_LEVEL_RX = r"[VDIWEFA](?=\s)"

_TS = [re.compile(rx) for rx in TIMESTAMPS]

LAYOUTS = {
    # glog / klog (Kubernetes, many Go and C++ programs): I1206 21:55:00.123456   12345 server.go:123] message
    "glog": r"(?P<level>[IWEF])(?P<ts>\d{4} \d{2}:\d{2}:\d{2}\.\d{6})\s+(?P<tid>\d+) (?P<logger>[^\s\]]+:\d+)\]",
    # Redis: 1234:M 06 Dec 2026 21:55:00.123 * Ready to accept connections (the mark is the level: . - * #)
    "redis": rf"(?P<pid>\d+):(?P<context>[XCSM]) (?P<ts>\d{{1,2}} {MONTH} \d{{4}} \d{{2}}:\d{{2}}:\d{{2}}\.\d{{3}}) (?P<level>[.*#-])",
    # RFC 5424 syslog: <34>1 2026-12-06T21:55:00.003Z host app procid msgid [structured data] message
    "rfc5424": (rf"<(?P<context>\d{{1,3}})>1 (?P<ts>{TIMESTAMPS[0]}|-) (?P<host>\S+) (?P<logger>\S+) (?P<pid>\S+) \S+"
                r" (?:-|(?:\[(?:[^\]\\]|\\.)*\])+)"),
}
"""Headers of one fixed shape that no slot sequence reads (the level glued to the date, a
priority before the version): each is one slot of its own."""
_LAYOUT_RX = {name: re.compile(rx + r"(?=\s|$)") for name, rx in LAYOUTS.items()}

FIELDS = ("ts", "thread", "level", "logger", "pid", "tid", "host", "context")
"""Header fields an entry may carry (each is None where the file's header has no such slot)."""

_WS = re.compile(r"\s*")
_BRACKET = re.compile(r"\[((?:[^\[\]]|\[[^\[\]]*\])*)\]")
_COLON_LOGGER = re.compile(r"([^\s\[\]:]+)(?:\[(\d+)\])?:(?=\s|$)")
_LOGGER_WORD = r"[\w.$#/<>@-]+"
"""A logger's name as one word (``c.e.App``, ``#c.i.o.Foo``, ``utils.py``)."""
_DASH_NAME = r"\S(?:[^\n]{0,80}?\S)?"
_BEFORE_DASH = r"(?=\s+-{1,3}(?:\s|$))"
"""A logger's name of up to 80 characters before `` - `` (or `` -- ``)."""
_DASH_LOGGER = re.compile(f"({_DASH_NAME}){_BEFORE_DASH}")
_WORD_LOGGER = re.compile(_LOGGER_WORD + r"(?=\s{2,}|\s+\[)")
_WORD_DASH_LOGGER = re.compile(_LOGGER_WORD + _BEFORE_DASH)
_PIPE_FIELD = re.compile(r"[^\s|]+(?=\|)")
_IN_LOGGER_RX = r"in\s+(?P<logger>[\w.$-]+):(?=\s|$)"
_IN_LOGGER = re.compile(_IN_LOGGER_RX)
_LOGGER_BEFORE_LEVEL = re.compile(rf"{_LOGGER_WORD}(?=\s+{_LEVEL_RX})")
_SPACED_COLON_LOGGER = re.compile(rf"({_LOGGER_WORD})\s+:(?=\s)")
_WORD = re.compile(r"\S+")
_LEVEL = re.compile(_LEVEL_RX)
_LETTER_LEVEL = re.compile(_LETTER_LEVEL_RX)
_NUM = re.compile(r"\d{1,9}(?=\s)")
_UPTIME = re.compile(r"\d+(?:\.\d+)?(?:s|ms)")
_NAME_PID_TID = re.compile(r"[A-Za-z_][\w.]* \d{1,9} \d{1,20} ")
"""A module's name, a pid and a thread id before the message."""
_DOTTED_NAME = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::)[A-Za-z_$][\w$-]*)+(?::\d+)?")
_BRACKET_FIELDS = (rf"(?:\s+(?P<level>{_LEVEL_RX}|[VDIWEFA](?=[\s\]])))?(?:\s+(?P<pid>\d{{1,9}}))?(?:\s+(?P<tid>\d{{1,19}}))?"
                   r"(?:\s+(?P<logger>[^\s\[\]]+))?\s*")
"""What a bracket may hold after its timestamp: Rust's env_logger ``[ts LEVEL target]``, Ray's ``[ts I pid tid]``."""
_BRACKET_REST = re.compile(_BRACKET_FIELDS)
_PY_DEFAULT = re.compile(rf"({_LEVEL_WORD}):([^\s:]*):")
_SEPARATORS = {"-": re.compile(r"-(?=\s|$)"), "--": re.compile(r"-{2,3}(?=\s)"), "|": re.compile(r"\|"), ",": re.compile(r","),
               ":": re.compile(r":(?=\s|$)")}
MAX_SLOTS = 10


def _ts_at(line: str, pos: int) -> tuple[int, int] | None:
    """``(shape, end)`` of the longest timestamp starting at ``pos``."""
    best = None
    for k, rx in enumerate(_TS):
        m = rx.match(line, pos)
        if m and (best is None or m.end() > best[1]):
            best = (k, m.end())
    return best


def _is_ts(text: str) -> int | None:
    for k, rx in enumerate(_TS):
        if rx.fullmatch(text.strip()):
            return k
    return None


def _kind(slot: str) -> str:
    """What a slot holds: ``ts``, ``thread``, ``level``, ``logger``, ``context``, ``num``, ``host`` or a separator."""
    if "ts@" in slot:
        return "ts"
    if slot.startswith("logger"):
        return "logger"
    return slot.strip("[]")


def scan(line: str) -> tuple[str, ...]:
    """The header slots ``line`` opens with, greedily (see the module doc); ``()`` when none."""
    if _PY_DEFAULT.match(line):
        return ("level", ":", "logger:raw")
    for name, rx in _LAYOUT_RX.items():
        if rx.match(line):
            return (name,)
    slots: list[str] = []
    have: set[str] = set()
    pos = 0
    while len(slots) < MAX_SLOTS:
        start = _WS.match(line, pos).end()  # type: ignore[union-attr]
        if start >= len(line) or (not slots and start):
            break
        slot, pos = _next_slot(line, start, slots, have)
        if slot is None:
            break
        slots.append(slot)
        have.add(_kind(slot))
        if slot.endswith(" +]"):  # the bracket holds them: none comes after
            have |= {"level", "logger", "fields"}
        if slot in ("logger:", "logger :"):
            break
    while slots and slots[-1] in ("|", ",") and not (slots[-1] == "|" and "logger|" in slots):
        slots.pop()  # a separator opens a slot; in a layout of pipe-delimited fields the last pipe opens the message
    return tuple(slots)


def _next_slot(line: str, pos: int, slots: list[str], have: set[str]) -> tuple[str | None, int]:
    """The slot at ``pos`` given the slots before it, and where it ends; ``(None, pos)``: the message starts."""
    last = slots[-1] if slots else ""
    after_sep = last in _SEPARATORS
    for sep, rx in _SEPARATORS.items():
        m = rx.match(line, pos)
        if m and last != sep:
            return sep, m.end()
    if "ts" not in have and (ts := _ts_at(line, pos)) is not None:
        return f"ts@{ts[0]}", ts[1]
    if line.startswith("[", pos):
        return _bracket_slot(line, pos, last, have)
    if "level" not in have:
        if m := _LEVEL.match(line, pos):
            return "level", m.end()
        if have & {"num", "thread"} and (m := _LETTER_LEVEL.match(line, pos)):
            return "level", m.end()
    if last == "|" and (m := _PIPE_FIELD.match(line, pos)):
        # a field between pipes (``ts|component|pid|message``): a number is a pid, a word the logger
        if m.group(0).isdigit() and slots.count("num") < 2:
            return "num", m.end()
        if not m.group(0).isdigit() and "logger" not in have:
            return "logger|", m.end()
    if "logger" in have:
        return None, pos
    if slots.count("num") < 2 and "fields" not in have and not after_sep and (m := _NUM.match(line, pos)):
        return "num", m.end()
    if "ts" in have and "level" not in have and (m := _LOGGER_BEFORE_LEVEL.match(line, pos)):
        return "logger", m.end()  # Python's ``%(asctime)s %(name)-12s %(levelname)-8s %(message)s``
    if (m := _COLON_LOGGER.match(line, pos)) and _is_ts(m.group(1)) is None:
        return "logger:", m.end()
    if have & {"level", "thread"} and (m := _SPACED_COLON_LOGGER.match(line, pos)):
        return "logger :", m.end()
    if (after_sep or have & {"level", "thread"}) and (m := _DASH_LOGGER.match(line, pos)):
        return "logger-", m.end()
    if "ts" in have and (m := _WORD_DASH_LOGGER.match(line, pos)):
        return "logger-", m.end()  # one word between the timestamp and `` - ``: ``%d %c - %m``, ``[ts] chrome.exe - ...``
    if "level" in have and (m := _WORD_LOGGER.match(line, pos)):
        return "logger", m.end()
    if last == "level" and (m := _IN_LOGGER.match(line, pos)):
        return "in logger:", m.end()  # Flask's ``[%(asctime)s] %(levelname)s in %(module)s: %(message)s``
    if "host" not in have and "level" not in have and (m := _WORD.match(line, pos)):
        rest = _WS.match(line, m.end()).end()  # type: ignore[union-attr]
        if (last.startswith("ts") and _COLON_LOGGER.match(line, rest)) or (not slots and _ts_at(line, rest)):
            return "host", m.end()
    return None, pos


def _bracket_slot(line: str, pos: int, last: str, have: set[str]) -> tuple[str | None, int]:
    m = _BRACKET.match(line, pos)
    if m is None:
        return None, pos
    inner = m.group(1).strip()
    if "level" not in have and _LEVEL.fullmatch(inner):
        return "[level]", m.end()
    if "ts" not in have and (k := _is_ts(inner)) is not None:
        return f"[ts@{k}]", m.end()
    if not have and (ts := _ts_at(inner, 0)) and _BRACKET_REST.fullmatch(inner, ts[1]):
        return f"[ts@{ts[0]} +]", m.end()  # the timestamp and more fields in one bracket: ``[ts LEVEL target]``
    if "logger" in have:
        return ("[context]", m.end()) if last == "logger" and "context" not in have else (None, pos)
    if last == "[level]":  # a bracket after a bracketed level: the category (the JVM's ``[info][gc,init]``)
        return "[logger]", m.end()
    if "context" not in have and _UPTIME.fullmatch(inner):  # the JVM's ``[0.009s]``: time since start, no thread
        return "[context]", m.end()
    if "thread" in have:
        return None, pos
    return "[thread]", m.end()


_FRAGMENTS = {
    "[thread]": r"\[\s*(?P<thread>(?:[^\[\]]|\[[^\[\]]*\])*?)\s*\]",
    "[context]": r"\[\s*(?P<context>(?:[^\[\]]|\[[^\[\]]*\])*?)\s*\]",
    "[logger]": r"\[\s*(?P<logger>[^\[\]]*?)\s*\]",
    "level": rf"(?P<level>{_LEVEL_RX}|{_LETTER_LEVEL_RX})",
    "[level]": rf"\[\s*(?P<level>{_LEVEL_RX})\s*\]",
    "host": r"(?P<host>\S+)",
    "logger:": r"(?P<logger>[^\s\[\]:]+)(?:\[(?P<pid2>\d+)\])?:(?=\s|$)",
    "logger:raw": r"(?P<logger>[^\s:]*):",
    "logger-": f"(?P<logger>{_DASH_NAME}){_BEFORE_DASH}",
    "logger": f"(?P<logger>{_LOGGER_WORD})",
    "logger|": r"(?P<logger>[^\s|]+)",
    "in logger:": _IN_LOGGER_RX,
    "logger :": rf"(?P<logger>{_LOGGER_WORD})\s+:(?=\s)",
    "-": r"-(?=\s|$)",
    "--": r"-{2,3}(?=\s)",
    "|": r"\|",
    ",": r",",
    ":": r":",
}


@dataclass(frozen=True)
class Header:
    """A file's header grammar: its slots in order, and what share of the sampled lines it parsed."""

    slots: tuple[str, ...]
    coverage: float = 1.0
    """Share of the sampled lines that opened with exactly these slots."""
    level_line: bool = False
    """The level opens the entry's next line (``INFO: message``) and the rest of the first line
    names the logger: java.util.logging's default two-line layout."""
    pattern: re.Pattern[str] = field(init=False, repr=False, compare=False)
    ts_pattern: re.Pattern[str] | None = field(init=False, repr=False, compare=False)
    """What a line opens with when it opens an entry the whole grammar does not parse: the timestamp
    (or the level, for a grammar without one)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "pattern", re.compile(_regex(self.slots)))
        first = self.slots[0] if self.slots else ""
        lead = None
        if first.endswith(" +]"):
            lead = re.compile(rf"\[\s*{_ts_fragment(first)}[^\]]*\]")
        elif "ts@" in first:
            lead = re.compile(rf"\[\s*{_ts_fragment(first)}\s*\]" if first.startswith("[") else _ts_fragment(first) + r"(?=\s|$|[,|])")
        elif first == "level":  # a grammar of the level first (``INFO:     Started``): a line that opens with a level opens an entry
            lead = re.compile(rf"(?P<level>{_LEVEL_RX}):?(?=\s)")
        object.__setattr__(self, "ts_pattern", lead)

    @property
    def fields(self) -> tuple[str, ...]:
        """The header fields this grammar fills, in :data:`FIELDS` order."""
        names = set(self.pattern.groupindex)
        if "pid2" in names:
            names.add("pid")
        if self.level_line:
            names |= {"level", "logger"}
        return tuple(f for f in FIELDS if f in names)

    @property
    def name(self) -> str:
        """The grammar as text, e.g. ``ts [thread] level - logger -``."""
        return " ".join("ts" if "ts@" in s and not s.startswith("[") else "[ts ...]" if s.endswith(" +]") else "[ts]" if "ts@" in s
                        else s.replace(":raw", "")
                        for s in self.slots).replace("logger-", "logger").replace("logger|", "logger") + (" logger / level:" if self.level_line else "")

    def parse(self, line: str) -> dict[str, str | None] | None:
        """The header fields and ``message`` of a line that opens an entry, or None (a continuation).

        A line that the whole grammar does not parse but that opens with its timestamp opens an
        entry too, with the timestamp alone."""
        return self.match(line) or self.match_timestamp(line)

    def match_timestamp(self, line: str) -> dict[str, str | None] | None:
        """The fields of a line that opens with this grammar's first slot (its timestamp; its level when
        it opens with one): that field, the rest as message."""
        if self.ts_pattern is None or not (t := self.ts_pattern.match(line)):
            return None
        return {**dict.fromkeys(self.fields), **t.groupdict(), "message": line[t.end():].strip()}

    def match(self, line: str) -> dict[str, str | None] | None:
        """The header fields and ``message`` of a line the whole grammar parses, or None."""
        m = self.pattern.match(line)
        if m is None:
            return None
        groups = m.groupdict()
        out: dict[str, str | None] = {f: groups.get(f) for f in self.fields}
        if groups.get("pid2") is not None and out.get("pid") is None:
            out["pid"] = groups["pid2"]
        out["message"] = line[m.end():].strip()
        return out


def _ts_fragment(slot: str) -> str:
    k = int(re.search(r"@(\d+)", slot).group(1))  # type: ignore[union-attr]
    return f"(?P<ts>{TIMESTAMPS[k]})"


def _regex(slots: Sequence[str]) -> str:
    parts = []
    nums = 0
    for i, slot in enumerate(slots):
        if slot in LAYOUTS:
            frag = LAYOUTS[slot]
        elif "ts@" in slot and slot.endswith(" +]"):
            frag = rf"\[\s*{_ts_fragment(slot[:-3])}{_BRACKET_FIELDS}\]"
        elif "ts@" in slot:
            frag = _ts_fragment(slot)
            frag = rf"\[\s*{frag}\s*\]" if slot.startswith("[") else frag
        elif slot == "num":
            frag = r"(?P<pid>\d+)" if nums == 0 else r"(?P<tid>\d+)"
            nums += 1
        else:
            frag = _FRAGMENTS[slot]
        if i:
            tight = slot in (",", ":", "|", "logger:raw") or slots[i - 1] in (":", "|") or slot.startswith("[") or slots[i - 1].startswith("[")
            parts.append(r"\s*" if tight else r"\s+")
        parts.append(frag)
    body = "".join(parts)
    if nums:  # a syslog-style ``proc[pid]:`` after a pid slot: the first one is the pid
        body = body.replace("(?P<pid2>", "(?:")
    end = r"\s*" if slots and (slots[-1] in (":", "|", "logger:raw") or slots[-1].startswith("[")) else r"(?:\s+|$)"
    return "^" + body + end


def detect_header(lines: Iterable[str], sample: int = 2000, min_share: float = 0.3) -> Header | JsonHeader | None:
    """The header grammar most of the first ``sample`` non-blank lines open with, or None.

    A grammar needs a timestamp or a level slot; it is kept when it opens at least ``min_share``
    of the lines that open with any slots, and at least 2 lines (1 in a one-line file). A shape
    counts only the lines its compiled grammar parses whole: a grammar that would not read the lines
    it was found on never becomes the file's header (each line would then continue the one before).
    A log of JSON lines holding a message key has the keys of its fields as its header
    (:func:`logmine.jsonlog.json_header`).
    """
    head = list(itertools.islice((line for line in lines if line.strip()), sample))
    if any(line.lstrip().startswith("{") for line in head[:5]) and (keyed := json_header(head, min_share)) is not None:
        return keyed
    shapes: dict[tuple[str, ...], list[str]] = {}
    before_level: Counter[tuple[str, ...]] = Counter()  # shapes of the lines a ``LEVEL: message`` line follows
    seen = 0
    last: tuple[str, ...] = ()
    for line in head:
        seen += 1
        slots = scan(line)
        if any("ts@" in s or "level" in s or s in LAYOUTS for s in slots):
            shapes.setdefault(slots, []).append(line)
        if slots == _LEVEL_LINE_SHAPE and "level" not in last:
            before_level[last] += 1
        last = slots
    if not shapes:
        return None
    total = sum(len(found) for found in shapes.values())
    parsed: Counter[tuple[str, ...]] = Counter()
    dated: Counter[tuple[str, ...]] = Counter()  # lines the grammar reads at least the timestamp of
    grammars: dict[tuple[str, ...], Header] = {}
    for slots, found in sorted(shapes.items(), key=lambda kv: (-len(kv[1]), kv[0]))[:_SHAPES_TRIED]:
        grammar = grammars[slots] = Header(slots)
        parsed[slots] = sum(grammar.match(line) is not None for line in found)
        dated[slots] = sum(grammar.parse(line) is not None for line in found)
    best, count = max(parsed.items(), key=lambda kv: (kv[1], len(kv[0]), kv[0]))
    if count < min_share * total:  # no grammar reads its lines whole: one that opens them with its timestamp still cuts entries
        best, count = max(dated.items(), key=lambda kv: (kv[1], len(kv[0]), kv[0]))
    shape, pairs = max(before_level.items(), key=lambda kv: (kv[1], kv[0]), default=((), 0))
    if shape and _kind(shape[0]) == "ts" and best in (shape, _LEVEL_LINE_SHAPE) and 2 * pairs >= parsed[best]:
        # most ``LEVEL: message`` lines follow a line of a timestamp, or the other way round: one entry of two lines
        return Header(shape, round(pairs / seen, 4), level_line=True)
    if count < min(2, seen) or count < min_share * total:
        return None
    closing = best[-1] == "level" or ("level" in best and (best[-1] == "[thread]" or (_kind(best[-1]) == "ts" and not best[-1].startswith("["))))
    found = shapes[best]
    if closing and "logger" not in grammars[best].fields and (named := _logger_after_level(grammars[best], found)):
        best, count = named
    if "[thread]" in best:
        grammar = Header(best)
        if _is_clock([m["thread"] for line in found if (m := grammar.match(line))]):
            best = tuple("[context]" if s == "[thread]" else s for s in best)
    return Header(best, round(count / seen, 4))


def _is_clock(values: list[str | None]) -> bool:
    """Whether a bracketed field's values are a clock, not threads: whole numbers that take several values
    and grow, line after line, with their steps down (records written a little out of order) adding up to a
    tenth of their steps up at most -- idea.log's ``[  14002]``, milliseconds since the log was created.
    Thread ids go down as far as they go up."""
    if len(values) < 5 or not all(v is not None and v.isdigit() for v in values):
        return False
    numbers = [int(v) for v in values]  # type: ignore[arg-type]
    steps = [b - a for a, b in zip(numbers, numbers[1:])]
    up, down = sum(d for d in steps if d > 0), -sum(d for d in steps if d < 0)
    return len(set(numbers)) >= 3 and 10 * down <= up


def _logger_after_level(grammar: Header, lines: list[str]) -> tuple[tuple[str, ...], int] | None:
    """The grammar with a logger after its closing level (or timestamp or thread, after a level), when the
    word after it is a dotted name on two thirds of the lines or more (``%(asctime)s %(levelname)s %(name)s %(message)s``: no
    delimiter tells the logger from the message, but a message seldom opens with ``app.db``); or with a logger,
    pid and thread id, when two thirds of the lines go on with a name and two numbers."""
    slots = grammar.slots
    messages = [m["message"] for line in lines if (m := grammar.match(line))]
    if len(messages) < 5:
        return None
    if 3 * sum(bool(_DOTTED_NAME.fullmatch(w.split(" ", 1)[0])) for w in messages) >= 2 * len(messages):
        named: tuple[str, ...] = (*slots, "logger")
    elif 3 * sum(bool(_NAME_PID_TID.match(w)) for w in messages) >= 2 * len(messages):
        named = (*slots, "logger", "num", "num")  # Django's ``{levelname} {asctime} {module} {process:d} {thread:d}``
    else:
        return None
    parsed = sum(Header(named).match(line) is not None for line in lines)
    return (named, parsed) if 3 * parsed >= 2 * len(messages) else None


_SHAPES_TRIED = 8
"""Most frequent slot shapes whose grammars are compiled and tried on their lines."""
_LEVEL_LINE_SHAPE = ("level", ":")
_LEVEL_LINE = re.compile(rf"(?P<level>{_LEVEL_RX}):\s+")


@dataclass
class Entry:
    """One log entry: the line that opened it, its header fields and message, and the lines that continued it."""

    line: int
    """1-based number of the entry's first physical line."""
    fields: dict[str, str | None]
    """Header fields (:attr:`Header.fields`; empty for lines before the first header line or a file without one)."""
    message: str
    """The message of the first line (the header cut off): what templates are mined from."""
    continuation: list[str] = field(default_factory=list)
    """The physical lines after the head that belong to the entry, as they are."""
    head_lines: int = 1
    """Physical lines the head spans: 2 where the level and message open the next line (:attr:`Header.level_line`)."""
    inner: list[str] = field(default_factory=list)
    """Lines of text inside the head line, no physical lines: a JSON line's message after its first line, its stack trace."""

    @property
    def lines(self) -> int:
        return self.head_lines + len(self.continuation)

    @property
    def text(self) -> str:
        """The whole message: the first line's, its inner lines and the continuation lines, newline-joined."""
        return "\n".join([self.message, *self.inner, *self.continuation]) if self.continuation or self.inner else self.message

    @property
    def exception(self) -> str | None:
        return exception_type([self.message, *self.inner, *self.continuation])

    @property
    def has_header(self) -> bool:
        return bool(self.fields)


_FRAME = re.compile(r"\s+at\s|\s*\.\.\. \d+ (?:more|common frames omitted)|\s*Caused by:|\s*Suppressed:|\s+File \"|Traceback \(most recent call last\)")


def is_continuation(line: str) -> bool:
    """A line that never opens an entry even in a log without header: a stack frame and its kin, or a blank line."""
    return not line.strip() or bool(_FRAME.match(line))


def entries(lines: Iterable[str], header: Header | JsonHeader | None) -> Iterator[Entry]:
    """The entries of ``lines`` (see the module doc); every line belongs to exactly one entry."""
    current: Entry | None = None
    others: dict[tuple[str, ...], Header] = {}
    for number, line in enumerate(lines, start=1):
        fields = header.match(line) if header is not None else None
        if fields is None and header is not None and line[:1].strip():
            fields = _other_header(line, others) or header.match_timestamp(line)
        if fields is None:
            if header is None and not is_continuation(line):
                fields = {"message": line.strip()}
            elif current is None:  # before the first header line: they make one entry without header fields
                current = Entry(number, {}, line.strip())
                continue
            elif header is not None and header.level_line and not current.continuation and current.fields.get("level") is None \
                    and (m := _LEVEL_LINE.match(line)):
                current.fields.update(level=m.group("level"), logger=current.message or None)
                current.message = line[m.end():].strip()
                current.head_lines += 1
                continue
            else:
                current.continuation.append(line)
                continue
        if current is not None:
            yield current
        message, *inner = (fields.pop("message") or "").split("\n")  # more than one line: a JSON line's message
        current = Entry(number, fields, message, inner=inner)
    if current is not None:
        yield current


def _other_header(line: str, others: dict[tuple[str, ...], Header]) -> dict[str, str | None] | None:
    """A line the file's header does not parse but that opens with a timestamp of its own (another
    writer's lines in the same file, a label before the timestamp): it opens an entry too."""
    slots = scan(line)
    if not any(_kind(s) == "ts" for s in slots):
        return None
    if slots not in others:
        if len(others) >= 64:
            others.clear()
        others[slots] = Header(slots, 0.0)
    return others[slots].match(line)


_EXCEPTION = re.compile(
    r"\s*(?:Caused by:\s*|Suppressed:\s*|Exception in thread \"[^\"]*\"\s+)?"
    r"((?:[A-Za-z_$][\w$]*\.)*[A-Za-z_$][\w$]*(?:Exception|Error|Throwable|Warning|Interrupt|Exit))(?::\s|:?\s*$)"
)
_CAUSED_BY = re.compile(r"\s*Caused by:\s*([\w$.]+)")


def exception_type(lines: Iterable[str]) -> str | None:
    """The exception type an entry's lines carry (see the module doc), or None."""
    caused = None
    for line in lines:
        m = _EXCEPTION.match(line)
        if m:
            name = m.group(1)
            if "." in name or name.rsplit(".", 1)[-1] not in ("Exception", "Error", "Throwable", "Warning", "Interrupt", "Exit"):
                return name
        if caused is None and (c := _CAUSED_BY.match(line)):
            caused = c.group(1)
    return caused
