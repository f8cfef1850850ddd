"""The columns the vectorised native reader (:mod:`logmine.formats.native.fast`) reads and writes."""

from __future__ import annotations

import polars as pl

from logmine.records import UTC_TS

_S, _F, _I = pl.String(), pl.Float64(), pl.Int64()
READ_SCHEMA: dict[str, pl.DataType] = {
    "type": _S, "ts": _S, "action": _S, "event_id": _S, "session_id": _S, "user_id": _S, "ide": _S,
    "file_path": _S, "language": _S, "duration_ms": _F, "kind": _S, "request_id": _S,
    "model": _S, "prompt": _S, "prefix": _S, "suffix": _S, "completion": _S, "accepted": pl.Boolean(),
    "ttft_ms": _F, "total_ms": _F, "prompt_tokens": _I, "completion_tokens": _I,
    "token_times_ms": pl.List(_F), "token_texts": pl.List(_S),
}
EVENT_COLUMNS: dict[str, pl.DataType] = {
    "event_id": _S, "ts": UTC_TS, "session_id": _S, "user_id": _S, "ide": _S, "action": _S, "file_path": _S,
    "language": _S, "duration_ms": _F, "attrs": _S, "source_line": _I,
}
REQUEST_COLUMNS: dict[str, pl.DataType] = {
    "request_id": _S, "ts": UTC_TS, "session_id": _S, "user_id": _S, "kind": _S, "model": _S, "language": _S,
    "file_path": _S, "prompt": _S, "prefix": _S, "suffix": _S, "completion": _S, "accepted": pl.Boolean(),
    "ttft_ms": _F, "total_ms": _F, "prompt_tokens": _I, "completion_tokens": _I, "token_times_ms": pl.List(_F),
    "token_texts": pl.List(_S), "ide": _S, "attrs": _S, "source_line": _I,
}


def _read_schema() -> dict[str, pl.DataType]:
    """READ_SCHEMA, but ``token_texts`` as categoricals, which Polars reads strictly: a number in the
    list fails the parse instead of becoming its text. Fresh categories per chunk are freed with it."""
    return {**READ_SCHEMA, "token_texts": pl.List(pl.Categorical(pl.Categories.random()))}
