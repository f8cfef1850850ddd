"""Prompt templates merged by their static lines; rare templates absorbed by a frequent one that matches them."""

from __future__ import annotations

import random

import pytest

from logmine.stages.templates.anchors import GAP, _anchored_text, _variable_lines
from logmine.stages.templates.rare import _flat, _literal_pieces, _matches, host_pieces, is_pattern
from logmine.stages.templates.cluster import generalise
from logmine.stages.templates.prompts import mine_prompts, prompt_template_regex

CODE = [
    "def area(r):\n    return 3.14 * r * r",
    "class Stack:\n    def push(self, x):\n        self.items.append(x)",
    "for i in range(10):\n    total += i",
    "import os\nprint(os.getcwd())",
    "while queue:\n    node = queue.pop()\n    visit(node)",
    "x = {k: v for k, v in pairs}\nreturn x",
    "try:\n    run()\nexcept ValueError:\n    pass",
]


def fim_records(contexts: list[str]) -> list[dict[str, str]]:
    """Repository-level fill-in-the-middle prompts: other files' code, then the FIM sentinels."""
    out = []
    for n, context in enumerate(contexts):
        prefix, suffix = f"def f{n}(x):\n    y = x + {n}\n    return ", f"\n\nprint(f{n}({n}))\n"
        out.append({"prompt": f"{context}<fim_prefix>{prefix}<fim_suffix>{suffix}<fim_middle>", "prefix": prefix, "suffix": suffix,
                    "language": "python"})
    return out


def test_a_rare_prompt_joins_the_frequent_template_that_matches_it() -> None:
    # the other file in the last prompt is all docstring prose, which reads as text
    odd = "This module reads the configuration of the server.\nIt is the first file the server opens.\n"
    records = fim_records(CODE + [odd])
    result = mine_prompts(records)
    assert len(set(result.assignments)) == 1
    template = result.templates[result.assignments[0]]
    assert template == "{code}<fim_prefix>{prefix}<fim_suffix>{suffix}<fim_middle>"
    assert all(prompt_template_regex(template).match(r["prompt"]) for r in records)


def test_sentinels_are_static_text_of_a_few_prompts_too() -> None:
    # 4 prompts are too few to take in the odd one as a stray, but the sentinels all 5 hold, in the
    # same order with values between, are their static text: one template by its anchors
    odd = "This module reads the configuration of the server.\nIt is the first file the server opens.\n"
    records = fim_records(CODE[:4] + [odd])
    result = mine_prompts(records)
    assert len(set(result.assignments)) == 1
    template = result.templates[result.assignments[0]]
    assert template == "{code}<fim_prefix>{prefix}<fim_suffix>{suffix}<fim_middle>"
    assert all(prompt_template_regex(template).match(r["prompt"]) for r in records)


def test_sentinels_on_a_line_are_anchors_wherever_the_values_start() -> None:
    """A repository-level prompt whose prefix starts on the sentinel's line in some prompts and on
    the next line in others: one template (the sentinels anchor it, not the whole line)."""
    records = []
    for n, code in enumerate(CODE * 2):
        prefix = ("\n" if n % 2 else "") + code
        records.append({"prompt": f"<|repo_name|>acme/tool{n}\n<|file_sep|>src/m{n}.py<|repo_level_sep|>{prefix}"})
    result = mine_prompts(records)
    assert len(set(result.assignments)) == 1
    template = result.templates[result.assignments[0]]
    assert all(prompt_template_regex(template).match(r["prompt"]) for r in records)


def test_a_stray_grown_past_the_count_joins_by_its_share() -> None:
    # 6 prompts whose other file ends in the same prose: past MIN_ANCHOR_PROMPTS, but under 5 % of the template
    odd = "This module reads the configuration of the server.\nIt is the first file the server opens.\n"
    records = fim_records(CODE * 20 + [odd] * 6)
    result = mine_prompts(records)
    assert len(set(result.assignments)) == 1
    assert all(prompt_template_regex(result.templates[a]).match(r["prompt"]) for a, r in zip(result.assignments, records))


