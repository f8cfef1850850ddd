"""The compress stage: compress the mined templates behind a fidelity gate and export the
template pack.

In: the workspace's ``templates``, ``template_families``, ``request_templates`` and
``llm_requests`` (``events`` for recency). Out: a :class:`CompressResult`. Writes ``OUT/pack/``
atomically and the tables ``compress_templates`` and ``template_slots``. Its parts: the text
compressor (:mod:`~logmine.stages.compress.compressor`), the fidelity check
(:mod:`~logmine.stages.compress.fidelity`), code-context trimming
(:mod:`logmine.runtime.trim`, part of the pack runtime: serving trims as the pack counts), logged instances and their token counts
(:mod:`~logmine.stages.compress.instances`) and the pack export
(:mod:`~logmine.stages.compress.export`).
"""

from logmine.runtime.trim import TrimConfig, Trimmer, TrimResult, recent_files, trim_slots
from logmine.stages.compress.compressor import CompressConfig, CompressedTemplate, Compressor
from logmine.stages.compress.export import CompressResult, ExportConfig, run

__all__ = [
    "CompressConfig", "CompressResult", "CompressedTemplate", "Compressor", "ExportConfig", "TrimConfig", "TrimResult",
    "Trimmer", "recent_files", "run", "trim_slots",
]
