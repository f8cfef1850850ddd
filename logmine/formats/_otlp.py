"""OTLP/JSON values as the exporters write them: attribute lists, ``AnyValue`` and unix-nanosecond
times (shared by the OTel reader's spans and log records)."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Any

from logmine.formats._base import TS_MAX, TS_MIN, RecordError, check_type, require
from logmine.records import REJECT_ABSURD_VALUE, REJECT_WRONG_TYPE

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def attributes(value: Any, key: str) -> dict[str, Any]:
    """OTLP ``[{key, value: {stringValue|intValue|...}}]`` as a plain dict."""
    if value is None:
        return {}
    out: dict[str, Any] = {}
    for item in check_type(value, key, list):
        item = check_type(item, f"{key}[]", dict)
        name = require(item, "key", str)
        out[name] = any_value(item.get("value"), name)
    return out


def any_value(value: Any, key: str) -> Any:
    """One OTLP ``AnyValue`` (int64 may come as a string, doubles as "NaN"/"Infinity")."""
    if value is None:
        return None
    value = check_type(value, f"attribute {key!r}", dict)
    if "stringValue" in value:
        return check_type(value["stringValue"], key, str)
    if "boolValue" in value:
        return check_type(value["boolValue"], key, bool)
    if "intValue" in value:
        return _int(value["intValue"], key)
    if "doubleValue" in value:
        return _double(value["doubleValue"], key)
    if "arrayValue" in value:
        values = (check_type(value["arrayValue"] or {}, key, dict)).get("values") or []
        return [any_value(v, key) for v in check_type(values, key, list)]
    if "kvlistValue" in value:
        return attributes((check_type(value["kvlistValue"] or {}, key, dict)).get("values"), key)
    if "bytesValue" in value:
        return check_type(value["bytesValue"], key, str)
    return None


def _int(value: Any, key: str) -> int:
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            raise RecordError(REJECT_WRONG_TYPE, f"attribute {key!r} = {value[:40]!r} is not an integer") from None
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return check_type(value, key, int)


def _double(value: Any, key: str) -> float:
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            raise RecordError(REJECT_WRONG_TYPE, f"attribute {key!r} = {value[:40]!r} is not a number") from None
    return check_type(value, key, float)


def unix_nanos(value: Any, key: str) -> int | None:
    """Unix nanoseconds from an OTLP time field (a decimal string or a number); 0 means unset."""
    if value is None:
        return None
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    elif isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    elif isinstance(value, bool) or not isinstance(value, int):
        raise RecordError(REJECT_WRONG_TYPE, f"field {key!r} should be unix nanoseconds, got {str(value)[:40]!r}")
    return value or None


def nanos_ts(nanos: int, key: str) -> datetime:
    """The UTC time of ``nanos`` (exact to the microsecond), range-checked like ``parse_ts``."""
    try:
        ts = _EPOCH + timedelta(microseconds=nanos // 1000)
    except OverflowError:
        ts = TS_MAX
    if not TS_MIN <= ts < TS_MAX:
        raise RecordError(REJECT_ABSURD_VALUE, f"timestamp {key!r} = {nanos} ns is outside 2000-2100")
    return ts
