"""What every format reader shares: line iteration over plain/.gz/.zst files, the batch a
reader yields, and the checks that turn a bad value into a reject with a readable reason."""

from __future__ import annotations

import gzip
import io
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

import polars as pl

from logmine.language import LANGUAGE_ALIASES, language_from_path, normalise_language  # noqa: F401 - the readers' names
from logmine.records import (
    RAW_PREVIEW_BYTES,
    REJECT_ABSURD_VALUE,
    REJECT_BAD_UTF8,
    REJECT_MALFORMED_JSON,
    REJECT_MISSING_FIELD,
    REJECT_OVERSIZED,
    REJECT_WRONG_TYPE,
    Reject,
)

MAX_LINE_BYTES = 8 * 1024 * 1024
"""Lines longer than this are rejected as oversized rather than parsed."""
TS_MIN = datetime(2000, 1, 1, tzinfo=UTC)
TS_MAX = datetime(2100, 1, 1, tzinfo=UTC)
MAX_LATENCY_MS = 24 * 3600 * 1000.0
"""A latency above a day is absurd for an IDE action or an LLM request."""


class RecordError(ValueError):
    """A record cannot become a row; ``reason`` is shown in the rejects table."""

    def __init__(self, kind: str, detail: str) -> None:
        self.kind, self.detail = kind, detail
        super().__init__(f"{kind}: {detail}")


@dataclass
class Batch:
    """What a reader yields: rows for the tables, the rejected lines, and the line accounting.

    ``lines_read == lines_accepted + len(rejects)`` must hold for the batches of a file
    taken together (a grouping reader may accept lines in one batch and emit rows later).
    """

    events: list[dict[str, Any]] | pl.DataFrame = field(default_factory=list)
    requests: list[dict[str, Any]] | pl.DataFrame = field(default_factory=list)
    rejects: list[Reject] = field(default_factory=list)
    ide_log: list[dict[str, Any]] | pl.DataFrame = field(default_factory=list)
    """Rows of the ``ide_log`` table (free-text IDE logs, :mod:`logmine.formats.ide_log`)."""
    lines_read: int = 0
    lines_accepted: int = 0
    bytes_read: int = 0
    """Input bytes this batch covers, for progress; 0 when the reader does not tell."""


class FormatReader(Protocol):
    """A module in logmine.formats that reads one log format."""

    NAME: str

    def sniff(self, path: Path, head: list[bytes]) -> bool:
        """True when the first non-empty lines of ``path`` look like this format."""

    def read(self, path: Path) -> Iterator[Batch]:
        """Read ``path`` into batches; never raise for a bad line, only for an unreadable file."""


def open_binary(path: Path) -> io.BufferedIOBase:
    """Open ``path`` for reading bytes, decompressing ``.gz`` and ``.zst`` transparently."""
    suffix = path.suffix.lower()
    if suffix == ".gz":
        return gzip.open(path, "rb")  # type: ignore[return-value]
    if suffix in {".zst", ".zstd"}:
        import zstandard

        return io.BufferedReader(zstandard.ZstdDecompressor().stream_reader(open(path, "rb"), closefd=True))  # type: ignore[arg-type]
    return open(path, "rb")


def iter_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """Yield ``(line_number, raw_line)`` for every line, 1-based, newline stripped.

    Blank lines are yielded too: the caller decides whether they count.
    """
    with open_binary(path) as fh:
        for number, raw in enumerate(fh, start=1):
            yield number, raw.rstrip(b"\r\n")


def count_lines(path: Path) -> int:
    """How many lines :func:`iter_lines` would yield for ``path`` (blank ones included), read in blocks."""
    lines, last = 0, b"\n"
    with open_binary(path) as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            lines += block.count(b"\n")
            last = block[-1:]
    return lines + (last != b"\n")


