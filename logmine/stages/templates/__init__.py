"""The templates stage: mine the templates of prompts (and of any free-text log) and merge
near-duplicates into families.

In: lines (:func:`mine_templates`), prompt records (:func:`mine_prompts`), or a workspace's
``llm_requests`` (:func:`run`). Out: a :class:`MineResult` / :class:`TemplatesReport`. Writes
``templates``, ``template_families``, ``request_templates`` (and the ``llm_requests`` view's
``template_id``) plus the embedding cache. Per partition: a :class:`TemplateMiner` per shard,
:func:`merge_results` or the stored units re-clustered (see :mod:`logmine.stages.templates.miner`).
"""

from logmine.stages.templates.anchors import merge_by_anchors
from logmine.stages.templates.bodies import SlotStore
from logmine.stages.templates.dedup import DedupConfig, DedupResult, Embedder, MergeEdge, SentenceEmbedder, merge_near_duplicates
from logmine.stages.templates.miner import (
    MineConfig,
    MineResult,
    Regroup,
    TemplateMiner,
    finalize,
    merge_results,
    mine_templates,
    template_id,
    template_regex,
)
from logmine.stages.templates.prompts import PROMPT_CONFIG, mine_prompts, placeholders, prompt_template_regex
from logmine.stages.templates.skeleton import PLACEHOLDER, record_values, skeleton
from logmine.stages.templates.state import MinerState
from logmine.stages.templates.tables import TemplatesConfig, TemplatesReport, run

__all__ = [
    "PLACEHOLDER", "PROMPT_CONFIG", "DedupConfig", "DedupResult", "Embedder", "MergeEdge", "MineConfig", "MineResult",
    "MinerState", "Regroup", "SentenceEmbedder", "SlotStore", "TemplateMiner", "TemplatesConfig", "TemplatesReport",
    "finalize", "merge_by_anchors", "merge_near_duplicates", "merge_results", "mine_prompts", "mine_templates",
    "placeholders", "prompt_template_regex", "record_values", "run", "skeleton", "template_id", "template_regex",
]
