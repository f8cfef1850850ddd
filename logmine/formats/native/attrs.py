"""``attrs`` for the vectorised native reader (:mod:`logmine.formats.native.fast`): cut out of
the raw lines where that is safe, canonicalised with orjson, and cached across a file's chunks."""

from __future__ import annotations


import numpy as np
import orjson
import polars as pl

from logmine.memo import FrameMemo
from logmine.formats.native.lines import _Lines
from logmine.formats.native.checks import _WS


ATTRS_CACHE_SIZE = 50_000
"""Distinct ``attrs`` texts a file's reader remembers with their canonical JSON."""
_ATTRS_VALUE = rf"^{_WS}:{_WS}\{{[^{{}}]*\}}"
"""After the key: a colon and an object without braces inside (a ``}`` in a string cuts it short: invalid)."""
_UNREADABLE = "\x00"
"""The canonical text of a cut-out text that is no JSON object (its lines are parsed whole); an
empty object's is "" (a frame's null would read as not known)."""


class _AttrsCache(FrameMemo):
    """Cut-out ``attrs`` texts and their canonical JSON (:func:`_canonical_text`), shared by the
    threads reading one file."""

    def __init__(self) -> None:
        super().__init__(_canonical_text, ATTRS_CACHE_SIZE)

    canonical = FrameMemo.__call__


def _canonical_text(text: str) -> str:
    """The sorted-key JSON of the object in ``text``, "" when empty, _UNREADABLE when invalid.

    ``text`` is what follows the key (``: {...}``) or a whole match of :data:`_ATTRS_LAST`
    (``,"attrs": {...} }``, the line's closing brace and newline after the object).
    """
    end = len(text.rstrip(" \t\r\n"))
    if text[0] != ":":
        end = len(text[:end - 1].rstrip(" \t\r\n"))
    try:
        value = orjson.loads(text[text.index("{", text.index(":")):end])
    except orjson.JSONDecodeError:
        return _UNREADABLE
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode() if value else ""


def _canonical_attrs(ok: np.ndarray, lines: _Lines, cache: _AttrsCache) -> tuple[pl.Series, np.ndarray]:
    """``attrs`` as the per-line reader writes it (sorted-key JSON, None when empty or absent).

    Polars does not read ``attrs`` (turning objects into text is a good part of its parse, and its
    text loses a whole float's type). The lines that mention the key, or might spell it with an
    escape, get it from orjson: where the line's only ``"attrs"`` is surely a top-level key holding
    an object without braces inside (:func:`_attrs_texts`), that object's text is cut out and each
    distinct text is canonicalised once (``cache`` keeps them across chunks); other lines are parsed
    whole. A row whose ``attrs`` is neither an object nor null is left to the per-line reader
    (``ok`` cleared).
    """
    column = lines.column()
    named = column.str.contains('"attrs"', literal=True).to_numpy()
    escaped = lines.escaped()
    out = pl.repeat(None, len(ok), dtype=pl.String(), eager=True).alias("attrs")
    rows = np.flatnonzero(ok & (named | escaped))
    if len(rows) == 0:
        return out, ok
    texts = _attrs_texts(column.gather(rows), escaped[rows])
    done = texts.is_not_null().to_numpy()
    if done.any():
        values = cache.canonical(texts.filter(pl.Series(done)))
        readable = (values != _UNREADABLE).to_numpy()  # a "}" inside a string cut it short
        done[np.flatnonzero(done)[~readable]] = False
        values = values.filter(pl.Series(readable))
        out = out.scatter(rows[done], pl.select(pl.when(values != "").then(values)).to_series())  # "": an empty object
    ok = ok.copy()
    rest = rows[~done]
    slow: dict[int, str | None] = {}
    loads, dumps, sort = orjson.loads, orjson.dumps, orjson.OPT_SORT_KEYS
    data, starts, ends = lines.data, lines.starts[rest].tolist(), lines.ends[rest].tolist()
    for i, start, end in zip(rest.tolist(), starts, ends, strict=True):
        value = loads(data[start:end]).get("attrs")
        if isinstance(value, dict):
            slow[i] = dumps(value, option=sort).decode() if value else None
        elif value is not None:
            ok[i] = False
    if slow:
        out = out.scatter(list(slow), pl.Series(list(slow.values()), dtype=pl.String()))
    return out, ok


_ATTRS_LAST = rf'[{{,]{_WS}"attrs"{_WS}:{_WS}\{{[^{{}}]*\}}{_WS}\}}{_WS}$'
"""``attrs`` as the last member of the line's object, holding an object without braces inside
(taken whole: a capture group costs the regex engine more than the match).

In a line Polars parsed (valid JSON), a quote after ``{`` or ``,`` opens a string, so this
``"attrs"`` and its colon are a key; the ``}`` after its value is the last of the line, so it
closes the top-level object. The last member is the value orjson keeps for a repeated key.
Anchored at the end, the regex is matched backwards from there: a long prompt before it is not read.
"""


def _attrs_texts(raw: pl.Series, escaped: np.ndarray) -> pl.Series:
    """The text of the top-level ``"attrs"`` object where it is cut out safely, else null: where it is
    the last member, the match of :data:`_ATTRS_LAST`, else the text after the key (``: {...}``)
    by :func:`_attrs_texts_before`."""
    last = raw.str.extract(_ATTRS_LAST, 0)
    rest = np.flatnonzero(last.is_null().to_numpy())
    if len(rest) == 0:
        return last
    return last.scatter(rest, _attrs_texts_before(raw.gather(rest), escaped[rest]))


def _attrs_texts_before(raw: pl.Series, escaped: np.ndarray) -> pl.Series:
    """The text after the top-level ``"attrs"`` key (``: {...}``) where it is cut out safely, else null.

    Safely: the line is ASCII (so byte offsets are character offsets) without ``\\u`` escapes (a key
    spelt with one could repeat ``attrs``), starts with its ``{`` and has no other ``{`` before its
    only ``"attrs"``, which follows no backslash (so it opens a string, at the top level) and is
    followed by a colon and an object without braces inside.
    """
    line, before, after = pl.col("raw"), pl.col("before"), pl.col("after")
    pos = line.str.find('"attrs"', literal=True)
    parts = pl.DataFrame({"raw": raw, "escaped": escaped}).select(
        plain=~pl.col("escaped") & (line.str.len_bytes() == line.str.len_chars()) & line.str.starts_with("{"),
        before=line.str.slice(1, pos - 1), after=line.str.slice(pos + 7),
    )
    top = ~before.str.contains("{", literal=True) & ~before.str.ends_with("\\") & ~after.str.contains('"attrs"', literal=True)
    return parts.select(pl.when(pl.col("plain") & top).then(after.str.extract_all(_ATTRS_VALUE).list.first())).to_series()

