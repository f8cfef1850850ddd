"""Content hashing: versioned ids of canonical JSON (templates, families, shared prefixes, packs)
and file digests."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any


def content_id(obj: Any) -> str:
    """A versioned content hash of canonical JSON: ``b2:<hex>``."""
    canonical = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "b2:" + hashlib.blake2b(canonical.encode(), digest_size=12).hexdigest()


def file_sha256(path: Path) -> str:
    """The sha256 of a file's bytes (read in 1 MiB blocks)."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


__all__ = ["content_id", "file_sha256"]
