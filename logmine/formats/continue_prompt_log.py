"""Continue's prompt log: the text its ``LLMLogFormatter`` writes to ``~/.continue/logs/prompt.log``.

This is the only form of Continue's LLM interaction log on disk (the JSON items of
:mod:`logmine.formats.continue_llm` are handed to listeners in memory). Every output line is
``<lane><stamp> <text>``: ``lane`` is one character telling interactions that overlap apart
(`` `` ``|`` ``&`` ``%`` ``#``, then ``X`` for all further ones); ``stamp`` is 10 characters,
the UTC time of day ``HH:MM:SS.d`` on an interaction's first line, ``+S.d`` (seconds since that
start, right-aligned) on the first line of each later item, blank on the lines that continue an
item. ``text`` is ``[Chat]`` / ``[Complete]`` / ``[Fim]``, ``Options: <JSON>``, ``Role: <role>``,
``Prompt:`` / ``Prefix:`` / ``Suffix:`` / ``Result:``, ``Tool call: <JSON>``, ``Success`` /
``Cancelled`` / ``Error`` and ``Prompt Tokens: N`` / ``Generated Tokens: N`` /
``Thinking Tokens: N``, or message text after a ``| `` marker (``. `` for a line the formatter
wrapped at 100 characters).

One interaction -> one ``llm_requests`` row, as :mod:`logmine.formats.continue_llm` makes from
the JSON items: kind ``chat`` (Chat: ``prompt`` = the start messages as ``role: text`` lines,
``completion`` = the assistant's text) or ``completion`` (Complete: ``prompt``; Fim: ``prefix``
and ``suffix``; ``completion`` = the result text); ``model`` from the options; ``ttft_ms`` = the
first output line's offset, ``token_times_ms`` / ``token_texts`` = each stamped output line's
offset and the text from it to the next stamp, ``total_ms`` = the end line's offset; token counts
from the end lines. attrs keep ``raw_action`` (``startChat`` / ``startComplete`` / ``startFim``),
``options``, ``end`` (success, cancel, error, or ``missing`` when the log stops first; such an
interaction is still a row), ``thinking_chunks`` and ``tool_calls`` (function names).
``request_id`` is left to ingest (``<file>:<line of [Chat]>:0``): the text carries no id.

What the text cannot give back, and how it is read:

- Times are 0.1 s steps, and an item whose text joined the line before it (a streamed chunk that
  did not start a line) shows no offset: its text counts with the line's stamped item.
- The stamp has no date. The last interaction is dated by the file's modification time (the day
  before, when its time of day is later than the file's), and each earlier one a day earlier per
  midnight crossed (a start earlier in the day than the one before it, by over 12 h); a gap of a
  whole day without interactions cannot be seen.
- At a wrap the formatter drops the whitespace it broke at; a wrapped line shorter than 100
  characters is joined back with one space, a full one (a break inside a word) with none.
- A line of an interaction's text that another interaction's line interrupted is joined back
  without a line break (the formatter closed it, the text had none); beyond five overlapping
  interactions every one shares lane ``X`` and they cannot be told apart.

Line accounting: every line of an interaction is accepted; a line that does not have the layout,
a line of a lane with no interaction (the log begins mid-interaction) or after its end, and a
bad number (an offset past a day, a token count that is not one) is a reject.
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any

from logmine.formats._base import (
    MAX_LATENCY_MS,
    MAX_LINE_BYTES,
    Batch,
    RecordError,
    attrs_json,
    iter_lines,
    reject,
)
from logmine.records import (
    REJECT_ABSURD_VALUE,
    REJECT_BAD_UTF8,
    REJECT_MISSING_FIELD,
    REJECT_OVERSIZED,
    REJECT_UNKNOWN_RECORD,
    REJECT_WRONG_TYPE,
)

NAME = "continue-prompt-log"
BATCH_LINES = 50_000
WRAP_WIDTH = 100
"""The formatter's wrap width: a wrapped line this long was broken inside a word."""