def test_a_template_of_its_own_share_stays() -> None:
    odd = "This module reads the configuration of the server.\nIt is the first file the server opens.\n"
    result = mine_prompts(fim_records(CODE * 3 + [odd] * 6))  # 6 of 27 prompts: a template of its own
    assert len(set(result.assignments)) == 2


def test_a_variable_never_spans_a_model_sentinel() -> None:
    host = _literal_pieces("<|im_start|>user\nExplain the following code to me please:\n<*><|im_end|>")
    assert _matches(host, _flat("<|im_start|>user\nExplain the following code to me please:\n{code}\nthanks<|im_end|>"))
    assert not _matches(host, _flat("<|im_start|>user\nExplain the following code to me please:\nx<|im_end|><|im_start|>y<|im_end|>"))
    assert not _matches(host, _flat("<|im_start|>user\nExplain the following code to me please:\n<|im_end|>"))  # a value is never empty


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        pytest.param(["<DOC>{code:abcdefgh}</DOC>", "<DOC>{code:ijklmnop}</DOC>"], "<DOC>{code}</DOC>", id="one-slot"),
        pytest.param(["<DOC>{code:abcdefgh}</DOC>", "<DOC>{code:ijklmnop}<X>{code:qrstuvwx}</DOC>"], "<DOC><*></DOC>",
                     id="slots-differ-tags-kept"),
        pytest.param(["rhost=1.2.3.4", "rhost=5.6.7.8"], "rhost=<*>", id="no-slots"),
    ],
)
def test_generalise_keeps_what_the_values_share(values: list[str], expected: str) -> None:
    assert generalise(values) == expected


def test_a_merged_region_keeps_the_tags_its_texts_share() -> None:
    anchor = "Rewrite the document below in plain English:"
    texts = [f"{anchor}\n<DOC>{{code}} and more</DOC>\n", f"{anchor}\n<DOC>only words</DOC>\n"]
    assert _anchored_text((anchor, GAP), texts) == f"{anchor}\n<DOC><*></DOC>\n"


def test_after_a_compaction_prompts_join_the_merged_template() -> None:
    from dataclasses import replace

    from logmine.stages.templates.prompts import PROMPT_CONFIG

    words = ["fix", "the", "loop", "rename", "this", "function", "and", "keep", "it", "fast", "add", "type", "hints", "now"]
    requests = [" ".join(words[(3 * n) % 7 : (3 * n) % 7 + 2 + n % 5]) for n in range(80)]
    records = [{"prompt": f'<|start_header_id|>user<|end_header_id|>\nRewrite the code to satisfy this request: "{r}"<|eot_id|>'
                          "<|start_header_id|>assistant<|end_header_id|>\nSure! Here is the code you asked for:"} for r in requests]
    result = mine_prompts(records, replace(PROMPT_CONFIG, max_units=10))
    assert result.state.compactions >= 3
    assert len(set(result.assignments)) == 1
    template = result.templates[result.assignments[0]]
    assert all(prompt_template_regex(template).match(r["prompt"]) for r in records), template


def test_a_format_of_sentinels_alone_takes_in_a_rare_prompt() -> None:
    """``[SUFFIX]{suffix}[PREFIX]{prefix}`` has less static text than ``MIN_SIGNATURE_CHARS``, but
    its sentinels make it specific: the prompt whose suffix holds a closing tag and a sentence (read
    as text, outside the code) joins it."""
    records = [{"prompt": f"[SUFFIX]{code}\nprint({n})\n[PREFIX]def f{n}(x):\n    return "} for n, code in enumerate(CODE * 3)]
    odd = "[SUFFIX]SOFTWARE\n</UL>\nHere are some common variable names of the server:[PREFIX]<LI>REMOTE_USER\n<LI>SERVER_"
    result = mine_prompts([*records, {"prompt": odd}])
    assert len(set(result.assignments)) == 1
    template = result.templates[result.assignments[0]]
    assert template == "[SUFFIX]{code}[PREFIX]{code2}"
    assert all(prompt_template_regex(template).match(r["prompt"]) for r in [*records, {"prompt": odd}])


