"""logmine: mine IDE and code-assistant logs into answers and leaner prompts.

The public API is imported lazily, so `import logmine` stays light.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_API = {
    "ingest": ("logmine.stages.ingest.core", "ingest"),
    "IngestConfig": ("logmine.stages.ingest.core", "IngestConfig"),
    "IngestReport": ("logmine.stages.ingest.report", "IngestReport"),
    "Workspace": ("logmine.workspace", "Workspace"),
    "LogmineError": ("logmine.errors", "LogmineError"),
    "trim_slots": ("logmine.runtime.trim.trimmer", "trim_slots"), "TrimConfig": ("logmine.runtime.trim.trimmer", "TrimConfig"), "Trimmer": ("logmine.runtime.trim.trimmer", "Trimmer"), "recent_files": ("logmine.runtime.trim.trimmer", "recent_files"),
    "generate_sample": ("logmine.sample", "generate"), "SampleConfig": ("logmine.sample", "SampleConfig"), "SampleReport": ("logmine.sample", "SampleReport"),
    "flows": ("logmine.stages.flows.core", "flows"), "FlowsConfig": ("logmine.stages.flows.core", "FlowsConfig"), "FlowsResult": ("logmine.stages.flows.core", "FlowsResult"),
    "heatmap": ("logmine.stages.heatmap", "heatmap"), "HeatmapConfig": ("logmine.stages.heatmap", "HeatmapConfig"), "HeatmapResult": ("logmine.stages.heatmap", "HeatmapResult"),
    "mine_templates": ("logmine.stages.templates.miner", "mine_templates"), "MineConfig": ("logmine.stages.templates.miner", "MineConfig"), "MineResult": ("logmine.stages.templates.miner", "MineResult"), "merge_results": ("logmine.stages.templates.miner", "merge_results"), "mine_prompts": ("logmine.stages.templates.prompts", "mine_prompts"), "merge_near_duplicates": ("logmine.stages.templates.dedup", "merge_near_duplicates"), "DedupConfig": ("logmine.stages.templates.dedup", "DedupConfig"), "templates": ("logmine.stages.templates.tables", "run"), "TemplatesConfig": ("logmine.stages.templates.tables", "TemplatesConfig"),
    "compress_logs": ("logmine.jobs", "compress_logs"), "CompressJobConfig": ("logmine.jobs", "CompressJobConfig"), "CompressConfig": ("logmine.stages.compress.compressor", "CompressConfig"), "Compressor": ("logmine.stages.compress.compressor", "Compressor"), "ExportConfig": ("logmine.stages.compress.export", "ExportConfig"),
    "run_pipeline": ("logmine.pipeline", "run_pipeline"), "load_pipeline": ("logmine.pipeline", "load_pipeline"), "RunRecord": ("logmine.pipeline", "RunRecord"), "write_report": ("logmine.report", "write_report"), "make_engine": ("logmine.engine", "make_engine"), "EngineConfig": ("logmine.engine", "EngineConfig"),
}

__all__ = sorted(_API)


def __getattr__(name: str) -> Any:
    if name not in _API:
        raise AttributeError(f"module 'logmine' has no attribute {name!r}")
    module, attr = _API[name]
    return getattr(importlib.import_module(module), attr)
