"""Render plans: what the pack runtime does to a template's slot values, built once by the export.

A template's plan (:class:`logmine.pack.RenderPlan`) lists its code-context slots with their
trimming policy and budget, and the lossless context steps. The trimmer's options travel in the
pack's ``trimming`` (:class:`logmine.pack.TrimSettings`), so serving trims with the configuration
the pack's token figures were measured with.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from jinja2 import nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment

from logmine.pack import ContextStep, RenderPlan, SlotPlan, TrimSettings
from logmine.runtime.trim import TrimConfig

TRIM_INPUTS = ["language", "file_path", "recent_files"]
"""The request context the trimmer reads."""
TRIM_FALLBACK = ("language: the context's, else the template's language or file_path slot, else detected from the code; "
                 "with none, the whole lines nearest the cursor within the budget; no recent_files: no file recency")
"""What trimming does when serving lacks its inputs (the plan says so per slot)."""
BUDGET_FIELDS = {"prefix": "budget_tokens", "suffix": "suffix_budget_tokens", "declarations": "declarations_budget_tokens"}
"""Trimming role -> the TrimConfig field of its budget."""
_SETTINGS = {"budget_tokens": "prefix_budget_tokens", "suffix_budget_tokens": "suffix_budget_tokens",
             "declarations_budget_tokens": "declarations_budget_tokens", "ast_weight": "ast_weight"}
_ENV = ImmutableSandboxedEnvironment(keep_trailing_newline=True)


def trim_settings(config: TrimConfig | None) -> TrimSettings | None:
    """The pack's record of a trimming configuration (None: no trimming)."""
    if config is None:
        return None
    values = dataclasses.asdict(config)
    options = {k: v for k, v in values.items() if k not in _SETTINGS}
    return TrimSettings(**{field: values[k] for k, field in _SETTINGS.items()}, options=options)


def trim_config(settings: TrimSettings | None) -> TrimConfig:
    """The trimming configuration a pack records (a pack without one: the defaults)."""
    if settings is None:
        return TrimConfig()
    known = {f.name for f in dataclasses.fields(TrimConfig)}
    options = {k: v for k, v in (settings.options or {}).items() if k in known}
    return TrimConfig(**options, **{k: getattr(settings, field) for k, field in _SETTINGS.items()})


def slot_order(source: str) -> list[str]:
    """The template's slot names in the order they first appear."""
    tree = _ENV.parse(source)
    return list(dict.fromkeys(n.name for n in tree.find_all(nodes.Name)))


def make_plan(source: str, roles: Mapping[str, str], trimming: TrimSettings | None) -> RenderPlan:
    """The plan of ``source``: its code-context slots (``roles``: slot -> prefix/suffix/declarations)
    trimmed to the pack's budgets (verbatim without ``trimming``), and file blocks sent once."""
    order = slot_order(source)
    budgets = trim_config(trimming) if trimming is not None else None
    slots = []
    for name in order:
        role = roles.get(name)
        if role is None:
            continue
        if budgets is None:
            slots.append(SlotPlan(slot=name, role=role, policy="verbatim"))
        else:
            slots.append(SlotPlan(slot=name, role=role, policy="trim", budget_tokens=getattr(budgets, BUDGET_FIELDS[role]),
                                  inputs=list(TRIM_INPUTS), fallback=TRIM_FALLBACK))
    steps = [ContextStep(step="dedup_file_blocks", slots=order)] if order else []
    return RenderPlan(slots=slots, context_steps=steps)


def lossless(plan: RenderPlan | None) -> RenderPlan | None:
    """``plan`` with its lossless steps only: every slot verbatim."""
    if plan is None:
        return None
    slots = [SlotPlan(slot=s.slot, role=s.role, policy="verbatim") for s in plan.slots]
    return plan.model_copy(update={"slots": slots})


def trims(plan: RenderPlan | None) -> bool:
    """Whether ``plan`` trims any slot."""
    return plan is not None and any(s.policy == "trim" for s in plan.slots)