STARTS = {"[Chat]": ("startChat", "chat"), "[Complete]": ("startComplete", "completion"), "[Fim]": ("startFim", "completion")}
ENDS = {"Success": "success", "Cancelled": "cancel", "Error": "error"}
TOKEN_LINES = {"PromptTokens": "prompt_tokens", "GeneratedTokens": "completion_tokens", "ThinkingTokens": "thinking_tokens"}
_SECTIONS = {"Prompt:": "prompt", "Prefix:": "prefix", "Suffix:": "suffix"}
_LINE = re.compile(r"([ |&%#X])(.{10}) (.*)", re.DOTALL)
_CLOCK = re.compile(r"(\d\d):([0-5]\d):([0-5]\d)\.(\d)")
_OFFSET = re.compile(r" *\+(\d+)\.(\d)")
_SNIFF = re.compile(rb"[|&%#X]?\d\d:[0-5]\d:[0-5]\d\.\d \[(?:Chat|Complete|Fim)\]")
_DAY_MS = 24 * 3600 * 1000
_ROLLOVER_MS = _DAY_MS // 2
"""A start this much earlier in the day than the one before it is on the next day."""


def sniff(path: Path, head: list[bytes]) -> bool:
    """True when one of the first lines (stripped, as :func:`head_lines` gives them) starts an interaction."""
    return any(_SNIFF.fullmatch(line) for line in head)


def read(path: Path, written: datetime | None = None) -> Iterator[Batch]:
    """The file's rows; ``written`` dates the last interaction (default: the file's modification time)."""
    written = written or datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)
    parser = _Parser(_first_day(path, written))
    batch = Batch()
    for number, raw in iter_lines(path):
        batch.lines_read += 1
        try:
            batch.requests.extend(parser.line(_decode(raw), number))  # type: ignore[union-attr]
            batch.lines_accepted += 1
        except RecordError as err:
            batch.rejects.append(reject(number, raw, err))
        if batch.lines_read >= BATCH_LINES:
            yield batch
            batch = Batch()
    batch.requests.extend(parser.close())  # type: ignore[union-attr]
    yield batch


def _decode(raw: bytes) -> str:
    if len(raw) > MAX_LINE_BYTES:
        raise RecordError(REJECT_OVERSIZED, f"line of {len(raw)} bytes exceeds {MAX_LINE_BYTES}")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError(REJECT_BAD_UTF8, f"invalid UTF-8 at byte {exc.start}") from None


def _clock_ms(stamp: str) -> int | None:
    """Milliseconds into the day of an ``HH:MM:SS.d`` stamp, None when it is not one."""
    match = _CLOCK.fullmatch(stamp)
    if match is None or int(match[1]) > 23:
        return None
    hours, minutes, seconds, tenths = (int(g) for g in match.groups())
    return ((hours * 60 + minutes) * 60 + seconds) * 1000 + tenths * 100


def _first_day(path: Path, written: datetime) -> date:
    """The date of the file's first interaction: the last one's, less one day per midnight crossed."""
    starts = []
    for _, raw in iter_lines(path):
        if raw.endswith(b"]") and len(raw) > 12:
            clock = _clock_ms(raw[1:11].decode("ascii", "replace"))
            if clock is not None and raw[12:].decode("utf-8", "replace") in STARTS:
                starts.append(clock)
    if not starts:
        return written.date()
    rollovers = sum(1 for before, after in itertools.pairwise(starts) if before - after > _ROLLOVER_MS)
    written_ms = (written.hour * 3600 + written.minute * 60 + written.second) * 1000 + written.microsecond // 1000
    last_day = written.date() - timedelta(days=1 if starts[-1] > written_ms else 0)  # a stamp is never after the write
    return last_day - timedelta(days=rollovers)


