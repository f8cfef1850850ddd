"""GenAI message content as text: the semantic conventions' input / output messages (``parts``),
the deprecated ``gen_ai.prompt`` / ``gen_ai.completion`` and indexed attributes, and span events,
flattened to ``role: text`` lines (shared by the OTel reader's spans and log records)."""

from __future__ import annotations

import ast
import json
from typing import Any

MESSAGE_EVENTS = {"gen_ai.system.message": "system", "gen_ai.user.message": "user", "gen_ai.assistant.message": "assistant",
                   "gen_ai.tool.message": "tool"}


def prompt_text(attrs: dict[str, Any], events: list[dict[str, Any]] | None = None) -> str | None:
    """System instructions and input messages as ``role: text`` lines (None when absent)."""
    blocks = []
    if attrs.get("gen_ai.system_instructions") is not None:
        blocks.append("system: " + _parts_text(json_value(attrs["gen_ai.system_instructions"])))
    for key in ("gen_ai.input.messages", "gen_ai.prompt"):
        if attrs.get(key) is not None:
            blocks.append(messages_text(json_value(attrs[key]), roles=True))
            break
    else:
        messages = _indexed_messages(attrs, "gen_ai.prompt") or [
            {"role": e["attrs"].get("role") or MESSAGE_EVENTS[e["name"]], "content": e["attrs"].get("content")}
            for e in events or [] if e["name"] in MESSAGE_EVENTS
        ]
        if messages:
            blocks.append(messages_text(messages, roles=True))
    return "\n".join(b for b in blocks if b) or None


def completion_text(attrs: dict[str, Any], events: list[dict[str, Any]] | None = None) -> str | None:
    """The output messages' text, choices separated by a newline (None when absent)."""
    for key in ("gen_ai.output.messages", "gen_ai.completion"):
        if attrs.get(key) is not None:
            return messages_text(json_value(attrs[key]), roles=False) or None
    messages = _indexed_messages(attrs, "gen_ai.completion") or [e["attrs"] for e in events or [] if e["name"] == "gen_ai.choice"]
    return messages_text(messages, roles=False) or None


def json_value(value: Any) -> Any:
    """JSON text parsed; a Python-literal list (the deprecated ``gen_ai.prompt`` examples use one)
    parsed safely with ``ast.literal_eval``; anything else as it is."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        pass
    if value.lstrip().startswith("[") and len(value) <= 1 << 20:
        try:
            return ast.literal_eval(value)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            pass
    return value


def _indexed_messages(attrs: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    out = []
    for i in range(10_000):
        role, content = attrs.get(f"{prefix}.{i}.role"), attrs.get(f"{prefix}.{i}.content")
        if role is None and content is None:
            break
        out.append({"role": role, "content": content})
    return out


def messages_text(messages: Any, roles: bool) -> str:
    if not isinstance(messages, list):
        return _content_text(messages)
    lines = []
    for message in messages:
        if not isinstance(message, dict):
            lines.append(_content_text(message))
            continue
        body = message.get("message") if isinstance(message.get("message"), dict) else message  # deprecated choice shape
        text = _parts_text(body["parts"]) if "parts" in body else _content_text(body.get("content"))
        role = body.get("role")
        lines.append(f"{role if isinstance(role, str) else '?'}: {text}" if roles else text)
    return "\n".join(lines)


def _parts_text(parts: Any) -> str:
    if not isinstance(parts, list):
        return _content_text(parts)
    return "\n".join(t for t in (_part_text(p) for p in parts) if t)


def _part_text(part: Any) -> str:
    if not isinstance(part, dict):
        return _content_text(part)
    kind = part.get("type")
    if kind == "reasoning":
        return ""
    if kind in {"tool_call", "server_tool_call"}:
        return f"[{kind} {part.get('name')} {json.dumps(part.get('arguments', part.get(kind)), sort_keys=True, ensure_ascii=False)}]"
    if kind in {"tool_call_response", "server_tool_call_response"}:
        return f"[{kind} {_content_text(part.get('response', part.get(kind)))}]"
    if kind in {"uri", "file", "blob"}:
        return f"[{kind} {part.get('modality') or part.get('mime_type') or ''}]".replace(" ]", "]")
    return _content_text(part.get("content", part.get("text")))


def _content_text(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(t for t in (_part_text(c) for c in content) if t)
    return json.dumps(content, sort_keys=True, ensure_ascii=False)
