"""Where writers put their lines: buffered files with planted malformed lines, and zip archives.

About ``rate`` (0.5 %) of the records of every file are followed by an extra malformed line:
a copy of the line just written, broken in one of :data:`MALFORMED_KINDS`. The copy is
extra, never a replacement, so every real record still arrives whole; each file's counts by
kind go to ``truth.json``.
"""

from __future__ import annotations

import zipfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import orjson

MALFORMED_KINDS = ("truncated_json", "invalid_utf8", "wrong_type", "negative_latency", "absurd_timestamp")
"""How a planted malformed line is broken."""
BYTE_KINDS = frozenset({"truncated_json", "invalid_utf8"})
"""Kinds that break the bytes; the others change a field (see a writer's ``corrupt``)."""
FLUSH_BYTES = 32 << 20

Corrupt = Callable[[dict[str, Any], str], "dict[str, Any] | None"]
"""``corrupt(record, kind)`` -> a broken deep copy, or None when ``kind`` does not apply to it."""


@dataclass
class FileStats:
    """What went into one output file."""

    lines: int = 0
    """Physical lines (JSONL), array elements or zip entries, malformed ones included."""
    malformed: Counter[str] = field(default_factory=Counter)

    def to_json(self) -> dict[str, Any]:
        return {"lines": self.lines, "malformed": dict(sorted(self.malformed.items())),
                "malformed_total": sum(self.malformed.values())}


class Planter:
    """Decides where malformed copies go (a geometric gap per file) and breaks them."""

    def __init__(self, rng: np.random.Generator, rate: float, corrupt: Corrupt, kinds: tuple[str, ...] = MALFORMED_KINDS) -> None:
        self.rng, self.rate, self.corrupt, self.kinds = rng, rate, corrupt, kinds
        self.countdown: dict[str, int] = {}

    def due(self, key: str, weight: int = 1) -> bool:
        """Count one good line of ``key`` holding ``weight`` records; True when a malformed copy should follow it."""
        if self.rate <= 0:
            return False
        left = self.countdown.get(key)
        if left is None:
            left = int(self.rng.geometric(self.rate))
        left -= weight
        if left <= 0:
            self.countdown[key] = int(self.rng.geometric(self.rate))
            return True
        self.countdown[key] = left
        return False

    def broken(self, obj: Any, data: bytes, allowed: tuple[str, ...] | None = None) -> tuple[str, bytes]:
        """A malformed copy of the record ``obj`` serialised as ``data``, and its kind."""
        kinds = allowed or self.kinds
        kind = kinds[int(self.rng.integers(len(kinds)))]
        if kind == "truncated_json":
            cut = int(self.rng.integers(max(1, len(data) // 4), len(data) - 1))
            while cut > 1 and (data[cut] & 0xC0) == 0x80:  # never split a UTF-8 sequence
                cut -= 1
            return kind, data[:cut]
        if kind == "invalid_utf8":
            at = data.find(b'":"')
            at = at + 3 if at >= 0 else max(1, data.find(b'"') + 1)
            return kind, data[:at] + b"\xff\xfe" + data[at:]
        copy = orjson.loads(data)
        broken = self.corrupt(copy, kind) if isinstance(copy, dict) else None
        if broken is None:
            kind = "absurd_timestamp"
            broken = self.corrupt(orjson.loads(data), kind)
        if broken is None:
            return "truncated_json", data[: max(1, len(data) // 2)]
        return kind, orjson.dumps(broken)


class LineFiles:
    """JSON Lines (and JSON array) files under ``root``, buffered, with malformed copies planted."""

    def __init__(self, root: Path, planter: Planter) -> None:
        self.root, self.planter = root, planter
        self.stats: dict[str, FileStats] = {}
        self.buffers: dict[str, list[bytes]] = {}
        self.arrays: set[str] = set()
        self.size = 0
        self.created: set[str] = set()

    def line(self, rel: str, obj: dict[str, Any], weight: int = 1) -> None:
        """Write ``obj`` as one line of ``rel`` (maybe followed by a malformed copy).

        ``weight``: how many records the line holds (spans of an OTLP export, a merged FUS
        event's count); the malformed rate is per record.
        """
        data = orjson.dumps(obj)
        stats = self.stats.get(rel) or self.stats.setdefault(rel, FileStats())
        buf = self.buffers.get(rel)
        if buf is None:
            buf = self.buffers[rel] = []
        buf.append(data + b"\n")
        stats.lines += 1
        self.size += len(data) + 1
        if self.planter.due(rel, weight):
            kind, bad = self.planter.broken(obj, data)
            buf.append(bad + b"\n")
            stats.lines += 1
            stats.malformed[kind] += 1
            self.size += len(bad) + 1
        if self.size > FLUSH_BYTES:
            self.flush()

    def element(self, rel: str, obj: dict[str, Any], malformed: tuple[str, ...]) -> None:
        """Write ``obj`` as the next element of the JSON array file ``rel``; only field kinds are planted."""
        stats = self.stats.setdefault(rel, FileStats())
        buf = self.buffers.setdefault(rel, [])
        data = orjson.dumps(obj)
        pieces = [data]
        if self.planter.due(rel):
            kind, bad = self.planter.broken(obj, data, malformed)
            pieces.append(bad)
            stats.malformed[kind] += 1
        for piece in pieces:
            buf.append((b"[\n" if rel not in self.arrays else b",\n") + piece)
            self.arrays.add(rel)
            stats.lines += 1
            self.size += len(piece) + 2
        if self.size > FLUSH_BYTES:
            self.flush()

    def flush(self) -> None:
        for rel, buf in self.buffers.items():
            if not buf:
                continue
            path = self.root / rel
            if rel not in self.created:
                path.parent.mkdir(parents=True, exist_ok=True)
                self.created.add(rel)
                mode = "wb"
            else:
                mode = "ab"
            with open(path, mode) as fh:
                fh.write(b"".join(buf))
            buf.clear()
        self.size = 0

    def close(self) -> dict[str, FileStats]:
        for rel in self.arrays:
            self.buffers.setdefault(rel, []).append(b"\n]\n")
        self.flush()
        return self.stats


class ZipFiles:
    """Zip archives of one JSON document per entry (``0.json``, ``1.json`` ...), kept open."""

    def __init__(self, root: Path, planter: Planter, date_time: tuple[int, int, int, int, int, int]) -> None:
        self.root, self.planter, self.date_time = root, planter, date_time
        self.open: dict[str, zipfile.ZipFile] = {}
        self.stats: dict[str, FileStats] = {}

    def entry(self, rel: str, obj: dict[str, Any]) -> None:
        archive = self.open.get(rel)
        if archive is None:
            path = self.root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            archive = self.open[rel] = zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED)
            self.stats[rel] = FileStats()
        stats = self.stats[rel]
        data = orjson.dumps(obj)
        self._put(archive, stats, data)
        if self.planter.due(rel):
            kind, bad = self.planter.broken(obj, data)
            self._put(archive, stats, bad)
            stats.malformed[kind] += 1

    def _put(self, archive: zipfile.ZipFile, stats: FileStats, data: bytes) -> None:
        info = zipfile.ZipInfo(f"{stats.lines}.json", date_time=self.date_time)
        info.compress_type = zipfile.ZIP_DEFLATED
        info.external_attr = 0o644 << 16
        archive.writestr(info, data)
        stats.lines += 1

    def close(self) -> dict[str, FileStats]:
        for archive in self.open.values():
            archive.close()
        self.open.clear()
        return self.stats
