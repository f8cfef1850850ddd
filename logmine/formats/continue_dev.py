"""Continue's dev data: ``~/.continue/dev_data/0.2.0/<eventName>.jsonl``.

One JSON object a line, written by continuedev/continue ``core/data/log.ts`` and validated
there by the zod schemas of ``packages/config-yaml/src/schemas/data``. Base fields:
``eventName, schema, timestamp (ISO 8601; epoch ms for nextEditOutcome), userId, userAgent,
selectedProfileId``. How each event becomes rows:

==================  ==========================================================================
autocomplete        llm_request kind completion + events ``completion.shown`` and, when
                    ``accepted`` is known, ``completion.accepted`` / ``completion.rejected``
chatInteraction     llm_request kind chat + event ``chat.request``
chatFeedback        event ``chat.feedback``
editInteraction     llm_request kind edit + event ``edit.request``
editOutcome         event ``edit.accepted`` / ``edit.rejected``
nextEditOutcome     llm_request kind edit (+ ``edit.accepted`` / ``edit.rejected`` when known)
toolUsage           event ``tool.call``
tokensGenerated     event ``other:tokensGenerated``, token counts in attrs
anything else       event ``other:<eventName>``
==================  ==========================================================================

The ``noCode`` privacy level drops prompt, completion and code fields: such records are valid
and give rows with nulls there. Code text (``previousCode``, ``newCode``, tool arguments and
output, next-edit excerpts) is never copied into an event's attrs; the other fields not moved
to a column are kept in attrs under their own names, with ``raw_action`` = the event name.
A ``file://`` data destination writes the bare event data without ``eventName``: the file
name (``autocomplete.jsonl``) then says which event it is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from logmine.formats._base import (
    Batch,
    RecordError,
    attrs_json,
    decode_json_line,
    ide_from_user_agent,
    language_from_path,
    latency,
    optional,
    parse_ts,
    read_batches,
    require,
    token_count,
)
from logmine.records import REJECT_MISSING_FIELD, REJECT_WRONG_TYPE

NAME = "continue"
BATCH_LINES = 50_000

EVENT_NAMES = frozenset({
    "autocomplete", "chatInteraction", "chatFeedback", "editInteraction", "editOutcome", "nextEdit",
    "nextEditOutcome", "nextEditWithHistory", "quickEdit", "tokensGenerated", "toolUsage",
})
"""Event names Continue's dev data logger writes (one file per name)."""

_COLUMN_KEYS = frozenset({"eventName", "timestamp", "createdAt", "userId", "sessionId"})
_CODE_KEYS = frozenset({
    "prompt", "completion", "prefix", "suffix", "previousCode", "newCode", "functionArgs", "functionParams",
    "parsedArgs", "output", "userEdits", "userExcerpts", "originalEditableRange",
})
_FOREIGN_KEYS = frozenset({"type", "recorder_version", "group", "resourceSpans", "$type", "interactionId", "event"})
_COMPRESSED = (".gz", ".zst", ".zstd")

Rows = tuple[list[dict[str, Any]], list[dict[str, Any]]]


