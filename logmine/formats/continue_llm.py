"""Continue's LLM interaction log: one JSON item a line, per-chunk timestamps.

Written by continuedev/continue ``core/llm/logger.ts`` (``LLMInteractionItem`` in
``core/index.d.ts``). Every item has ``interactionId``, ``timestamp`` (epoch ms) and ``kind``:
``startChat{messages, options, provider}``, ``startComplete{prompt, options}``,
``startFim{prefix, suffix, options}``, ``chunk{chunk}``, ``message{message}`` and the end items
``success | cancel | error{promptTokens, generatedTokens, thinkingTokens}``.

The items of one interaction become ONE llm_request: kind chat (startChat) or completion
(startComplete, startFim), ``ts`` = the start item's time, ``ttft_ms`` = first chunk or message
minus start, ``token_times_ms`` = every chunk's offset from the start, ``token_texts`` = their
text, ``completion`` = that text joined, ``total_ms`` = end item minus start, token counts from
the end item. attrs keep ``raw_action`` (the start kind), ``provider``, ``options``, ``end``
(success, cancel, error, or ``missing`` when the log stops before the end item; such an
interaction is still emitted) and the error's name and message. Thinking chunks are counted in
attrs, not added to the completion.

Line accounting: every item of an interaction is an accepted line; a chunk or end item whose
interaction has not started (an orphan) or has already ended is a reject.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from logmine.formats._base import (
    MAX_LATENCY_MS,
    Batch,
    RecordError,
    attrs_json,
    check_type,
    decode_json_line,
    message_text,
    optional,
    parse_epoch_ms,
    read_batches,
    render_messages,
    require,
    token_count,
)
from logmine.records import REJECT_ABSURD_VALUE, REJECT_MISSING_FIELD, REJECT_UNKNOWN_RECORD, REJECT_WRONG_TYPE

NAME = "continue-llm"
BATCH_LINES = 50_000

START_KINDS = {"startChat": "chat", "startComplete": "completion", "startFim": "completion"}
CHUNK_KINDS = frozenset({"chunk", "message"})
END_KINDS = frozenset({"success", "cancel", "error"})
ITEM_KINDS = frozenset(START_KINDS) | CHUNK_KINDS | END_KINDS
_MICROSECOND = timedelta(microseconds=1)


@dataclass
class _Interaction:
    """The items of one interaction seen so far."""

    interaction_id: str
    kind: str
    start: datetime
    line: int
    row: dict[str, Any]
    attrs: dict[str, Any]
    times: list[float] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    thinking_chunks: int = 0
    tool_calls: list[str] = field(default_factory=list)

    def offset_ms(self, ts: datetime, kind: str) -> float:
        offset = (ts - self.start) // _MICROSECOND / 1000
        if offset < 0 or offset > MAX_LATENCY_MS:
            raise RecordError(REJECT_ABSURD_VALUE, f"{kind} item is {offset} ms from its interaction's start")
        return offset

    def finish(self, end: dict[str, Any] | None) -> dict[str, Any]:
        attrs = {**self.attrs, "end": "missing"} if end is None else {**self.attrs, **end.pop("attrs")}
        if self.thinking_chunks:
            attrs["thinking_chunks"] = self.thinking_chunks
        if self.tool_calls:
            attrs["tool_calls"] = self.tool_calls
        chunks = bool(self.times)
        return {
            **self.row,
            **(end or {"total_ms": None, "prompt_tokens": None, "completion_tokens": None}),
            "ttft_ms": self.times[0] if chunks else None,
            "token_times_ms": list(self.times) if chunks else None,
            "token_texts": list(self.texts) if chunks else None,
            "completion": "".join(self.texts) if chunks else None,
            "attrs": attrs_json(attrs),
        }


class _Grouper:
    """Groups items by interactionId; :meth:`take` returns the requests an item completes."""

    def __init__(self) -> None:
        self.open: dict[str, _Interaction] = {}
        self.ended: set[str] = set()

    def take(self, obj: Any, number: int) -> list[dict[str, Any]]:
        if not isinstance(obj, dict):
            raise RecordError(REJECT_WRONG_TYPE, f"an item must be a JSON object, got {type(obj).__name__}")
        iid = str(require(obj, "interactionId", (str, int)))
        kind = require(obj, "kind", str)
        if kind not in ITEM_KINDS:
            raise RecordError(REJECT_UNKNOWN_RECORD, f"unknown item kind {kind!r}")
        ts = parse_epoch_ms(obj.get("timestamp"), "timestamp")
        if kind in START_KINDS:
            started = _start(obj, iid, kind, ts, number)
            done = [self.open.pop(iid).finish(None)] if iid in self.open else []
            self.ended.discard(iid)
            self.open[iid] = started
            return done
        current = self.open.get(iid)
        if current is None:
            why = "after that interaction's end item" if iid in self.ended else "but no start item of it came before (orphan)"
            raise RecordError(REJECT_UNKNOWN_RECORD, f"{kind} item of interaction {iid!r} {why}")
        offset = current.offset_ms(ts, kind)
        if kind in CHUNK_KINDS:
            _add_chunk(current, obj, kind, offset)
            return []
        end = _end(obj, kind, offset)
        del self.open[iid]
        self.ended.add(iid)
        return [current.finish(end)]

    def close(self) -> list[dict[str, Any]]:
        """The interactions still open at the end of the file, in start order."""
        done = [i.finish(None) for i in sorted(self.open.values(), key=lambda i: i.line)]
        self.open.clear()
        return done


def sniff(path: Path, head: list[bytes]) -> bool:
    for line in head:
        try:
            obj = decode_json_line(line)
        except RecordError:
            continue
        if isinstance(obj, dict) and "interactionId" in obj and obj.get("kind") in ITEM_KINDS and "timestamp" in obj:
            return True
    return False


def read(path: Path) -> Iterator[Batch]:
    grouper = _Grouper()

    def add_rows(batch: Batch, obj: Any, number: int) -> None:
        batch.requests.extend(grouper.take(obj, number))  # type: ignore[union-attr]

    def finish(batch: Batch) -> None:
        batch.requests.extend(grouper.close())  # type: ignore[union-attr]

    yield from read_batches(path, add_rows, BATCH_LINES, finish)


def _start(obj: dict[str, Any], iid: str, kind: str, ts: datetime, number: int) -> _Interaction:
    options = optional(obj, "options", dict) or {}
    model = options.get("model")
    row: dict[str, Any] = {
        "request_id": iid, "ts": ts, "kind": START_KINDS[kind], "source_line": number,
        "model": check_type(model, "options.model", str) if model is not None else None,
        "prompt": None, "prefix": None, "suffix": None,
    }
    if kind == "startChat":
        row["prompt"] = render_messages(require(obj, "messages", list))
    elif kind == "startComplete":
        row["prompt"] = require(obj, "prompt", str)
    else:
        row["prefix"] = require(obj, "prefix", str)
        row["suffix"] = require(obj, "suffix", str)
    attrs = {"raw_action": kind, "provider": optional(obj, "provider", str), "options": options or None}
    return _Interaction(iid, kind, ts, number, row, attrs)


def _add_chunk(current: _Interaction, obj: dict[str, Any], kind: str, offset: float) -> None:
    value = obj.get(kind)
    if value is None:
        raise RecordError(REJECT_MISSING_FIELD, f"required field {kind!r} is missing")
    if isinstance(value, str):
        role, text, tools = None, value, []
    else:
        value = check_type(value, kind, dict)
        role, text, tools = value.get("role"), message_text(value.get("content"), f"{kind}.content"), _tool_names(value)
    current.tool_calls.extend(tools)
    if role == "thinking":
        current.thinking_chunks += 1
        return
    current.times.append(offset)
    current.texts.append(text)


def _tool_names(message: dict[str, Any]) -> list[str]:
    calls = message.get("toolCalls")
    if not isinstance(calls, list):
        return []
    names = []
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            names.append(function["name"])
    return names


def _end(obj: dict[str, Any], kind: str, offset: float) -> dict[str, Any]:
    attrs: dict[str, Any] = {"end": kind, "thinking_tokens": token_count(obj.get("thinkingTokens"), "thinkingTokens")}
    if obj.get("usage") is not None:
        attrs["usage"] = check_type(obj["usage"], "usage", dict)
    if kind == "error":
        attrs["error_name"] = optional(obj, "name", str)
        attrs["error"] = optional(obj, "message", str)
    return {
        "total_ms": offset,
        "prompt_tokens": token_count(obj.get("promptTokens"), "promptTokens"),
        "completion_tokens": token_count(obj.get("generatedTokens"), "generatedTokens"),
        "attrs": attrs,
    }
