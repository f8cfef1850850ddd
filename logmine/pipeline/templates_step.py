"""Template mining across partitions: each shard mines locally, shards merge by content.

A shard (a date partition, or any slice of lines) is mined by the template miner
(:class:`logmine.stages.templates.TemplateMiner`); its result is kept as *units*: the distinct
masked signatures with their line counts (:func:`shard_frames`, an Arrow-friendly frame), plus
each line's unit. Merging shards (:func:`merge_shards`) adds up units with the same content
(same tokens and separators: the same signature a single run would have made once), then
clusters all units once (:func:`logmine.stages.templates.finalize`, independent of unit order):
the templates, their ids (content hashes), counts and every line's template are those of one
single-process run over the shards' lines in order, as long as no shard holds more than
``max_units`` signatures (above that the miner consolidates early and the merge is close,
not exact; the run record counts such shards).

The pipeline step keeps each partition's units and line assignments in ``templates_partial_*``
tables, so a nightly run mines only new partitions and re-clusters the stored units.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import polars as pl

from logmine.masking import Masker
from logmine.pipeline import partials as store
from logmine.pipeline.context import RunContext
from logmine.pipeline.spec import TemplatesStage
from logmine.stages.templates import MineConfig, MineResult, MinerState, TemplateMiner, finalize

log = logging.getLogger(__name__)

STAGE = "templates"
VERSION = 1
UNITS = "templates_partial_units"
LINES = "templates_partial_lines"
UNITS_SCHEMA: dict[str, pl.DataType] = {
    "unit": pl.Int64(), "tokens": pl.List(pl.String()), "seps": pl.List(pl.String()), "weight": pl.Int64(),
    "first_line": pl.Int64(), "compacted": pl.Boolean(),
}


# -- shards: mine, to frames, merge --------------------------------------------------------------
def shard_frames(state: MinerState) -> tuple[pl.DataFrame, pl.Series]:
    """A mined shard as (units, unit of each line). Units are the live (root) units."""
    line_roots = [state.find(u) for u in state.line_units]
    weight: dict[int, int] = {}
    first: dict[int, int] = {}
    for n, u in enumerate(line_roots):
        weight[u] = weight.get(u, 0) + 1
        first.setdefault(u, n)
    roots = sorted(weight)
    units = pl.DataFrame({
        "unit": roots, "tokens": [list(state.tokens[u]) for u in roots], "seps": [list(state.seps[u]) for u in roots],
        "weight": [weight[u] for u in roots], "first_line": [first[u] for u in roots],
        "compacted": [state.compactions > 0] * len(roots),
    }, schema=UNITS_SCHEMA)
    return units, pl.Series("unit", line_roots, dtype=pl.Int64)


def mine_shard(task: tuple[list[str], MineConfig]) -> tuple[pl.DataFrame, pl.Series]:
    """Mine one shard's lines: the partition function of template mining."""
    lines, config = task
    miner = TemplateMiner(config)
    miner.add_all(lines)
    return shard_frames(miner.state)


def merge_shards(shards: Sequence[tuple[pl.DataFrame, pl.Series]], config: MineConfig) -> MineResult:
    """The templates of all shards' lines (in shard order), from the shards' units."""
    state = MinerState()
    by_content: dict[tuple[tuple[str, ...], tuple[str, ...]], int] = {}
    offset = 0
    for units, line_units in shards:
        local: dict[int, int] = {}
        for unit, tokens, seps, weight, first in units.select("unit", "tokens", "seps", "weight", "first_line").iter_rows():
            key = (tuple(tokens), tuple(seps))
            g = by_content.get(key)
            if g is None:
                g = by_content[key] = state.add_unit(key[0], key[1], first + offset, weight)
            else:
                state.weights[g] += weight
                state.first_line[g] = min(state.first_line[g], first + offset)
            local[unit] = g
        state.line_units.extend(local[u] for u in line_units.to_list())
        offset += len(line_units)
    return finalize(state, config, Masker(config.mask_rules, config.typed_masks).wildcards)


