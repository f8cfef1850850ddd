"""Timestamps as logs write them: the shapes a log line's header may open with
(:data:`TIMESTAMPS`, found without being told) and reading one back as a UTC datetime
(:func:`parse_timestamp`). Used by :mod:`logmine.textlog` (headers) and ingest's ``ide_log``.

Pure: values in, values out.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

from logmine.masking import MONTH, WEEKDAY

_FRACTION = r"(?:[.,]\d{1,9})?"
_ZONE = r"(?:\s?(?:Z|UTC|GMT|[+-]\d{2}:?\d{2}))?"
TIMESTAMPS = (
    rf"\d{{4}}-\d{{2}}-\d{{2}}[T ]\d{{2}}:\d{{2}}:\d{{2}}{_FRACTION}{_ZONE}",  # ISO 8601, log4j %d, Python asctime
    rf"\d{{4}}-\d{{2}}-\d{{2}}-\d{{2}}\.\d{{2}}\.\d{{2}}{_FRACTION}",  # 2005-06-03-15.42.50.675872
    rf"\d{{2,4}}/\d{{1,2}}/\d{{1,2}}[ T:]\d{{1,2}}:\d{{2}}:\d{{2}}{_FRACTION}",  # 17/06/09 20:10:40
    rf"\d{{2}}/{MONTH}/\d{{4}}:\d{{2}}:\d{{2}}:\d{{2}}(?: [+-]\d{{4}})?",  # access log 10/Oct/2000:13:55:36 -0700
    rf"{WEEKDAY} {MONTH} +\d{{1,2}} \d{{2}}:\d{{2}}:\d{{2}}{_FRACTION}(?: [A-Z]{{3,4}})? \d{{4}}",  # ctime: Sun Dec 04 04:47:44 [UTC] 2005
    rf"{MONTH} \d{{1,2}}, \d{{4}} \d{{1,2}}:\d{{2}}:\d{{2}} [AP]M",  # java.util.logging: Dec 06, 2026 9:51:14 PM
    rf"\d{{1,2}}[- ]{MONTH}[- ]\d{{4}}[ :]\d{{2}}:\d{{2}}:\d{{2}}{_FRACTION}",  # 06-Dec-2026 21:55:00.123, 06 Dec 2026 21:55:00
    rf"{MONTH} +\d{{1,2}} \d{{2}}:\d{{2}}:\d{{2}}{_FRACTION}(?: \d{{4}})?",  # syslog: Dec 10 06:55:46
    rf"\d{{2}}-\d{{2}} \d{{2}}:\d{{2}}:\d{{2}}{_FRACTION}",  # logcat: 03-17 16:13:38.811
    r"\d{6} \d{6}",  # 081109 203615
    rf"\d{{2}}:\d{{2}}:\d{{2}}{_FRACTION}",  # logback %d{HH:mm:ss.SSS}
    r"1\d{9}(?:\.\d+|\d{3})?(?=\s)",  # epoch seconds or milliseconds
    # any other date of digit groups before a time: 20171223-22:15:29:606, 2005.11.09 12:01:01, 10.30 16:49:06
    r"\d{1,8}(?:[-/.]\d{1,4}){0,2}[-T ]\d{1,2}:\d{2}:\d{2}(?:[.,:]\d{1,9})?",
)
"""Timestamp shapes a header may open with (or hold in brackets); the longest match wins."""


_MONTHS = {m: i for i, m in enumerate(("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1)}
_ISO = re.compile(r"(\d{4})-(\d{2})-(\d{2})[T -](\d{2})[:.](\d{2})[:.](\d{2})(?:[.,](\d{1,9}))?\s?(Z|UTC|GMT|[+-]\d{2}:?\d{2})?$")
_SLASH = re.compile(r"(\d{2,4})/(\d{1,2})/(\d{1,2})[ T:](\d{1,2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?$")
_CLF = re.compile(r"(\d{2})/([A-Z][a-z]{2})/(\d{4}):(\d{2}):(\d{2}):(\d{2})(?: ([+-]\d{4}))?$")
_CTIME = re.compile(r"[A-Z][a-z]{2} ([A-Z][a-z]{2}) +(\d{1,2}) (\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?(?: (UTC|GMT|Z))? (\d{4})$")
_JUL = re.compile(r"([A-Z][a-z]{2}) (\d{1,2}), (\d{4}) (\d{1,2}):(\d{2}):(\d{2}) ([AP])M$")
_DMY = re.compile(r"(\d{1,2})[- ]([A-Z][a-z]{2})[- ](\d{4})[ :](\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?$")
_EPOCH = re.compile(r"1\d{9}(?:\.\d+)?|1\d{12}")
_YMD = re.compile(r"(\d{4})[./-]?(\d{2})[./-]?(\d{2})[-T ](\d{1,2}):(\d{2}):(\d{2})(?:[.,:](\d{1,9}))?$")
_DMY_DOTS = re.compile(r"(\d{1,2})\.(\d{1,2})\.(\d{4})[ T](\d{1,2}):(\d{2}):(\d{2})(?:[.,](\d{1,9}))?$")


def parse_timestamp(text: str | None) -> datetime | None:
    """A header timestamp as a UTC datetime, or None when it carries no date (syslog's has no year).

    A timestamp without a zone (idea.log, log4j's default) is read as UTC: the log does not say
    which zone it was written in.
    """
    if not text:
        return None
    text = text.strip()
    try:
        if m := _ISO.match(text):
            y, mo, d, h, mi, s, frac, zone = m.groups()
            return _make(int(y), int(mo), int(d), int(h), int(mi), int(s), frac, _zone(zone))
        if m := _SLASH.match(text):
            y, mo, d, h, mi, s, frac = m.groups()
            year = int(y) + (2000 if len(y) == 2 else 0)
            return _make(year, int(mo), int(d), int(h), int(mi), int(s), frac, UTC)
        if m := _CLF.match(text):
            d, mon, y, h, mi, s, zone = m.groups()
            return _make(int(y), _MONTHS[mon], int(d), int(h), int(mi), int(s), None, _zone(zone))
        if m := _CTIME.match(text):
            mon, d, h, mi, s, frac, _, y = m.groups()
            return _make(int(y), _MONTHS[mon], int(d), int(h), int(mi), int(s), frac, UTC)
        if m := _JUL.match(text):
            mon, d, y, h, mi, s, half = m.groups()
            return _make(int(y), _MONTHS[mon], int(d), int(h) % 12 + (12 if half == "P" else 0), int(mi), int(s), None, UTC)
        if m := _DMY.match(text):
            d, mon, y, h, mi, s, frac = m.groups()
            return _make(int(y), _MONTHS[mon], int(d), int(h), int(mi), int(s), frac, UTC)
        if m := _YMD.match(text):  # 2005.11.09 12:01:01, 20171223-22:15:29:606
            y, mo, d, h, mi, s, frac = m.groups()
            return _make(int(y), int(mo), int(d), int(h), int(mi), int(s), frac, UTC)
        if m := _DMY_DOTS.match(text):  # 02.01.2024 03:04:00.123: a dotted date is day-first
            d, mo, y, h, mi, s, frac = m.groups()
            return _make(int(y), int(mo), int(d), int(h), int(mi), int(s), frac, UTC)
        if _EPOCH.fullmatch(text):
            value = float(text)
            return datetime.fromtimestamp(value / 1000 if value > 1e11 else value, UTC)
    except (ValueError, KeyError, OverflowError):
        return None
    return None


def _zone(text: str | None) -> timezone:
    if not text or text in ("Z", "UTC", "GMT"):
        return UTC
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    return timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:4])))


def _make(y: int, mo: int, d: int, h: int, mi: int, s: int, frac: str | None, tz: timezone) -> datetime:
    micro = int((frac or "0").ljust(6, "0")[:6])
    return datetime(y, mo, d, h, mi, s, micro, tzinfo=tz).astimezone(UTC)