def test_a_format_of_sentinels_alone_is_no_host_for_later_prompts() -> None:
    """Only rare prompts of the same batch join a template of sentinels alone; as a host for the
    prompts a long log brings later it would take in other templates' (GA 0.918 -> 0.878 at
    100,000 prompts), so a host needs ``MIN_SIGNATURE_CHARS`` of text."""
    assert not is_pattern("[SUFFIX]{code}[PREFIX]{code2}")
    assert host_pieces("[SUFFIX]{code}[PREFIX]{code2}", 1000) is None
    assert is_pattern("[SUFFIX]{code}[PREFIX]{code2} Complete the code between the markers.")


def test_a_tag_inside_one_prompts_code_is_no_sentinel_of_its_format() -> None:
    """A snake-case tag in a prompt's code (``metavar='<output_dir>'``) reads like a model sentinel
    and cuts the code there; but no other prompt holds it, so it is no part of a prompt format, and
    the prompt joins its template."""
    records = [{"prompt": f"<PRE> {code}\n <SUF>\nprint({n}) <MID>"} for n, code in enumerate(CODE * 3)]
    odd = "<PRE> parser.add_argument('-e', metavar=('<output_dir>'),\n        help='Extract')\n <SUF>\nargs = parse() <MID>"
    result = mine_prompts([*records, {"prompt": odd}])
    assert len(set(result.assignments)) == 1
    assert all(prompt_template_regex(result.templates[a]).match(r["prompt"]) for a, r in zip(result.assignments, [*records, {"prompt": odd}]))
    # a sentinel that every prompt of a format holds is its structure: a variable never spans it
    assert not _matches(["<PRE>", "<SUF>", "<MID>"], "<PRE>x<fim_middle>y<SUF>z<MID>", frozenset({"<output_dir>"}))
    assert _matches(["<PRE>", "<SUF>", "<MID>"], "<PRE>x<output_dir>y<SUF>z<MID>", frozenset({"<output_dir>"}))


ISSUE_PROMPT = ("Please review the following problem description and the files the user selected.\n"
                "Decide which of them must change to solve the problem, and say why in one line each.\n\n"
                "### Problem description ###\n{issue}\n\n### Selected files ###\n{files}\n\n"
                "Answer with the paths only, one per line, most important first.\nDo not invent files that are not listed.")
SENTENCES = [f"{v} {t} {w}." for v in ("Fix", "Rename", "Document", "Split") for t in ("the parser", "this loop", "the cache")
             for w in ("before the release", "so the tests pass")]


def _issue_prompts(n: int, seed: int) -> list[str]:
    """Prompts of one template whose issue text is a few sentences drawn from a small list: each
    sentence recurs in five prompts and more, so each is held often enough to be an anchor."""
    import random

    rng = random.Random(seed)
    out = []
    for i in range(n):
        issue = "\n".join(rng.sample(SENTENCES, rng.randint(2, 4)))
        files = "\n".join(f"src/m{rng.randrange(1000)}.py" for _ in range(rng.randint(1, 3)))
        out.append(ISSUE_PROMPT.format(issue=issue, files=files))
    return out


def test_sentences_of_a_free_text_value_are_no_anchors_however_often_they_recur() -> None:
    """The issue's sentences recur (24 of them in 300 prompts), each in far fewer prompts than the
    template's own lines, and the region between the same two static lines takes a content of its own
    in most prompts: a variable. Read as anchors, they made nearly every prompt a template of its own."""
    template = _one_template(_issue_prompts(300, seed=1))
    assert "### Problem description ###" in template and "Do not invent files that are not listed." in template
    assert not any(s in template for s in SENTENCES)


def _one_template(prompts: list[str]) -> str:
    """The one template ``prompts`` are mined into, checked to match every one of them."""
    result = mine_prompts({"prompt": p} for p in prompts)
    assert len(set(result.assignments)) == 1
    template = result.templates[result.assignments[0]]
    assert all(prompt_template_regex(template).match(p) for p in prompts)
    return template


