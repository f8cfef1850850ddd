"""The flows stage: how editor actions follow each other within sessions.

In: the workspace's ``events`` (and ``llm_requests`` for outcomes). Out: a :class:`FlowsResult`.
Writes the ``flows_*`` tables (directly-follows graph, activities, n-grams, co-occurrence,
patterns, outcomes, variants, sessions) and optional pictures. Works per partition:
:func:`compute_partial` on whole sessions, :func:`merge_partials`, :func:`finalize` (see
:mod:`logmine.stages.flows.core`).
"""

from logmine.stages.flows.core import (
    FlowsConfig,
    FlowsPartial,
    FlowsResult,
    compute_flows,
    compute_partial,
    filter_events,
    finalize,
    flows,
    merge_partials,
    mine_patterns,
    sequence,
)
from logmine.stages.flows.graph import sessions_table
from logmine.stages.flows.render import write_pictures

__all__ = [
    "FlowsConfig", "FlowsPartial", "FlowsResult", "compute_flows", "compute_partial", "filter_events", "finalize",
    "flows", "merge_partials", "mine_patterns", "sequence", "sessions_table", "write_pictures",
]
