"""Safe prompt rendering: the pack runtime's sandbox (:mod:`logmine.runtime.sandbox`), imported
here under the serving layer's names. Measurement (``logmine compress``) and serving render
through the same code."""

from __future__ import annotations

from logmine.runtime import (
    ALLOWED_COMPARISONS,
    ALLOWED_FILTERS,
    ALLOWED_TESTS,
    SLOT_TYPES,
    CompiledTemplate,
    RenderLimits,
    SafeRenderer,
    template_key,
)

__all__ = ["ALLOWED_COMPARISONS", "ALLOWED_FILTERS", "ALLOWED_TESTS", "SLOT_TYPES", "CompiledTemplate", "RenderLimits",
           "SafeRenderer", "template_key"]
