"""The value and time checks of the vectorised native reader (:mod:`logmine.formats.native.fast`).

Which lines Polars can parse at all, which parsed values it may have coerced or decoded
differently from orjson, ``ts`` as the per-line reader parses it, and the per-line value checks
as one Polars expression.
"""

from __future__ import annotations

from functools import cache

import numpy as np
import orjson
import polars as pl
import pyarrow as pa

from logmine.formats._base import MAX_LATENCY_MS, TS_MAX, TS_MIN
from logmine.formats.native.schema import _S, READ_SCHEMA
from logmine.formats.native.lines import _Lines
from logmine.records import REQUEST_KINDS, UTC_TS


_STRING_FIELDS = tuple(k for k, v in READ_SCHEMA.items() if v == _S and k not in {"type", "ts", "kind"})

# A string value that may be the text Polars made of a number, boolean, object or list.
_SUSPECT = r"^(?:-?[0-9][0-9.eE+-]*$|true$|false$|[\[{])"
_ISO_TS = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\.[0-9]{1,6})?(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])?$"
# A key with a \uXXXX escape: the key the raw-line checks look for might be spelt that way.
_ESCAPED_KEY = r'\\u[0-9a-fA-F]{4}(?:[^"\\]|\\.)*"\s*:'
_WS = r"[ \t\r\n]*"
"""JSON whitespace (``\\s`` would also match Unicode spaces)."""


_FLOATS = ("duration_ms", "ttft_ms", "total_ms")
_INTS = ("prompt_tokens", "completion_tokens")


def _polars_can_read(raw: bytes) -> bool:
    """Whether ``pl.read_ndjson`` reads this line with READ_SCHEMA: a cheap mirror of its rules.

    Wrong answers only cost time: a line wrongly deemed readable makes the re-parse fail (then
    :meth:`_Chunk._halve` isolates it); one wrongly deemed unreadable is read per line.
    """
    if not raw.strip():
        return False
    try:
        obj = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return False
    if type(obj) is not dict:
        return False
    for key in _FLOATS:
        if obj.get(key) is not None and type(obj[key]) not in (int, float):
            return False
    for key in _INTS:
        value = obj.get(key)
        if value is not None and not (type(value) is int and -(2**63) <= value < 2**63):
            return False
    accepted, times, texts = obj.get("accepted"), obj.get("token_times_ms"), obj.get("token_texts")
    if accepted is not None and type(accepted) is not bool:
        return False
    if texts is not None and not (type(texts) is list and all(t is None or type(t) is str for t in texts)):
        return False
    return times is None or (type(times) is list and all(t is None or type(t) in (int, float) for t in times))


_TYPED_KEYS = (
    rf'"(?:duration_ms|ttft_ms|total_ms|prompt_tokens|completion_tokens)"{_WS}:{_WS}[^ \t\r\n0-9n-]'
    rf'|"accepted"{_WS}:{_WS}[^ \t\r\ntfn]|"token_(?:times_ms|texts)"{_WS}:{_WS}[^ \t\r\n\[n]'
)
"""A key of a number, boolean or list column followed by a value of another type (Polars fails the parse on it)."""


def _suspect_lines(lines: _Lines) -> np.ndarray:
    """The lines (indexes, ascending) that a vectorised look at the raw bytes says Polars may fail
    to parse: no ``{`` first or ``}`` last (a cut line, a blank one, not an object), a raw control
    byte (a string cut at the line end), invalid UTF-8, or a value of the wrong type after a key of
    a number, boolean or list column (:data:`_TYPED_KEYS`).

    Lines it misses only cost time: when the lines left still fail to parse, every line is sifted.
    """
    data, starts, ends = lines.data, lines.starts, lines.ends
    raw = np.frombuffer(data, np.uint8)
    size, suspect = len(raw), np.zeros(lines.count, bool)
    if not size or not lines.count:
        return np.flatnonzero(suspect)
    nonempty = ends > starts
    last_at = ends - 1
    last_at = last_at - (nonempty & (raw[np.maximum(last_at, 0)] == 13))  # one CR before the newline
    suspect |= ~nonempty | (raw[np.minimum(starts, size - 1)] != 0x7B) | (last_at < starts) | (raw[np.maximum(last_at, 0)] != 0x7D)
    newlines = lines.count - (0 if data.endswith(b"\n") else 1)
    if np.count_nonzero(raw < 32) > newlines:  # control bytes other than the newlines (CRs of CRLF among them)
        at = np.flatnonzero((raw < 32) & (raw != 10))
        after = np.minimum(at + 1, size - 1)
        at = at[~((raw[at] == 13) & (raw[after] == 10) & (at + 1 < size))]
        suspect[np.searchsorted(ends, at)] = True
    invalid = lines.invalid_utf8()
    suspect[invalid] = True
    column = lines.blanked_column(invalid) if len(invalid) else lines.column()
    suspect |= column.str.contains(_TYPED_KEYS).to_numpy()
    return np.flatnonzero(suspect)


