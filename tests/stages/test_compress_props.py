"""Property tests of compression: slots, structure and code survive; every compressed template renders
(Jinja2 sandbox, StrictUndefined) with the slot values of every instance of its original; the gate (meaning
guard and fidelity) holds on the finished template."""

from __future__ import annotations

import jinja2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jinja2.sandbox import ImmutableSandboxedEnvironment

from logmine.stages.compress.compressor import CompressConfig, Compressor
from logmine.stages.compress.fidelity import Segment, join, segments, static_text, template_lines, whitespace_tokens
from logmine.embedding import HashingEmbedder
from logmine.stages.compress.instances import extract_slots, render

ENV = ImmutableSandboxedEnvironment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True)
"""How the serving layer renders pack templates (logmine_serving.render.SafeRenderer)."""
COMPRESSOR = Compressor(HashingEmbedder(), whitespace_tokens, CompressConfig(min_fidelity=0.9))

WORDS = ["answer", "code", "short", "always", "never", "explain", "tests", "names", "keep", "style", "file", "error",
         "the", "this", "with", "please", "really", "just", "make sure to", "in order to", "**bold**"]
sentence = st.lists(st.sampled_from(WORDS), min_size=2, max_size=7).map(lambda ws: " ".join(ws).capitalize() + ".")
prose = st.lists(sentence, min_size=1, max_size=3).map(" ".join)
code = st.sampled_from(["    x = compute(1)", "def __init__(self):", "import os", "}", "  return {a: b};", "\tpass"])
structure = st.sampled_from(["```python", "```", "user:", "system:", "<context>", "[INST]", "---"])
line = st.one_of(prose, prose.map(lambda p: "- " + p), code, structure, st.just(""))
name = st.sampled_from(["code", "question", "file_path", "var1"])


@st.composite
def templates(draw: st.DrawFn) -> str:
    parts: list[Segment] = []
    for _ in range(draw(st.integers(1, 4))):
        block = "\n".join(draw(st.lists(line, min_size=0, max_size=5)))
        parts.append(Segment(block + "\n" if block else draw(st.sampled_from(["", "Fix ", "user: "]))))
        slot = draw(name)
        parts.append(Segment("{{ " + slot + " }}", slot))
        parts.append(Segment(draw(st.sampled_from(["\n", ":\n", " in the file.\n", ""]))))
    parts.append(Segment("\n".join(draw(st.lists(line, min_size=0, max_size=4)))))
    return join([p for p in parts if p.slot or p.text])


values = st.dictionaries(name, st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=30), min_size=4, max_size=4)


def _code_lines(source: str) -> list[str]:
    return [x.text for x in template_lines(segments(source)) if x.kind in ("code", "structure")]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(templates(), st.lists(values, min_size=1, max_size=3))
def test_compressed_template_renders_every_instance_of_its_original(source: str, instances: list[dict[str, str]]) -> None:
    out = COMPRESSOR.compress(source)
    assert [s.slot for s in segments(out.source) if s.slot] == [s.slot for s in segments(source) if s.slot]
    for vals in instances:
        vals = {k: vals.get(k, "") for k in ("code", "question", "file_path", "var1")}
        prompt = ENV.from_string(source).render(**vals)
        assert prompt == render(source, vals)  # the escaped static text renders literally
        slots = extract_slots(source, prompt)
        assert slots is not None
        assert ENV.from_string(out.source).render(**slots) == render(out.source, slots)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(templates())
def test_code_and_structure_lines_survive_in_order(source: str) -> None:
    out = COMPRESSOR.compress(source)
    kept = iter(_code_lines(out.source))
    for text in _code_lines(source):
        assert any(text == k for k in kept), text


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(templates())
def test_lossy_templates_respect_the_gate(source: str) -> None:
    out = COMPRESSOR.compress(source)
    again = Compressor(HashingEmbedder(), whitespace_tokens, CompressConfig(min_fidelity=0.9)).fidelity(source, out.source)
    assert abs(again - out.fidelity) < 1e-6
    if out.lossy:
        assert again >= 0.9
    assert COMPRESSOR.rejects(source, out.source) is None  # the finished template passes the whole gate, meaning guard included


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40), st.text(max_size=40), st.text(max_size=20))
def test_static_text_round_trips_through_jinja(before: str, after: str, value: str) -> None:
    source = join([p for p in (Segment(before), Segment("{{ x }}", "x"), Segment(after)) if p.slot or p.text])
    assert ENV.from_string(source).render(x=value) == before + value + after
    assert static_text(source) == "\n".join(t for t in (before, after) if t)
