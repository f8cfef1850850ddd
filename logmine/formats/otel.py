"""OpenTelemetry GenAI spans exported as OTLP/JSON (``resourceSpans[].scopeSpans[].spans[]``).

A file is either JSON Lines of export requests, one a line as the collector's file exporter
writes them (chosen when the first non-empty line is a whole ``{...}``), or a JSON document: one
export request, possibly pretty-printed, an array of them, or several concatenated.

Accounting -- one rule per shape, and ``lines_read == lines_accepted + rejects`` holds exactly:

- JSON Lines: the unit is the line (``source_line`` = line number). A line whose JSON is bad, or
  that is not an export request, is rejected. Otherwise its spans are read one by one; the line
  is accepted when it gives at least one row or has no bad span, and rejected (with the first bad
  span's reason) only when its GenAI spans are all bad. Bad spans on an accepted line are logged
  as warnings, not rejected: a line is one unit and cannot be both.
- A document: the unit is the span (``source_line`` = its 1-based position in the document). Each
  span is accepted or rejected on its own; malformed JSON, or an export request of the wrong
  shape, is one rejected unit.

Spans without any ``gen_ai.*`` attribute and without a GenAI operation name (HTTP, DB, ...) give
no row but count as accepted: they are valid input this reader has nothing to take from. OTLP
logs and metrics requests (``resourceLogs`` / ``resourceMetrics``) hold no spans.

Inference spans (``gen_ai.operation.name`` chat / text_completion / generate_content, a span
name starting with one, OpenLLMetry's ``llm.request.type``, or a GenAI span that carries content
or token usage) -> ``llm_requests``: ``ts`` = start, ``total_ms`` = end - start, ``kind`` chat
(chat, generate_content) / completion (text_completion) / other, ``model`` =
``gen_ai.request.model`` else ``gen_ai.response.model``; ``ttft_ms`` from
``gen_ai.response.time_to_first_chunk`` (seconds) else from the first chunk span event (a name
ending ``.chunk``, e.g. OpenLLMetry's ``llm.content.completion.chunk``) or a ``first_token`` /
``first_chunk`` event; ``token_times_ms`` = the chunk events' offsets from the start (and
``token_texts`` when every chunk event carries its text); ``prompt`` = system instructions and
input messages flattened to ``role: text`` lines (``gen_ai.system_instructions``,
``gen_ai.input.messages``, deprecated ``gen_ai.prompt`` as JSON text or indexed
``gen_ai.prompt.<i>.role/content``, or the same attributes on a
``gen_ai.client.inference.operation.details`` / ``gen_ai.content.prompt`` span event);
``completion`` likewise from the output messages / ``gen_ai.completion``; tokens from
``gen_ai.usage.input_tokens`` / ``output_tokens`` or deprecated ``prompt_tokens`` /
``completion_tokens``; ``session_id`` = ``gen_ai.conversation.id``; ``user_id`` = ``user.id`` /
``enduser.id``; ``ide`` = the resource's ``service.name``; ``request_id`` = ``<traceId>:<spanId>``.
``attrs`` has ``provider`` (``gen_ai.provider.name``, deprecated ``gen_ai.system``), the span
name, trace and span ids, status and the remaining ``gen_ai.*`` attributes under their own keys.
Other GenAI spans -> ``events``: ``execute_tool`` -> ``tool.call``, anything else (embeddings,
retrieval, invoke_agent, ...) -> ``other:<operation>``, ``duration_ms`` = end - start.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from logmine.formats._base import (
    Batch,
    RecordError,
    attrs_json,
    check_type,
    head_lines,
    latency,
    optional,
    read_batches,
    reject,
)
from logmine.formats._jsondoc import iter_json_values, looks_like_jsonl, read_document
from logmine.formats._genai_messages import completion_text, prompt_text
from logmine.formats._otlp import attributes, nanos_ts, unix_nanos
from logmine.records import (
    REJECT_ABSURD_VALUE,
    REJECT_MISSING_FIELD,
    REJECT_UNKNOWN_RECORD,
)

log = logging.getLogger(__name__)

NAME = "otel"
BATCH_UNITS = 20_000
MAX_TOKENS = 100_000_000
"""A token count above this is absurd for one request."""

INFERENCE_KINDS = {"chat": "chat", "generate_content": "chat", "text_completion": "completion", "completion": "completion"}
"""Operation name -> the ``kind`` of its ``llm_requests`` row."""
OPERATIONS = {*INFERENCE_KINDS, "embeddings", "retrieval", "create_agent", "invoke_agent", "execute_tool", "invoke_workflow"}
EVENT_ACTIONS = {"execute_tool": "tool.call"}
CONTENT_KEYS = {
    "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions", "gen_ai.prompt", "gen_ai.completion",
    "gen_ai.tool.definitions",
}
"""Opt-in content: read into prompt/completion, never copied into ``attrs``."""
_CONSUMED = {
    "gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.system", "gen_ai.request.model", "gen_ai.conversation.id",
    "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "gen_ai.usage.prompt_tokens",
    "gen_ai.usage.completion_tokens", "gen_ai.response.time_to_first_chunk",
}
_DETAIL_EVENTS = {"gen_ai.client.inference.operation.details", "gen_ai.content.prompt", "gen_ai.content.completion"}
_CHUNK_TEXT_KEYS = ("gen_ai.chunk.content", "gen_ai.content", "content", "text", "chunk")


def sniff(path: Path, head: list[bytes]) -> bool:
    return any(b'"resourceSpans"' in line for line in head)


def read(path: Path) -> Iterator[Batch]:
    if looks_like_jsonl(head_lines(path, 1)):
        yield from _read_lines(path)
    else:
        yield from _read_document(path)


def _read_lines(path: Path) -> Iterator[Batch]:
    def add_rows(batch: Batch, obj: Any, number: int) -> None:
        rows, errors = _line_rows(obj, number)
        if errors and not rows:
            first = errors[0]
            more = f" (and {len(errors) - 1} more bad spans)" if len(errors) > 1 else ""
            raise RecordError(first.kind, first.detail + more)
        for err in errors:
            log.warning("%s:%d: a span was skipped: %s", path, number, err)
        _add(batch, rows)

    yield from read_batches(path, add_rows, BATCH_UNITS)


def _line_rows(obj: Any, number: int) -> tuple[list[tuple[str, dict[str, Any]]], list[RecordError]]:
    rows, errors = [], []
    for span, resource in iter_spans(obj):
        try:
            row = span_row(span, resource, number)
        except RecordError as err:
            errors.append(err)
            continue
        if row is not None:
            rows.append(row)
    return rows, errors


def _read_document(path: Path) -> Iterator[Batch]:
    batch, unit = Batch(), 0
    for obj, raw in iter_json_values(read_document(path)):
        try:
            if isinstance(obj, RecordError):
                raise obj
            spans = list(iter_spans(obj))
        except RecordError as err:
            unit += 1
            batch.lines_read += 1
            batch.rejects.append(reject(unit, raw.encode(), err))
            continue
        for span, resource in spans:
            unit += 1
            batch.lines_read += 1
            try:
                row = span_row(span, resource, unit)
                _add(batch, [row] if row else [])
                batch.lines_accepted += 1
            except RecordError as err:
                batch.rejects.append(reject(unit, _span_raw(span), err))
            if batch.lines_read >= BATCH_UNITS:
                yield batch
                batch = Batch()
    yield batch


def _add(batch: Batch, rows: list[tuple[str, dict[str, Any]]]) -> None:
    for table, row in rows:
        (batch.requests if table == "requests" else batch.events).append(row)  # type: ignore[union-attr]


def _span_raw(span: Any) -> bytes:
    try:
        return json.dumps(span, ensure_ascii=False)[:1024].encode("utf-8", "replace")
    except (TypeError, ValueError):
        return repr(span)[:1024].encode("utf-8", "replace")


# -- OTLP/JSON structure ------------------------------------------------------------------------------
def iter_spans(obj: Any) -> Iterator[tuple[Any, dict[str, Any]]]:
    """``(span, resource attributes)`` for every span of one export request (or RecordError)."""
    obj = check_type(obj, "export request", dict)
    if "resourceSpans" not in obj:
        if "resourceLogs" in obj or "resourceMetrics" in obj:
            return
        raise RecordError(REJECT_UNKNOWN_RECORD, "not an OTLP/JSON trace export: no 'resourceSpans'")
    checked = []
    for resource_spans in check_type(obj["resourceSpans"], "resourceSpans", list):
        resource_spans = check_type(resource_spans, "resourceSpans[]", dict)
        resource = optional(resource_spans, "resource", dict) or {}
        resource_attrs = attributes(resource.get("attributes"), "resource.attributes")
        scopes = optional(resource_spans, "scopeSpans", list) or optional(resource_spans, "instrumentationLibrarySpans", list) or []
        for scope_spans in scopes:
            scope_spans = check_type(scope_spans, "scopeSpans[]", dict)
            scope = optional(scope_spans, "scope", dict) or optional(scope_spans, "instrumentationLibrary", dict) or {}
            context = {**resource_attrs, "otel.scope.name": scope.get("name")}
            checked.extend((span, context) for span in optional(scope_spans, "spans", list) or [])
    yield from checked


# -- one span -> one row ---------------------------------------------------------------------------------
def span_row(span: Any, resource: dict[str, Any], number: int) -> tuple[str, dict[str, Any]] | None:
    """``("requests" | "events", row)`` for a GenAI span, None for any other span, or RecordError."""
    span = check_type(span, "span", dict)
    attrs = attributes(span.get("attributes"), "span.attributes")
    name = optional(span, "name", str) or ""
    operation = _operation(attrs, name)
    if operation is None and not any(k.startswith("gen_ai.") for k in attrs):
        return None
    start = unix_nanos(span.get("startTimeUnixNano"), "startTimeUnixNano")
    if start is None:
        raise RecordError(REJECT_MISSING_FIELD, "required field 'startTimeUnixNano' is missing")
    end = unix_nanos(span.get("endTimeUnixNano"), "endTimeUnixNano")
    if end is not None and end < start:
        raise RecordError(REJECT_ABSURD_VALUE, f"span ends {(start - end) / 1e6:g} ms before it starts")
    events = _span_events(span, start)
    common = {
        "ts": nanos_ts(start, "startTimeUnixNano"),
        "session_id": _str(attrs, "gen_ai.conversation.id", "session.id"),
        "user_id": _str(attrs, "user.id", "enduser.id"),
        "ide": _str(resource, "service.name"),
        "source_line": number,
    }
    total = latency((end - start) / 1e6, "endTimeUnixNano - startTimeUnixNano") if end is not None else None
    content = {**_detail_attrs(events), **attrs}
    is_request = operation in INFERENCE_KINDS or (operation is None and _has_llm_payload(content))
    extra = _attrs(span, attrs, resource, name, operation)
    if not is_request:
        action = EVENT_ACTIONS.get(operation or "") or "other:" + (operation or name or "gen_ai")[:200]
        return "events", {**common, "action": action, "duration_ms": total, "attrs": attrs_json(extra)}
    return "requests", {**common, **_request_fields(attrs, content, events, start), "total_ms": total,
                        "kind": INFERENCE_KINDS.get(operation or "", "other"), "request_id": _request_id(span),
                        "attrs": attrs_json(extra)}


def _operation(attrs: dict[str, Any], name: str) -> str | None:
    for key in ("gen_ai.operation.name", "llm.request.type"):
        value = attrs.get(key)
        if isinstance(value, str) and value:
            return value.strip().lower()
    first = name.split(" ", 1)[0].lower()
    if first in OPERATIONS:
        return first
    last = name.rsplit(".", 1)[-1].lower()  # OpenLLMetry names spans "openai.chat", "anthropic.completion"
    if "." in name and last in INFERENCE_KINDS and any(k.startswith("gen_ai.") for k in attrs):
        return last
    return None


def _has_llm_payload(attrs: dict[str, Any]) -> bool:
    keys = ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.prompt", "gen_ai.completion",
            "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "gen_ai.usage.prompt_tokens",
            "gen_ai.usage.completion_tokens", "gen_ai.prompt.0.content", "gen_ai.completion.0.content")
    return any(k in attrs for k in keys)


def _request_fields(attrs: dict[str, Any], content: dict[str, Any], events: list[dict[str, Any]], start: int) -> dict[str, Any]:
    chunks = [e for e in events if e["name"].endswith(".chunk")]
    times = [latency((e["time"] - start) / 1e6, f"span event {e['name']!r} offset") for e in chunks] or None
    texts = [e["text"] for e in chunks]
    return {
        "model": _str(attrs, "gen_ai.request.model", "gen_ai.response.model"),
        "prompt": prompt_text(content, events),
        "completion": completion_text(content, events),
        "prompt_tokens": _tokens(attrs, "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.usage.prompt_tokens"),
        "completion_tokens": _tokens(attrs, "gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens",
                                     "llm.usage.completion_tokens"),
        "ttft_ms": _ttft(attrs, events, times, start),
        "token_times_ms": times,
        "token_texts": texts if texts and all(isinstance(t, str) for t in texts) else None,
    }


def _ttft(attrs: dict[str, Any], events: list[dict[str, Any]], times: list[float] | None, start: int) -> float | None:
    seconds = attrs.get("gen_ai.response.time_to_first_chunk")
    if seconds is not None:
        return latency(check_type(seconds, "gen_ai.response.time_to_first_chunk", float) * 1000.0,
                       "gen_ai.response.time_to_first_chunk")
    if times:
        return times[0]
    for event in events:
        if "first_token" in event["name"] or "first_chunk" in event["name"]:
            return latency((event["time"] - start) / 1e6, f"span event {event['name']!r} offset")
    return None


def _span_events(span: dict[str, Any], start: int) -> list[dict[str, Any]]:
    """The span's events as ``{name, time, attrs, text}``, in time order."""
    out = []
    for event in optional(span, "events", list) or []:
        event = check_type(event, "span.events[]", dict)
        attrs = attributes(event.get("attributes"), "span.events[].attributes")
        time = unix_nanos(event.get("timeUnixNano"), "span.events[].timeUnixNano") or start
        text = next((attrs[k] for k in _CHUNK_TEXT_KEYS if isinstance(attrs.get(k), str)), None)
        out.append({"name": optional(event, "name", str) or "", "time": time, "attrs": attrs, "text": text})
    return sorted(out, key=lambda e: e["time"])