def head_lines(path: Path, n: int = 5, max_bytes: int = 1 << 20) -> list[bytes]:
    """The first ``n`` non-empty lines (for format sniffing), of the file's first ``max_bytes``.

    The first :data:`HEAD_BYTES` are read first: they hold the lines of almost every log, and a
    run of small files was reading each one whole here, beside reading it for its rows.
    """
    with open_binary(path) as fh:
        data = fh.read(min(HEAD_BYTES, max_bytes))
        if len(data) < HEAD_BYTES or len(data) >= max_bytes:  # the whole file, or all that may be looked at
            return _first_lines(data, n, whole=True)
        out = _first_lines(data, n, whole=False)  # a line cut at the block's end is left to the full read below
        if len(out) >= n:
            return out
        data += fh.read(max_bytes - len(data))
    return _first_lines(data, n, whole=True)


def _first_lines(data: bytes, n: int, whole: bool) -> list[bytes]:
    """The first ``n`` non-empty lines of ``data`` (split as ``bytes.splitlines``, stripped), found
    without splitting all of it; ``whole=False``: a last line with no line end is not taken."""
    out: list[bytes] = []
    start, size = 0, len(data)
    while start < size and len(out) < n:
        nl = data.find(b"\n", start)
        end = size if nl < 0 else nl
        if nl < 0 and not whole:
            break
        segment = data[start:end]
        if b"\r" in segment:  # rare (CR line ends): splitlines' own rules
            return _non_empty(data.splitlines() if whole else _complete_lines(data), n)
        if stripped := segment.strip():
            out.append(stripped)
        start = end + 1
    return out


def _complete_lines(data: bytes) -> list[bytes]:
    lines = data.splitlines(keepends=True)
    if lines and not lines[-1].endswith((b"\n", b"\r")):
        lines.pop()
    return lines


HEAD_BYTES = 64 << 10


def _non_empty(lines: list[bytes], n: int) -> list[bytes]:
    out: list[bytes] = []
    for line in lines:
        if stripped := line.strip():
            out.append(stripped)
            if len(out) >= n:
                break
    return out


def decode_json_line(raw: bytes) -> Any:
    """Parse one JSON line or raise :class:`RecordError` with the reason."""
    import orjson

    if len(raw) > MAX_LINE_BYTES:
        raise RecordError(REJECT_OVERSIZED, f"line of {len(raw)} bytes exceeds {MAX_LINE_BYTES}")
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError(REJECT_BAD_UTF8, f"invalid UTF-8 at byte {exc.start}") from None
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise RecordError(REJECT_MALFORMED_JSON, str(exc).split(":")[0]) from None


def reject(number: int, raw: bytes, err: RecordError, size: int | None = None) -> Reject:
    """The reject of bad line ``number``: ``raw`` is the line as read, kept whole up to
    :data:`MAX_LINE_BYTES`; ``size`` is the line's real length when ``raw`` is only its start."""
    whole = bytes(raw) if size is None and len(raw) <= MAX_LINE_BYTES else None
    preview = raw[:RAW_PREVIEW_BYTES].decode("utf-8", "replace")
    return Reject(number, f"{err.kind}: {err.detail}", preview, whole, len(raw) if size is None else size)


def iter_json_records(path: Path, skip_blank: bool = True) -> Iterator[tuple[int, bytes, Any | RecordError]]:
    """Yield ``(line, raw, obj)`` for every line; ``obj`` is a RecordError when it is bad."""
    for number, raw in iter_lines(path):
        if skip_blank and not raw.strip():
            yield number, raw, RecordError(REJECT_MISSING_FIELD, "blank line")
            continue
        try:
            yield number, raw, decode_json_line(raw)
        except RecordError as err:
            yield number, raw, err


def read_batches(
    path: Path, add_rows: Callable[[Batch, Any, int], None], batch_lines: int,
    finish: Callable[[Batch], None] | None = None,
) -> Iterator[Batch]:
    """The line loop of a JSON Lines reader: ``add_rows(batch, obj, line)`` puts one record's rows
    into the batch or raises RecordError (the line becomes a reject); a batch goes out every
    ``batch_lines`` lines read, and the last one after ``finish(batch)`` has run on it."""
    batch = Batch()
    for number, raw, obj in iter_json_records(path):
        batch.lines_read += 1
        try:
            if isinstance(obj, RecordError):
                raise obj
            add_rows(batch, obj, number)
            batch.lines_accepted += 1
        except RecordError as err:
            batch.rejects.append(reject(number, raw, err))
        if batch.lines_read >= batch_lines:
            yield batch
            batch = Batch()
    if finish is not None:
        finish(batch)
    yield batch