@dataclass
class _Interaction:
    """One interaction's lines so far."""

    line: int
    raw_action: str
    kind: str
    ts: datetime
    offset: float | None = None
    """The offset of the item the current line belongs to; None for the start item."""
    pending: float | None = None
    """The offset of a stamped item whose first output text is still to come."""
    json_lines: list[str] | None = None
    """The lines of a multi-line JSON value (options, a tool call) being read."""
    json_key: str = ""
    options: Any = None
    messages: list[list[str]] = field(default_factory=list)
    """The start item's ``[role, text]`` messages (Chat)."""
    texts: dict[str, str | None] = field(default_factory=lambda: {"prompt": None, "prefix": None, "suffix": None})
    target: str | None = None
    """What text lines add to: ``message`` (the last start message), a key of ``texts``, ``output``, or None."""
    thinking: bool = False
    times: list[float] = field(default_factory=list)
    pieces: list[str] = field(default_factory=list)
    thinking_chunks: int = 0
    tool_calls: list[str] = field(default_factory=list)
    end: dict[str, Any] | None = None
    last_text: str | None = None
    """The text of this lane's last line when it was a text line of the current target."""

    def row(self) -> dict[str, Any]:
        options = self.options if isinstance(self.options, dict) else {}
        model = options.get("model")
        end = self.end or {}
        attrs = {
            "raw_action": self.raw_action, "options": self.options or None, "end": end.get("end", "missing"),
            "thinking_tokens": end.get("thinking_tokens"), "thinking_chunks": self.thinking_chunks or None,
            "tool_calls": self.tool_calls or None,
        }
        chunks = bool(self.times)
        chat = self.kind == "chat"
        return {
            "ts": self.ts, "kind": self.kind, "source_line": self.line, "model": model if isinstance(model, str) else None,
            "prompt": "\n".join(f"{role}: {text}" for role, text in self.messages) if chat else self.texts["prompt"],
            "prefix": self.texts["prefix"], "suffix": self.texts["suffix"],
            "completion": "".join(self.pieces) if chunks else None,
            "ttft_ms": self.times[0] if chunks else None,
            "token_times_ms": list(self.times) if chunks else None,
            "token_texts": list(self.pieces) if chunks else None,
            "total_ms": end.get("total_ms"),
            "prompt_tokens": end.get("prompt_tokens"), "completion_tokens": end.get("completion_tokens"),
            "attrs": attrs_json(attrs),
        }

    # -- one line's text --------------------------------------------------------------------------
    def content(self, rest: str, interleaved: bool) -> None:
        if self.json_lines is not None:
            self._json_line(rest)
        elif rest == "|" or rest.startswith(("| ", ". ")):
            self._text(rest[2:], wrapped=rest.startswith(". "), interleaved=interleaved)
            return
        elif self.offset is None:
            self._start_line(rest)
        else:
            self._item_line(rest)
        self.last_text = None

    def _text(self, text: str, wrapped: bool, interleaved: bool) -> None:
        if self.target is None:
            raise RecordError(REJECT_UNKNOWN_RECORD, "message text where the interaction has none (no Role, Prompt or Result line)")
        if self.last_text is None:
            joined = text
        elif wrapped:  # the formatter dropped the whitespace it broke at, unless it broke inside a word
            joined = ("" if len(self.last_text) >= WRAP_WIDTH else " ") + text
        else:  # a new line: a line break of the text, or another interaction's line closed this one
            joined = ("" if interleaved else "\n") + text
        self.last_text = text
        if self.target == "message":
            self.messages[-1][1] += joined
        elif self.target != "output":
            self.texts[self.target] = (self.texts[self.target] or "") + joined
        elif self.thinking:
            if self.pending is not None:
                self.thinking_chunks += 1
                self.pending = None
        else:
            if self.pending is not None:
                self.times.append(self.pending)
                self.pieces.append("")
                self.pending = None
            if not self.pieces:  # text of an item whose stamp another line took (cannot happen in the formatter's output)
                raise RecordError(REJECT_UNKNOWN_RECORD, "output text before any stamped line of the interaction")
            self.pieces[-1] += joined

    def _start_line(self, rest: str) -> None:
        if rest.startswith("Options: "):
            self._json_start("options", rest[len("Options: "):])
        elif self.kind == "chat" and rest.startswith("Role: "):
            self.messages.append([rest[len("Role: "):], ""])
            self.target = "message"
        elif self.kind == "chat" and rest.startswith("Tool call: "):
            self._json_start("tool_call", rest[len("Tool call: "):])
        elif self.kind == "chat" and rest.startswith(("Tool Call ID: ", "Image: ")):
            pass  # not message text (Continue's JSON items give the text parts only, too)
        elif self.kind != "chat" and rest in _SECTIONS and (rest != "Prompt:") == (self.raw_action == "startFim"):
            self.target = _SECTIONS[rest]
            self.texts[self.target] = ""
        else:
            raise RecordError(REJECT_UNKNOWN_RECORD, f"unexpected line in the start of a {self.raw_action[5:]} interaction: {rest[:60]!r}")

    def _item_line(self, rest: str) -> None:
        if self.end is not None:
            label, _, value = rest.partition(":")
            key = label.replace(" ", "")  # "Prompt Tokens"; the formatter's doc comment spells it "PromptTokens"
            if key not in TOKEN_LINES or not _:
                raise RecordError(REJECT_UNKNOWN_RECORD, f"a line of an interaction after its end line: {rest[:60]!r}")
            self.end[TOKEN_LINES[key]] = _count(value.strip(), label)
        elif rest in ENDS:
            self.end = {"end": ENDS[rest], "total_ms": self.offset}
            self.target = None
        elif rest.startswith("Role: ") or rest == "Result:":
            self.target, self.thinking = "output", rest == "Role: thinking"
        elif rest.startswith("Tool call: "):
            self._json_start("tool_call", rest[len("Tool call: "):])
        elif not rest.startswith(("Redacted Thinking: ", "Signature: ", "Image: ", "Tool Call ID: ")):
            raise RecordError(REJECT_UNKNOWN_RECORD, f"unexpected line in a {self.raw_action[5:]} interaction: {rest[:60]!r}")

    def _json_start(self, key: str, text: str) -> None:
        self.json_key, self.json_lines = key, [text]
        if text.strip() in {"{}", "[]", "null"} or not text.rstrip().endswith(("{", "[")):
            self._json_end()

    def _json_line(self, rest: str) -> None:
        self.json_lines.append(rest)  # type: ignore[union-attr]
        if rest in {"}", "]"}:  # JSON.stringify(value, undefined, 2) closes the top level at column 0
            self._json_end()

    def _json_end(self) -> None:
        text = "\n".join(self.json_lines or [])
        self.json_lines = None
        try:
            value = json.loads(text)
        except ValueError:
            value = text
        if self.json_key == "options":
            self.options = value
        elif isinstance(value, dict):
            function = value.get("function")
            name = function.get("name") if isinstance(function, dict) else None
            if isinstance(name, str):
                self.tool_calls.append(name)


