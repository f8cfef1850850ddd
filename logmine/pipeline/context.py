"""What every pipeline step gets: the pipeline, the workspace, the engine and the partitions."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from logmine.engine import Engine
from logmine.pipeline.inputs import InputFile, fingerprint
from logmine.pipeline.spec import Pipeline
from logmine.stages.ingest import source_key
from logmine.workspace import Workspace

ProgressFn = Callable[[str, int, int], None]


@dataclass
class RunContext:
    """The state of one run, shared by its steps."""

    pipeline: Pipeline
    run_id: str
    engine: Engine
    partitions: dict[str, list[InputFile]]
    """Partitions in the retention window (with their files), whether or not this run touched them."""
    input_fingerprints: dict[str, str] = field(default_factory=dict)
    """Partition -> hash of its files' paths and sha256 (set after ingest)."""
    date: str | None = None
    window_start: str | None = None
    progress: ProgressFn = lambda d, a, b: None
    models: dict[str, Any] = field(default_factory=dict)
    """Injected models (``embedder``, ``count_tokens``, ``token_ids``, and ``generator``, the judge of what the pack
    ships); loaded lazily when absent."""

    @property
    def root(self) -> Path:
        return self.pipeline.workspace

    def workspace(self) -> Workspace:
        return Workspace.open(self.root)

    def stage_fingerprints(self, stage: str, settings: object, version: int) -> dict[str, str]:
        """Partition -> fingerprint of its inputs and the stage's settings."""
        text = json.dumps(settings, sort_keys=True, default=str)
        return {p: fingerprint(stage, version, text, fp) for p, fp in self.input_fingerprints.items()}

    def source_keys(self, partition: str) -> list[str]:
        """The workspace partition keys (one per source file) of a date partition's files."""
        return [source_key(f.path) for f in self.partitions.get(partition, [])]
