"""Helpers shared by the JetBrains, KaVE and OTel readers: JSON documents that are not one
record a line (a pretty-printed array, concatenated objects), action-name mapping tables, and
merging a reader's batches for tests and small tools.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from logmine.formats._base import Batch, RecordError, open_binary
from logmine.records import REJECT_BAD_UTF8, REJECT_MALFORMED_JSON

MAX_DOCUMENT_BYTES = 1 << 30
"""A whole-file JSON document larger than this is refused (the file, not a record)."""
MAX_RAW_ACTION = 200
"""An unmapped raw action name longer than this is cut before it becomes ``other:<raw>``."""

_WS = " \t\r\n"


def read_document(path: Path) -> bytes:
    """All bytes of ``path`` (decompressed); ``ValueError`` when it is larger than the cap."""
    with open_binary(path) as fh:
        data = fh.read(MAX_DOCUMENT_BYTES + 1)
    if len(data) > MAX_DOCUMENT_BYTES:
        raise ValueError(f"{path}: a JSON document over {MAX_DOCUMENT_BYTES} bytes is not read")
    return data


def looks_like_jsonl(head: list[bytes]) -> bool:
    """True when the first non-empty line is a whole JSON object (``{ ... }``): one record a line.

    A pretty-printed document starts with a lone ``{`` or ``[``; an array on one line is a
    document too.
    """
    if not head:
        return False
    first = head[0].strip()
    return first.startswith(b"{") and first.endswith(b"}")


def iter_json_values(data: bytes, flatten_arrays: bool = True) -> Iterator[tuple[Any, str]]:
    """Yield ``(value, raw)`` for each top-level JSON value of ``data`` (elements of a top-level
    array when ``flatten_arrays``); ``value`` is a :class:`RecordError` for a bad one.

    Valid input is parsed in one go. Otherwise the values are decoded one by one, so a value with
    invalid UTF-8 is rejected alone; malformed JSON ends the document and the unread rest is one
    last error (JSON cannot be resynchronised reliably).
    """
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        yield from _iter_slow(data, flatten_arrays)
        return
    values = doc if flatten_arrays and isinstance(doc, list) else [doc]
    for value in values:
        yield value, _raw(value)


def _raw(value: Any) -> str:
    return orjson.dumps(value)[:1024].decode("utf-8", "replace")


def _iter_slow(data: bytes, flatten_arrays: bool) -> Iterator[tuple[Any, str]]:
    text = data.decode("utf-8", "surrogateescape")
    decoder = json.JSONDecoder(parse_int=_parse_int, parse_constant=_no_constant)
    pos = _skip(text, 0)
    in_array = flatten_arrays and text.startswith("[", pos)
    if in_array:
        pos = _skip(text, pos + 1)
        if text.startswith("]", pos):
            return
    index = 0
    while pos < len(text):
        index += 1
        try:
            value, end = decoder.raw_decode(text, pos)
        except ValueError as exc:  # JSONDecodeError, or NaN/Infinity, which JSON does not have
            rest = len(text) - pos
            where = f" at line {exc.lineno} column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
            reason = f"{getattr(exc, 'msg', exc)}{where} (value {index}); the remaining {rest} characters are not read"
            yield RecordError(REJECT_MALFORMED_JSON, reason), _clip(text[pos:])
            return
        piece = text[pos:end]
        try:
            piece.encode("utf-8")
            yield value, _clip(piece)
        except UnicodeEncodeError:
            yield RecordError(REJECT_BAD_UTF8, f"invalid UTF-8 in value {index}"), _clip(piece)
        pos = _skip(text, end)
        if in_array:
            if text.startswith(",", pos):
                pos = _skip(text, pos + 1)
            elif text.startswith("]", pos):
                pos = _skip(text, pos + 1)
                in_array = False
            else:
                yield RecordError(REJECT_MALFORMED_JSON, f"expected ',' or ']' after value {index}"), _clip(text[pos:])
                return


def _parse_int(text: str) -> int | float:
    """An integer as orjson reads it: beyond 64 bits it becomes a float."""
    value = int(text)
    return value if -(1 << 63) <= value < (1 << 64) else float(value)


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not valid JSON")


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _WS:
        pos += 1
    return pos


def _clip(text: str) -> str:
    return text[:1024].encode("utf-8", "replace").decode("utf-8")


# -- action names ---------------------------------------------------------------------------------
def map_action(raw: str, exact: Mapping[str, str], prefixes: Sequence[tuple[str, str]] = ()) -> str:
    """The normalised action for ``raw``: an exact match, else the first matching prefix, else
    ``other:<raw>`` (cut to :data:`MAX_RAW_ACTION` characters)."""
    if raw in exact:
        return exact[raw]
    for prefix, action in prefixes:
        if raw.startswith(prefix):
            return action
    return "other:" + raw[:MAX_RAW_ACTION]


# -- batches --------------------------------------------------------------------------------------
def merge_batches(batches: Iterable[Batch]) -> Batch:
    """One batch holding every row, reject and count of ``batches`` (rows as lists of dicts)."""
    out = Batch()
    for batch in batches:
        out.events.extend(_rows(batch.events))  # type: ignore[union-attr]
        out.requests.extend(_rows(batch.requests))  # type: ignore[union-attr]
        out.rejects.extend(batch.rejects)
        out.lines_read += batch.lines_read
        out.lines_accepted += batch.lines_accepted
    return out


def _rows(rows: Any) -> list[dict[str, Any]]:
    return rows if isinstance(rows, list) else rows.to_dicts()
