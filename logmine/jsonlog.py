"""Application logs written as JSON lines: one object a line, its message under a key of its own
(pino, bunyan, structlog, logrus and zap's JSON, Python's JSON formatters, Docker's json-file).

The keys are found per file, not configured (:func:`json_header`): the message key most lines hold
(``message``, ``msg``, ``@m``, ``event``, ``log``, ``text``) and, for each header field, the key most
lines hold among its usual names (``time``/``timestamp``/``@timestamp``/``ts`` for ``ts``,
``level``/``severity``/``levelname`` for ``level``, ``logger``/``name``/``module`` for ``logger``...).
A :class:`JsonHeader` reads a line as :class:`logmine.textlog.Header` reads a text line (``match``,
``parse``, ``fields``), so :func:`logmine.textlog.entries` cuts a JSON log into entries the same way:
a line that is no such object (a stack trace printed raw) continues the entry before it. A stack trace
written beside the message (``exc_info``, ``stack``, pino's ``err.stack``, ...) is the entry's too: the
lines of the message after its first and the trace are the entry's inner lines
(:attr:`logmine.textlog.Entry.inner`), text but no physical lines.

The numeric levels of pino and bunyan (10 trace ... 60 fatal) are read as their names.

Pure: values in, values out.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

MESSAGE_KEYS = ("message", "msg", "@m", "event", "log", "text")
"""Keys a JSON log line holds its message under, the first a line has wins."""
FIELD_KEYS: dict[str, tuple[str, ...]] = {
    "ts": ("timestamp", "time", "@timestamp", "ts", "@t", "datetime", "asctime", "date"),
    "thread": ("thread", "threadName", "thread_name"),
    "level": ("level", "severity", "levelname", "log.level", "lvl", "@l", "loglevel"),
    "logger": ("logger", "logger_name", "loggerName", "log.logger", "name", "module", "component", "caller"),
    "pid": ("pid", "process"),
    "tid": ("tid", "thread_id"),
    "host": ("hostname", "host"),
    "context": (),
}
"""Each header field (in :data:`logmine.textlog.FIELDS` order) and the keys it is written under, likeliest first."""
TRACE_KEYS = ("exc_info", "exc_text", "exception", "stack_trace", "stack", "traceback", "err", "error")
"""Keys a stack trace is written under (as text, or as an object with a ``stack``: pino's ``err``)."""
_NUMERIC_LEVELS = {"10": "TRACE", "20": "DEBUG", "30": "INFO", "40": "WARN", "50": "ERROR", "60": "FATAL"}


def _object(line: str) -> dict[str, Any] | None:
    text = line.strip()
    if not (text.startswith("{") and text.endswith("}")):
        return None
    try:
        obj = json.loads(text)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def _message_key(obj: dict[str, Any]) -> str | None:
    return next((k for k in MESSAGE_KEYS if isinstance(obj.get(k), str)), None)


def _scalar(value: Any) -> str | None:
    if value is None or isinstance(value, (dict, list)):
        return None
    return str(value).lower() if isinstance(value, bool) else str(value)


def _usual_key(obj: dict[str, Any], field: str, message_key: str) -> str | None:
    """The first of ``field``'s usual names that ``obj`` holds a value under (its message key aside)."""
    return next((k for k in FIELD_KEYS[field] if k != message_key and _scalar(obj.get(k)) is not None), None)


def _trace(obj: dict[str, Any]) -> str | None:
    """The stack trace a JSON line carries beside its message, or None."""
    for key in TRACE_KEYS:
        value = obj.get(key)
        if isinstance(value, dict):
            value = value.get("stack") or value.get("stack_trace")
        if isinstance(value, str) and "\n" in value.strip():
            return value.rstrip()
    return None


@dataclass(frozen=True)
class JsonHeader:
    """Where a file's JSON lines hold their message and header fields."""

    message_key: str
    keys: tuple[tuple[str, str], ...]
    """``(field, key)`` for each header field the lines hold."""
    coverage: float = 1.0
    """Share of the sampled lines that are such objects."""
    level_line: bool = False
    """Never: a JSON entry is one line (the attribute :func:`logmine.textlog.entries` reads)."""

    @property
    def slots(self) -> tuple[str, ...]:
        return ("json",)

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(field for field, _ in self.keys)

    @property
    def name(self) -> str:
        """The keys as text, e.g. ``json: time level name msg``."""
        return "json: " + " ".join([*(key for _, key in self.keys), self.message_key])

    def match(self, line: str) -> dict[str, str | None] | None:
        """The header fields and ``message`` of a JSON line holding a message key, or None. The file's keys
        come first; a line of another writer in the same file is read by the usual names."""
        obj = _object(line)
        if obj is None:
            return None
        key = self.message_key if isinstance(obj.get(self.message_key), str) else _message_key(obj)
        if key is None:
            return None
        message: str = obj[key]
        out = {field: _scalar(obj.get(name)) for field, name in self.keys}
        for field, value in out.items():
            if value is None and (name := _usual_key(obj, field, key)) is not None:
                out[field] = _scalar(obj[name])
        if out.get("level") in _NUMERIC_LEVELS:
            out["level"] = _NUMERIC_LEVELS[out["level"]]  # type: ignore[index]
        trace = _trace(obj)
        out["message"] = message.strip() + ("\n" + trace if trace else "")
        return out

    def parse(self, line: str) -> dict[str, str | None] | None:
        return self.match(line)

    def match_timestamp(self, line: str) -> dict[str, str | None] | None:
        """No line opens an entry with its timestamp alone: one that is no object continues the entry."""
        return None


def json_header(lines: Sequence[str], min_share: float = 0.3) -> JsonHeader | None:
    """The keys of a JSON-lines log, when at least ``min_share`` of the non-blank ``lines`` (and 2, or the
    one line of a one-line file) are objects holding a message key; else None."""
    seen = 0
    messages: Counter[str] = Counter()
    held: dict[str, Counter[str]] = {field: Counter() for field in FIELD_KEYS}
    for line in lines:
        if not line.strip():
            continue
        seen += 1
        obj = _object(line)
        if obj is None or (key := _message_key(obj)) is None:
            continue
        messages[key] += 1
        for field in FIELD_KEYS:
            if (found := _usual_key(obj, field, key)) is not None:
                held[field][found] += 1
    total = sum(messages.values())
    if total < min(2, seen) or total < min_share * seen:
        return None
    message_key = max(messages, key=lambda k: (messages[k], -MESSAGE_KEYS.index(k)))
    keys = tuple((field, max(c, key=lambda k: (c[k], -FIELD_KEYS[field].index(k)))) for field, c in held.items() if c)
    return JsonHeader(message_key, keys, round(total / seen, 4))
