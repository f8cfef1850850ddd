"""The pack runtime: what turns a pack template and a request into the prompt the model gets.

Shared by measurement (``logmine compress`` counts the tokens of these prompts) and serving
(``logmine_serving`` sends them); the serving layer imports logmine's prompt code from here only.

- :class:`PromptRuntime` / :func:`render`: a template's render plan applied to the slot values,
  then the template filled in the sandbox (:mod:`~logmine.runtime.render`);
- :class:`RenderContext`: the request context slot policies read (:mod:`~logmine.runtime.context`);
- :func:`make_plan`, :func:`trim_settings`: the plans and trimming settings the export writes
  into the pack (:mod:`~logmine.runtime.plan`);
- :class:`SafeRenderer`: the sandbox (:mod:`~logmine.runtime.sandbox`);
- :class:`LoggedRequest`, :class:`FormChoice`: what validation replays and its verdict (:mod:`~logmine.runtime.replay`).

Imports run one way: the runtime reads :mod:`logmine.pack` and the trimmer's face
(:mod:`logmine.runtime.trim`, which imports only :mod:`logmine.code`), never the compress
stage's other modules, which render through it.
"""

from logmine.runtime.context import RenderContext, dedup_file_blocks, file_blocks
from logmine.runtime.plan import lossless, make_plan, slot_order, trim_config, trim_settings, trims
from logmine.runtime.render import FORMS, Form, PromptRuntime, Which, form, render
from logmine.runtime.replay import SHIPPED, FormChoice, LoggedRequest, Shipped
from logmine.runtime.sandbox import (
    ALLOWED_COMPARISONS,
    ALLOWED_FILTERS,
    ALLOWED_TESTS,
    SLOT_TYPES,
    CompiledTemplate,
    RenderLimits,
    SafeRenderer,
    template_key,
)
from logmine.runtime.trim import recent_files

__all__ = [
    "ALLOWED_COMPARISONS",
    "ALLOWED_FILTERS",
    "ALLOWED_TESTS",
    "FORMS",
    "SHIPPED",
    "SLOT_TYPES",
    "CompiledTemplate",
    "Form",
    "FormChoice",
    "LoggedRequest",
    "PromptRuntime",
    "RenderContext",
    "RenderLimits",
    "SafeRenderer",
    "Shipped",
    "Which",
    "dedup_file_blocks",
    "file_blocks",
    "form",
    "lossless",
    "make_plan",
    "recent_files",
    "render",
    "slot_order",
    "template_key",
    "trim_config",
    "trim_settings",
    "trims",
]