def _count(text: str, key: str) -> int | None:
    if text in {"undefined", "null", ""}:
        return None
    if not text.isdigit():
        raise RecordError(REJECT_WRONG_TYPE, f"{key} = {text[:40]!r} is not a whole number")
    return int(text)


class _Parser:
    """Follows the interactions of each lane; :meth:`line` returns the rows a line completes."""

    def __init__(self, first_day: date) -> None:
        self.day = first_day
        self.last_start: int | None = None
        self.lanes: dict[str, _Interaction] = {}
        self.last_lane: str | None = None

    def line(self, text: str, number: int) -> list[dict[str, Any]]:
        match = _LINE.fullmatch(text)
        if match is None:
            if not text.strip():
                raise RecordError(REJECT_MISSING_FIELD, "blank line")
            raise RecordError(REJECT_UNKNOWN_RECORD, "not a line of Continue's prompt log (lane, 10-character stamp, text)")
        lane, stamp, rest = match.groups()
        clock = _clock_ms(stamp)
        if clock is not None:
            done = self._start(lane, clock, rest, number)
            self.last_lane = lane
            return done
        current = self.lanes.get(lane)
        if current is None:
            raise RecordError(REJECT_UNKNOWN_RECORD, f"a line of lane {lane!r} before any interaction of it started (orphan)")
        offset = _offset_ms(stamp) if stamp.strip() else None
        if offset is not None and current.end is not None:
            raise RecordError(REJECT_UNKNOWN_RECORD, "a line of an interaction after its end line")
        if offset is not None and current.json_lines is not None:
            raise RecordError(REJECT_UNKNOWN_RECORD, "a stamped line inside a JSON value")
        if offset is not None:
            current.offset = current.pending = offset
        interleaved, self.last_lane = self.last_lane != lane, lane
        current.content(rest, interleaved)
        return []

    def _start(self, lane: str, clock: int, rest: str, number: int) -> list[dict[str, Any]]:
        if rest not in STARTS:
            raise RecordError(REJECT_UNKNOWN_RECORD, f"a time of day must start an interaction ([Chat], [Complete] or [Fim]), got {rest[:40]!r}")
        if self.last_start is not None and self.last_start - clock > _ROLLOVER_MS:
            self.day += timedelta(days=1)
        self.last_start = clock
        done = [self.lanes.pop(lane).row()] if lane in self.lanes else []
        ts = datetime.combine(self.day, time(tzinfo=UTC)) + timedelta(milliseconds=clock)
        self.lanes[lane] = _Interaction(number, *STARTS[rest], ts)
        return done

    def close(self) -> list[dict[str, Any]]:
        """The interactions still open at the end of the file, in start order."""
        done = [i.row() for i in sorted(self.lanes.values(), key=lambda i: i.line)]
        self.lanes.clear()
        return done


def _offset_ms(stamp: str) -> float:
    match = _OFFSET.fullmatch(stamp)
    if match is None:
        raise RecordError(REJECT_WRONG_TYPE, f"stamp {stamp.strip()!r} is neither a time of day nor a +seconds offset")
    offset = int(match[1]) * 1000.0 + int(match[2]) * 100.0
    if offset > MAX_LATENCY_MS:
        raise RecordError(REJECT_ABSURD_VALUE, f"offset +{stamp.strip()[1:]} s is not a plausible latency")
    return offset
