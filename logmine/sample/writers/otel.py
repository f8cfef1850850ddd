"""OpenTelemetry GenAI spans as OTLP/JSON: ``otel/<user>/traces-YYYY-MM-DD.jsonl``, one export
request of 1-6 spans a line as the collector's file exporter writes them.

Span name ``"{gen_ai.operation.name} {gen_ai.request.model}"``, ``gen_ai.*`` attributes with
opt-in content (``gen_ai.input.messages``, ``gen_ai.system_instructions``,
``gen_ai.output.messages``). Every second user runs an older instrumentation whose files use
the deprecated names instead (``gen_ai.system``, ``gen_ai.prompt``, ``gen_ai.completion``,
``gen_ai.usage.prompt_tokens`` / ``completion_tokens``). In the current-style files a quarter of the spans carry one
``llm.content.completion.chunk`` event per streamed token (OpenLLMetry's shape), so their
per-token latency survives.
"""

from __future__ import annotations

from typing import Any

import orjson

from logmine.sample.model import Request, Session
from logmine.sample.writers._base import Writer, day, deep

MAX_SPANS_PER_LINE = 6
"""An export request (a line) holds 1-6 spans: whatever the batch processor had collected."""
CHUNK_EVENTS_P = 0.25
SCOPE = {"name": "opentelemetry.instrumentation.genai", "version": "0.4b0"}
ABSURD_NS = "5680281600000000000"


def _s(key: str, value: str) -> dict[str, Any]:
    return {"key": key, "value": {"stringValue": value}}


def _i(key: str, value: int) -> dict[str, Any]:
    return {"key": key, "value": {"intValue": str(value)}}


def _d(key: str, value: float) -> dict[str, Any]:
    return {"key": key, "value": {"doubleValue": value}}


def _b(key: str, value: bool) -> dict[str, Any]:
    return {"key": key, "value": {"boolValue": value}}


def _a(key: str, values: list[str]) -> dict[str, Any]:
    return {"key": key, "value": {"arrayValue": {"values": [{"stringValue": v} for v in values]}}}


def _json(value: Any) -> str:
    return orjson.dumps(value).decode()


DEPRECATED_SCOPE = {"name": "opentelemetry.instrumentation.openai", "version": "0.26.1"}


