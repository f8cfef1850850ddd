"""The pack runtime: render plans, the lossless file-block step, stateless trimming, the sandbox."""

from __future__ import annotations

import pytest

from logmine.errors import RenderError, UnsafeTemplateError
from logmine.pack import ContextStep, RenderPlan, SlotPlan
from logmine.runtime import (
    Form,
    PromptRuntime,
    RenderContext,
    dedup_file_blocks,
    file_blocks,
    lossless,
    make_plan,
    render,
    slot_order,
    trim_config,
    trim_settings,
)
from logmine.runtime.trim import TrimConfig, Trimmer

PY_PREFIX = "".join(f"def helper_{i}(x):\n    return x + {i}\n\n\n" for i in range(60)) + "def main():\n    value = helper_3("
FIM = "<fim_prefix>{{ prefix }}<fim_suffix>{{ suffix }}<fim_middle>"


def test_slot_order_is_the_order_of_first_appearance() -> None:
    assert slot_order("{% raw %}{{ not_a_slot }}{% endraw %}{{ b }} and {{ a }} then {{ b }}") == ["b", "a"]


def test_make_plan_trims_code_context_slots_to_the_pack_budgets() -> None:
    plan = make_plan(FIM, {"prefix": "prefix", "suffix": "suffix"}, trim_settings(TrimConfig(budget_tokens=64, suffix_budget_tokens=32)))
    assert [(s.slot, s.role, s.policy, s.budget_tokens) for s in plan.slots] == [("prefix", "prefix", "trim", 64), ("suffix", "suffix", "trim", 32)]
    assert plan.slots[0].inputs == ["language", "file_path", "recent_files"] and "nearest the cursor" in plan.slots[0].fallback
    assert plan.context_steps == [ContextStep(step="dedup_file_blocks", slots=["prefix", "suffix"])]
    verbatim = make_plan(FIM, {"prefix": "prefix"}, None)
    assert [(s.slot, s.policy, s.budget_tokens) for s in verbatim.slots] == [("prefix", "verbatim", None)]
    assert lossless(plan).slots[1].policy == "verbatim" and lossless(plan).context_steps == plan.context_steps


def test_trim_settings_round_trip_every_trimmer_option() -> None:
    config = TrimConfig(budget_tokens=100, suffix_budget_tokens=40, declarations_budget_tokens=80, ast_weight=0.6, near_lines=5, max_kept=2)
    settings = trim_settings(config)
    assert settings.options["near_lines"] == 5 and isinstance(settings.options["near_lines"], int)
    assert trim_config(settings.model_validate_json(settings.model_dump_json())) == config


def test_the_runtime_trims_as_the_trimmer_does_and_the_result_depends_on_the_request_alone() -> None:
    settings = trim_settings(TrimConfig(budget_tokens=48))
    plan = make_plan(FIM, {"prefix": "prefix", "suffix": "suffix"}, settings)
    ctx = RenderContext(language="python", file_path="src/app.py", session_id="s1")
    runtime = PromptRuntime(settings)
    first = runtime.render(Form("t", FIM, plan), {"prefix": PY_PREFIX, "suffix": ")\n"}, ctx)
    expected = Trimmer(TrimConfig(budget_tokens=48)).slots({"prefix": PY_PREFIX, "suffix": ")\n"}, "python", "src/app.py", remember=False)
    assert first == f"<fim_prefix>{expected.values['prefix']}<fim_suffix>{expected.values['suffix']}<fim_middle>"
    assert len(first) < len(PY_PREFIX) / 4 and first.endswith("def main():\n    value = helper_3(<fim_suffix>)\n<fim_middle>")
    for i in range(5):  # other requests of the session in between change nothing
        runtime.render(Form("t", FIM, plan), {"prefix": PY_PREFIX.replace("helper_3(", f"helper_{10 + i}("), "suffix": ""}, ctx)
    assert runtime.render(Form("t", FIM, plan), {"prefix": PY_PREFIX, "suffix": ")\n"}, ctx) == first
    assert PromptRuntime(settings).render(Form("t", FIM, plan), {"prefix": PY_PREFIX, "suffix": ")\n"}, ctx) == first