def _uncertain_rows(df: pl.DataFrame, lines: _Lines, epoch_ms: np.ndarray) -> np.ndarray:
    """Rows whose values Polars may have coerced or decoded differently from orjson (``epoch_ms``:
    the rows whose ``ts`` text is 12-13 digits)."""
    flagged = np.zeros(df.height, bool)
    for name in (c for c in _STRING_FIELDS if df[c].null_count() < df.height):
        rows = _suspect_rows(df[name])
        if len(rows):
            flagged[rows[~_was_string(lines.column().gather(rows), name).to_numpy()]] = True
    rows = np.flatnonzero(epoch_ms)
    if len(rows):
        flagged[rows[_maybe_digit_string(lines.column().gather(rows), lines.escaped()[rows])]] = True
    if df["token_texts"].explode(empty_as_null=False, keep_nulls=False).null_count():  # a null among the texts is a reject
        gaps = df.select(pl.col("token_texts").list.eval(pl.element().is_null()).list.any().fill_null(False))
        flagged |= gaps.to_series().to_numpy()
    # surrogate escapes: Polars does not reject lone ones as orjson does
    rows = np.flatnonzero(lines.escaped())
    if len(rows):
        flagged[rows[lines.column().gather(rows).str.contains(r"\\u[dD][89abAB]").to_numpy()]] = True
    return flagged


_SUSPECT_FIRST = np.zeros(256, bool)
_SUSPECT_FIRST[list(b"-0123456789tf[{")] = True
"""The first bytes of the texts :data:`_SUSPECT` matches."""
_NUMBER_FIRST = np.zeros(256, bool)
_NUMBER_FIRST[list(b"-0123456789")] = True
_NUMBER_BYTE = np.zeros(256, bool)
_NUMBER_BYTE[list(b"0123456789.eE+-")] = True
"""The bytes of a text :data:`_SUSPECT` matches as a number: its first, and the others."""


def _suspect_rows(values: pl.Series) -> np.ndarray:
    """The rows whose text matches :data:`_SUSPECT`: first a test of the first bytes, read from the
    Arrow string views without copying the texts (a view holds its length and its text's first four
    bytes), then the regex on the few rows that pass it. (An id like ``3fa2...`` passes the first
    byte's test but not the second's; ``file.save`` is no ``false``: too long.)

    Polars' regex is called only for long texts that start like a number, or for all the candidates
    when there are more than :data:`_MANY_CANDIDATES`: each call costs about 0.1 ms of fixed
    overhead, and this runs for each string column of each chunk.
    """
    arrow = values.to_arrow(compat_level=pl.CompatLevel.newest())
    if not pa.types.is_string_view(arrow.type):  # pragma: no cover - Polars hands out views
        return values.str.contains(_SUSPECT).fill_null(False).arg_true().to_numpy()
    end = arrow.offset + len(arrow)  # (the buffer may be longer than its views)
    validity, buffer = arrow.buffers()[:2]
    views = np.frombuffer(buffer, np.uint8, count=end * 16).reshape(end, 16)[arrow.offset:]
    first = _SUSPECT_FIRST[views[:, 4]]  # byte 4 of a view: the first byte (nulls: any)
    if validity is not None and arrow.null_count:
        first &= np.unpackbits(np.frombuffer(validity, np.uint8), count=end, bitorder="little")[arrow.offset:].view(bool)
    candidates = np.flatnonzero(first)
    if len(candidates) == 0:
        return candidates
    if len(candidates) > _MANY_CANDIDATES:  # Polars' regex reads many texts faster than numpy reads their views
        return candidates[values.gather(candidates).str.contains(_SUSPECT).fill_null(False).to_numpy()]
    head = views[candidates]
    length, byte = head[:, :4].copy().view("<i4").ravel(), head[:, 4]
    number = _NUMBER_FIRST[byte]
    for k in (1, 2, 3):  # a number's next bytes, where the text has them (most ids stop here)
        number &= _NUMBER_BYTE[head[:, 4 + k]] | (length <= k)
    sure = (byte == ord("[")) | (byte == ord("{"))
    sure |= (length == 4) & (head[:, 4:8] == _TRUE).all(axis=1)
    sure |= (length == 5) & (head[:, 4:9] == _FALSE).all(axis=1)
    rows = np.flatnonzero(number)
    if len(rows):  # texts that start like a number: read whole from the view (up to 12 bytes), else by the regex
        inline, size = head[rows, 4:16], length[rows]
        digit = _DIGIT[np.where(inline[:, 0] == ord("-"), inline[:, 1], inline[:, 0])] & (size > (inline[:, 0] == ord("-")))
        sure[rows] = digit & (_NUMBER_BYTE[inline] | (np.arange(12) >= size[:, None])).all(axis=1) & (size <= 12)
        longer = rows[size > 12]
        if len(longer):
            sure[longer] = values.gather(candidates[longer]).str.contains(_SUSPECT).fill_null(False).to_numpy()
    return candidates[sure]


