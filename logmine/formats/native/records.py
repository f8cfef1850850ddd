"""logmine's own JSONL: one record a line, ``"type": "event"`` or ``"type": "llm_request"``.

The fields are the workspace columns themselves (see :mod:`logmine.records`); ``ts`` is ISO
8601 text or epoch ms. The JSON Schema in ``schemas/native_record.schema.json`` is generated
from :class:`NativeEvent` and :class:`NativeRequest`.

Two readers produce the same rows: :func:`read_per_line` checks each line in Python, and the
vectorised reader in :mod:`logmine.formats.native.fast` (the default for files of 1 MiB and
more; ``LOGMINE_NATIVE_FAST=0`` or ``=1`` forces one or the other) parses big chunks with Polars
and hands every line it cannot vouch for to :func:`add_line`, so rejects and their reasons come
from one place.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ConfigDict, Field

from logmine.formats._base import (
    Batch,
    RecordError,
    check_type,
    decode_json_line,
    iter_lines,
    latency,
    normalise_language,
    optional,
    parse_ts,
    reject,
    require,
)
from logmine.records import REJECT_ABSURD_VALUE, REJECT_MISSING_FIELD, REJECT_UNKNOWN_RECORD, REJECT_WRONG_TYPE, REQUEST_KINDS

NAME = "native"
FORMAT_VERSION = 1
BATCH_LINES = 50_000


class NativeEvent(BaseModel):
    """An editor action."""

    model_config = ConfigDict(extra="forbid")
    type: Literal["event"]
    format_version: int = FORMAT_VERSION
    ts: str | float = Field(description="ISO 8601 time or epoch milliseconds")
    action: str = Field(description="normalised action name, e.g. file.save")
    session_id: str | None = None
    user_id: str | None = Field(None, description="raw user id; pseudonymised on ingest")
    ide: str | None = None
    file_path: str | None = None
    language: str | None = None
    duration_ms: float | None = Field(None, ge=0)
    attrs: dict[str, Any] | None = None
    event_id: str | None = None


class NativeRequest(BaseModel):
    """One request to the code assistant's model."""

    model_config = ConfigDict(extra="forbid")
    type: Literal["llm_request"]
    format_version: int = FORMAT_VERSION
    ts: str | float
    kind: Literal["completion", "chat", "edit", "other"] = "other"
    request_id: str | None = None
    session_id: str | None = None
    user_id: str | None = None
    ide: str | None = None
    model: str | None = None
    language: str | None = None
    file_path: str | None = None
    prompt: str | None = None
    prefix: str | None = None
    suffix: str | None = None
    completion: str | None = None
    accepted: bool | None = None
    ttft_ms: float | None = Field(None, ge=0)
    total_ms: float | None = Field(None, ge=0)
    prompt_tokens: int | None = Field(None, ge=0)
    completion_tokens: int | None = Field(None, ge=0)
    token_times_ms: list[float] | None = Field(None, description="arrival offset of each streamed token from the request start")
    token_texts: list[str] | None = None
    attrs: dict[str, Any] | None = None


_STRINGS = ("session_id", "user_id", "ide", "file_path")


def sniff(path: Path, head: list[bytes]) -> bool:
    return any(b'"type":"event"' in line.replace(b" ", b"") or b'"type":"llm_request"' in line.replace(b" ", b"") for line in head)


def read_per_line(path: Path) -> Iterator[Batch]:
    """Read ``path`` one line at a time (the reference semantics of the format)."""
    batch = Batch()
    for number, raw in iter_lines(path):
        add_line(batch, number, raw)
        if batch.lines_read >= BATCH_LINES:
            yield batch
            batch = Batch()
    yield batch


def add_lines(batch: Batch, lines: Iterable[tuple[int, bytes]]) -> None:
    for number, raw in lines:
        add_line(batch, number, raw)


def add_line(batch: Batch, number: int, raw: bytes) -> None:
    """Account for one line (newline stripped): a row in ``batch`` or a reject with its reason."""
    batch.lines_read += 1
    try:
        if not raw.strip():
            raise RecordError(REJECT_MISSING_FIELD, "blank line")
        _into(batch, number, decode_json_line(raw))
        batch.lines_accepted += 1
    except RecordError as err:
        batch.rejects.append(reject(number, raw, err))


def _into(batch: Batch, number: int, obj: Any) -> None:
    if not isinstance(obj, dict):
        raise RecordError(REJECT_WRONG_TYPE, f"a record must be a JSON object, got {type(obj).__name__}")
    kind = obj.get("type")
    if kind == "event":
        batch.events.append(event_row(obj, number))  # type: ignore[union-attr]
    elif kind == "llm_request":
        batch.requests.append(request_row(obj, number))  # type: ignore[union-attr]
    else:
        raise RecordError(REJECT_UNKNOWN_RECORD, f"'type' must be 'event' or 'llm_request', got {kind!r}")


def _common(obj: dict[str, Any], number: int) -> dict[str, Any]:
    row: dict[str, Any] = {"ts": parse_ts(obj.get("ts")), "source_line": number}
    for key in _STRINGS:
        row[key] = optional(obj, key, str)
    row["language"] = normalise_language(optional(obj, "language", str))
    attrs = optional(obj, "attrs", dict)
    row["attrs"] = orjson.dumps(attrs, option=orjson.OPT_SORT_KEYS).decode() if attrs else None
    return row


def event_row(obj: dict[str, Any], number: int) -> dict[str, Any]:
    row = _common(obj, number)
    row["action"] = require(obj, "action", str)
    row["event_id"] = optional(obj, "event_id", str)
    row["duration_ms"] = latency(obj.get("duration_ms"), "duration_ms")
    return row


def request_row(obj: dict[str, Any], number: int) -> dict[str, Any]:
    row = _common(obj, number)
    kind = obj.get("kind") or "other"
    if kind not in REQUEST_KINDS:
        raise RecordError(REJECT_WRONG_TYPE, f"'kind' must be one of {', '.join(REQUEST_KINDS)}, got {kind!r}")
    row["kind"] = kind
    row["request_id"] = optional(obj, "request_id", str)
    for key in ("model", "prompt", "prefix", "suffix", "completion"):
        row[key] = optional(obj, key, str)
    row["accepted"] = optional(obj, "accepted", bool)
    row["ttft_ms"] = latency(obj.get("ttft_ms"), "ttft_ms")
    row["total_ms"] = latency(obj.get("total_ms"), "total_ms")
    for key in ("prompt_tokens", "completion_tokens"):
        value = optional(obj, key, int)
        if value is not None and value < 0:
            raise RecordError(REJECT_ABSURD_VALUE, f"field {key!r} = {value} is negative")
        row[key] = value
    row["token_times_ms"] = _token_times(obj.get("token_times_ms"))
    texts = optional(obj, "token_texts", list)
    if texts is not None:
        texts = [check_type(t, "token_texts[]", str) for t in texts]
    row["token_texts"] = texts
    return row


def _token_times(value: Any) -> list[float] | None:
    if value is None:
        return None
    value = check_type(value, "token_times_ms", list)
    times = [latency(t, "token_times_ms[]") for t in value]
    return times  # type: ignore[return-value]