def test_serving_without_context_falls_back_to_the_templates_own_language_and_path_slots() -> None:
    source = "# {{ file_path }}\n<fim_prefix>{{ prefix }}<fim_middle>"
    plan = make_plan(source, {"prefix": "prefix"}, trim_settings(TrimConfig(budget_tokens=48)))
    slots = {"file_path": "src/app.py", "prefix": PY_PREFIX}
    with_context = render(Form("t", source, plan), slots, RenderContext(language="python", file_path="src/app.py"))
    assert render(Form("t", source, plan), slots) == with_context


def test_a_plan_without_trimming_sends_code_verbatim_and_no_plan_is_a_plain_fill() -> None:
    slots = {"prefix": PY_PREFIX, "suffix": ""}
    assert render(Form("t", FIM, make_plan(FIM, {"prefix": "prefix"}, None)), slots) == f"<fim_prefix>{PY_PREFIX}<fim_suffix><fim_middle>"
    assert render(Form("t", FIM), slots) == f"<fim_prefix>{PY_PREFIX}<fim_suffix><fim_middle>"


UTIL = "+++++ src/util.py\ndef util():\n    return 1\n"
MODELS = "+++++ src/models.py\nclass User:\n    name: str\n"


def test_a_file_that_appears_twice_in_one_prompt_is_sent_once_at_its_last_place() -> None:
    source = "[SUFFIX]{{ suffix }}[PREFIX]{{ prefix }}"
    prefix = UTIL + MODELS + UTIL + "+++++ src/app.py\nimport util\nutil."
    plan = RenderPlan(slots=[], context_steps=[ContextStep(step="dedup_file_blocks", slots=["suffix", "prefix"])])
    got = render(Form("t", source, plan), {"prefix": prefix, "suffix": ""})
    assert got == "[SUFFIX][PREFIX]" + MODELS + UTIL + "+++++ src/app.py\nimport util\nutil."
    assert got.count("def util()") == 1


def test_file_blocks_across_slots_and_three_copies() -> None:
    repo = "<|file_sep|>a.py\nx = 1\n<|file_sep|>b.py\ny = 2\n"
    values = {"context": repo + "<|file_sep|>a.py\nx = 1\n", "prefix": "<|file_sep|>a.py\nx = 1\n<|file_sep|>main.py\nimport a\n"}
    out = dedup_file_blocks(values, ["context", "prefix"])
    assert out == {"context": "<|file_sep|>b.py\ny = 2\n", "prefix": values["prefix"]}
    assert file_blocks("head\n<file_sep>a\nbody\n<file_sep>b\n") == [(5, 22), (22, 34)]


def test_text_before_the_first_header_and_a_changed_copy_are_kept() -> None:
    values = {"prefix": "import os\n" + UTIL + UTIL.replace("1", "2")}
    assert dedup_file_blocks(values, ["prefix"]) == values
    same_text_other_path = {"prefix": UTIL + UTIL.replace("util.py", "other.py")}
    assert dedup_file_blocks(same_text_other_path, ["prefix"]) == same_text_other_path


def test_the_sandbox_guards_every_render() -> None:
    with pytest.raises(UnsafeTemplateError, match="attribute access"):
        render(Form("bad", "{{ prefix.__class__ }}"), {"prefix": "x"})
    with pytest.raises(RenderError, match="missing slot value"):
        render(Form("t", FIM), {"prefix": "x"})
    assert render(Form("t", FIM), {"prefix": "{{ 7*7 }}", "suffix": ""}) == "<fim_prefix>{{ 7*7 }}<fim_suffix><fim_middle>"


def test_a_budget_the_plan_names_overrides_the_packs() -> None:
    plan = RenderPlan(slots=[SlotPlan(slot="prefix", role="prefix", policy="trim", budget_tokens=16)])
    runtime = PromptRuntime(trim_settings(TrimConfig(budget_tokens=256)))
    small = runtime.render(Form("t", FIM, plan), {"prefix": PY_PREFIX, "suffix": ""}, RenderContext(language="python"))
    large = runtime.render(Form("t", FIM, make_plan(FIM, {"prefix": "prefix"}, runtime_settings())), {"prefix": PY_PREFIX, "suffix": ""},
                           RenderContext(language="python"))
    assert len(small) < len(large) < len(PY_PREFIX)


def runtime_settings():  # noqa: ANN201
    return trim_settings(TrimConfig(budget_tokens=256))
