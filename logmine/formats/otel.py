"""OpenTelemetry GenAI spans and log records exported as OTLP/JSON (``resourceSpans[].scopeSpans[].spans[]``,
``resourceLogs[].scopeLogs[].logRecords[]``).

A file is either JSON Lines of export requests, one a line as the collector's file exporter
writes them (chosen when the first non-empty line is a whole ``{...}``), or a JSON document: one
export request, possibly pretty-printed, an array of them, or several concatenated.

Accounting -- one rule per shape, and ``lines_read == lines_accepted + rejects`` holds exactly:

- JSON Lines: the unit is the line (``source_line`` = line number). A line whose JSON is bad, or
  that is not an export request, is rejected. Otherwise its spans are read one by one; the line
  is accepted when it gives at least one row or has no bad span, and rejected (with the first bad
  span's reason) only when its GenAI spans are all bad. Bad spans on an accepted line are logged
  as warnings, not rejected: a line is one unit and cannot be both.
- A document: the unit is the span or log record (``source_line`` = its 1-based position in the
  document). Each is accepted or rejected on its own; malformed JSON, or an export request of the
  wrong shape, is one rejected unit.

Spans without any ``gen_ai.*`` attribute and without a GenAI operation name (HTTP, DB, ...), log
records of no ``gen_ai.*`` event and metrics requests give no row but count as accepted: they are
valid input this reader has nothing to take from.

Spans and their events in two files. In the default (stable) semantic conventions the official
instrumentations export prompts and completions as GenAI events in log records
(:mod:`logmine.formats._otel_logs`), tied to their span by ``traceId`` / ``spanId``; the span
carries the timing, model and token usage. The log records may be in the spans file or in its
companion, named ``x.logs.jsonl`` beside ``x.jsonl`` (compressed alike). Reading either file reads
the GenAI records of both (and which spans make requests), and each request becomes ONE row:

- a span's row (in its file's rows) takes its prompt and completion from its events wherever they
  are (``attrs.log_records`` counts them), when the span carries none of its own;
- events whose span is in neither file make a request of their own: ``kind`` chat, ``ts`` = the
  first event's time, prompt and completion from the events, no timings, ``request_id`` =
  ``<traceId>:<spanId>`` as the span's would be; the row belongs to the first line holding one of
  them, in the spans file before the logs file;
- every other line of GenAI events is accepted and gives no row: its events are in a row already.

So each file's rows stay its own partition and exact; ingest reads a pair together and reads a
file again when its companion changed (:mod:`logmine.stages.ingest`). Message events render as
the ``gen_ai_latest_experimental`` span attributes do (``role: text`` lines, tool calls as
``[tool_call name {args}]``, tool results as ``[tool_call_response ...]``), so both modes give the
same prompt text. Every chat request (span or events) also makes the ``chat.request`` event that
Continue's and Tabby's chats make, with ``request_id``, ``model`` and the trace and span ids.

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
    iter_json_records,
    latency,
    optional,
    reject,
)
from logmine.formats._genai_messages import completion_text, prompt_text
from logmine.formats._jsondoc import iter_json_values, looks_like_jsonl, read_document
from logmine.formats._otel_logs import (
    LogEvent,
    companion,
    event_messages,
    is_logs_file,
    iter_log_records,
    log_event,
)
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
    return any(b'"resourceSpans"' in line or b'"resourceLogs"' in line for line in head)


def read(path: Path) -> Iterator[Batch]:
    """The rows of ``path``, its spans joined with the GenAI log records of ``path`` and of its
    companion file (``x.jsonl`` <-> ``x.logs.jsonl``) when that exists (see the module doc)."""
    files = [p for p in sorted({path, *_existing_companion(path)}, key=_naming_rank)]
    index = _Index(files)
    rank = files.index(path)
    batch, emitted = Batch(), set()
    for unit, raw, records in _units(path):
        batch.lines_read += 1
        try:
            if isinstance(records, RecordError):
                raise records
            rows, errors = _unit_rows(records, unit, index, rank, emitted)
            if errors and not rows:
                first = errors[0]
                more = f" (and {len(errors) - 1} more bad records)" if len(errors) > 1 else ""
                raise RecordError(first.kind, first.detail + more)
            for err in errors:
                log.warning("%s:%d: a record was skipped: %s", path, unit, err)
            _add(batch, rows)
            batch.lines_accepted += 1
        except RecordError as err:
            batch.rejects.append(reject(unit, raw, err))
        if batch.lines_read >= BATCH_UNITS:
            yield batch
            batch = Batch()
    yield batch


def _existing_companion(path: Path) -> list[Path]:
    other = companion(path)
    return [other] if other is not None and other.is_file() else []


def _naming_rank(path: Path) -> tuple[bool, str]:
    """Spans file first, logs file second: the order that decides which file owns a span's events."""
    return is_logs_file(path), path.name


Record = tuple[str, Any, dict[str, Any]]
"""``("span" | "log", item, context)``: one span or log record of an export request."""


def _units(path: Path) -> Iterator[tuple[int, bytes, list[Record] | RecordError]]:
    """``(unit, raw, records)``: a JSON Lines file's lines, or a JSON document's records one by one."""
    if looks_like_jsonl(head_lines(path, 1)):
        for number, raw, obj in iter_json_records(path):
            try:
                yield number, raw, obj if isinstance(obj, RecordError) else list(iter_records(obj))
            except RecordError as err:
                yield number, raw, err
        return
    unit = 0
    for obj, raw in iter_json_values(read_document(path)):
        try:
            if isinstance(obj, RecordError):
                raise obj
            records = list(iter_records(obj))
        except RecordError as err:
            unit += 1
            yield unit, raw.encode(), err
            continue
        for record in records:
            unit += 1
            yield unit, _span_raw(record[1]), [record]