def test_templates_told_apart_by_a_few_lines_between_the_same_two_lines_stay_apart() -> None:
    """Five templates share their first and last lines and differ in the lines between, each held by
    a fifth of the prompts the shared lines are in (few enough to be a value's lines): but that region
    takes five contents in 60 prompts, not one of its own in most, so its lines are anchors and the
    templates stay five."""
    head = "You are a reviewer of code changes for a team of engineers.\nRead the change the user gives you.\n"
    tail = "\nKeep the answer under ten lines.\nNever invent an API that is not there."
    middles = ["Say whether the change is safe to ship today.\nName the riskiest line.",
               "List the tests the change needs.\nName one edge case they must cover.",
               "Suggest a better name for each new function.\nKeep the names short.",
               "Explain the change to a new member of the team.\nUse plain words.",
               "Find the slowest part of the change.\nSay how to measure it."]
    prompts = [head + middles[i % 5] + tail for i in range(60)]
    result = mine_prompts({"prompt": p} for p in prompts)
    assert len(set(result.assignments)) == 5


RULES = ["The type should never be empty.", "The scope should always be in lower case.", "The subject should never end with a period.",
         "The header should always have 100 characters or less.", "There should always be a blank line before the body.",
         "Each line of the body should have 100 characters or less.", "The footer should always name the issue it closes.",
         "The type should always be one of build, chore, docs, feat or fix."]


def test_lines_drawn_from_a_small_vocabulary_are_a_value_however_often_each_recurs() -> None:
    """A list of rules chosen per prompt (four to eight of eight, in any order): every rule recurs in
    most prompts, so each line counts as static, and each choice was a template of its own. The region
    between the same static lines takes a content of its own in most prompts: one template, the list a
    variable (the counterpart of the test above, where five contents in 60 prompts stay five templates)."""
    rng = random.Random(3)
    head = "You are to act as the author of a commit message in git.\nYou will strictly follow these conventions:\n- "
    tail = "\n\nThe conventions refer to the structure of the commit message.\nAnswer with the commit message only."
    template = _one_template([head + "\n- ".join(rng.sample(RULES, rng.randint(4, len(RULES)))) + tail for _ in range(40)])
    assert "You will strictly follow these conventions:" in template and "Answer with the commit message only." in template
    assert not any(rule in template for rule in RULES)


RUN_PROMPT = ("You are an engineer who wrote the code below and now runs it for the user.\n\n"
              "Full Code:\n~~~\n{files}\n~~~\n\nUser's last message: {request}\n\n"
              "System Operating System: {os}\n\n"
              "Your task is to give the commands that run this project.\nAnswer with a JSON list of commands only.\n"
              "Do not change into another directory first.")
OS_VALUES = ["Linux-6.5.0-41-generic-x86_64-with-glibc2.35", "macOS-14.6.1-arm64-arm-64bit", "Windows-11-10.0.22631-SP0"]
MODULES = ["app", "cli", "db", "models", "views", "utils", "config", "server", "tasks", "auth"]
REQUESTS = [f"{v} the {t} {w}" for v in ("Run", "Test", "Explain", "Profile", "Check", "Build") for t in ("server", "parser", "cache", "queue")
            for w in ("on my laptop", "before the release", "so the tests pass", "with the new flags", "in a container")]


def _run_prompts(n: int, seed: int) -> list[str]:
    """Prompts of one template: one to four files of code, each a fenced block under its path; a user's
    request; one of three operating-system strings (digits and letters)."""
    import random

    rng = random.Random(seed)
    out = []
    for _ in range(n):
        files = "\n".join(f"File: `src/{rng.choice(MODULES)}.py`:\n```\n{rng.choice(CODE)}\n```" for _ in range(rng.randint(1, 4)))
        out.append(RUN_PROMPT.format(files=files, request=rng.choice(REQUESTS), os=rng.choice(OS_VALUES)))
    return out


