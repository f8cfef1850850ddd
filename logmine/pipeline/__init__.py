"""Declarative nightly pipelines: ``logmine run pipelines/nightly.toml [--date D]``.

:func:`load_pipeline` reads and validates a pipeline file (:mod:`logmine.pipeline.spec`);
:func:`run_pipeline` runs it incrementally (:mod:`logmine.pipeline.runner`) and returns the
:class:`RunRecord`. Exit codes for schedulers: 0 ok, 2 partial (finished, some input
rejected), 1 failed.
"""

from __future__ import annotations

from logmine.pipeline.record import EXIT_FAILED, EXIT_OK, EXIT_PARTIAL, RunRecord
from logmine.pipeline.runner import run_pipeline, with_engine
from logmine.pipeline.spec import Pipeline, PipelineFileError, PipelineSpec, load_pipeline

__all__ = ["EXIT_FAILED", "EXIT_OK", "EXIT_PARTIAL", "Pipeline", "PipelineFileError", "PipelineSpec", "RunRecord",
           "load_pipeline", "run_pipeline", "with_engine"]