# -- value checks ------------------------------------------------------------------------------
def require(obj: dict[str, Any], key: str, kind: type | tuple[type, ...] = str) -> Any:
    """``obj[key]``, which must be present and of ``kind``."""
    if key not in obj or obj[key] is None:
        raise RecordError(REJECT_MISSING_FIELD, f"required field {key!r} is missing")
    return check_type(obj[key], key, kind)


def optional(obj: dict[str, Any], key: str, kind: type | tuple[type, ...] = str) -> Any:
    value = obj.get(key)
    return None if value is None else check_type(value, key, kind)


def check_type(value: Any, key: str, kind: type | tuple[type, ...]) -> Any:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if float in kinds and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, bool) and bool not in kinds:
        raise RecordError(REJECT_WRONG_TYPE, f"field {key!r} should be {_names(kinds)}, got a boolean")
    if not isinstance(value, kinds):
        raise RecordError(REJECT_WRONG_TYPE, f"field {key!r} should be {_names(kinds)}, got {type(value).__name__}")
    return value


def _names(kinds: tuple[type, ...]) -> str:
    names = {str: "a string", int: "an integer", float: "a number", bool: "a boolean", list: "a list", dict: "an object"}
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def latency(value: Any, key: str) -> float | None:
    """A latency in ms: a non-negative finite number below a day, or None."""
    if value is None:
        return None
    value = check_type(value, key, (float, int))
    if not math.isfinite(value) or value < 0 or value > MAX_LATENCY_MS:
        raise RecordError(REJECT_ABSURD_VALUE, f"field {key!r} = {value} is not a plausible latency in ms")
    return float(value)


def parse_ts(value: Any, key: str = "ts") -> datetime:
    """A UTC datetime from ISO 8601 text, epoch seconds, ms, µs or ns; range-checked."""
    if value is None:
        raise RecordError(REJECT_MISSING_FIELD, f"required field {key!r} is missing")
    if isinstance(value, bool):
        raise RecordError(REJECT_WRONG_TYPE, f"field {key!r} should be a timestamp, got a boolean")
    if isinstance(value, (int, float)):
        ts = _from_epoch(float(value), key)
    elif isinstance(value, str):
        try:
            ts = datetime.fromisoformat(value.replace("Z", "+00:00") if value.endswith("Z") else value)
        except ValueError:
            raise RecordError(REJECT_WRONG_TYPE, f"field {key!r} = {value[:40]!r} is not an ISO 8601 timestamp") from None
        ts = ts.replace(tzinfo=UTC) if ts.tzinfo is None else ts.astimezone(UTC)
    else:
        raise RecordError(REJECT_WRONG_TYPE, f"field {key!r} should be a timestamp, got {type(value).__name__}")
    if not TS_MIN <= ts < TS_MAX:
        raise RecordError(REJECT_ABSURD_VALUE, f"timestamp {key!r} = {ts.isoformat()} is outside 2000-2100")
    return ts


def _from_epoch(value: float, key: str) -> datetime:
    if not math.isfinite(value) or value < 0:
        raise RecordError(REJECT_ABSURD_VALUE, f"timestamp {key!r} = {value} is not a valid epoch time")
    for scale in (1.0, 1e3, 1e6, 1e9):  # seconds, ms, µs, ns: the first that lands in range
        seconds = value / scale
        if seconds < TS_MAX.timestamp():
            break
    try:
        return datetime.fromtimestamp(seconds, tz=UTC)
    except (OverflowError, OSError, ValueError):
        raise RecordError(REJECT_ABSURD_VALUE, f"timestamp {key!r} = {value} is out of range") from None


