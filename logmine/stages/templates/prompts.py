"""Prompt mining: the structure a prompt log offers, used before the line miner sees the text.

A logged prompt is a template rendered with values. Some values the log record itself carries
(the FIM prefix and suffix, the file path, the language, the selection): they are replaced by
named placeholders (``{prefix}``, ``{file_path}``, ...). Code the record does not carry is
found by its shape: fenced blocks, the regions between fill-in-the-middle sentinels, and
paragraphs that parse as code with tree-sitter become typed slots (``{code}``, ``{code2}``,
``{diff}``). What remains (the template's static text and short values) is mined by
:class:`logmine.stages.templates.miner.TemplateMiner` with whitespace kept.

Code found by its shape, and the slot tokens that stand for it while it may still be static
text, are :mod:`logmine.stages.templates.bodies`'s.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from logmine.stages.templates.miner import MineConfig, MineResult, ProgressFn, TemplateMiner, template_id, template_regex
from logmine.stages.templates.anchors import merge_by_anchors
from logmine.stages.templates.bodies import SlotStore
from logmine.stages.templates.parallel import SkeletonWorker
from logmine.stages.templates.skeleton import PLACEHOLDER, record_values, skeleton

def prompt_template_regex(template: str) -> re.Pattern[str]:
    """A mined prompt template read as a pattern: wildcards and placeholders match any text."""
    return template_regex(PLACEHOLDER.sub("<*>", template))


def placeholders(template: str) -> list[str]:
    """The named placeholders of a mined template, in order of first appearance."""
    return list(dict.fromkeys(m.group(1) for m in PLACEHOLDER.finditer(template)))


PROMPT_CONFIG = MineConfig(collapse_spaces=False)
"""The miner's config for prompts: whitespace is part of a prompt template."""


def mine_prompts(
    records: Iterable[Mapping[str, Any]],
    config: MineConfig | None = None,
    progress: ProgressFn | None = None,
    find_code: bool = True,
    workers: int = 0,
) -> MineResult:
    """Mine prompt templates from records (dicts or rows with ``prompt`` and optionally
    ``prefix``, ``suffix``, ``file_path``, ``language``, ``attrs``). A record without a prompt
    gets ``None`` in ``assignments``; the rest as :func:`logmine.stages.templates.miner.mine_templates`.
    ``workers=N`` makes the skeletons in N worker processes (the same result; see
    :mod:`~logmine.stages.templates.parallel`)."""
    config = config or PROMPT_CONFIG
    if config.collapse_spaces:
        config = replace(config, collapse_spaces=False)
    miner = TemplateMiner(config, regroup=merge_by_anchors)  # see templates_anchors
    slots = SlotStore() if find_code else None
    present: list[bool] = []
    if workers > 0 and slots is not None:
        worker = SkeletonWorker(workers)
        try:
            for n, (text, texts) in enumerate(worker.skeletons(records, present)):
                slots.count(texts)
                miner.add(text)
                if progress is not None and n % 10_000 == 0:
                    progress("templates mine", n, 0)
        finally:
            worker.close()
        return _restore(_last(miner, slots), present, slots)
    for n, record in enumerate(records):
        prompt = record.get("prompt")
        present.append(isinstance(prompt, str))
        if isinstance(prompt, str):
            miner.add(skeleton(prompt, record_values(record), slots))
        if progress is not None and n % 10_000 == 0:
            progress("templates mine", n, 0)
    return _restore(_last(miner, slots), present, slots)


def _last(miner: TemplateMiner, slots: SlotStore | None) -> MineResult:
    """The miner's result, its last consolidation reading slot tokens as their texts where a rare
    template needs it (:attr:`~logmine.stages.templates.state.MinerState.slot_text`)."""
    miner.state.slot_text = slots.texts.get if slots is not None else None
    try:
        return miner.result()
    finally:
        miner.state.slot_text = None


def _restore(result: MineResult, present: list[bool], slots: SlotStore | None) -> MineResult:
    """Slot tokens back to text (or numbered slots), ids recomputed, records without a prompt kept."""
    rename = {}
    templates: dict[str, str] = {}
    for tid, text in result.templates.items():
        text = slots.restore(text) if slots is not None else text
        rename[tid] = template_id(text)
        templates[rename[tid]] = text
    it = iter(result.assignments)
    assignments: list[str | None] = [rename[next(it)] if p else None for p in present]
    positions = [i for i, p in enumerate(present) if p]
    counts: dict[str, int] = {}
    first: dict[str, int] = {}
    for tid, n in result.counts.items():
        counts[rename[tid]] = counts.get(rename[tid], 0) + n
    for tid, line in result.first_line.items():
        first[rename[tid]] = min(first.get(rename[tid], positions[line]), positions[line])
    return MineResult(assignments, templates, counts, first, result.state)  # type: ignore[arg-type]
