"""What a render knows about its request besides the slot values, and the lossless context steps.

:class:`RenderContext` is the request context a slot policy may read (the language, the file being
edited, the files the session touched before). Measurement builds it from the logged request,
serving from the request body; where serving has none, the template's own ``language`` and
``file_path`` slots stand in (:meth:`RenderContext.resolved`), and no recent files means no file
recency.

:func:`dedup_file_blocks` is the lossless step ``dedup_file_blocks``: a file (or snippet) that
appears twice in one prompt is sent once.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from logmine.prompt_syntax import FILE_SEPARATORS, SNIPPET_HEADERS

LANGUAGE_SLOTS = ("language", "lang")
"""Slots that hold the request's language, read when the context does not say."""
PATH_SLOTS = ("file_path", "filepath", "path")
"""Slots that hold the edited file's path, read when the context does not say."""


@dataclass(frozen=True)
class RenderContext:
    """The request context a render plan's slot policies read."""

    language: str | None = None
    """The language of the edited file (else found from ``file_path``, else detected or the lines nearest the cursor)."""
    file_path: str | None = None
    """The edited file's path."""
    recent_files: tuple[str, ...] = ()
    """Files the session edited or opened before the request, most recent last (trimming's file recency)."""
    session_id: str | None = None
    """The session: keys the trimmer's parse caches only, never its result."""

    def resolved(self, slots: Mapping[str, Any]) -> RenderContext:
        """This context with ``language`` and ``file_path`` taken from the template's slots where it has none."""
        language = self.language or _first(slots, LANGUAGE_SLOTS)
        file_path = self.file_path or _first(slots, PATH_SLOTS)
        if (language, file_path) == (self.language, self.file_path):
            return self
        return replace(self, language=language, file_path=file_path)

    @classmethod
    def of(cls, request: Mapping[str, Any], recent_files: Sequence[str] = ()) -> RenderContext:
        """The context of a logged request (``language``, ``file_path``, ``session_id`` columns)."""
        return cls(_str(request.get("language")), _str(request.get("file_path")), tuple(recent_files),
                   _str(request.get("session_id")))


def _first(slots: Mapping[str, Any], names: Sequence[str]) -> str | None:
    for name in names:
        value = slots.get(name)
        if isinstance(value, str) and value:
            return value
    return None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


_HEADER = re.compile("^(?:" + "|".join(re.escape(h) for h in (*FILE_SEPARATORS, *SNIPPET_HEADERS)) + ")", re.M)


def file_blocks(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each file block of ``text``: a line opening with a file separator or a
    snippet header, and everything up to the next such line (or the end)."""
    starts = [m.start() for m in _HEADER.finditer(text)]
    return list(zip(starts, [*starts[1:], len(text)], strict=False))


def dedup_file_blocks(values: Mapping[str, Any], slots: Sequence[str]) -> dict[str, Any]:
    """``values`` with every file block that occurs again later in the prompt removed.

    The blocks of ``slots`` (in the order the template shows them) are compared whole, trailing
    whitespace aside; of equal blocks the last stays, nearest the cursor of a completion prompt.
    Text before a slot's first header is not a block and is never touched.
    """
    found: list[tuple[str, int, int, str]] = []
    for slot in dict.fromkeys(slots):
        value = values.get(slot)
        if isinstance(value, str) and value:
            found.extend((slot, a, b, value[a:b].rstrip()) for a, b in file_blocks(value))
    last = {key: k for k, (_, _, _, key) in enumerate(found)}
    drop: dict[str, list[tuple[int, int]]] = {}
    for k, (slot, a, b, key) in enumerate(found):
        if last[key] != k:
            drop.setdefault(slot, []).append((a, b))
    if not drop:
        return dict(values)
    out = dict(values)
    for slot, spans in drop.items():
        text = out[slot]
        for a, b in reversed(spans):
            text = text[:a] + text[b:]
        out[slot] = text
    return out
