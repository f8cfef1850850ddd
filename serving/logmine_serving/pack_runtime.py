"""A loaded pack ready to serve: checked once, every template compiled up front, rendered by the
pack runtime (:mod:`logmine.runtime`: the render plan, then the sandbox), the same code that
``logmine compress`` measured the pack's prompts with."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from logmine.pack import PackTemplate, SharedPrefix, TemplatePack, load_pack
from logmine.runtime import PromptRuntime, RenderContext, SafeRenderer, form

Which = Literal["compressed", "lossless", "original"]
"""compressed: what the pack serves (``source`` and its whole render plan); lossless: its lossless
form (slots verbatim, lossless steps kept); original: the mined template, slots verbatim."""
_FORMS = {"compressed": "served", "lossless": "lossless", "original": "original"}


@dataclass
class PackRuntime:
    """A template pack whose templates are compiled (and thereby checked) before first use."""

    pack: TemplatePack
    renderer: SafeRenderer
    path: Path | None = None
    prompts: PromptRuntime = field(init=False)

    def __post_init__(self) -> None:
        self.prompts = PromptRuntime(self.pack.trimming, self.renderer)

    @classmethod
    def load(cls, directory: Path | str, renderer: SafeRenderer | None = None) -> PackRuntime:
        """Load and verify ``directory`` (manifest, version, schema), then compile every template."""
        return cls.from_pack(load_pack(directory), renderer, Path(directory))

    @classmethod
    def from_pack(cls, pack: TemplatePack, renderer: SafeRenderer | None = None, path: Path | None = None) -> PackRuntime:
        runtime = cls(pack, renderer or SafeRenderer(), path)
        for t in pack.templates:
            for which in _FORMS:
                runtime.compiled(t, which)  # type: ignore[arg-type]
        return runtime

    def template(self, template_id: str) -> PackTemplate:
        return self.pack.template(template_id)

    def compiled(self, template: PackTemplate, which: Which = "compressed") -> Any:
        f = form(template, _FORMS[which])  # type: ignore[arg-type]
        return self.renderer.compile(f.source, f.name)

    def render(self, template: PackTemplate, slots: Mapping[str, Any], which: Which = "compressed",
               context: RenderContext | None = None) -> str:
        """The prompt of ``template``'s ``which`` form for one request: its plan applied to ``slots``
        (trimming reads ``context``), then the template filled in the sandbox."""
        return self.prompts.render(template, slots, context, _FORMS[which])  # type: ignore[arg-type]

    def shared_prefix(self, template: PackTemplate) -> SharedPrefix | None:
        if template.shared_prefix_id is None:
            return None
        for p in self.pack.shared_prefixes:
            if p.id == template.shared_prefix_id:
                return p
        return None