def event_name_from_path(path: Path) -> str | None:
    """The event name a dev data file's name gives (``toolUsage.jsonl.gz`` -> toolUsage), or None."""
    name = path.name
    for suffix in _COMPRESSED:
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    for suffix in (".jsonl", ".json"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    return name if name in EVENT_NAMES else None


def sniff(path: Path, head: list[bytes]) -> bool:
    from_name = event_name_from_path(path)
    for line in head:
        try:
            obj = decode_json_line(line)
        except RecordError:
            continue
        if not isinstance(obj, dict) or _FOREIGN_KEYS & obj.keys():
            continue
        name = obj.get("eventName")
        if isinstance(name, str) and (name in EVENT_NAMES or "(Continue/" in str(obj.get("userAgent", ""))):
            return True
        if name is None and from_name and ("timestamp" in obj or "createdAt" in obj):
            return True
    return False


def read(path: Path) -> Iterator[Batch]:
    from_name = event_name_from_path(path)

    def add_rows(batch: Batch, obj: Any, number: int) -> None:
        events, requests = rows_for(obj, number, from_name)
        batch.events.extend(events)  # type: ignore[union-attr]
        batch.requests.extend(requests)  # type: ignore[union-attr]

    yield from read_batches(path, add_rows, BATCH_LINES)


def rows_for(obj: Any, number: int, default_name: str | None = None) -> Rows:
    """The event and request rows of one dev data record (``default_name`` when it has no eventName)."""
    if not isinstance(obj, dict):
        raise RecordError(REJECT_WRONG_TYPE, f"a record must be a JSON object, got {type(obj).__name__}")
    name = optional(obj, "eventName", str) or default_name
    if name is None:
        raise RecordError(REJECT_MISSING_FIELD, "required field 'eventName' is missing and the file name is no Continue event name")
    common = _common(obj, number)
    return _HANDLERS.get(name, _other)(obj, common, name)


def _common(obj: dict[str, Any], number: int) -> dict[str, Any]:
    ts_key = "createdAt" if obj.get("timestamp") is None and obj.get("createdAt") is not None else "timestamp"
    return {
        "ts": parse_ts(obj.get(ts_key), ts_key),
        "source_line": number,
        "user_id": optional(obj, "userId", str) or None,  # "" when the IDE has no user token
        "session_id": optional(obj, "sessionId", str),
        "ide": ide_from_user_agent(optional(obj, "userAgent", str)),
    }


def _extras(obj: dict[str, Any], name: str, consumed: frozenset[str] = frozenset()) -> dict[str, Any]:
    """attrs: the raw action name and every field not moved to a column, code text left out."""
    drop = _COLUMN_KEYS | _CODE_KEYS | consumed
    return {"raw_action": name, **{k: v for k, v in obj.items() if k not in drop}}


def _event(common: dict[str, Any], action: str, attrs: dict[str, Any], **columns: Any) -> dict[str, Any]:
    return {**common, "action": action, "attrs": attrs_json(attrs), **columns}


def _request(obj: dict[str, Any], common: dict[str, Any], kind: str, attrs: dict[str, Any], **columns: Any) -> dict[str, Any]:
    row = {**common, "kind": kind, "model": optional(obj, "modelName", str), "attrs": attrs_json(attrs)}
    for key in ("prompt", "completion"):
        row[key] = optional(obj, key, str)
    return {**row, **columns}


def _file(obj: dict[str, Any], key: str) -> dict[str, Any]:
    file_path = optional(obj, key, str)
    return {"file_path": file_path, "language": language_from_path(file_path)}


def _autocomplete(obj: dict[str, Any], common: dict[str, Any], name: str) -> Rows:
    completion_id = optional(obj, "completionId", str)
    accepted = optional(obj, "accepted", bool)
    file = _file(obj, "filepath")
    request = _request(
        obj, common, "completion", _extras(obj, name, frozenset({"completionId", "modelName", "accepted", "time", "filepath"})),
        request_id=completion_id, accepted=accepted, total_ms=latency(obj.get("time"), "time"),
        prefix=optional(obj, "prefix", str), suffix=optional(obj, "suffix", str), **file,
    )
    small = {"raw_action": name, "completion_id": completion_id, "model": request["model"]}
    events = [_event(common, "completion.shown", small, **file)]
    if accepted is not None:
        events.append(_event(common, "completion.accepted" if accepted else "completion.rejected", small, **file))
    return events, [request]


def _chat_interaction(obj: dict[str, Any], common: dict[str, Any], name: str) -> Rows:
    request = _request(obj, common, "chat", _extras(obj, name, frozenset({"modelName"})))
    return [_event(common, "chat.request", {"raw_action": name, "model": request["model"]})], [request]


def _chat_feedback(obj: dict[str, Any], common: dict[str, Any], name: str) -> Rows:
    require(obj, "feedback", bool)
    return [_event(common, "chat.feedback", _extras(obj, name))], []


def _edit_interaction(obj: dict[str, Any], common: dict[str, Any], name: str) -> Rows:
    file = _file(obj, "filepath")
    request = _request(obj, common, "edit", _extras(obj, name, frozenset({"modelName", "filepath"})), **file)
    return [_event(common, "edit.request", {"raw_action": name, "model": request["model"]}, **file)], [request]


def _edit_outcome(obj: dict[str, Any], common: dict[str, Any], name: str) -> Rows:
    accepted = require(obj, "accepted", bool)
    attrs = _extras(obj, name, frozenset({"accepted", "filepath"}))
    return [_event(common, "edit.accepted" if accepted else "edit.rejected", attrs, **_file(obj, "filepath"))], []


def _next_edit_outcome(obj: dict[str, Any], common: dict[str, Any], name: str) -> Rows:
    completion_id = optional(obj, "completionId", str)
    accepted = optional(obj, "accepted", bool)
    file = _file(obj, "fileUri")
    consumed = frozenset({"completionId", "modelName", "accepted", "elapsed", "fileUri"})
    request = _request(obj, common, "edit", _extras(obj, name, consumed), request_id=completion_id, accepted=accepted,
                       total_ms=latency(obj.get("elapsed"), "elapsed"), **file)
    events = []
    if accepted is not None:
        small = {"raw_action": name, "completion_id": completion_id, "model": request["model"]}
        events.append(_event(common, "edit.accepted" if accepted else "edit.rejected", small, **file))
    return events, [request]


def _tokens_generated(obj: dict[str, Any], common: dict[str, Any], name: str) -> Rows:
    attrs = _extras(obj, name)
    for key in ("promptTokens", "generatedTokens"):
        if obj.get(key) is None:
            raise RecordError(REJECT_MISSING_FIELD, f"required field {key!r} is missing")
        attrs[key] = token_count(obj[key], key)
    return [_event(common, f"other:{name}", attrs)], []


def _tool_usage(obj: dict[str, Any], common: dict[str, Any], name: str) -> Rows:
    require(obj, "functionName", str)
    attrs = _extras(obj, name)
    output = obj.get("output")
    if isinstance(output, list):
        attrs["output_items"] = len(output)
    return [_event(common, "tool.call", attrs)], []


def _other(obj: dict[str, Any], common: dict[str, Any], name: str) -> Rows:
    return [_event(common, f"other:{name}", _extras(obj, name))], []


_HANDLERS: dict[str, Callable[[dict[str, Any], dict[str, Any], str], Rows]] = {
    "autocomplete": _autocomplete,
    "chatInteraction": _chat_interaction,
    "chatFeedback": _chat_feedback,
    "editInteraction": _edit_interaction,
    "editOutcome": _edit_outcome,
    "nextEditOutcome": _next_edit_outcome,
    "tokensGenerated": _tokens_generated,
    "toolUsage": _tool_usage,
}
