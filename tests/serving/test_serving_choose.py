"""`logmine validate` through the render plan, its traffic-weighted total, and `compress --validate`'s
choice of form, with a scripted generator (whose output is a function of the prompt)."""

from __future__ import annotations

from serving_helpers import ScriptedGenerator

from logmine.pack import PackTemplate, PackTotals, Placeholder, TemplatePack, Thresholds
from logmine.runtime import LoggedRequest, RenderContext, form, make_plan, render, trim_settings
from logmine.runtime.trim import TrimConfig
from logmine_serving.pack_runtime import PackRuntime
from logmine_serving.validate import ValidateConfig, choose_forms, validate

SETTINGS = trim_settings(TrimConfig(budget_tokens=40))
CODE = "".join(f"def helper_{i}(x):\n    return x + {i}\n\n\n" for i in range(40)) + "def main():\n    value = helper_3("
FIM = "<fim_prefix>{{ prefix }}<fim_suffix>{{ suffix }}<fim_middle>"


def template(name: str, source: str, original: str, lossless: str | None = None, roles: dict | None = None, n: int = 10) -> PackTemplate:
    return PackTemplate(
        id=f"b2:{name}", name=name, source=source, original_source=original, lossless_source=lossless or source,
        placeholders=[Placeholder(name="prefix", type="code"), Placeholder(name="suffix", type="code")], n_requests=n, share=0.5,
        static_tokens_before=1, static_tokens_after=1, rendered_tokens_before=1, rendered_tokens_after=1, uncached_tokens_after=1,
        fidelity=1.0, lossy=source != original, plan=make_plan(source, roles or {}, SETTINGS))


def pack(*templates: PackTemplate) -> TemplatePack:
    totals = PackTotals(templates=len(templates), requests=20, static_tokens_before=1, static_tokens_after=1,
                        rendered_tokens_before=1, rendered_tokens_after=1, uncached_tokens_after=1, fidelity=1.0)
    return TemplatePack(created_at="2026-01-01T00:00:00Z", logmine_version="0", tokenizer="t", embedding_model="e",
                        thresholds=Thresholds(edit_similarity=0.9, semantic_similarity=0.9, min_fidelity=0.9),
                        templates=list(templates), totals=totals, trimming=SETTINGS)


def cases(t: PackTemplate, n: int = 2) -> list[LoggedRequest]:
    out = []
    for i in range(n):
        slots = {"prefix": CODE + f"{i}", "suffix": ")\n"}
        logged = render(form(t, "original"), slots)  # the original template, slots verbatim: what was logged
        out.append(LoggedRequest(f"r{i}", t.id, slots, RenderContext(language="python", file_path="app.py"), logged))
    return out


def test_validate_replays_the_full_plan_against_the_logged_prompt() -> None:
    fim = template("fim", FIM, FIM, roles={"prefix": "prefix", "suffix": "suffix"})
    runtime = PackRuntime.from_pack(pack(fim))
    gen = ScriptedGenerator()
    mine = cases(fim)
    report = validate(runtime, {fim.id: mine}, gen, ValidateConfig(max_new_tokens=8, warmup=0))
    served = [runtime.render(fim, c.slots, "compressed", c.context) for c in mine]
    assert all(len(s) < len(c.prompt) / 3 for s, c in zip(served, mine, strict=True))  # trimmed, as serve sends it
    assert sorted(set(gen.prompts)) == sorted({*served, *(c.prompt for c in mine)})  # the logged prompts are the reference
    rec = report.templates[0]
    assert rec["requests"] == 2 and rec["exact_match"] == 1.0  # the scripted model writes the prompt's tail: the same
    assert rec["same_prompt"] == 0.0
    assert rec["prompt_tokens"]["compressed"] < rec["prompt_tokens"]["original"]
    assert rec["uncached_prompt_tokens"]["compressed"] == rec["prompt_tokens"]["compressed"]  # no shared prefix here


def test_the_total_is_traffic_weighted() -> None:
    a = template("a", "A {{ prefix }}{{ suffix }}", "A {{ prefix }}{{ suffix }}", n=30)
    b = template("b", "B {{ prefix }}{{ suffix }}", "Bee {{ prefix }}{{ suffix }}", n=10)
    runtime = PackRuntime.from_pack(pack(a, b))
    gen = ScriptedGenerator(lambda p: p[:6])  # b's prompts start differently: its outputs differ
    report = validate(runtime, {a.id: cases(a, 1), b.id: cases(b, 1)}, gen, ValidateConfig(max_new_tokens=6, warmup=0))
    sims = {r["name"]: r["edit_similarity"] for r in report.templates}
    assert sims["a"] == 1.0 and sims["b"] < 1.0
    assert [r["same_prompt"] for r in report.templates] == [1.0, 0.0]
    assert report.total["edit_similarity"] == (30 * sims["a"] + 10 * sims["b"]) / 40
    assert report.total["requests"] == 2 and report.total["weighting"] == "n_requests"


def test_choose_ships_the_most_compressed_form_that_agrees() -> None:
    # the scripted model answers with the first line of the prompt: the compressed form drops it, the lossless keeps it
    original = "Answer in French.\nPlease write the code {{ prefix }}{{ suffix }}"
    agree = template("agree", "Answer in French.\nWrite the code {{ prefix }}{{ suffix }}", original)
    lossless = template("lossless", "Write the code {{ prefix }}{{ suffix }}", original, lossless=original.replace("Please w", "W"))
    fallback = template("orig", "Write the code {{ prefix }}{{ suffix }}", original, lossless="Write code {{ prefix }}{{ suffix }}")
    runtime = PackRuntime.from_pack(pack(agree, lossless, fallback))
    gen = ScriptedGenerator(lambda p: p.split("\n", 1)[0])
    choices, summary = choose_forms(runtime, {t.id: cases(t) for t in (agree, lossless, fallback)}, gen,
                                    ValidateConfig(per_template=2, max_new_tokens=30, warmup=0))
    assert [choices[t.id].form for t in (agree, lossless, fallback)] == ["compressed", "lossless", "original"]
    assert choices[agree.id].reason is None
    assert choices[lossless.id].reason.startswith("compressed edit similarity 0.") and "< 0.9" in choices[lossless.id].reason
    assert "lossless edit similarity" in choices[fallback.id].reason
    assert choices[fallback.id].record["forms"]["original"]["identical_prompts"]  # measured too, not assumed
    assert choices[lossless.id].record["forms"]["lossless"]["edit_similarity"] == 1.0
    assert summary.shipped == {"compressed": 1, "lossless": 1, "original": 1} and summary.templates_validated == 3
    assert summary.edit_similarity == 1.0 and summary.edit_similarity_compressed < 1.0


def test_identical_prompts_agree_without_a_generation_and_a_template_without_requests_stays() -> None:
    same = template("same", "X {{ prefix }}{{ suffix }}", "X {{ prefix }}{{ suffix }}")
    idle = template("idle", "Y {{ prefix }}{{ suffix }}", "Why {{ prefix }}{{ suffix }}")
    gen = ScriptedGenerator()
    choices, summary = choose_forms(PackRuntime.from_pack(pack(same, idle)), {same.id: cases(same)}, gen, ValidateConfig(warmup=0))
    assert gen.prompts == []
    assert choices[same.id].form == "compressed" and choices[same.id].record["forms"]["compressed"]["identical_prompts"]
    assert choices[idle.id].form == "compressed" and choices[idle.id].record == {"requests": 0, "note": "no logged request to replay"}
    assert summary.templates_validated == 1
