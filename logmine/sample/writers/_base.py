"""What the format writers share: the writer interface, time formatting, corruption helpers."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np

from logmine.sample.draw import Draw
from logmine.sample.model import Event, Session
from logmine.sample.truth import Truth
from logmine.sample.writers._sink import FileStats, LineFiles, Planter

ABSURD_MS = (5680281600000, 315964800000, 10**17)
"""Absurd epoch-ms times: 2150-01-01, 1980-01-06, and far beyond year 9999."""
ABSURD_ISO = ("2150-01-01T00:00:00.000Z", "1969-12-31T23:59:59.000Z", "1999-06-01T12:00:00.000Z")


class Writer:
    """Writes the sessions of one format under ``root``; ``close`` returns the per-file stats."""

    NAME = ""
    IDES: tuple[str, ...] = ("vscode",)
    """The IDEs this format's sessions run in (the simulator picks one per session)."""
    NO_CODE_SHARE = 0.0
    """Share of users whose tool is set to log no code (prompts, completions)."""

    def __init__(self, root: Path, rng: np.random.Generator, malformed_rate: float, truth: Truth) -> None:
        self.root, self.truth = root, truth
        self.draw = Draw(rng)
        self.planter = Planter(rng, malformed_rate, self.corrupt)
        self.files = LineFiles(root, self.planter)

    def write(self, session: Session) -> None:
        raise NotImplementedError

    def corrupt(self, obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
        """A broken copy of ``obj`` (``wrong_type``, ``negative_latency``, ``absurd_timestamp``) or None."""
        raise NotImplementedError

    def close(self) -> dict[str, FileStats]:
        return self.files.close()


def iso_ms(ts_ms: float) -> str:
    """``2025-03-03T08:00:00.123Z``."""
    return datetime.fromtimestamp(ts_ms / 1000.0, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def iso_offset(ts_ms: float, offset_hours: int) -> str:
    """Json.NET's DateTime with a local offset and 7 fractional digits (KaVE)."""
    tz = timezone(timedelta(hours=offset_hours))
    text = datetime.fromtimestamp(ts_ms / 1000.0, tz).isoformat(timespec="microseconds")
    return text[:26] + "0" + text[26:]


def day(ts_ms: float) -> str:
    return datetime.fromtimestamp(ts_ms / 1000.0, UTC).strftime("%Y-%m-%d")


def timespan(ms: float) -> str:
    """A .NET TimeSpan text ``hh:mm:ss.fffffff``."""
    ticks = int(round(ms * 10_000))
    seconds, frac = divmod(ticks, 10_000_000)
    minutes, sec = divmod(seconds, 60)
    hours, minute = divmod(minutes, 60)
    return f"{hours:02d}:{minute:02d}:{sec:02d}.{frac:07d}"


def deep(obj: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(obj)


def completion_pairs(session: Session) -> dict[str, Event]:
    """request_id -> the accepted/rejected event that followed the request."""
    out: dict[str, Event] = {}
    for item in session.items:
        if isinstance(item, Event) and item.attrs and item.action in (
                "completion.accepted", "completion.rejected", "edit.accepted", "edit.rejected", "chat.feedback"):
            out[str(item.attrs["request_id"])] = item
    return out