def test_a_line_of_code_slots_and_fences_is_no_anchor_nor_is_a_word_masking_found_a_value_in() -> None:
    """Two values of one template that recur often enough to look static. The files' blocks become a
    line of code slots and fences whose form follows the number of files; it holds no letter, so it is no
    static text. The operating system is one of three words, each holding digits: masking found a value
    in the word, so two values of it make it a variable of its line (a plain word needs five), framed by
    the line after it alone, since the line before it holds the user's request."""
    prompts = _run_prompts(120, seed=3)
    result = mine_prompts({"prompt": p} for p in prompts)
    assert len(set(result.assignments)) == 1
    template = result.templates[result.assignments[0]]
    assert template.startswith("You are an engineer who wrote the code below") and "Your task is to give the commands that run this project." in template
    assert not any(os_value[:5] in template for os_value in OS_VALUES)
    assert all(prompt_template_regex(template).match(p) for p in prompts)


def test_a_masked_word_of_one_value_stays_static() -> None:
    """The operating system of every prompt the same: the line is static text, masked word and all."""
    prompts = [p for p in _run_prompts(200, seed=4) if OS_VALUES[1] in p]
    result = mine_prompts({"prompt": p} for p in prompts)
    assert len(set(result.assignments)) == 1
    assert "System Operating System: macOS-" in result.templates[result.assignments[0]]



def test_a_short_line_of_a_key_and_its_value_word_is_a_variable_of_the_line() -> None:
    """``[Provider: {provider}]``: a line of two words, the second taking six values between the same
    two static lines, is read as one line with a variable; a line of one word is not."""
    providers = ["OpenAI", "Anthropic", "Ollama", "Groq", "Google", "Mistral"]
    head, tail = "You improve the prompts users give you.", "Answer with the improved prompt only."
    lines = [[head, f"[Provider: {providers[i % 6]}]", tail] for i in range(30)]
    forms = _variable_lines(lines)
    assert {forms[(head, f"[Provider: {p}]", tail)] for p in providers} == {"[Provider: <*>]"}
    assert not _variable_lines([[head, providers[i % 6] + "Provider", tail] for i in range(30)])


def test_a_short_line_before_free_text_is_one_template() -> None:
    """``User Request:`` and a user's request: the word-level miner splits the requests by their words
    and lengths, and the static line is too short for a signature of its own; but the text after it
    takes a content of its own in most prompts, so the groups are one template."""
    prompts = [f"User Request:\n{REQUESTS[(11 * i) % len(REQUESTS)]}" for i in range(40)]
    result = mine_prompts({"prompt": p} for p in prompts)
    assert len(set(result.assignments)) == 1
    template = result.templates[result.assignments[0]]
    assert template.startswith("User Request:\n<*>") and all(prompt_template_regex(template).match(p) for p in prompts)


def test_short_templates_told_apart_by_their_text_after_the_same_line_stay_apart() -> None:
    """Three short templates share their only static line and differ by a fixed text after it: few
    contents, each in many prompts, so they stay three."""
    tails = ["Answer with yes or no only.", "Name the file that must change, and why.", "Write the commit message for this change."]
    prompts = [f"User Request:\n{tails[i % 3]}" for i in range(60)]
    result = mine_prompts({"prompt": p} for p in prompts)
    assert len(set(result.assignments)) == 3


def test_a_label_before_free_text_on_its_line_is_one_template() -> None:
    """``USER QUERY: {request}``: the value follows the template's only static text on the same line,
    so no line is an anchor; the label it opens with is, and the text after it is free, so the groups
    the word-level miner made by the requests' words and lengths are one template."""
    prompts = [f"USER QUERY: {REQUESTS[(13 * i) % len(REQUESTS)]}" for i in range(40)]
    result = mine_prompts({"prompt": p} for p in prompts)
    assert len(set(result.assignments)) == 1
    template = result.templates[result.assignments[0]]
    assert template.startswith("USER QUERY: <*>") and all(prompt_template_regex(template).match(p) for p in prompts)


def test_labelled_lines_of_few_fixed_texts_stay_apart() -> None:
    """The same label before three fixed texts: three templates."""
    tails = ["answer with yes or no only", "name the file that must change, and why", "write the commit message for this change"]
    result = mine_prompts({"prompt": f"USER QUERY: {tails[i % 3]}"} for i in range(60))
    assert len(set(result.assignments)) == 3


