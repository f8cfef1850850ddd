"""Replaying logged requests: what validation needs of a request, and its verdict on a template.

The export hands :class:`LoggedRequest` s to the validator (``logmine_serving.validate``) and gets
one :class:`FormChoice` per template back: the most compressed form whose outputs agree with the
outputs on the logged prompts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from logmine.runtime.context import RenderContext

Shipped = Literal["compressed", "lossless", "original"]
"""What a template ships as: its compressed form (source and whole plan), its lossless form, the original."""
SHIPPED: tuple[Shipped, ...] = ("compressed", "lossless", "original")


@dataclass(frozen=True)
class LoggedRequest:
    """One logged request of a pack template: its slot values, render context and the prompt it sent."""

    request_id: str
    template_id: str
    slots: dict[str, Any]
    context: RenderContext = field(default_factory=RenderContext)
    prompt: str | None = None
    """The logged prompt (None: not logged; the original template's rendering stands in)."""


@dataclass(frozen=True)
class FormChoice:
    """The validator's verdict on one template."""

    form: Shipped
    """The form that ships."""
    reason: str | None = None
    """Why a more compressed form was refused (None: the compressed form ships)."""
    record: dict[str, Any] = field(default_factory=dict)
    """The results to record in the template's ``validation``."""
