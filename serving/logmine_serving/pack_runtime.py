"""A loaded pack ready to serve: checked once, every template compiled up front."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from logmine.pack import PackTemplate, SharedPrefix, TemplatePack, load_pack

from logmine_serving.render import CompiledTemplate, SafeRenderer

Which = Literal["compressed", "original"]


@dataclass
class PackRuntime:
    """A template pack whose templates are compiled (and thereby checked) before first use."""

    pack: TemplatePack
    renderer: SafeRenderer
    path: Path | None = None

    @classmethod
    def load(cls, directory: Path | str, renderer: SafeRenderer | None = None) -> PackRuntime:
        """Load and verify ``directory`` (manifest, version, schema), then compile every template."""
        return cls.from_pack(load_pack(directory), renderer, Path(directory))

    @classmethod
    def from_pack(cls, pack: TemplatePack, renderer: SafeRenderer | None = None, path: Path | None = None) -> PackRuntime:
        runtime = cls(pack, renderer or SafeRenderer(), path)
        for t in pack.templates:
            runtime.compiled(t, "compressed")
            runtime.compiled(t, "original")
        return runtime

    def template(self, template_id: str) -> PackTemplate:
        return self.pack.template(template_id)

    def compiled(self, template: PackTemplate, which: Which = "compressed") -> CompiledTemplate:
        source = template.source if which == "compressed" else template.original_source
        return self.renderer.compile(source, f"{template.name} ({which})")

    def render(self, template: PackTemplate, slots: Mapping[str, Any], which: Which = "compressed") -> str:
        return self.renderer.render_compiled(self.compiled(template, which), slots)

    def shared_prefix(self, template: PackTemplate) -> SharedPrefix | None:
        if template.shared_prefix_id is None:
            return None
        for p in self.pack.shared_prefixes:
            if p.id == template.shared_prefix_id:
                return p
        return None
