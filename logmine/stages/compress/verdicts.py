"""The generator's verdicts in the export (``logmine compress --validate N``): the logged requests
handed to the validator, each family made to ship the form it chose (the lossless form with its
slots verbatim, or the original verbatim; its ``fallback`` says why), and the results recorded in
the pack. The validator itself is the serving layer's (``logmine_serving.validate.choose_forms``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from logmine.pack import PackValidation, TemplatePack
from logmine.runtime import FormChoice, LoggedRequest, RenderContext, make_plan
from logmine.stages.compress.compressor import LOSSY_STEPS, CompressedTemplate, Compressor
from logmine.stages.compress.family import Family, shipped_head

Chooser = Callable[[TemplatePack, dict[str, list[LoggedRequest]]], tuple[dict[str, FormChoice], PackValidation]]
"""The validator: the pack as compressed and each template's logged requests -> each template's
verdict and the pack's validation summary (``logmine_serving.validate.make_chooser``)."""


def cases(families: list[Family], contexts: dict[str, RenderContext]) -> dict[str, list[LoggedRequest]]:
    """Each pack template's sampled requests as the validator replays them, in a stable hash order
    (a validator taking the first N takes a deterministic sample)."""
    out = {}
    for fam in families:
        tid = fam.rep["template_id"]
        by_id = {r["request_id"]: r for r in fam.sample}
        order = sorted(by_id, key=_rank)
        out[tid] = [LoggedRequest(k, tid, dict(fam.slots[k]), contexts.get(k, RenderContext()), by_id[k]["prompt"]) for k in order]
    return out


def _rank(key: str) -> bytes:
    return hashlib.blake2b(key.encode(), digest_size=8).digest()


def apply_choices(families: list[Family], heads: dict[int, str], choices: dict[str, FormChoice], compressor: Compressor) -> bool:
    """Make each family ship the form its validation chose; True when any changed."""
    changed = False
    for index, fam in enumerate(families):
        choice = choices.get(fam.rep["template_id"])
        if choice is None or choice.form == "compressed":
            continue
        c = fam.compressed
        why = f"validation: {choice.reason}" if choice.reason else "validation"
        if choice.form == "lossless" and c.lossless_source != c.original_source:
            fid = round(compressor.fidelity(c.original_source, c.lossless_source), 6)
            fam.compressed = CompressedTemplate(c.lossless_source, c.original_source, fid, False, [s for s in c.steps if s not in LOSSY_STEPS],
                                                c.lossless_source, f"lossless: {why}")
            fam.plan = make_plan(c.lossless_source, fam.roles, None)
        else:
            form = "lossless" if choice.form == "lossless" else "original"
            fam.compressed = CompressedTemplate(c.original_source, c.original_source, 1.0, False, [], c.original_source, f"{form}: {why}")
            fam.plan = make_plan(c.original_source, fam.roles, None) if form == "lossless" else None
        if fam.head is not None:
            fam.head = shipped_head(fam.compressed.fallback, fam.head, heads[index])
        changed = True
    return changed


def record_validation(pack: TemplatePack, choices: dict[str, FormChoice], summary: PackValidation) -> TemplatePack:
    """``pack`` with each template's verdict in its ``validation`` and the summary in the pack's."""
    templates = [t.model_copy(update={"validation": {"form": choices[t.id].form, "reason": choices[t.id].reason, **choices[t.id].record}})
                 if t.id in choices else t for t in pack.templates]
    return pack.model_copy(update={"templates": templates, "validation": summary})