REVIEW_PROMPT = ("You are given an issue and the review comments on its fix. Decide whether the comments were resolved.\n\n"
                 "Issue description:\n{issue}\n\nReview comments:\n{comments}\n\n"
                 "Answer with true or false on the first line, then explain the answer in two sentences.")


def _review_prompts() -> list[str]:
    """30 prompts whose issue is a sentence, and one whose issue opens with a line of code: read as code,
    with the static line and the comments' list after it, that prompt's code slot took a static line."""
    def comments(i: int) -> str:
        items = (f'    "Minor: {REQUESTS[(i * 3 + j) % len(REQUESTS)].lower()} in `f{j}`."' for j in range(1 + i % 3))
        return "[\n" + ",\n".join(items) + "\n]"

    prompts = [REVIEW_PROMPT.format(issue=REQUESTS[(7 * i + 3) % len(REQUESTS)] + ".", comments=comments(i)) for i in range(30)]
    return [*prompts, REVIEW_PROMPT.format(issue="result = parse(config)\nfails when the file is empty.", comments=comments(3))]


@pytest.mark.parametrize("workers", [0, 1])
def test_a_rare_prompt_whose_code_slot_took_static_lines_joins_its_template(workers: int) -> None:
    """The rare prompt's skeleton has no ``Review comments:`` line (its code slot holds it), so no
    template's pattern matches it; read as logged, the frequent template's does, and it joins it. The
    skeletons made in a second process (``workers=1``) give the same."""
    result = mine_prompts(({"prompt": p} for p in _review_prompts()), workers=workers)
    assert len(set(result.assignments)) == 1
    assert "Review comments:\n{code}" in result.templates[result.assignments[0]]


def test_two_variable_lines_side_by_side_each_frame_the_other() -> None:
    """``Modality: "image".`` after a free-text task and before ``Programming Language: "Ruby"`` (ChatDev's
    phase prompts): neither neighbour is the same in every prompt, so no two lines frame the word; the
    static line on one side does, and both lines are read with their variable word."""
    modalities = ["application", "website", "dashboard", "document", "image", "excel"]
    languages = ["Python", "Ruby", "Swift", "Go", "Rust", "Java"]
    head, tail = "According to the new user's task and our software designs:", "Think step by step and answer."
    lines = [[head, f'Task: "request number {i} of the user".', f'Modality: "{modalities[i % 6]}".',
              f'Programming Language: "{languages[(i // 6) % 6]}"', tail] for i in range(180)]
    forms = _variable_lines(lines)
    assert {f for (_, line, _), f in forms.items() if line.startswith("Modality")} == {'Modality: <*>".'}
    assert {f for (_, line, _), f in forms.items() if line.startswith("Programming")} == {'Programming Language: <*>"'}


def test_a_line_with_the_records_file_path_is_the_same_anchor_where_the_record_has_none() -> None:
    """The same template logged by two clients, one whose records carry the file path (the path becomes
    ``{file_path}``: ``... the one file {file_path}, complete ...``) and one whose records do not (the path's
    text, masked): the record's value is a variable like any other, so the line is one anchor and the prompts
    one template. Before, the two clients' prompts were two templates (two free-text regions: no one frame
    of the word-level miner holds them, only the anchors)."""
    rng = random.Random(5)
    vocab = "add fix the loop class tests docs names value error path cache list order input output file line word".split()
    system = ("You are a careful engineer who writes code that others can read and keep.\n\n## Task\n{task}\n\n"
              "## Legacy Code\n{code}\n\n## Notes\n{notes}\n\n## Write Code: only write the one file {path}, complete and "
              "with triple quotes, based on the task and the legacy code above.\nKeep every public name the legacy code has.\n")
    records = []
    for n in range(24):
        path = f"src/pkg/mod{n}.py"
        words = [" ".join(rng.choices(vocab, k=rng.randint(3, 9))) for _ in range(2)]
        prompt = system.format(code="```python\n" + CODE[n % len(CODE)] + "\n```", path=path, task=words[0], notes=words[1])
        records.append({"prompt": prompt, "file_path": path} if n % 2 else {"prompt": prompt})
    result = mine_prompts(records)
    assert len(set(result.assignments)) == 1
    template = result.templates[result.assignments[0]]
    assert "\n## Write Code: only write the one file <*>, complete and with triple quotes," in template
    assert all(prompt_template_regex(template).match(r["prompt"]) for r in records)