def mine_sharded(engine: Any, shards: Sequence[list[str]], config: MineConfig | None = None) -> MineResult:
    """Mine each shard as an engine task, then merge: the same result as one run over all lines."""
    config = config or MineConfig()
    mined = engine.map(mine_shard, [(list(lines), config) for lines in shards], label="template shards")
    return merge_shards(mined, config)


# -- the pipeline step -------------------------------------------------------------------------------
def config_of(stage: TemplatesStage) -> MineConfig:
    return MineConfig(collapse_spaces=stage.collapse_spaces, typed_masks=stage.typed_masks, max_units=stage.max_units)


def templates_partition(task: tuple[list[str], str, MineConfig]) -> dict[str, Any]:
    """Mine one date partition's requests (their ``column`` texts, in time order)."""
    files, column, config = task
    if files:
        rows = (pl.scan_parquet(files).select("request_id", "ts", column).filter(pl.col(column).is_not_null())
                .sort("ts", "request_id", nulls_last=True).collect())
    else:
        rows = pl.DataFrame(schema={"request_id": pl.String, "ts": pl.Datetime("us", "UTC"), column: pl.String})
    units, line_units = mine_shard((rows[column].to_list(), config))
    return {"units": units, "lines": pl.DataFrame({"request_id": rows["request_id"], "unit": line_units})}


def run(ctx: RunContext, stage: TemplatesStage) -> dict[str, Any]:
    config = config_of(stage)
    settings = {"column": stage.column, "collapse": stage.collapse_spaces, "typed": stage.typed_masks, "max_units": stage.max_units}
    fps = ctx.stage_fingerprints(STAGE, settings, VERSION)
    ws = ctx.workspace()
    with ws.lock():
        ws = ws.reload()
        p = store.plan(ws, STAGE, fps, UNITS)
        tasks = [(store.partition_files(ws, "llm_requests", ctx.source_keys(k)), stage.column, config) for k in p.compute]
        results = ctx.engine.map(templates_partition, tasks, label="templates partitions")
        txn = ws.transaction()
        new = {}
        for key, res in zip(p.compute, results, strict=True):
            txn.put_partition(UNITS, key, res["units"])
            txn.put_partition(LINES, key, res["lines"])
            new[key] = res
        store.drop(txn, [UNITS, LINES], p.gone)
        shards = []
        request_ids: list[str] = []
        for key in p.kept:
            res = new.get(key) or {"units": store.stored_frame(ws, UNITS, key), "lines": store.stored_frame(ws, LINES, key)}
            shards.append((res["units"], res["lines"]["unit"]))
            request_ids.extend(res["lines"]["request_id"].to_list())
        result = merge_shards(shards, config)
        templates, assignments = _tables(result, request_ids)
        txn.replace_table("templates", templates)
        txn.replace_table("request_templates", assignments)
        store.write_state(txn, STAGE, p, ctx.run_id)
        txn.commit()
    compacted = sum(1 for units, _ in shards if units.height and units["compacted"][0])
    return {"partitions": p.to_json(), "requests": len(request_ids), "templates": templates.height, "compacted_partitions": compacted}


def _tables(result: MineResult, request_ids: list[str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``templates`` (id, text, family, traffic) and ``request_templates`` (request -> template)."""
    total = max(len(result.assignments), 1)
    ids = list(result.templates)
    templates = pl.DataFrame({
        "template_id": ids, "template": [result.templates[t] for t in ids], "family_id": ids,
        "n_requests": [result.counts[t] for t in ids], "share": [result.counts[t] / total for t in ids],
    }, schema={"template_id": pl.String, "template": pl.String, "family_id": pl.String, "n_requests": pl.Int64, "share": pl.Float64})
    assignments = pl.DataFrame({"request_id": request_ids, "template_id": result.assignments},
                               schema={"request_id": pl.String, "template_id": pl.String})
    return templates, assignments.with_columns(pl.col("template_id").alias("family_id"))
