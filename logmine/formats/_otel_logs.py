"""OTLP log records of GenAI events (``resourceLogs[].scopeLogs[].logRecords[]``) and the file
that holds them beside a spans file.

In their default (stable) semantic conventions the official GenAI instrumentations put prompts
and completions in events, exported as log records tied to their span by ``traceId`` /
``spanId``: ``gen_ai.system.message`` / ``user`` / ``assistant`` / ``tool`` (body
``{content, tool_calls, id}``), ``gen_ai.choice`` (body ``{index, finish_reason, message}``)
and the newer ``gen_ai.client.inference.operation.details`` (``gen_ai.input.messages`` ... as
attributes). The event name is the record's ``eventName`` (older SDKs: the ``event.name``
attribute). A log record of no ``gen_ai.*`` event is valid input with nothing to take.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from logmine.formats._base import RecordError, check_type, optional
from logmine.formats._genai_messages import (
    MESSAGE_EVENTS,
    completion_text,
    json_value,
    messages_text,
    prompt_text,
)
from logmine.formats._otlp import any_value, attributes, unix_nanos
from logmine.records import REJECT_MISSING_FIELD

LOGS_MARK = ".logs"
"""A logs file is named like its spans file with this before the JSON suffix: ``x.jsonl`` / ``x.logs.jsonl``."""
_JSON_SUFFIXES = (".jsonl", ".ndjson", ".json")
_COMPRESSED = (".gz", ".zst", ".zstd")


@dataclass(frozen=True)
class LogEvent:
    """One GenAI event from a log record."""

    key: tuple[str, str] | None
    """``(traceId, spanId)``, None when the record names no span."""
    name: str
    time: int
    """Unix nanoseconds (``timeUnixNano``, else ``observedTimeUnixNano``)."""
    body: Any
    attrs: dict[str, Any]
    context: dict[str, Any]
    """The resource's attributes and ``otel.scope.name``."""


def iter_log_records(obj: dict[str, Any]) -> Iterator[tuple[Any, dict[str, Any]]]:
    """``(log record, resource attributes + scope name)`` for every record of one export request."""
    checked = []
    for resource_logs in check_type(obj["resourceLogs"], "resourceLogs", list):
        resource_logs = check_type(resource_logs, "resourceLogs[]", dict)
        resource = optional(resource_logs, "resource", dict) or {}
        resource_attrs = attributes(resource.get("attributes"), "resource.attributes")
        for scope_logs in optional(resource_logs, "scopeLogs", list) or optional(resource_logs, "instrumentationLibraryLogs", list) or []:
            scope_logs = check_type(scope_logs, "scopeLogs[]", dict)
            scope = optional(scope_logs, "scope", dict) or optional(scope_logs, "instrumentationLibrary", dict) or {}
            context = {**resource_attrs, "otel.scope.name": scope.get("name")}
            checked.extend((record, context) for record in optional(scope_logs, "logRecords", list) or [])
    yield from checked


def log_event(record: Any, context: dict[str, Any]) -> LogEvent | None:
    """The GenAI event of one log record, None for any other record, or RecordError."""
    record = check_type(record, "logRecord", dict)
    attrs = attributes(record.get("attributes"), "logRecord.attributes")
    name = optional(record, "eventName", str) or (attrs["event.name"] if isinstance(attrs.get("event.name"), str) else "")
    if not name.startswith("gen_ai."):
        return None
    time = unix_nanos(record.get("timeUnixNano"), "timeUnixNano") or unix_nanos(record.get("observedTimeUnixNano"), "observedTimeUnixNano")
    if time is None:
        raise RecordError(REJECT_MISSING_FIELD, "required field 'timeUnixNano' or 'observedTimeUnixNano' is missing")
    trace, span = record.get("traceId"), record.get("spanId")
    key = (trace, span) if isinstance(trace, str) and trace and isinstance(span, str) and span else None
    return LogEvent(key, name, time, any_value(record.get("body"), "logRecord.body"), attrs, context)


def companion(path: Path) -> Path | None:
    """The other file of a spans / logs pair by name (``x.jsonl`` <-> ``x.logs.jsonl``, compressed
    alike), whether or not it exists; None when the name is not of a JSON file."""
    name = path.name
    compressed = next((s for s in _COMPRESSED if name.lower().endswith(s)), "")
    stem = name[: len(name) - len(compressed)]
    suffix = next((s for s in _JSON_SUFFIXES if stem.lower().endswith(s)), None)
    if suffix is None:
        return None
    base = stem[: len(stem) - len(suffix)]
    if base.endswith(LOGS_MARK):
        return path.with_name(base[: -len(LOGS_MARK)] + stem[len(base):] + compressed) if len(base) > len(LOGS_MARK) else None
    return path.with_name(base + LOGS_MARK + stem[len(base):] + compressed)


def is_logs_file(path: Path) -> bool:
    """True when ``path`` is named as the logs file of a pair."""
    other = companion(path)
    return other is not None and len(other.name) < len(path.name)


DETAIL_EVENTS = frozenset({"gen_ai.client.inference.operation.details", "gen_ai.content.prompt", "gen_ai.content.completion"})
_CONTENT = ("gen_ai.input.messages", "gen_ai.system_instructions", "gen_ai.prompt", "gen_ai.output.messages", "gen_ai.completion")


def event_messages(events: list[LogEvent]) -> tuple[str | None, str | None, list[str]]:
    """``(prompt, completion, finish reasons)`` of one span's GenAI events, rendered as the span
    attributes of the ``gen_ai_latest_experimental`` mode are (tool calls as ``[tool_call ...]``)."""
    details: dict[str, Any] = {}
    inputs, outputs, reasons = [], [], []
    for event in events:
        body = event.body if isinstance(event.body, dict) else {"content": event.body}
        if event.name in DETAIL_EVENTS:
            details.update(event.attrs)
        elif event.name in MESSAGE_EVENTS:
            role = body.get("role") if isinstance(body.get("role"), str) else MESSAGE_EVENTS[event.name]
            inputs.append({"role": role, "parts": _parts(body, tool=role == "tool")})
        elif event.name == "gen_ai.choice":
            message = body.get("message") if isinstance(body.get("message"), dict) else {}
            outputs.append({"role": message.get("role") or "assistant", "parts": _parts(message, tool=False)})
            if isinstance(body.get("finish_reason"), str):
                reasons.append(body["finish_reason"])
    prompt = prompt_text(details) if any(k in details for k in _CONTENT[:3]) else messages_text(inputs, roles=True) or None
    completion = completion_text(details) if any(k in details for k in _CONTENT[3:]) else messages_text(outputs, roles=False) or None
    return prompt, completion, reasons


def _parts(body: dict[str, Any], tool: bool) -> list[dict[str, Any]]:
    """A message event's body as the ``parts`` of the semantic conventions' messages."""
    content = body.get("content")
    if tool:
        return [{"type": "tool_call_response", "response": content}]
    parts: list[dict[str, Any]] = [{"type": "text", "content": content}] if content not in (None, "") else []
    for call in body.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) and isinstance(call.get("function"), dict) else {}
        parts.append({"type": "tool_call", "name": function.get("name"), "arguments": json_value(function.get("arguments"))})
    return parts