def test_a_rare_value_of_more_words_joins_the_template_whose_wildcard_it_fills() -> None:
    """Most dialects are a name and ``SQL`` (``Snowflake SQL``), so the miner keeps ``SQL`` after the
    wildcard; a rare dialect of five words (``T-SQL / Microsoft SQL Server``) still fills that wildcard,
    the word next to it included. A rare prompt that differs away from the wildcard stays apart."""
    head = "You are a {} expert. Please help to generate a SQL query to answer the question. Base your answer on the "
    tail = "context only.\nIf the context is not enough, say which table is missing.\nQuestion: how many rows?"
    names = ["Snowflake", "BigQuery", "Oracle", "DuckDB", "Presto", "Hive", "Trino", "Spark"]
    prompts = [(head + tail).format(f"{names[i % len(names)]} SQL") for i in range(40)]
    rare = (head + tail).format("T-SQL / Microsoft SQL Server")
    template = _one_template(prompts + [rare])
    assert "<*> SQL expert" in template or "<*> expert" in template
    apart = (head + tail).format("Hive SQL").replace("say which table is missing", "say so and stop")
    result = mine_prompts({"prompt": p} for p in prompts + [apart])
    assert len(set(result.assignments)) == 2


AGENT_TASKS = ["Predict the sale price of each house.", "Classify each tweet as about a disaster or not.", "Forecast the daily sales.",
               "Predict whether a passenger survived.", "Predict whether a customer churns.", "Segment the images."]
AGENT_METRICS = ["RMSE", "accuracy", "AUC", "F1 score", "log loss", "mean absolute error", "RMSLE"]
AGENT_ROLES = [
    ("Write a first solution to the task below.", ["## Solution sketch guideline", "- The first design should be simple.",
     "- Take the memory into account.", "- Propose a metric for the task.", "- Do not suggest exploring the data."]),
    ("Improve the solution below to raise its score.", ["## Improvement guideline", "- Propose one change only.",
     "- Say why the change should help.", "- Keep the rest of the solution.", "- Do not tune the random seed."]),
    ("Fix the bug of the solution below.", ["## Bugfix guideline", "- Say what caused the error.", "- Change only what the fix needs.",
     "- Keep the output format.", "- Print the validation score."]),
    ("Review the output of the code below.", ["## Review guideline", "- Say whether the run failed.", "- Report the metric if any.",
     "- Quote the error if there is one.", "- Answer in JSON."]),
]


def test_sections_of_templates_in_the_middles_keep_the_templates_apart() -> None:
    """Four templates of one agent open with the same heading and share the task's frame; each has a section of
    its own (five lines) after it. The task's goal and metric come from small vocabularies, the language named is
    one of two and a memory heading is there or not, so the templates split into many families whose middles
    take many contents, as lines drawn one by one would (all four were one template). Lines held together by
    the same families are a template's own text: the families are parted by it first, and the middles join
    within each part: four templates."""
    rng = random.Random(5)
    prompts, truth = [], []
    for n in range(120):
        role, section = AGENT_ROLES[n % 4]
        memory = "\n\n# Memory\n\nThe last run scored well." if rng.random() < 0.6 else ""
        prompts.append(f"# Introduction\n\nYou are a data scientist in a competition. {role} Write the code in {rng.choice(['Python', 'R'])}.\n\n"
                       f"# Task description\n\n## Goal\n{rng.choice(AGENT_TASKS)}\n\n## Evaluation\nSubmissions are evaluated on "
                       f"{rng.choice(AGENT_METRICS)}.{memory}\n\n# Instructions\n\n" + "\n".join(section))
        truth.append(n % 4)
    result = mine_prompts({"prompt": p} for p in prompts)
    by_template: dict[str, set[int]] = {}
    for t, k in zip(result.assignments, truth, strict=True):
        by_template.setdefault(t, set()).add(k)
    assert sorted(sorted(ks) for ks in by_template.values()) == [[0], [1], [2], [3]]
