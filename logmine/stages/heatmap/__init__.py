"""The heatmap stage: token-level latency by token type, position, model, language and hour.

In: the workspace's ``llm_requests`` (``token_times_ms``, ``token_texts``, the prompt for the
language). Out: a :class:`HeatmapResult`. Writes ``heatmap_days`` (a fingerprint per day: a
state table of :mod:`logmine.partitions`' store), ``heatmap_sketch`` (one partition per day),
``heatmap_tokens``, the ``heatmap_*`` aggregates, the PNGs and ``OUT/heatmap/index.html``. Per partition: :func:`measure` and
:func:`sketch_partial` per day, :func:`merge_partials` + :func:`finalize` over any set of days
(see :mod:`logmine.stages.heatmap.aggregate`, :mod:`logmine.stages.heatmap.stage`).
"""

from logmine.stages.heatmap.aggregate import (
    FIRST_TOKEN_VIEWS,
    INPUT_COLUMNS,
    LABELS_VERSION,
    VIEWS,
    HeatmapConfig,
    HeatmapResult,
    finalize,
    measure,
    merge_partials,
    sketch_partial,
)
from logmine.stages.heatmap.render import chart_specs, render
from logmine.stages.heatmap.stage import heatmap, parse_day
from logmine.stages.heatmap.store import (
    ensure_tables,
    plan_days,
    put_day,
    read_requests,
    slow_examples,
    stored_partials,
    write_days,
)

__all__ = [
    "FIRST_TOKEN_VIEWS", "INPUT_COLUMNS", "LABELS_VERSION", "VIEWS", "HeatmapConfig", "HeatmapResult", "chart_specs",
    "ensure_tables", "finalize", "heatmap", "measure", "merge_partials", "parse_day", "plan_days", "put_day",
    "read_requests", "render", "sketch_partial", "slow_examples", "stored_partials", "write_days",
]
