"""The one prompt render: a pack template's plan applied to a request's slot values, then the
template filled in the sandbox.

``logmine compress`` counts the tokens of exactly these prompts (its rendered and uncached token
figures) and ``logmine_serving`` sends exactly these prompts: both call :meth:`PromptRuntime.render`.

A render runs, in order: the plan's lossless context steps (:func:`~logmine.runtime.context.dedup_file_blocks`),
each code-context slot's policy (``trim``: the AST-unit trimmer of :mod:`logmine.runtime.trim`,
stateless: it reads the request's context and never a session's earlier requests; ``verbatim``),
and the fill of the template source by :class:`~logmine.runtime.sandbox.SafeRenderer`. A template
without a plan (packs of format 1) is filled verbatim.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from logmine.pack import PackTemplate, RenderPlan, TrimSettings
from logmine.runtime.context import RenderContext, dedup_file_blocks
from logmine.runtime.plan import BUDGET_FIELDS, lossless, trim_config
from logmine.runtime.sandbox import SafeRenderer
from logmine.runtime.trim import TrimConfig, Trimmer

Which = Literal["served", "lossless", "original"]
"""The forms of a pack template: what ships (``source`` and its plan), its lossless form
(``lossless_source``, slots verbatim, lossless steps kept) and the mined original (verbatim)."""
FORMS: tuple[Which, ...] = ("served", "lossless", "original")


@dataclass(frozen=True)
class Form:
    """A template source and the plan to render it with."""

    name: str
    source: str
    plan: RenderPlan | None = None


def form(template: PackTemplate, which: Which = "served") -> Form:
    """One form of ``template`` (see :data:`Which`)."""
    if which == "served":
        return Form(f"{template.name} (compressed)", template.source, template.plan)
    if which == "lossless":
        return Form(f"{template.name} (lossless)", template.lossless_source or template.source, lossless(template.plan))
    if which == "original":
        return Form(f"{template.name} (original)", template.original_source, None)
    raise ValueError(f"no form {which!r} (one of {', '.join(FORMS)})")


class PromptRuntime:
    """Renders pack templates: a sandbox with its compiled-template cache and the trimmers.

    ``trimming`` is the pack's :class:`~logmine.pack.TrimSettings` (the trimmer's options; each
    slot's budget comes from the plan). One runtime may be shared by threads.
    """

    def __init__(self, trimming: TrimSettings | None = None, renderer: SafeRenderer | None = None) -> None:
        self.base = trim_config(trimming)
        self.renderer = renderer or SafeRenderer()
        self._trimmers: dict[TrimConfig, Trimmer] = {}
        self._lock = threading.Lock()

    def render(self, template: PackTemplate | Form, slots: Mapping[str, Any], context: RenderContext | None = None,
               which: Which = "served") -> str:
        """The prompt of ``template`` (a pack template's ``which`` form, or a :class:`Form`) for one request."""
        f = template if isinstance(template, Form) else form(template, which)
        return self.renderer.render(f.source, self.slot_values(f, slots, context), f.name)

    def slot_values(self, f: Form, slots: Mapping[str, Any], context: RenderContext | None = None) -> dict[str, Any]:
        """The slot values ``f`` is filled with: its plan's context steps and slot policies applied."""
        values = dict(slots)
        plan = f.plan
        if plan is None:
            return values
        for step in plan.context_steps:
            if step.step == "dedup_file_blocks":
                values = dedup_file_blocks(values, step.slots)
        todo = [p for p in plan.slots if p.policy == "trim" and isinstance(values.get(p.slot), str) and values[p.slot]]
        if not todo:
            return values
        ctx = (context or RenderContext()).resolved(values)
        budgets = {BUDGET_FIELDS[p.role]: p.budget_tokens for p in todo if p.budget_tokens is not None}
        with self._lock:
            trimmer = self._trimmer(self.base if not budgets else _with(self.base, budgets))
            got = trimmer.slots({p.role: values[p.slot] for p in todo}, ctx.language, ctx.file_path, ctx.recent_files,
                                ctx.session_id, remember=False)
        for p in todo:
            values[p.slot] = got.values[p.role]
        return values

    def _trimmer(self, config: TrimConfig) -> Trimmer:
        t = self._trimmers.get(config)
        if t is None:
            t = self._trimmers[config] = Trimmer(config)
        return t


def _with(config: TrimConfig, budgets: Mapping[str, int]) -> TrimConfig:
    changed = {k: v for k, v in budgets.items() if getattr(config, k) != v}
    return dataclasses.replace(config, **changed) if changed else config


_DEFAULT: PromptRuntime | None = None


def render(template: PackTemplate | Form, slots: Mapping[str, Any], context: RenderContext | None = None,
           which: Which = "served", runtime: PromptRuntime | None = None) -> str:
    """The prompt of ``template`` for one request's ``slots`` and ``context`` (see :class:`PromptRuntime`;
    without ``runtime``, one with the default trimmer options)."""
    global _DEFAULT
    if runtime is None:
        runtime = _DEFAULT = _DEFAULT or PromptRuntime()
    return runtime.render(template, slots, context, which)