def chunked(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


# -- helpers shared by the code-assistant readers (Continue, Tabby) -------------------------------
def attrs_json(attrs: dict[str, Any]) -> str | None:
    """``attrs`` without its None values as sorted-key JSON text; None when nothing is left."""
    import orjson

    clean = {k: v for k, v in attrs.items() if v is not None}
    return orjson.dumps(clean, option=orjson.OPT_SORT_KEYS).decode() if clean else None


def token_count(value: Any, key: str) -> int | None:
    """A token count: a non-negative integer (an integral float is accepted), or None."""
    if value is None:
        return None
    value = check_type(value, key, (int, float))
    if isinstance(value, float):
        if not value.is_integer():
            raise RecordError(REJECT_WRONG_TYPE, f"field {key!r} = {value} should be a whole number")
        value = int(value)
    if value < 0:
        raise RecordError(REJECT_ABSURD_VALUE, f"field {key!r} = {value} is negative")
    return value


def message_text(content: Any, key: str = "content") -> str:
    """The text of a chat message's content: a string, or the text parts of a list of parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and isinstance(part.get("text"), str):
                parts.append(part["text"])
            elif not isinstance(part, dict):
                raise RecordError(REJECT_WRONG_TYPE, f"field {key!r} has a part of type {type(part).__name__}")
        return "".join(parts)
    raise RecordError(REJECT_WRONG_TYPE, f"field {key!r} should be text or a list of parts, got {type(content).__name__}")


def render_messages(messages: Any, key: str = "messages") -> str:
    """A chat prompt as text, one ``role: text`` block a message, blocks separated by a newline."""
    messages = check_type(messages, key, list)
    blocks = []
    for message in messages:
        message = check_type(message, f"{key}[]", dict)
        role = message.get("role")
        blocks.append(f"{role if isinstance(role, str) else '?'}: {message_text(message.get('content'), f'{key}[].content')}")
    return "\n".join(blocks)


_IDE_MARKERS = (
    ("visual studio code", "vscode"), ("vscodium", "vscode"), ("vscode", "vscode"), ("code - oss", "vscode"),
    ("intellij", "jetbrains"), ("jetbrains", "jetbrains"), ("pycharm", "jetbrains"), ("webstorm", "jetbrains"),
    ("goland", "jetbrains"), ("clion", "jetbrains"), ("phpstorm", "jetbrains"), ("rubymine", "jetbrains"),
    ("android studio", "jetbrains"), ("rustrover", "jetbrains"), ("neovim", "neovim"), ("nvim", "neovim"),
    ("vim", "vim"), ("emacs", "emacs"), ("eclipse", "eclipse"), ("visual studio", "visualstudio"),
)
_NOT_IDES = {"unknown", "continue", "tabby-agent", "tabby"}


def ide_from_user_agent(user_agent: str | None) -> str | None:
    """The IDE from a plugin's user agent (``vscode``, ``jetbrains``, ``neovim``, ...), None when unknown.

    ``"Visual Studio Code/1.96.2 (Continue/0.9.250)"`` -> ``vscode``; an unlisted IDE gives the
    lower-cased product name before the first ``/``.
    """
    if not user_agent:
        return None
    text = user_agent.lower()
    for marker, ide in _IDE_MARKERS:
        if marker in text:
            return ide
    first = text.split("/", 1)[0].strip()
    return None if not first or first in _NOT_IDES else first


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def parse_epoch_ms(value: Any, key: str = "ts") -> datetime:
    """A UTC datetime from epoch milliseconds, for formats whose unit is fixed; range-checked.

    Unlike :func:`parse_ts` the unit is not guessed, so an out-of-range value is reported as it is.
    """
    from datetime import timedelta

    if value is None:
        raise RecordError(REJECT_MISSING_FIELD, f"required field {key!r} is missing")
    value = check_type(value, key, (int, float))
    try:
        ts = _EPOCH + timedelta(milliseconds=value)
    except (OverflowError, ValueError):
        raise RecordError(REJECT_ABSURD_VALUE, f"timestamp {key!r} = {value} ms is out of range") from None
    if not TS_MIN <= ts < TS_MAX:
        raise RecordError(REJECT_ABSURD_VALUE, f"timestamp {key!r} = {value} ms ({ts.isoformat()}) is outside 2000-2100")
    return ts