_MANY_CANDIDATES = 2_000
"""Past this many texts that pass the first byte's test (ids in hex, say), they go to the regex at once."""
_TRUE, _FALSE = np.frombuffer(b"true", np.uint8), np.frombuffer(b"false", np.uint8)
_DIGIT = np.zeros(256, bool)
_DIGIT[list(b"0123456789")] = True


def _was_string(raw: pl.Series, key: str) -> pl.Series:
    """Whether the top-level ``key`` of each raw line surely holds a JSON string."""
    return _holds(raw, key, '"')


def _holds(raw: pl.Series, key: str, start: str) -> pl.Series:
    """Whether the top-level ``key`` of each raw line surely holds a value starting with ``start``.

    True when the key appears once, spelt plainly, followed by ``start`` (a regex). (Had the
    top-level key been spelt with an escape, the line would have an escaped key, ruled out here.)
    """
    return (
        (raw.str.count_matches(f'"{key}"\\s*:') == 1)
        & raw.str.contains(f'"{key}"\\s*:\\s*{start}')
        & ~raw.str.contains(_ESCAPED_KEY)
    )


def _maybe_digit_string(raw: pl.Series, escaped: np.ndarray) -> np.ndarray:
    """False when a line's top-level ``ts`` surely is no JSON string, so an all-digit ``ts`` was a number.

    A string shows as the plainly spelt key, a colon and a quote, unless the key is spelt with an
    escape (ruled out here; only a line with ``\\u``, ``escaped``, can have one); a nested ``"ts"``
    string only sends the line per line.
    """
    maybe = raw.str.contains(rf'"ts"{_WS}:{_WS}"').to_numpy()
    if escaped.any():
        maybe |= escaped & raw.str.contains(_ESCAPED_KEY).to_numpy()
    return maybe


def _latency_ok(name: str) -> pl.Expr:
    col = pl.col(name)
    return col.is_null() | ((col >= 0) & (col <= MAX_LATENCY_MS))


def _ts_value(df: pl.DataFrame) -> tuple[pl.Series, np.ndarray]:
    """``ts`` as the per-line reader parses it, for the ISO 8601 forms and epoch ms it surely agrees
    on, and the mask of the rows whose text is epoch ms (12-13 digits).

    The common ``...Z`` form and epoch ms are parsed with numpy (:func:`_numpy_micros`); the other
    rows with the Polars parsers they need (a when/then chain evaluates every branch in full).
    """
    ts = df["ts"]
    micros, fast, epoch_ms = _numpy_micros(ts)
    value = pl.Series("ts_value", micros).cast(pl.Datetime("us")).dt.replace_time_zone("UTC")
    value = pl.select(pl.when(pl.Series(fast)).then(value)).to_series().alias("ts_value")
    rest = np.flatnonzero(~fast & ts.is_not_null().to_numpy())
    if len(rest):
        others = ts.gather(rest).to_frame()
        value = value.scatter(rest, others.select(_ts_expr(others)).to_series())
    return value, epoch_ms


