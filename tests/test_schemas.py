"""The JSON Schemas in schemas/ are generated from the code (`python -m logmine.schemas`): fail on drift."""

from __future__ import annotations

import json

import pytest

from logmine.schemas import GENERATORS, SCHEMA_DIR, render


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_checked_in_schema_matches_the_code(name: str) -> None:
    path = SCHEMA_DIR / name
    assert path.is_file(), f"{path} is missing; run `python -m logmine.schemas`"
    assert path.read_text() == render(name), f"{path} has drifted from the code; run `python -m logmine.schemas` and review the diff"


def test_every_checked_in_schema_has_a_generator() -> None:
    assert sorted(p.name for p in SCHEMA_DIR.glob("*.json")) == sorted(GENERATORS)


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_schema_is_a_draft_2020_12_document(name: str) -> None:
    schema = json.loads(render(name))
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"].endswith("/" + name)
