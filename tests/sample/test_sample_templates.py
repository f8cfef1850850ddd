"""logmine's own prompt template set: shape, placeholders, near-duplicate variants."""

from __future__ import annotations

import re

import pytest
from rapidfuzz import fuzz

from logmine.sample.model import MODELS
from logmine.sample.templates import BY_NAME, PLACEHOLDERS, SLASH_COMMANDS, SLOTS, SYNTAX_RE, TEMPLATES, prompt_text, slot_of

VALUES = {name: f"<{name.upper()}-VALUE>" for name in PLACEHOLDERS}
REALISTIC = {**{name: f"{name} line\n" * 40 for name in ("prefix", "suffix", "code", "diff")},
             "file_path": "/home/ana/src/app/main.py", "language": "python", "repo": "app", "user_input": "add type hints"}
"""Values of realistic lengths: against them a variant's small change is small."""


def test_size_and_unique_names_and_ids() -> None:
    assert 25 <= len(TEMPLATES) <= 40
    assert len({t.name for t in TEMPLATES}) == len(TEMPLATES)
    assert len({t.template_id for t in TEMPLATES}) == len(TEMPLATES)
    assert {t.kind for t in TEMPLATES} == {"fim", "edit", "chat", "slash"}


def test_every_model_family_and_slash_command_has_templates() -> None:
    assert {f"fim:{m.family}" for m in MODELS} <= set(SLOTS)
    assert {t.command for t in TEMPLATES if t.kind == "slash"} == set(SLASH_COMMANDS)
    sentinels = {t.family: t.messages[0][1][:6] for t in TEMPLATES if t.kind == "fim" and t.variant_of is None}
    assert len(set(sentinels.values())) == len(sentinels)  # each family has its own sentinel tokens


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: t.name)
def test_render_fills_every_placeholder(template) -> None:  # noqa: ANN001
    assert set(template.placeholders) <= set(PLACEHOLDERS)
    assert template.placeholders
    rendered = prompt_text(template.render(VALUES))
    for name in template.placeholders:
        assert VALUES[name] in rendered
    for pattern in SYNTAX_RE.values():
        assert not [m for m in pattern.finditer(rendered) if m.group(1) in PLACEHOLDERS]


@pytest.mark.parametrize("template", [t for t in TEMPLATES if t.variant_of], ids=lambda t: t.name)
def test_variants_are_near_duplicates_of_their_base(template) -> None:  # noqa: ANN001
    base = BY_NAME[template.variant_of]
    assert base.variant_of is None
    assert slot_of(base) == slot_of(template)
    a, b = prompt_text(base.render(REALISTIC)), prompt_text(template.render(REALISTIC))
    if template.change == "syntax":
        assert template.syntax != base.syntax
        assert template.skeleton_id == base.skeleton_id
        assert a == b
    else:
        assert template.change in ("word", "sentence")
        assert template.skeleton_id != base.skeleton_id
        assert 85 < fuzz.ratio(a, b) < 100


def test_chat_templates_have_a_system_or_user_turn() -> None:
    for t in TEMPLATES:
        roles = [role for role, _ in t.messages]
        assert roles in (["prompt"], ["user"], ["system", "user"]), t.name
        assert not re.search(r"\{\{\{?\s*\}", " ".join(text for _, text in t.messages))


def _words(template) -> int:  # noqa: ANN001
    return sum(len(re.findall(r"[A-Za-z]+", text)) for msg in template.parts for text, slot in msg if not slot)


def test_instruction_templates_are_as_long_as_real_ones_and_share_a_system_prompt() -> None:
    prose = [t for t in TEMPLATES if t.kind != "fim"]
    assert sum(_words(t) for t in prose) / len(prose) >= 150  # real edit prompts ~50 words, chat commands ~165 + a system prompt
    systems = [text for t in prose for role, text in t.messages if role == "system"]
    common, count = max(((s, systems.count(s)) for s in set(systems)), key=lambda x: x[1])
    assert count >= 10 and len(common.split()) >= 150
    fim = [t for t in TEMPLATES if t.kind == "fim"]
    assert max(_words(t) for t in fim if t.family != "openai") <= 10  # sentinels (and a path or repo line) only
