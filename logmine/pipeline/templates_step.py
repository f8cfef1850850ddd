"""Template mining across partitions: each shard mines locally, shards merge by content.

A shard (a date partition, or any slice of lines) is mined by the template miner
(:class:`logmine.stages.templates.miner.TemplateMiner`); its result is kept as *units*: the distinct
masked signatures with their line counts (:func:`shard_frames`, an Arrow-friendly frame), plus
each line's unit. Merging shards (:func:`merge_shards`) adds up units with the same content
(same tokens and separators: the same signature a single run would have made once), then
clusters all units once (:func:`logmine.stages.templates.miner.finalize`, independent of unit order):
the templates, their ids (content hashes), counts and every line's template are those of one
single-process run over the shards' lines in order, as long as no shard holds more than
``max_units`` signatures (above that the miner consolidates early and the merge is close,
not exact; the run record counts such shards).

The pipeline step keeps each partition's units and line assignments in ``templates_partial_*``
tables, so a nightly run mines only new partitions and re-clusters the stored units.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

import polars as pl

from logmine import partitions
from logmine.masking import Masker
from logmine.pipeline import partials as store
from logmine.pipeline.context import RunContext
from logmine.pipeline.spec import TemplatesStage
from logmine.stages import templates as tp
from logmine.stages.templates import MineConfig, MineResult, MinerState, Regroup, TemplateMiner, finalize, template_id

log = logging.getLogger(__name__)

STAGE = "templates"
VERSION = 2
UNITS = "templates_partial_units"
LINES = "templates_partial_lines"
SLOTS = "templates_partial_slots"
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


def merge_shards(
    shards: Sequence[tuple[pl.DataFrame, pl.Series]], config: MineConfig, regroup: Regroup | None = None,
    slot_text: Callable[[str], str | None] | None = None,
) -> MineResult:
    """The templates of all shards' lines (in shard order), from the shards' units.

    Units new in a later shard are added after the earlier shards' ones, in the order the
    shard first saw them: the unit order of one run over all lines, so even an order-dependent
    ``regroup`` (the prompt miner's anchor merge) sees what it would have seen. ``slot_text``: the
    prompts' slot texts, for the last consolidation as one run has them."""
    state = MinerState(slot_text=slot_text)
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
    return finalize(state, config, Masker(config.mask_rules, config.typed_masks).wildcards, regroup)


def mine_sharded(engine: Any, shards: Sequence[list[str]], config: MineConfig | None = None) -> MineResult:
    """Mine each shard as an engine task, then merge: the same result as one run over all lines."""
    config = config or MineConfig()
    mined = engine.map(mine_shard, [(list(lines), config) for lines in shards], label="template shards")
    return merge_shards(mined, config)


# -- prompts: record values and code become placeholders first (logmine.stages.templates.prompts) -----
PROMPT_COLUMNS = ("request_id", "ts", "prompt", "prefix", "suffix", "selection", "file_path", "language", "attrs")


def mine_prompt_shard(task: tuple[list[dict[str, Any]], MineConfig, bool]) -> dict[str, Any]:
    """Mine one shard of prompt records as :func:`~logmine.stages.templates.prompts.mine_prompts`
    does; return its units, each record's unit and the code slots' texts."""
    records, config, find_code = task
    miner = TemplateMiner(config, regroup=tp.merge_by_anchors)
    slots = tp.SlotStore() if find_code else None
    for rec in records:
        miner.add(tp.skeleton(rec["prompt"], tp.record_values(rec), slots))
    units, line_units = shard_frames(miner.state)
    texts = slots.texts if slots is not None else {}
    return {"units": units, "line_units": line_units,
            "slots": pl.DataFrame({"sid": list(texts), "text": list(texts.values())}, schema={"sid": pl.String, "text": pl.String})}


def merge_prompt_shards(shards: Sequence[dict[str, Any]], config: MineConfig) -> MineResult:
    """The prompt templates of all shards (same as one ``mine_prompts`` run over their records)."""
    store = tp.SlotStore()
    for s in shards:
        store.texts.update(dict(s["slots"].iter_rows()))
    result = merge_shards([(s["units"], s["line_units"]) for s in shards], config, tp.merge_by_anchors, store.texts.get)
    result.state.slot_text = None
    rename = {tid: template_id(store.restore(text)) for tid, text in result.templates.items()}
    templates = {rename[tid]: store.restore(text) for tid, text in result.templates.items()}
    counts: dict[str, int] = {}
    first: dict[str, int] = {}
    for tid, n in result.counts.items():
        counts[rename[tid]] = counts.get(rename[tid], 0) + n
    for tid, line in result.first_line.items():
        first[rename[tid]] = min(first.get(rename[tid], line), line)
    order = sorted(templates, key=lambda t: (-counts[t], t))
    return MineResult([rename[t] for t in result.assignments], {t: templates[t] for t in order}, counts, first, result.state)


# -- the pipeline step -------------------------------------------------------------------------------
def config_of(stage: TemplatesStage) -> MineConfig:
    collapse = stage.collapse_spaces and stage.miner == "lines"  # prompts always keep whitespace
    return MineConfig(collapse_spaces=collapse, typed_masks=stage.typed_masks, max_units=stage.max_units)


def requests_in_order(files: list[str], columns: Sequence[str], text: str) -> pl.DataFrame:
    """The partition's requests that have ``text``, in time order (ties by request id)."""
    if not files:
        return pl.DataFrame(schema={"request_id": pl.String, text: pl.String})
    lf = pl.scan_parquet(files)
    names = lf.collect_schema().names()
    return (lf.select([c for c in columns if c in names]).filter(pl.col(text).is_not_null())
            .sort("ts", "request_id", nulls_last=True).collect())


def templates_partition(task: tuple[list[str], TemplatesStage, MineConfig]) -> dict[str, Any]:
    """Mine one date partition's requests: prompts as records (``miner = "prompts"``) or a column's texts as lines."""
    files, stage, config = task
    if stage.miner == "prompts":
        rows = requests_in_order(files, PROMPT_COLUMNS, "prompt")
        mined = mine_prompt_shard((rows.to_dicts(), config, stage.find_code))
        units, line_units, slots = mined["units"], mined["line_units"], mined["slots"]
    else:
        rows = requests_in_order(files, ("request_id", "ts", stage.column), stage.column)
        units, line_units = mine_shard((rows[stage.column].to_list(), config))
        slots = pl.DataFrame(schema={"sid": pl.String, "text": pl.String})
    return {"units": units, "lines": pl.DataFrame({"request_id": rows["request_id"], "unit": line_units}), "slots": slots}


def run(ctx: RunContext, stage: TemplatesStage) -> dict[str, Any]:
    config = config_of(stage)
    settings = stage.model_dump(exclude={"enabled"})
    fps = ctx.stage_fingerprints(STAGE, settings, VERSION)
    ws = ctx.workspace()
    with ws.lock():
        ws = ws.reload()
        p = store.plan(ws, STAGE, fps, UNITS)
        tasks = [(partitions.partition_files(ws, "llm_requests", ctx.source_keys(k)), stage, config) for k in p.compute]
        results = ctx.engine.map(templates_partition, tasks, label="templates partitions")
        txn = ws.transaction()
        new = {}
        for key, res in zip(p.compute, results, strict=True):
            for table, name in ((UNITS, "units"), (LINES, "lines"), (SLOTS, "slots")):
                txn.put_partition(table, key, res[name])
            new[key] = res
        partitions.drop_partitions(txn, [UNITS, LINES, SLOTS], p.gone)
        shards = [new.get(k) or {name: store.stored_frame(ws, table, k) for table, name in ((UNITS, "units"), (LINES, "lines"), (SLOTS, "slots"))}
                  for k in p.kept]
        request_ids = [rid for s in shards for rid in s["lines"]["request_id"].to_list()]
        if stage.miner == "prompts":
            result = merge_prompt_shards([{"units": s["units"], "line_units": s["lines"]["unit"], "slots": s["slots"]} for s in shards], config)
        else:
            result = merge_shards([(s["units"], s["lines"]["unit"]) for s in shards], config)
        templates, assignments = _tables(result, request_ids)
        txn.replace_table("templates", templates)
        txn.replace_table("request_templates", assignments)
        store.write_state(txn, STAGE, p, ctx.run_id)
        txn.commit()
    compacted = sum(1 for s in shards if s["units"].height and s["units"]["compacted"][0])
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