def _ts_expr(df: pl.DataFrame) -> pl.Expr:
    """The other ISO 8601 forms (naive, with an offset, ``...Z`` of another length); epoch ms never
    get here (every 12-13 digit text is parsed by :func:`_numpy_micros`)."""
    ts = pl.col("ts")
    kinds = df.select(
        iso=ts.str.contains(_ISO_TS).fill_null(False),
        zoned=ts.str.contains(r"(?:Z|[+-][0-9]{2}:[0-9]{2})$").fill_null(False),
    )
    value = pl.lit(None, dtype=UTC_TS)
    if (kinds["iso"] & ~kinds["zoned"]).any():
        naive = ts.str.to_datetime("%Y-%m-%dT%H:%M:%S%.f", time_unit="us", strict=False, cache=False).dt.replace_time_zone("UTC")
        value = pl.when(kinds["iso"] & ~kinds["zoned"]).then(naive).otherwise(value)
    if (kinds["iso"] & kinds["zoned"]).any():
        zoned = ts.str.to_datetime("%Y-%m-%dT%H:%M:%S%.f%#z", time_unit="us", time_zone="UTC", strict=False, cache=False)
        value = pl.when(kinds["iso"] & kinds["zoned"]).then(zoned).otherwise(value)
    return value.alias("ts_value")


_DAYS_IN_MONTH = np.array([0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31])
_Z_SIZES = (20, 22, 23, 24, 25, 26, 27)
"""Lengths of ``YYYY-MM-DDTHH:MM:SSZ`` and of the forms with 1-6 fraction digits."""
_MS_SIZES = (12, 13)
"""Lengths of epoch milliseconds (12-13 digit texts)."""
_Z_WIDTH = 32
"""Bytes taken from each text's start (the longest form and padding to whole 8-byte words)."""


def _z_template(size: int) -> tuple[np.ndarray, np.ndarray]:
    """The lowest byte allowed at each of the first _Z_WIDTH places of a ``...Z`` text of ``size``
    bytes, and how far above it a byte may be (any byte after the text: the next texts' or padding)."""
    form = "D" * size if size in _MS_SIZES else "DDDD-DD-DDTDD:DD:DD" + ("." + "D" * (size - 21) if size > 20 else "") + "Z"
    low, high = np.zeros(_Z_WIDTH, np.uint8), np.full(_Z_WIDTH, 255, np.uint8)
    low[:size] = np.frombuffer(form.replace("D", "0").encode(), np.uint8)
    high[:size] = np.frombuffer(form.replace("D", "9").encode(), np.uint8)
    return low, high - low


_Z_TEMPLATES = {size: _z_template(size) for size in _Z_SIZES + _MS_SIZES}
_ALL_BYTES_TRUE = np.uint64(0x0101010101010101)
"""Eight True bools read as one word."""


