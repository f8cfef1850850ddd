"""The workspace's public table contract and the shared action vocabulary.

Table and column names here are a public contract: columns may be added, never renamed.
Every format reader produces rows of exactly these schemas (missing columns are null).
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

UTC_TS = pl.Datetime("us", "UTC")

EVENTS_SCHEMA: dict[str, pl.DataType] = {
    "event_id": pl.String(),
    "ts": UTC_TS,
    "session_id": pl.String(),
    "user_id": pl.String(),
    "ide": pl.String(),
    "action": pl.String(),
    "file_path": pl.String(),
    "language": pl.String(),
    "duration_ms": pl.Float64(),
    "attrs": pl.String(),  # JSON object text; DuckDB reads it with json_extract
    "weight": pl.Int64(),  # merged JetBrains events carry their count here; 1 elsewhere
    "source_format": pl.String(),
    "source_file": pl.String(),
    "source_line": pl.Int64(),
}

LLM_REQUESTS_SCHEMA: dict[str, pl.DataType] = {
    "request_id": pl.String(),
    "ts": UTC_TS,
    "session_id": pl.String(),
    "user_id": pl.String(),
    "kind": pl.String(),  # completion | chat | edit | other
    "model": pl.String(),
    "language": pl.String(),
    "file_path": pl.String(),
    "prompt": pl.String(),
    "prefix": pl.String(),
    "suffix": pl.String(),
    "completion": pl.String(),
    "accepted": pl.Boolean(),
    "ttft_ms": pl.Float64(),
    "total_ms": pl.Float64(),
    "prompt_tokens": pl.Int64(),
    "completion_tokens": pl.Int64(),
    "token_times_ms": pl.List(pl.Float64()),
    "token_texts": pl.List(pl.String()),
    "ide": pl.String(),
    "attrs": pl.String(),
    "source_format": pl.String(),
    "source_file": pl.String(),
    "source_line": pl.Int64(),
}

IDE_LOG_SCHEMA: dict[str, pl.DataType] = {
    "entry_id": pl.String(),  # <path key>:<first line>:0
    "ts": UTC_TS,
    "level": pl.String(),  # upper case: INFO, WARN, SEVERE, ...
    "category": pl.String(),  # logger / category of the header
    "thread": pl.String(),
    "message": pl.String(),  # the entry's text without the header, continuation lines included
    "exception": pl.String(),  # the exception type the entry carries (stack traces)
    "template_id": pl.String(),  # mined from the message's first line over the file's entries
    "template": pl.String(),
    "lines": pl.Int64(),  # physical lines of the entry
    "source_format": pl.String(),
    "source_file": pl.String(),
    "source_line": pl.Int64(),  # the entry's first line
}

REJECTS_SCHEMA: dict[str, pl.DataType] = {
    "source_file": pl.String(),
    "source_line": pl.Int64(),
    "source_format": pl.String(),
    "reason": pl.String(),  # the code alone (malformed_json, wrong_type, ...): `group by reason` groups
    "raw": pl.String(),  # the first RAW_PREVIEW_BYTES of the bad line, as text
    "detail": pl.String(),  # what exactly is wrong, for a person ("field 'ts' is missing")
    "raw_bytes": pl.Int64(),  # the bad line's length in bytes
    "raw_full": pl.Binary(),  # the whole bad line as read (user ids pseudonymised); null when not kept
}

SOURCES_SCHEMA: dict[str, pl.DataType] = {
    "path": pl.String(),
    "sha256": pl.String(),
    "size_bytes": pl.Int64(),
    "source_format": pl.String(),
    "lines_read": pl.Int64(),
    "lines_accepted": pl.Int64(),
    "lines_rejected": pl.Int64(),
    "ingested_at": UTC_TS,
    "partition": pl.String(),
}

REQUEST_KINDS = ("completion", "chat", "edit", "other")

# The normalised action vocabulary. Readers map their raw names onto these and keep the raw
# name in attrs["raw_action"]; anything unmapped becomes "other:<raw>" so nothing is hidden.
ACTIONS = (
    "file.open",
    "file.save",
    "file.close",
    "editor.edit",
    "editor.format",
    "editor.undo",
    "editor.navigate",
    "editor.find",
    "run.start",
    "debug.start",
    "build",
    "test.run",
    "vcs.commit",
    "vcs.action",
    "completion.requested",
    "completion.shown",
    "completion.accepted",
    "completion.rejected",
    "chat.request",
    "chat.feedback",
    "edit.request",
    "edit.accepted",
    "edit.rejected",
    "tool.call",
    "ide.activity",
    "ide.state",
    "ide.error",
    "window.focus",
)

# Reject reasons: the stable codes of the rejects table's ``reason`` column.
REJECT_MALFORMED_JSON = "malformed_json"
REJECT_BAD_UTF8 = "invalid_utf8"
REJECT_MISSING_FIELD = "missing_field"
REJECT_WRONG_TYPE = "wrong_type"
REJECT_ABSURD_VALUE = "absurd_value"
REJECT_OVERSIZED = "oversized_line"
REJECT_UNKNOWN_RECORD = "unknown_record"
REJECT_UNREADABLE_FILE = "unreadable_file"
REJECT_UNRECOGNISED_FILE = "unrecognised_format"


REJECT_CODES = (
    REJECT_MALFORMED_JSON, REJECT_BAD_UTF8, REJECT_MISSING_FIELD, REJECT_WRONG_TYPE, REJECT_ABSURD_VALUE,
    REJECT_OVERSIZED, REJECT_UNKNOWN_RECORD, REJECT_UNREADABLE_FILE, REJECT_UNRECOGNISED_FILE,
)
RAW_PREVIEW_BYTES = 1024
"""How much of a bad line the ``raw`` column shows as text (``raw_full`` keeps all of it)."""


@dataclass(frozen=True, slots=True)
class Reject:
    """One input line that could not become a row, with a reason a person understands."""

    source_line: int
    reason: str
    """``<code>: <detail>`` as a reader writes it; the rejects table keeps the code in ``reason``
    and the rest in ``detail``."""
    raw: str
    """The first :data:`RAW_PREVIEW_BYTES` of the bad line, as text."""
    whole: bytes | None = None
    """The whole bad line as read; None when it was not kept (a line over the size limit, a file)."""
    size: int | None = None
    """The bad line's length in bytes (None: unknown, as for a whole file)."""

    @property
    def code(self) -> str:
        """The stable reason code (``malformed_json``, ``wrong_type``, ...)."""
        return self.reason.partition(":")[0].strip()

    @property
    def detail(self) -> str | None:
        """What is wrong in words, without the code; None when the reason is a bare code."""
        return self.reason.partition(":")[2].strip() or None

    def row(self, source_file: str, source_format: str) -> dict[str, object]:
        return {
            "source_file": source_file,
            "source_line": self.source_line,
            "source_format": source_format,
            "reason": self.code,
            "raw": self.raw[:RAW_PREVIEW_BYTES],
            "detail": self.detail,
            "raw_bytes": self.size,
            "raw_full": self.whole,
        }


def empty_frame(schema: dict[str, pl.DataType]) -> pl.DataFrame:
    """An empty DataFrame with exactly ``schema``."""
    return pl.DataFrame(schema=schema)


def conform(df: pl.DataFrame, schema: dict[str, pl.DataType]) -> pl.DataFrame:
    """Cast ``df`` to ``schema``: add missing columns as nulls, order columns, keep extras last."""
    exprs = []
    for name, dtype in schema.items():
        if name in df.columns:
            exprs.append(pl.col(name).cast(dtype, strict=False))
        else:
            exprs.append(pl.lit(None, dtype=dtype).alias(name))
    extras = [c for c in df.columns if c not in schema]
    return df.select(*exprs, *extras)