def iter_records(obj: Any) -> Iterator[Record]:
    """The spans and log records of one OTLP/JSON export request (or RecordError)."""
    obj = check_type(obj, "export request", dict)
    if "resourceSpans" not in obj and "resourceLogs" not in obj:
        if "resourceMetrics" in obj:
            return
        raise RecordError(REJECT_UNKNOWN_RECORD, "not an OTLP/JSON trace or logs export: no 'resourceSpans' or 'resourceLogs'")
    records: list[Record] = [("span", span, context) for span, context in iter_spans(obj)] if "resourceSpans" in obj else []
    if "resourceLogs" in obj:
        records.extend(("log", record, context) for record, context in iter_log_records(obj))
    yield from records


class _Index:
    """What the join needs from every file of the pair: each span's GenAI events, the spans that
    make a request, and for the events of no such span, the first unit (file rank, unit) holding them."""

    def __init__(self, files: list[Path]) -> None:
        self.events: dict[Any, list[LogEvent]] = {}
        self.request_spans: set[tuple[str, str]] = set()
        self.first: dict[Any, tuple[int, int]] = {}
        for rank, path in enumerate(files):
            for unit, _, records in _units(path):
                if not isinstance(records, RecordError):
                    self._add(records, rank, unit)
        for events in self.events.values():
            events.sort(key=lambda e: e.time)

    def _add(self, records: list[Record], rank: int, unit: int) -> None:
        for i, (kind, item, context) in enumerate(records):
            try:
                if kind == "span":
                    row = span_row(item, context, unit)
                    if row is not None and row[0] == "requests" and isinstance(item.get("traceId"), str):
                        self.request_spans.add((item["traceId"], item.get("spanId")))
                    continue
                event = log_event(item, context)
            except RecordError:
                continue  # the record's own file rejects it
            if event is not None:
                key = event.key or (rank, unit, i)  # a record that names no span is a request of its own
                self.events.setdefault(key, []).append(event)
                self.first.setdefault(key, (rank, unit))

    def owns(self, key: Any, rank: int, unit: int) -> bool:
        """True when ``unit`` of file ``rank`` is where the events of ``key`` become a request of their own."""
        return key not in self.request_spans and self.first.get(key) == (rank, unit)


def _unit_rows(records: list[Record], unit: int, index: _Index, rank: int,
               emitted: set[Any]) -> tuple[list[tuple[str, dict[str, Any]]], list[RecordError]]:
    rows, errors = [], []
    for i, (kind, item, context) in enumerate(records):
        try:
            if kind == "span":
                key = (item.get("traceId"), item.get("spanId")) if isinstance(item, dict) else None
                row = span_row(item, context, unit, index.events.get(key, []))
                rows.extend([row, *_chat_event(row)] if row is not None else [])
                continue
            event = log_event(item, context)
        except RecordError as err:
            errors.append(err)
            continue
        key = None if event is None else event.key or (rank, unit, i)
        if key is not None and key not in emitted and index.owns(key, rank, unit):
            emitted.add(key)
            row = events_request(index.events[key], unit)
            rows.extend([row, *_chat_event(row)])
    return rows, errors


def _chat_event(row: tuple[str, dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """The ``chat.request`` event of a chat request row (Continue's and Tabby's chats make one too)."""
    table, request = row
    if table != "requests" or request["kind"] != "chat":
        return []
    attrs = json.loads(request["attrs"]) if request.get("attrs") else {}
    extra = {"raw_action": attrs.get("raw_action") or "chat", "request_id": request.get("request_id"), "model": request.get("model"),
             "trace_id": attrs.get("trace_id"), "span_id": attrs.get("span_id")}
    common = {k: request.get(k) for k in ("ts", "session_id", "user_id", "ide", "source_line")}
    return [("events", {**common, "action": "chat.request", "attrs": attrs_json(extra)})]


def events_request(events: list[LogEvent], unit: int) -> tuple[str, dict[str, Any]]:
    """The ``llm_requests`` row of GenAI events whose span is in neither file: prompt and completion
    from the events, ``ts`` = the first event's time, no timings (those are the span's)."""
    prompt, completion, reasons = event_messages(events)
    details = {k: v for e in events for k, v in e.attrs.items()}
    first = events[0]
    extra = {
        "raw_action": "chat", "provider": _str(details, "gen_ai.provider.name", "gen_ai.system"),
        "trace_id": first.key[0] if first.key else None, "span_id": first.key[1] if first.key else None,
        "finish_reasons": reasons or None, "log_records": len(events), "scope": first.context.get("otel.scope.name"),
    }
    return "requests", {
        "ts": nanos_ts(first.time, "timeUnixNano"), "kind": "chat", "source_line": unit,
        "request_id": f"{first.key[0]}:{first.key[1]}" if first.key else None,
        "model": _str(details, "gen_ai.request.model", "gen_ai.response.model"), "prompt": prompt, "completion": completion,
        "session_id": _str(details, "gen_ai.conversation.id"), "ide": _str(first.context, "service.name"),
        "attrs": attrs_json(extra),
    }


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
def span_row(span: Any, resource: dict[str, Any], number: int,
             logs: list[LogEvent] | None = None) -> tuple[str, dict[str, Any]] | None:
    """``("requests" | "events", row)`` for a GenAI span, None for any other span, or RecordError.

    ``logs``: the span's GenAI events exported as log records; they give the prompt and the
    completion when the span carries none."""
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
    fields = _request_fields(attrs, content, events, start)
    if logs:
        prompt, completion, _ = event_messages(logs)
        fields["prompt"] = fields["prompt"] or prompt
        fields["completion"] = fields["completion"] or completion
        extra["log_records"] = len(logs)
    return "requests", {**common, **fields, "total_ms": total,
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