def _detail_attrs(events: list[dict[str, Any]]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for event in events:
        if event["name"] in _DETAIL_EVENTS:
            merged.update(event["attrs"])
    return merged


def _tokens(attrs: dict[str, Any], *keys: str) -> int | None:
    for key in keys:
        value = attrs.get(key)
        if value is None:
            continue
        value = check_type(value, key, int)
        if not 0 <= value <= MAX_TOKENS:
            raise RecordError(REJECT_ABSURD_VALUE, f"attribute {key!r} = {value} is not a plausible token count")
        return value
    return None


def _str(attrs: dict[str, Any], *keys: str) -> str | None:
    for key in keys:
        value = attrs.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _request_id(span: dict[str, Any]) -> str | None:
    trace, span_id = span.get("traceId"), span.get("spanId")
    return f"{trace}:{span_id}" if isinstance(trace, str) and trace and isinstance(span_id, str) and span_id else None


def _attrs(span: dict[str, Any], attrs: dict[str, Any], resource: dict[str, Any], name: str, operation: str | None) -> dict[str, Any]:
    status = span.get("status") if isinstance(span.get("status"), dict) else {}
    extra = {
        k: v for k, v in attrs.items()
        if k.startswith("gen_ai.") and k not in CONTENT_KEYS and k not in _CONSUMED and not _indexed_content(k)
    }
    extra.update({
        "raw_action": operation or name, "operation": operation, "span_name": name or None,
        "provider": _str(attrs, "gen_ai.provider.name", "gen_ai.system"), "trace_id": span.get("traceId") or None,
        "span_id": span.get("spanId") or None, "parent_span_id": span.get("parentSpanId") or None,
        "status": _status(status.get("code")), "status_message": status.get("message") or None,
        "error_type": _str(attrs, "error.type"), "scope": resource.get("otel.scope.name"),
    })
    return extra


def _status(code: Any) -> str | None:
    return {1: "ok", 2: "error", "STATUS_CODE_OK": "ok", "STATUS_CODE_ERROR": "error"}.get(code) if code is not None else None


def _indexed_content(key: str) -> bool:
    for prefix in ("gen_ai.prompt.", "gen_ai.completion."):
        if key.startswith(prefix) and key[len(prefix):].split(".", 1)[0].isdigit():
            return True
    return False
