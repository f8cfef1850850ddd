"""The compress stage: compress the mined templates behind a fidelity gate and export the
template pack.

In: the workspace's ``templates``, ``template_families``, ``request_templates`` and
``llm_requests`` (``events`` for recency). Out: a :class:`CompressResult`. Writes ``OUT/pack/``
atomically and the tables ``compress_templates`` and ``template_slots``. Its parts: the text
compressor (:mod:`~logmine.stages.compress.compressor`), the fidelity check
(:mod:`~logmine.stages.compress.fidelity`), code-context trimming
(:mod:`logmine.stages.compress.trim`), logged instances and their token counts
(:mod:`~logmine.stages.compress.instances`) and the pack export
(:mod:`~logmine.stages.compress.export`).

The face is lazy: importing the trimming subpackage (as the pack runtime, :mod:`logmine.runtime`,
does) does not load the compressor and the exporter, which themselves render through the runtime.
"""

from __future__ import annotations

import importlib
from typing import Any

_API = {
    "CompressConfig": "compressor", "CompressedTemplate": "compressor", "Compressor": "compressor",
    "CompressResult": "export", "ExportConfig": "export", "run": "export",
    "TrimConfig": "trim", "TrimResult": "trim", "Trimmer": "trim", "recent_files": "trim", "trim_slots": "trim",
}

__all__ = sorted(_API)


def __getattr__(name: str) -> Any:
    if name not in _API:
        raise AttributeError(f"module 'logmine.stages.compress' has no attribute {name!r}")
    return getattr(importlib.import_module(f"logmine.stages.compress.{_API[name]}"), name)
