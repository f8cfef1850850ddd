"""The ingest stage: log files of any supported format -> the workspace.

In: files and directories (any mix of formats, detected per file; ``.gz``, ``.zst``, ``.zip``).
Out: an :class:`IngestReport` (per-file line accounting). Writes the tables ``events``,
``llm_requests``, ``rejects`` and ``sources``, one partition per source file, in one workspace
transaction (see :mod:`logmine.stages.ingest.core`).
"""

from logmine.stages.ingest.core import IngestConfig, ingest, source_key
from logmine.stages.ingest.inputs import collect_files
from logmine.stages.ingest.report import IngestReport

__all__ = ["IngestConfig", "IngestReport", "collect_files", "ingest", "source_key"]