class OtelWriter(Writer):
    NAME = "otel"
    IDES = ("vscode",)

    def write(self, session: Session) -> None:
        person = session.user.person
        self.truth.person(self.NAME, person.login, person.email, person.home, "user.id, code.file.path, prompts")
        resource = {"attributes": [
            _s("service.name", session.ide), _s("service.version", "1.96.4"), _s("telemetry.sdk.name", "opentelemetry"),
            _s("telemetry.sdk.language", "nodejs"), _s("host.name", f"{person.login}-laptop"), _s("session.id", session.session_id),
        ]}
        requests = [item for item in session.items if isinstance(item, Request)]
        trace = self.draw.hex(32)
        old = session.user.index % 2 == 1  # an older instrumentation: deprecated attribute names
        i = 0
        while i < len(requests):
            batch = requests[i : i + self.draw.between(1, MAX_SPANS_PER_LINE)]
            i += len(batch)
            spans = [self._span(r, session, trace, old, person.login) for r in batch]
            scope = DEPRECATED_SCOPE if old else SCOPE
            self.files.line(f"otel/{person.login}/traces-{day(batch[0].ts)}.jsonl",
                            {"resourceSpans": [{"resource": resource, "scopeSpans": [{"scope": scope, "spans": spans}]}]},
                            weight=len(spans))

    def _span(self, r: Request, session: Session, trace: str, old: bool, login: str) -> dict[str, Any]:
        operation = "text_completion" if r.kind == "completion" else "chat"
        total = r.timing.total_ms if r.timing else float(self.draw.between(40, 5000))
        start_ns = r.ts * 1_000_000
        attrs = [_s("gen_ai.operation.name", operation), _s("gen_ai.request.model", r.model.name),
                 _i("gen_ai.request.max_tokens", 256 if r.kind == "completion" else 4096),
                 _d("gen_ai.request.temperature", 0.2 if r.kind == "completion" else 0.7), _b("gen_ai.request.stream", True),
                 _s("gen_ai.conversation.id", session.session_id), _s("user.id", login)]
        if r.file_path:
            attrs.append(_s("code.file.path", r.file_path))
        if r.template.command:
            attrs.append(_s("gen_ai.prompt.name", r.template.command))
        system = [text for role, text in r.messages if role == "system"]
        turns = [("user" if role == "prompt" else role, text) for role, text in r.messages if role != "system"]
        if old:
            attrs.append(_s("gen_ai.system", r.model.provider))
            attrs.append(_s("gen_ai.prompt", _json([{"role": "system", "content": t} for t in system]
                                                        + [{"role": role, "content": t} for role, t in turns])))
        else:
            attrs.append(_s("gen_ai.provider.name", r.model.provider))
            if system:
                attrs.append(_s("gen_ai.system_instructions", _json([{"type": "text", "content": t} for t in system])))
            attrs.append(_s("gen_ai.input.messages", _json(
                [{"role": role, "parts": [{"type": "text", "content": t}]} for role, t in turns])))
        self.truth.prompt(self.NAME, r)
        span: dict[str, Any] = {"traceId": trace, "spanId": self.draw.hex(16), "name": f"{operation} {r.model.name}", "kind": 3,
                                "startTimeUnixNano": str(start_ns), "endTimeUnixNano": str(start_ns + int(total * 1_000_000))}
        if r.outcome == "error":
            attrs.append(_s("error.type", "ServiceUnavailable"))
            span["status"] = {"code": 2, "message": "HTTP 503 Service Unavailable"}
        else:
            self._answer(r, attrs, old)
            if not old and r.timing is not None and r.token_texts and self.draw.chance(CHUNK_EVENTS_P):
                span["events"] = [{"timeUnixNano": str(start_ns + int(t * 1_000_000)), "name": "llm.content.completion.chunk"}
                                  for t in r.timing.token_times_ms]
            span["status"] = {}
        span["attributes"] = attrs
        return span

    def _answer(self, r: Request, attrs: list[dict[str, Any]], old: bool) -> None:
        finish = "length" if len(r.token_texts) >= 256 else "stop"
        if r.outcome == "cancel":
            attrs.append(_s("error.type", "cancelled"))
        attrs.append(_s("gen_ai.response.id", "chatcmpl-" + r.request_id.replace("-", "")[:24]))
        attrs.append(_s("gen_ai.response.model", r.model.name))
        attrs.append(_a("gen_ai.response.finish_reasons", [finish]))
        if old:
            attrs.append(_s("gen_ai.completion", _json([{"role": "assistant", "content": r.completion}])))
            attrs.append(_i("gen_ai.usage.prompt_tokens", r.prompt_tokens))
            attrs.append(_i("gen_ai.usage.completion_tokens", len(r.token_texts)))
            return
        if r.timing is not None and r.token_texts:
            attrs.append(_d("gen_ai.response.time_to_first_chunk", round(r.timing.ttft_ms / 1000.0, 4)))
        attrs.append(_s("gen_ai.output.messages", _json(
            [{"role": "assistant", "parts": [{"type": "text", "content": r.completion}], "finish_reason": finish}])))
        attrs.append(_i("gen_ai.usage.input_tokens", r.prompt_tokens))
        attrs.append(_i("gen_ai.usage.output_tokens", len(r.token_texts)))

    def corrupt(self, obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
        obj = deep(obj)
        spans = [span for rs in obj["resourceSpans"] for ss in rs["scopeSpans"] for span in ss["spans"]]
        if kind == "wrong_type":
            if self.draw.chance(0.5):
                obj["resourceSpans"] = {"spans": len(spans)}
            else:
                for span in spans:
                    span["startTimeUnixNano"] = True
            return obj
        for span in spans:
            if kind == "negative_latency":
                span["endTimeUnixNano"] = str(int(span["startTimeUnixNano"]) - 1_000_000 * self.draw.between(1, 900))
            elif kind == "absurd_timestamp":
                span["startTimeUnixNano"] = span["endTimeUnixNano"] = ABSURD_NS
            else:
                return None
        return obj