def _numpy_micros(ts: pl.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Microseconds since the epoch of each ``YYYY-MM-DDTHH:MM:SS[.f]Z`` text (1-6 fraction digits,
    a real date and time of day) and of each 12-13 digit text (epoch ms), a mask of the texts of
    either form (the others' values are junk) and a mask of the epoch ms.

    The texts are taken by length (one or two lengths in most chunks), so each place's byte is
    checked against a fixed template and the digits sit in fixed places.
    """
    n = len(ts)
    micros, fast, epoch_ms = np.zeros(n, np.int64), np.zeros(n, bool), np.zeros(n, bool)
    arrow = ts.to_arrow()
    if arrow.null_count == n or arrow.buffers()[2] is None:
        return micros, fast, epoch_ms
    offsets = np.frombuffer(arrow.buffers()[1], np.int64)[arrow.offset:arrow.offset + n + 1]
    data = np.frombuffer(arrow.buffers()[2], np.uint8)
    lengths = np.diff(offsets)
    padded = np.lib.stride_tricks.sliding_window_view(np.concatenate([data, np.zeros(_Z_WIDTH, np.uint8)]), _Z_WIDTH)
    counts = np.bincount(np.minimum(lengths, _Z_WIDTH), minlength=_Z_WIDTH + 1)
    for size in (size for size in _Z_SIZES + _MS_SIZES if counts[size]):
        rows = np.flatnonzero(lengths == size)
        chars = padded[offsets[rows]]
        low, span = _Z_TEMPLATES[size]
        within = ((chars - low) <= span).view(np.uint64)  # a byte below low wraps above span
        ok = (within[:, 0] & within[:, 1] & within[:, 2] & within[:, 3]) == _ALL_BYTES_TRUE
        digit = chars[:, :size] - np.uint8(48)
        if size in _MS_SIZES:
            micros[rows] = (digit.astype(np.int64) @ 10 ** np.arange(size + 2, 2, -1, dtype=np.int64)) * ok
            epoch_ms[rows] = ok
        else:
            micros[rows], ok = _z_micros(digit, ok)
        fast[rows] = ok
    return micros, fast, epoch_ms


def _z_micros(digit: np.ndarray, ok: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The microseconds of ``...Z`` texts of one length (as digit values; ``ok``: of the form),
    0 where the date or time is not real, and ``ok`` cleared there."""
    d = digit[:, :19].astype(np.int32)  # (days fit in 32 bits; microseconds are counted in 64)
    year = d[:, 0] * 1000 + d[:, 1] * 100 + d[:, 2] * 10 + d[:, 3]
    month, day = d[:, 5] * 10 + d[:, 6], d[:, 8] * 10 + d[:, 9]
    hour, minute, second = d[:, 11] * 10 + d[:, 12], d[:, 14] * 10 + d[:, 15], d[:, 17] * 10 + d[:, 18]
    leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
    month_ok = (month >= 1) & (month <= 12)
    days_in_month = _DAYS_IN_MONTH[np.where(month_ok, month, 0)] + ((month == 2) & leap)
    ok &= (year >= 1) & month_ok & (day >= 1) & (day <= days_in_month) & (hour <= 23) & (minute <= 59) & (second <= 59)
    places = digit.shape[1] - 21  # fraction digits
    fraction = digit[:, 20:20 + places].astype(np.int64) @ (10 ** np.arange(5, 5 - places, -1, dtype=np.int64)) if places > 0 else 0
    y = year - (month <= 2)  # days from the civil date (H. Hinnant's algorithm)
    era, yoe = y // 400, y % 400
    doy = (153 * ((month + 9) % 12) + 2) // 5 + day - 1
    days = (era * 146097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719468).astype(np.int64)
    return ((days * 86400 + hour * 3600 + minute * 60 + second) * 1_000_000 + fraction) * ok, ok


def _checks(df: pl.DataFrame) -> pl.Expr:
    """``ok``: the per-line checks as one expression, over ``df`` with its ``ts_value`` column."""
    return _checks_expr(df["token_times_ms"].null_count() < df.height)


@cache
def _checks_expr(with_times: bool) -> pl.Expr:
    """:func:`_checks`, built once (``with_times``: whether any row has ``token_times_ms``)."""
    language = pl.col("language")
    common = (
        pl.col("ts_value").is_between(pl.lit(TS_MIN, UTC_TS), pl.lit(TS_MAX, UTC_TS), closed="left").fill_null(False)
        & (language.is_null() | language.str.contains(r"^[\x20-\x7e]*$"))
    )
    kind = pl.col("kind")
    times = pl.col("token_times_ms")
    request = (
        (kind.is_null() | kind.is_in(list(REQUEST_KINDS) + [""]))
        & _latency_ok("ttft_ms") & _latency_ok("total_ms")
        & (pl.col("prompt_tokens").is_null() | (pl.col("prompt_tokens") >= 0))
        & (pl.col("completion_tokens").is_null() | (pl.col("completion_tokens") >= 0))
    )
    if with_times:
        request = request & (
            times.is_null()
            | ((times.list.min().is_null() | (times.list.min() >= 0)) & (times.list.max().is_null() | (times.list.max() <= MAX_LATENCY_MS)))
        )
    event = pl.col("action").is_not_null() & _latency_ok("duration_ms")
    kind_ok = pl.when(pl.col("type") == "event").then(event).when(pl.col("type") == "llm_request").then(request)
    return (common & kind_ok).fill_null(False).alias("ok")
