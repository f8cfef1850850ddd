"""Tabby's event log: ``~/.tabby/events/YYYY-MM-DD.json``, JSON Lines.

Written by TabbyML/tabby (``crates/tabby-common/src/api/event.rs``): every line is
``{"user": str|null, "ts": unix ms, "event": {<variant>: {...}}}``. How each variant becomes rows:

===============  ===========================================================================
completion       llm_request kind completion: request_id = completion_id, prompt, prefix /
                 suffix / filepath from ``segments``, completion = ``choices[0].text``
view             event ``completion.shown``
select           event ``completion.accepted`` (``elapsed`` ms as duration)
dismiss          event ``completion.rejected`` (``elapsed`` ms as duration)
chat_completion  llm_request kind chat (prompt = the input messages, completion = the output)
                 + event ``chat.request``; a current Tabby (since 2025-03, commit 551e3f69e) writes
                 ``"chat_completion": {}`` with no fields: the event ``chat.request`` alone
anything else    event ``other:<variant>``
===============  ===========================================================================

Tabby logs no latencies for completions. A completion's ``accepted`` is joined on
``completion_id`` within the file: true when a valid ``select`` names it, false when only a
``dismiss`` does, null otherwise. The join needs a first pass over the select and dismiss
lines, so rows can stream out in batches in the second.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from logmine.formats._base import (
    Batch,
    RecordError,
    attrs_json,
    check_type,
    decode_json_line,
    ide_from_user_agent,
    iter_json_records,
    language_from_path,
    latency,
    message_text,
    normalise_language,
    optional,
    parse_epoch_ms,
    read_batches,
    render_messages,
    require,
)
from logmine.records import REJECT_WRONG_TYPE

NAME = "tabby"
BATCH_LINES = 50_000

VARIANTS = frozenset({"completion", "view", "select", "dismiss", "chat_completion"})
_FOREIGN_KEYS = frozenset({"type", "recorder_version", "group", "resourceSpans", "$type", "eventName", "interactionId"})
_OUTCOME_ACTIONS = {"view": "completion.shown", "select": "completion.accepted", "dismiss": "completion.rejected"}


def sniff(path: Path, head: list[bytes]) -> bool:
    for line in head:
        try:
            obj = decode_json_line(line)
        except RecordError:
            continue
        if not isinstance(obj, dict) or _FOREIGN_KEYS & obj.keys() or "ts" not in obj:
            continue
        event = obj.get("event")
        if isinstance(event, dict) and len(event) == 1 and next(iter(event)) in VARIANTS:
            return True
    return False


def read(path: Path) -> Iterator[Batch]:
    outcomes = _outcomes(path)

    def add_rows(batch: Batch, obj: Any, number: int) -> None:
        events, requests = rows_for(obj, number, outcomes)
        batch.events.extend(events)  # type: ignore[union-attr]
        batch.requests.extend(requests)  # type: ignore[union-attr]

    yield from read_batches(path, add_rows, BATCH_LINES)


def _outcomes(path: Path) -> dict[str, bool]:
    """completion_id -> True when a valid select names it, False when only a dismiss does."""
    out: dict[str, bool] = {}
    for number, raw, obj in iter_json_records(path):
        if isinstance(obj, RecordError) or (b'"select"' not in raw and b'"dismiss"' not in raw):
            continue
        try:
            rows_for(obj, number, {})  # only lines that become rows take part in the join
        except RecordError:
            continue
        variant, body = next(iter(obj["event"].items()))
        if variant in ("select", "dismiss"):
            completion_id = body["completion_id"]
            out[completion_id] = out.get(completion_id, False) or variant == "select"
    return out


def rows_for(obj: Any, number: int, outcomes: dict[str, bool]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The event and request rows of one log line; ``outcomes`` gives the completions' ``accepted``."""
    if not isinstance(obj, dict):
        raise RecordError(REJECT_WRONG_TYPE, f"a record must be a JSON object, got {type(obj).__name__}")
    event = require(obj, "event", dict)
    if len(event) != 1:
        raise RecordError(REJECT_WRONG_TYPE, f"field 'event' should hold exactly one variant, got {len(event)}")
    variant, body = next(iter(event.items()))
    body = check_type(body, f"event.{variant}", dict)
    common = {"ts": parse_epoch_ms(obj.get("ts"), "ts"), "source_line": number, "user_id": optional(obj, "user", str)}
    if variant == "completion":
        return [], [_completion(body, common, outcomes)]
    if variant == "chat_completion" and not body:  # Event::ChatCompletion {} since 2025-03: nothing but the fact
        return [{**common, "action": "chat.request", "attrs": attrs_json({"raw_action": variant})}], []
    if variant == "chat_completion":
        request = _chat(body, common)
        attrs = {"raw_action": variant, "completion_id": request["request_id"]}
        return [{**common, "action": "chat.request", "attrs": attrs_json(attrs)}], [request]
    if variant in _OUTCOME_ACTIONS:
        return [_outcome(body, common, variant)], []
    return [{**common, "action": f"other:{variant}", "attrs": attrs_json({"raw_action": variant, **body})}], []


def _completion(body: dict[str, Any], common: dict[str, Any], outcomes: dict[str, bool]) -> dict[str, Any]:
    completion_id = require(body, "completion_id", str)
    segments = optional(body, "segments", dict) or {}
    file_path = optional(segments, "filepath", str)
    choices = require(body, "choices", list)
    texts = [require(check_type(c, "choices[]", dict), "text", str) for c in choices]
    declarations = optional(segments, "declarations", list) or []
    user_agent = optional(body, "user_agent", str)
    attrs = {
        "raw_action": "completion",
        "git_url": optional(segments, "git_url", str),
        "declaration_files": [d.get("filepath") for d in declarations if isinstance(d, dict)] or None,
        "has_clipboard": True if optional(segments, "clipboard", str) else None,
        "choices": len(texts) if len(texts) != 1 else None,
        "user_agent": user_agent,
    }
    return {
        **common,
        "user_id": common["user_id"] or optional(body, "user", str),  # older Tabby put the user inside
        "kind": "completion",
        "request_id": completion_id,
        "language": normalise_language(optional(body, "language", str)) or language_from_path(file_path),
        "file_path": file_path,
        "prompt": require(body, "prompt", str),
        "prefix": optional(segments, "prefix", str),
        "suffix": optional(segments, "suffix", str),
        "completion": texts[0] if texts else None,
        "accepted": outcomes.get(completion_id),
        "ide": ide_from_user_agent(user_agent),
        "attrs": attrs_json(attrs),
    }


def _chat(body: dict[str, Any], common: dict[str, Any]) -> dict[str, Any]:
    output = require(body, "output", dict)
    return {
        **common,
        "kind": "chat",
        "request_id": require(body, "completion_id", str),
        "prompt": render_messages(require(body, "input", list), "input"),
        "completion": message_text(output.get("content"), "output.content"),
        "attrs": attrs_json({"raw_action": "chat_completion"}),
    }


def _outcome(body: dict[str, Any], common: dict[str, Any], variant: str) -> dict[str, Any]:
    completion_id = require(body, "completion_id", str)
    choice_index = optional(body, "choice_index", int)
    attrs = {
        "raw_action": variant,
        "completion_id": completion_id,
        "choice_index": choice_index,
        "view_id": optional(body, "view_id", str),
        "kind": optional(body, "kind", str),
    }
    row = {**common, "action": _OUTCOME_ACTIONS[variant], "attrs": attrs_json(attrs)}
    if variant != "view":
        row["duration_ms"] = latency(body.get("elapsed"), "elapsed")
    return row
