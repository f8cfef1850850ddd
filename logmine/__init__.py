"""logmine: mine IDE and code-assistant logs into answers and leaner prompts.

The public API is imported lazily, so `import logmine` stays light.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_API = {
    "ingest": ("logmine.stages.ingest", "ingest"),
    "IngestConfig": ("logmine.stages.ingest", "IngestConfig"),
    "IngestReport": ("logmine.stages.ingest", "IngestReport"),
    "Workspace": ("logmine.workspace", "Workspace"),
    "LogmineError": ("logmine.errors", "LogmineError"),
    "trim_slots": ("logmine.stages.trim", "trim_slots"), "TrimConfig": ("logmine.stages.trim", "TrimConfig"), "Trimmer": ("logmine.stages.trim", "Trimmer"), "recent_files": ("logmine.stages.trim", "recent_files"),
    "generate_sample": ("logmine.sample", "generate"), "SampleConfig": ("logmine.sample", "SampleConfig"), "SampleReport": ("logmine.sample", "SampleReport"),
    "flows": ("logmine.stages.flows", "flows"), "FlowsConfig": ("logmine.stages.flows", "FlowsConfig"), "FlowsResult": ("logmine.stages.flows", "FlowsResult"),
    "heatmap": ("logmine.stages.heatmap", "heatmap"), "HeatmapConfig": ("logmine.stages.heatmap", "HeatmapConfig"), "HeatmapResult": ("logmine.stages.heatmap", "HeatmapResult"),
    "mine_templates": ("logmine.stages.templates", "mine_templates"), "MineConfig": ("logmine.stages.templates", "MineConfig"), "MineResult": ("logmine.stages.templates", "MineResult"), "merge_results": ("logmine.stages.templates", "merge_results"), "mine_prompts": ("logmine.stages.templates_prompts", "mine_prompts"), "merge_near_duplicates": ("logmine.stages.dedup", "merge_near_duplicates"), "DedupConfig": ("logmine.stages.dedup", "DedupConfig"), "templates": ("logmine.stages.templates_workspace", "run"), "TemplatesConfig": ("logmine.stages.templates_workspace", "TemplatesConfig"),
    "compress_logs": ("logmine.jobs", "compress_logs"), "CompressJobConfig": ("logmine.jobs", "CompressJobConfig"), "CompressConfig": ("logmine.stages.compress", "CompressConfig"), "Compressor": ("logmine.stages.compress", "Compressor"), "ExportConfig": ("logmine.stages.export", "ExportConfig"),
    "run_pipeline": ("logmine.pipeline", "run_pipeline"), "load_pipeline": ("logmine.pipeline", "load_pipeline"), "RunRecord": ("logmine.pipeline", "RunRecord"), "write_report": ("logmine.report", "write_report"), "make_engine": ("logmine.engine", "make_engine"), "EngineConfig": ("logmine.engine", "EngineConfig"),
}

__all__ = sorted(_API)


def __getattr__(name: str) -> Any:
    if name not in _API:
        raise AttributeError(f"module 'logmine' has no attribute {name!r}")
    module, attr = _API[name]
    return getattr(importlib.import_module(module), attr)
