"""Prompt mining: record values and code become placeholders; templates golden and property-checked."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from logmine.stages.templates import bodies, line_kinds
from logmine.stages.templates.cluster import SLOT
from logmine.stages.templates.prompts import SlotStore, mine_prompts, placeholders, prompt_template_regex, record_values, skeleton

CASES = Path(__file__).parents[1] / "cases" / "templates"
REGEN = bool(os.environ.get("LOGMINE_REGEN_GOLDEN"))


@pytest.fixture(scope="module")
def records() -> list[dict[str, str]]:
    """72 prompts rendered from 6 real assistant templates (bench/prompt_logs.py), with their truth."""
    return [json.loads(line) for line in (CASES / "prompts.jsonl").read_text().splitlines()]


def test_golden_prompt_templates(records: list[dict[str, str]]) -> None:
    result = mine_prompts(records)
    order = list(result.templates)
    got = {"templates": [{"template": result.templates[t], "prompts": result.counts[t]} for t in order],
           "assignments": [order.index(t) for t in result.assignments]}
    path = CASES / "prompts.expected.json"
    if REGEN:
        path.write_text(json.dumps(got, indent=1, ensure_ascii=False) + "\n")
    assert got == json.loads(path.read_text())


def test_one_template_per_true_template(records: list[dict[str, str]]) -> None:
    result = mine_prompts(records)
    pairs = {(r["truth"], a) for r, a in zip(records, result.assignments)}
    assert len(pairs) == len({r["truth"] for r in records}) == len(result.templates) == 6


def test_every_prompt_matches_its_template(records: list[dict[str, str]]) -> None:
    result = mine_prompts(records)
    for record, tid in zip(records, result.assignments):
        assert prompt_template_regex(result.templates[tid]).match(record["prompt"]), result.templates[tid][:200]


def test_static_example_code_stays_in_the_template(records: list[dict[str, str]]) -> None:
    """holeFillerTemplate holds example code that never changes: it is restored, not slotted."""
    result = mine_prompts(records)
    hole = next(t for t in result.templates.values() if t.startswith("You are a HOLE FILLER"))
    assert "function sum_evens(lim) {" in hole and hole.rstrip().endswith("<COMPLETION>")


def test_record_values_become_named_placeholders() -> None:
    record = {"prompt": "<fim_prefix>import os\nx = 1\n<fim_suffix>\nprint(x)\n<fim_middle>", "prefix": "import os\nx = 1\n",
              "suffix": "\nprint(x)\n", "file_path": "/home/u/src/app.py", "language": "python"}
    assert skeleton(record["prompt"], record_values(record)) == "<fim_prefix>{prefix}<fim_suffix>{suffix}<fim_middle>"


def test_a_trimmed_prefix_is_still_found() -> None:
    prefix = "".join(f"line number {i} of the file\n" for i in range(40))
    prompt = "<PRE> " + prefix[-200:] + " <SUF>x = 1 <MID>"
    assert skeleton(prompt, {"prefix": prefix}) == "<PRE> {prefix} <SUF>x = 1 <MID>"


def test_paths_languages_and_attrs() -> None:
    record = {"prompt": "# Path: src/app.py\n```python\nprint(1)\n```\nRewrite it in python.", "file_path": "/repo/src/app.py",
              "language": "python", "attrs": json.dumps({"selection": "print(1)"})}
    assert record_values(record)["selection"] == "print(1)"
    assert skeleton(record["prompt"], record_values(record)) == "# Path: {file_path}\n```{language}\n{selection}\n```\nRewrite it in python."


def test_code_becomes_slots_and_prose_stays() -> None:
    store = SlotStore()
    prompt = "Fix the bug below.\n\n```\ndef f(x):\n    return x + 1\n```\n\nKeep comments.\n\nclass A:\n    def g(self):\n        pass\n"
    text = skeleton(prompt, {}, store)
    assert text.startswith("Fix the bug below.\n\n```\n{code:") and "Keep comments." in text
    assert text.count("{code:") == 2
    assert store.restore(text) == prompt


@pytest.mark.parametrize(
    ("prompt", "values", "expected"),
    [
        pytest.param('Explain:\n\ndef page():\n    print("<H3>Title</H3>")\n    return 1\n\nThanks.', {}, "Explain:\n\n{code}\n\nThanks.",
                     id="tags-in-a-string-literal-are-code"),
        pytest.param("```python\nimport os\n    # see main.py for details\nx = 1\n```\nAt main.py.", {"file_path": "src/main.py"},
                     "```{language}\n{code}\n```\nAt {file_path}.", id="the-file-name-in-a-comment-is-code"),
        pytest.param('title="src/app/main.py"\nreferrer="src/app/main.py"\n<DOC>x = 1</DOC>\n', {},
                     'title="src/app/main.py"\nreferrer="src/app/main.py"\n<DOC>{code}</DOC>\n', id="attribute-lines-are-text"),
        pytest.param("Edit:\n<DOC>\ndef f(x):\n    return x<CURSOR/> + 1\n</DOC>\n", {}, "Edit:\n<DOC>{code}<CURSOR/>{code}</DOC>\n",
                     id="a-cursor-marker-stays-and-the-blank-space-by-it-is-code"),
        pytest.param("Edit:\n<DOC>def f(x):\n    return x\n    <CURSOR/>\n\nprint(f(2))</DOC>\n", {}, "Edit:\n<DOC>{code}<CURSOR/>{code}</DOC>\n",
                     id="the-same-with-the-cursor-on-a-line-of-its-own"),
        pytest.param('Edit:\n<DOC>x = "ab<CURSOR/>c"\n</DOC>\n', {}, "Edit:\n<DOC>{code}<CURSOR/>{code}</DOC>\n",
                     id="a-marker-stays-even-in-a-string-literal"),
        pytest.param("Here:\n```python\nx = 1\n\n```\nFix it.", {}, "Here:\n```{language}\n{code}\n```\nFix it.",
                     id="a-blank-line-before-a-closing-fence-is-the-code-s"),
        pytest.param("Here:\n```python\n\n\nx = 1\n\n\n```\nFix it.", {}, "Here:\n```{language}\n{code}\n```\nFix it.",
                     id="so-are-blank-lines-at-both-ends"),
    ],
)
def test_code_in_context(prompt: str, values: dict[str, str], expected: str) -> None:
    store = SlotStore()
    text = skeleton(prompt, values, store)
    assert SLOT.sub(r"{\1}", text) == expected
    assert SLOT.sub(lambda m: store.texts[m.group(2)], text) == skeleton(prompt, values)  # the slots hold the text they replace


_PRUNE = """
from logmine.stages.templates.prompts import SlotStore
store = SlotStore(max_entries=40)
for i in range(30):  # 30 texts seen twice, then new ones until the store is full: more to keep than it keeps
    store.token("code", f"def f{i}(): return {i}")
    store.token("code", f"def f{i}(): return {i}")
for i in range(20):
    store.token("code", f"def g{i}(): pass")
print(sorted(store.texts.values()))
"""


def test_a_full_slot_store_keeps_the_same_texts_whatever_the_hash_seed() -> None:
    # which texts a full store keeps decides which slots a template restores; a set's order changes
    # with PYTHONHASHSEED, so a prune by it gave other templates from one run to the next
    kept = {subprocess.run([sys.executable, "-c", _PRUNE], env={**os.environ, "PYTHONHASHSEED": seed}, check=True,
                           capture_output=True, text=True).stdout for seed in ("0", "1", "2")}
    assert len(kept) == 1
    assert "'def f29(): return 29'" in kept.pop()  # the latest of those seen twice are kept


def test_restore_numbers_repeated_slots() -> None:
    assert SlotStore().restore("A {code} B {code} C {diff}") == "A {code} B {code2} C {diff}"
    assert placeholders("x {prefix} {code} {code2} <*> {file_path}") == ["prefix", "code", "code2", "file_path"]


def test_records_without_a_prompt_get_none() -> None:
    result = mine_prompts([{"prompt": None}, {"prompt": "Explain this code please"}, {}])
    assert result.assignments[0] is None and result.assignments[2] is None
    assert result.templates[result.assignments[1]] == "Explain this code please"
    assert result.first_line == {result.assignments[1]: 1}


@pytest.mark.parametrize("workers", [1, 2])
def test_worker_processes_give_the_same_templates(records: list[dict[str, str]], workers: int) -> None:
    serial = mine_prompts([*records, {"prompt": None}])
    parallel = mine_prompts([*records, {"prompt": None}], workers=workers)
    assert (parallel.assignments, parallel.templates, parallel.counts) == (serial.assignments, serial.templates, serial.counts)


def test_slot_texts_counted_in_order_fill_the_store_as_one_process_does() -> None:
    """Workers make skeletons with stores of their own (each with its own cache) and the mining
    process counts their slot texts in the prompts' order: its store, pruned several times here,
    ends as the store of one process that made every skeleton itself."""
    names = [f"f{i % 2}" if i % 3 == 0 else f"g{i}" for i in range(200)]  # a few recurring texts among new ones
    prompts = [f"Fix this:\n\n```\ndef {name}(x):\n    return x + 1\n```\n\nThanks." for name in names]
    one = SlotStore(max_entries=12)
    serial = [skeleton(p, {}, one) for p in prompts]
    workers = [SlotStore(), SlotStore()]
    mining = SlotStore(max_entries=12)
    for i, p in enumerate(prompts):
        worker = workers[i % 2]
        worker.made = made = []
        assert skeleton(p, {}, worker) == serial[i]
        mining.count(made)
    assert (mining.texts, mining.seen) == (one.texts, one.seen)
    assert len(one.texts) <= 12 and any(n > 1 for n in one.seen.values())


@pytest.mark.parametrize(
    "line",
    ["**Rules**", "**Note:** answer in `python` only.", "* Be concise.", "- Do not invent APIs.", "+ Keep the tests green",
     "1. Read the code first.", "# Task", "## Output format",
     # bold as templates write it, a space inside the closing marks (codeinterpreter-api's upload note)
     "**The user uploaded the following files: **", "**File(s) are now available in the cwd. **"],
)
def test_markdown_prose_lines_are_text(line: str) -> None:
    prompt = f"You are a careful assistant.\n\n{line}\n\nFix the code:\n\ndef f(x):\n    return x + 1\n"
    assert SLOT.sub(r"{\1}", skeleton(prompt, {"language": "python"}, SlotStore())) == (
        f"You are a careful assistant.\n\n{line}\n\nFix the code:\n\n{{code}}\n"
    )


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        pytest.param("Fix:\n\n# compute it\nx = f(1)\n# done\n\nThanks.", "Fix:\n\n{code}\n\nThanks.", id="comments-on-code-lines"),
        pytest.param("Fix:\n\n* args = 1\n- y = 2\n\nThanks.", "Fix:\n\n{code}\n\nThanks.", id="bullets-holding-code"),
        pytest.param("Fix:\n\n**kwargs\n\nThanks.", "Fix:\n\n{code}\n\nThanks.", id="an-unclosed-bold-is-code"),
    ],
)
def test_markdown_markup_on_code_stays_code(prompt: str, expected: str) -> None:
    assert SLOT.sub(r"{\1}", skeleton(prompt, {"language": "python"}, SlotStore())) == expected


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        pytest.param("Here is python code from src/a.py.\n", "Here is {language} code from {file_path}.\n", id="language-before-code"),
        pytest.param("You are an experienced Python developer.", "You are an experienced {language} developer.", id="language-before-developer"),
        pytest.param("I like python and pythonic code.", "I like python and pythonic code.", id="elsewhere-the-users-words"),
        pytest.param("```python\nx = 1\n```\nuser: ```python\n", "```{language}\nx = 1\n```\nuser: ```{language}\n", id="a-fence-that-opens-a-line-or-turn"),
        pytest.param("2. The opening fence and code language, eg: ```python\n", "2. The opening fence and code language, eg: ```python\n",
                     id="a-fence-inside-prose-is-an-example"),
    ],
)
def test_the_language_named_before_a_noun_is_a_placeholder(prompt: str, expected: str) -> None:
    assert skeleton(prompt, {"language": "python", "file_path": "src/a.py"}) == expected


def test_role_tag_lines_and_punctuation_after_a_placeholder_are_text() -> None:
    prompt = "<system>\nYou are helpful.\n\n<user>\nFix the code from src/a.py:\n\ndef f(x):\n    return x\n"
    assert SLOT.sub(r"{\1}", skeleton(prompt, {"file_path": "src/a.py"}, SlotStore())) == (
        "<system>\nYou are helpful.\n\n<user>\nFix the code from {file_path}:\n\n{code}\n"
    )


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        pytest.param("# Path: src/a.py\n# return x\n#\nx = 1", "{code}", id="comment-lines-together-are-code"),
        pytest.param("Intro.\n\n# Usage\n\nRun it.", "Intro.\n\n# Usage\n\nRun it.", id="a-heading-standing-apart-is-text"),
        pytest.param("<|repo_name|>acme\n<|file_sep|>src/a.py\nThis module reads the config.\n<|fim_prefix|>x = 1<|fim_suffix|>\n<|fim_middle|>",
                     "<|repo_name|>acme\n<|file_sep|>{code}<|fim_prefix|>{code}<|fim_suffix|>\n<|fim_middle|>", id="a-files-text-after-file-sep-is-code"),
    ],
)
def test_headings_and_files(prompt: str, expected: str) -> None:
    assert SLOT.sub(r"{\1}", skeleton(prompt, {"language": "python"}, SlotStore())) == expected


def test_prose_ending_a_context_file_before_a_fim_sentinel_is_code() -> None:
    docstring = "\n".join(f"Line {n} of a long module docstring that reads like prose." for n in range(20))
    prompt = f"+++++ src/a.py\nimport os\n{docstring}\n<fim_prefix>x = 1<fim_suffix>\n<fim_middle>"
    assert SLOT.sub(r"{\1}", skeleton(prompt, {"language": "python"}, SlotStore())) == "{code}\n<fim_prefix>{code}<fim_suffix>\n<fim_middle>"
    # an instruction after a sentinel, before the FIM sentinel, stays text
    chat = "<|im_start|>user\nComplete the code.\n<fim_prefix>x = 1<fim_suffix>\n<fim_middle>"
    assert SLOT.sub(r"{\1}", skeleton(chat, {}, SlotStore())).startswith("<|im_start|>user\nComplete the code.\n<fim_prefix>")


def test_a_short_fim_value_is_replaced_only_between_sentinels() -> None:
    assert skeleton("[SUFFIX]ds\n\n[PREFIX]def f(): pass", {"suffix": "ds\n\n", "prefix": "def f(): pass"}) == "[SUFFIX]{suffix}[PREFIX]{prefix}"
    assert skeleton("<PRE> x = ds <SUF>ok<MID>", {"suffix": "ds"}) == "<PRE> x = ds <SUF>ok<MID>"


def test_a_docstring_is_code_whatever_its_length() -> None:
    docstring = '"""Support module.\n\n' + "\n".join(f"Sentence {n} of the module's long description." for n in range(20)) + '\n"""'
    prompt = f"Explain this file.\n\nimport os\n\n{docstring}\n\nx = 1\n\nThanks."
    assert SLOT.sub(r"{\1}", skeleton(prompt, {"language": "python"}, SlotStore())) == "Explain this file.\n\n{code}\n\nThanks."


def test_quotes_of_two_snippets_do_not_make_a_docstring() -> None:
    prompt = 'Edit:\n<DOC>x = 1\n"""</DOC>\nThe user is editing {file_path} now.\n<SEL>\n    """Start.</SEL>\n'
    text = SLOT.sub(r"{\1}", skeleton(prompt, {"language": "python"}, SlotStore()))
    assert "\nThe user is editing {file_path} now.\n" in text


def test_a_long_sentinel_is_structure() -> None:
    prompt = "<|repo_name|>acme\n<|file_sep|>src/a.py<|system_separator_istruction_repository_level|>def f(x):\n    return x"
    assert SLOT.sub(r"{\1}", skeleton(prompt, {"language": "python"}, SlotStore())).endswith("<|system_separator_istruction_repository_level|>{code}")


def test_a_tag_glued_inside_an_expression_is_code() -> None:
    prompt = "Fix:\n\nm = re.compile(r'(?P<thousands_sep>,)?')\nx = 1\n\nThanks."
    assert SLOT.sub(r"{\1}", skeleton(prompt, {"language": "python"}, SlotStore())) == "Fix:\n\n{code}\n\nThanks."


def test_a_fim_region_is_one_slot_whatever_blank_lines_its_code_ends_with() -> None:
    """The text between FIM sentinels is the value, newlines at its ends included: otherwise a
    prefix ending in a blank line and one that does not give two templates of one format."""
    prompts = ["user: <|fim_prefix|>def f(x):\n    return x\n<|fim_suffix|>\n\nprint(f(1))\n<|fim_middle|>",
               "user: <|fim_prefix|>def f(x):\n    return x<|fim_suffix|>\nprint(f(1))<|fim_middle|>"]
    shapes = {SLOT.sub(r"{\1}", skeleton(p, {}, SlotStore())) for p in prompts}
    assert shapes == {"user: <|fim_prefix|>{code}<|fim_suffix|>{code}<|fim_middle|>"}


def test_labelled_comments_after_a_prefix_sentinel_are_the_templates_header() -> None:
    """``<fim_prefix># Language: Python\\n# Path: ...\\n{prefix}``: the comments that label a value
    right after the prefix sentinel are the template's, not the code at the cursor, so FIM templates
    that differ only in their header (or have none) do not share one skeleton."""
    code = "import os\n\ndef main(argv):\n    x = 1\n    "
    values = {"prefix": code, "suffix": "\n    return x\n"}
    shapes = {
        SLOT.sub(r"{\1}", skeleton(f"<fim_prefix>{header}{code}<fim_suffix>\n    return x\n<fim_middle>", values, SlotStore()))
        for header in ("", "# Language: Python\n# Path: src/a.py\n", "# Language: Python\n# File uri: src/a.py\n")
    }
    assert shapes == {
        "<fim_prefix>{prefix}<fim_suffix>{suffix}<fim_middle>",
        "<fim_prefix># Language: Python\n# Path: src/a.py\n{prefix}<fim_suffix>{suffix}<fim_middle>",
        "<fim_prefix># Language: Python\n# File uri: src/a.py\n{prefix}<fim_suffix>{suffix}<fim_middle>",
    }
    # without the record's values, the code after the header is still one slot, and a comment
    # that labels nothing (``# parse the args``) is code
    logged = SLOT.sub(r"{\1}", skeleton("<PRE> // File: src/x.ts \nconst a = 1;\n\n" + code + " <SUF>x<MID>", {}, SlotStore()))
    assert logged.startswith("<PRE> // File: src/x.ts \n{code}")
    plain = SLOT.sub(r"{\1}", skeleton("<fim_prefix># parse the args\n" + code + "<fim_suffix>x<fim_middle>", {}, SlotStore()))
    assert plain == "<fim_prefix>{code}<fim_suffix>{code}<fim_middle>"


def test_each_turn_of_a_chat_is_read_on_its_own() -> None:
    """A chat as ingest renders it: a turn that opens with a fence (an attached file, its path as
    the info string) has its code as one slot, and the next turn's words stay text."""
    prompt = ("system: You are a careful reviewer.\nuser: ```src/acme/parse.py\nShort prose of a docstring.\n"
              "def parse(text):\n    return text.split()\n```\nuser: Rename `parse` and keep the behaviour")
    text = SLOT.sub(r"{\1}", skeleton(prompt, {}, SlotStore()))
    assert text == "system: You are a careful reviewer.\nuser: ```src/acme/parse.py\n{code}\n```\nuser: Rename `parse` and keep the behaviour"
    # the same turns in two chats of different lengths: the attached file's turn is read the same
    alone = SLOT.sub(r"{\1}", skeleton("user: ```src/acme/parse.py\nx = 1\n```\nuser: Fix it", {}, SlotStore()))
    assert alone == "user: ```src/acme/parse.py\n{code}\n```\nuser: Fix it"


def test_the_text_before_a_suffix_sentinel_with_no_prefix_sentinel_is_the_prefix() -> None:
    """``{prefix}<|fim_suffix|>{suffix}<|fim_middle|>`` logged without its record values: the text
    up to the suffix sentinel is code whatever its first lines read like."""
    prompt = "Return the parsed header of the message.\n    header = read(fh)\n    return header<|fim_suffix|>\n\nprint(1)<|fim_middle|>"
    assert SLOT.sub(r"{\1}", skeleton(prompt, {}, SlotStore())) == "{code}<|fim_suffix|>{code}<|fim_middle|>"
    # with a prefix sentinel the rule is the old one: an instruction before it stays text
    chat = "Complete the code.\n<|fim_prefix|>x = 1<|fim_suffix|>\ny = 2<|fim_middle|>"
    assert SLOT.sub(r"{\1}", skeleton(chat, {}, SlotStore())).startswith("Complete the code.\n<|fim_prefix|>{code}")


def test_a_sentinel_named_for_a_prefix_or_suffix_opens_a_fim_region() -> None:
    """A model's FIM format that is not in the sentinel lists (``<|code_suffix|>``, ``<|code_prefix|>``):
    found by its name, so the regions after its sentinels are one code value whatever their first
    lines read like (the end of a sentence of a docstring, a comment)."""
    prompt = ("<|user|>\n###PATH:src/a.py\n<|code_suffix|>the rest of it\n    return total<|code_prefix|>Sum the values.\n"
              "def total(xs):\n<|code_middle|><|assistant|>")
    text = SLOT.sub(r"{\1}", skeleton(prompt, {}, SlotStore()))
    assert text == "<|user|>\n{code}\n<|code_suffix|>{code}<|code_prefix|>{code}<|code_middle|><|assistant|>"


def test_prose_a_completion_prompt_ends_in_mid_line_is_code() -> None:
    """A completion prompt ends at the cursor: prose after its last code line that stops short, with
    no line break after it (``def tes``, ``# If available, use C``), is the end of the code; a closed
    instruction, or one followed by a line break, stays text."""
    code = "+++++ src/acme/m.py\n    return total\n\n"
    for tail in ("def tes", "# If available, use C", "import time"):
        assert SLOT.sub(r"{\1}", skeleton(code + tail, {}, SlotStore())) == "{code}"
    for tail in ("Explain the code above.", "Explain the code above\n"):
        assert SLOT.sub(r"{\1}", skeleton(code + tail, {}, SlotStore())).endswith(tail)


def test_a_short_last_line_before_the_cursor_on_a_new_line_is_code() -> None:
    """The cursor at the start of a new line: a last line of one or two words after code
    (``import time``) is code with its line break; a longer line (an instruction), a closed one,
    or a short one after a fence keeps its text."""
    code = "+++++ src/acme/m.py\n    return total\n\n"
    for tail in ("import time\n", "return x\n"):
        assert SLOT.sub(r"{\1}", skeleton(code + tail, {}, SlotStore())) == "{code}\n"
    for tail in ("Explain the code above\n", "Thanks.\n"):
        assert SLOT.sub(r"{\1}", skeleton(code + tail, {}, SlotStore())).endswith(tail)
    fenced = "user: ```src/acme/m.py\nx = 1\n```\nuser: Fix it\n"
    assert SLOT.sub(r"{\1}", skeleton(fenced, {}, SlotStore())).endswith("```\nuser: Fix it\n")


def test_a_short_last_line_after_a_label_line_is_its_value() -> None:
    """Words on the last line after a line that ends in a label's colon (``Answer in this language:``) are
    the label's value, not the code's end at the cursor; after a comment that ends in a colon they are."""
    code = "+++++ src/acme/m.py\n    return total\n\n"
    for tail in ("Keep the answer short. Answer in this language:\npython\n", "Reply in the language below:\nGo"):
        assert SLOT.sub(r"{\1}", skeleton(code + tail, {}, SlotStore())) == "{code}\n\n" + tail
    assert SLOT.sub(r"{\1}", skeleton(code + "# the steps:\nimport time\n", {}, SlotStore())) == "{code}\n"


def test_a_text_indented_as_a_whole_is_prose() -> None:
    """A system prompt whose template indents every line is text, not a code slot; indented prose
    among code (a comment's or a docstring's words) stays code."""
    system = "     Review the code below for clarity.\n\n     Tone: friendly and brief, a fellow engineer.\n     Order: from top to bottom."
    prompt = f"system: \n{system}\nuser: Please look at it"
    assert SLOT.sub(r"{\1}", skeleton(prompt, {}, SlotStore())) == prompt
    code = "def total(xs):\n    Sum the values of the list and return it.\n    return sum(xs)"
    assert SLOT.sub(r"{\1}", skeleton(f"Explain this.\n\n{code}", {}, SlotStore())) == "Explain this.\n\n{code}"


def test_whether_an_indented_line_reads_as_prose_is_asked_only_of_a_text_indented_as_a_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    """Indented lines among other lines are code whatever they read like, so their prose test is
    never run (at volume most indented lines are code seen once, and running it on each cost CPU);
    a text of indented lines only is text when all of them read as prose, code when one does not."""
    asked: list[str] = []
    kind = line_kinds.line_kind

    def spy(piece: str, at_line_start: bool, language: str | None) -> str:
        asked.append(piece)
        return kind(piece, at_line_start, language)

    monkeypatch.setattr(bodies, "line_kind", spy)
    monkeypatch.setattr(bodies, "_KINDS", {})  # every piece is classified afresh, none answered by the cache
    prose = [f"    Sum the values of list number {n} and return it." for n in range(5)]
    among_code = "Explain this.\n\ndef total(xs):\n" + "\n".join(prose) + "\n    return sum(xs)"
    assert SLOT.sub(r"{\1}", skeleton(among_code, {}, SlotStore())) == "Explain this.\n\n{code}"
    assert set(prose) <= set(asked) and not {p.lstrip() for p in prose} & set(asked)
    asked.clear()
    indented = "\n".join(prose)
    assert SLOT.sub(r"{\1}", skeleton(indented, {}, SlotStore())) == indented
    assert {p.lstrip() for p in prose} <= set(asked)
    with_code = "\n".join(["    return total(xs)", *prose])
    assert SLOT.sub(r"{\1}", skeleton(with_code, {}, SlotStore())) == "{code}"


def test_a_template_indented_as_a_whole_keeps_its_prose_around_a_code_value() -> None:
    """A template that indents every line of its own (autodoc's), with a file's code among them: the prose lines
    from its first line on and from its last line back are text, the code between one slot, a docstring's prose
    and a last ``return x`` (two words, but a statement) in it. Read as code, the whole prompt was one slot."""
    code = 'def total(xs):\n    """Sum the values.\n\n    Return the sum of the list.\n    """\n    return x'
    head = ("\n    You are acting as a code documentation expert for a project called alpha.\n"
            "    Write a detailed technical explanation of what this code does.\n      Keep it short.\n\n    code:\n")
    tail = "\n\n    Response:\n\n  "
    # the first line's indentation goes with the value (a prefix ending in indentation is the value's)
    assert SLOT.sub(r"{\1}", skeleton(f"{head}    {code}{tail}", {}, SlotStore())) == f"{head}{{code}}{tail}"
    # a template that opens with a blank line (a string literal's first newline) and ends in an example: its prose is text
    instructions = "\n        Suggest up to five public datasets that match the description.\n        Json output format:\n"
    example = '        {\n            "datasets": ["xxx", "xxx"],\n            "reason": "why"\n        }'
    assert SLOT.sub(r"{\1}", skeleton(instructions + example, {}, SlotStore())) == instructions + "{code}"
    # its lines of a label and a value are its text, whatever the value reads like (a command, a list)
    for command in ("python train.py", "python process_data.py --data ./dataset"):
        labelled = (f"\n        Please help me debug the current task: train model.\n\n        The dependencies: ['torch']\n"
                    f"        The command to execute the code: {command}\n        ")
        assert SLOT.sub(r"{\1}", skeleton(labelled, {}, SlotStore())) == labelled
    # a value that opens a prompt inside a docstring has prose at its start only: code
    window = "    Return the sum of the list.\n\n    Arguments: the values.\n    \"\"\"\n    return sum(xs)"
    assert SLOT.sub(r"{\1}", skeleton(f"{window}\n(Open file: n/a)\nbash-$", {}, SlotStore())).startswith("{code}")


def test_an_indented_system_prompt_is_one_template_across_chats_of_several_lengths() -> None:
    """The same indented system turn, an attached file and requests of one to four words: one
    template, the system prompt its static text (read as code, it was a slot in the chats whose
    request lengths the gap merge joined, and static text in the others: three templates)."""
    system = "system: \n     You review code for a team.\n     Be precise and kind in every remark.\n"
    words = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa", "theta", "lambda", "zeta"]
    prompts = [f"{system}user: ```src/m{i}.py\ndef f{i}(x):\n    return x + {i}\n```\n"
               f"user: Please rewrite the code above: \"{' '.join(words[i % 7 : i % 7 + 1 + i % 4])}\". Keep comments." for i in range(30)]
    result = mine_prompts({"prompt": p} for p in prompts)
    assert len(result.templates) == 1
    assert next(iter(result.templates.values())).startswith(system)


def test_a_context_snippet_is_code_up_to_the_next_snippet_header() -> None:
    """Context snippets (``+++++ path`` then the file's lines): a snippet cut inside a docstring,
    whose lines read as prose, is code up to the next header, however many lines it has."""
    prose = "\n".join(f"where the module is the name number {n} of a module to search" for n in range(15))
    prompt = f"+++++ src/a.py\n    return x\n\n+++++ src/b.py\n{prose}\n\n+++++ {{file_path}}\n{{prefix}}"
    assert SLOT.sub(r"{\1}", skeleton(prompt, {}, SlotStore())) == "{code} {file_path}\n{prefix}"


def test_a_language_named_with_plus_plus_or_sharp_is_a_word() -> None:
    """``C++``, ``C#`` and ``F#`` in an instruction read as words: the lines after a code value
    (``The language is: C++.``) stay text, as with any other language's name; ``i++;`` stays code."""
    code = "def total(xs):\n    return sum(xs)"
    for name in ("Rust", "C++", "C#", "F#"):
        prompt = f"Refactor this:\n{code}\nKeep the style of the file.\nThe language is: {name}.\nDo not explain the code."
        assert SLOT.sub(r"{\1}", skeleton(prompt, {}, SlotStore())) == (
            f"Refactor this:\n{{code}}\nKeep the style of the file.\nThe language is: {name}.\nDo not explain the code.")
    assert SLOT.sub(r"{\1}", skeleton("Explain this:\n\nfor (i = 0; i < n; i++) {\n  C++;\n}\n", {}, SlotStore())) == "Explain this:\n\n{code}\n"


def test_a_prose_item_of_a_list_whose_other_items_are_code_is_code() -> None:
    """A list is one value: system info listed as items (``- Shell: SHELL=/bin/zsh``), the last one
    prose and present in some prompts only, is one code slot with or without it; a list whose items
    all read as prose stays text, and so does a prose item after a blank line."""
    info = "- Platform: Linux-6.5.0-x86_64\n- Shell: SHELL=/bin/zsh\n- Current date: 2026-01-01\n"
    rules = "\nRules:\n- If you changed a file, say so.\n- Be brief always.\n"
    for value in (info, info + "- The user is operating inside a git repository\n"):
        prompt = f"Keep the user's system in mind:\n{value}{rules}"
        assert SLOT.sub(r"{\1}", skeleton(prompt, {}, SlotStore())) == "Keep the user's system in mind:\n{code}\n" + rules
    apart = f"Keep the user's system in mind:\n{info}\n- The user is operating inside a git repository\n"
    assert SLOT.sub(r"{\1}", skeleton(apart, {}, SlotStore())).endswith("{code}\n\n- The user is operating inside a git repository\n")


def test_a_list_of_paths_is_one_value_whatever_its_length() -> None:
    """A line naming one to four files (``a/b.py, c/d.py``) reads as prose whatever the list's length
    (three paths made it code: a slot of its own), and its prompts are one template."""
    paths = ["src/app.py", "lib/b_c.py", "docs/x.md", "y/z.rs", "tests/t.py", "m/n.go"]
    prompts = [f"user: I added these files to the chat: {', '.join(paths[i % 3 : i % 3 + 1 + i % 4])}\n"
               "Let me know if there are others we should add." for i in range(24)]
    for prompt in prompts[:4]:
        assert SLOT.sub(r"{\1}", skeleton(prompt, {}, SlotStore())) == prompt
    result = mine_prompts({"prompt": p} for p in prompts)
    assert list(result.templates.values()) == ["user: I added these files to the chat: <*>\nLet me know if there are others we should add."]


def test_a_llama_2_system_prompt_is_text() -> None:
    """``<<SYS>> ... <</SYS>>`` is Llama 2's system prompt, two sentinels whole: not an upper-case
    tag ``<SYS>`` between brackets whose body is code (the whole prompt was one code slot)."""
    prompt = "<<SYS>>You are a helpful coding assistant.\nAlways reply using markdown.<</SYS>>\n"
    assert skeleton(prompt, {}, SlotStore()) == prompt
    wrapped = "[INST] <<SYS>>\nYou are a helpful coding assistant.\n<</SYS>>\n\nFix this:\ndef f(x):\n    return x\n[/INST]"
    assert SLOT.sub(r"{\1}", skeleton(wrapped, {}, SlotStore())) == (
        "[INST] <<SYS>>\nYou are a helpful coding assistant.\n<</SYS>>\n\nFix this:\n{code}\n[/INST]"
    )


def test_a_markdown_rule_is_text_and_a_docstring_underline_code() -> None:
    """A line of ``---`` alone separates a template's parts (text); a longer run of one mark is code (a
    docstring's underline inside a code value, ``Parameters`` / ``----------``) but where it fences a value
    after a label (the test below)."""
    prompt = "Fix the loop\n---\nSELECTIONS\ndef f(x):\n    return x + 1\n"
    assert SLOT.sub(r"{\1}", skeleton(prompt, {}, SlotStore())) == "Fix the loop\n---\nSELECTIONS\n{code}\n"
    assert line_kinds.line_kind("---", True, None) == "text"
    assert line_kinds.line_kind("----------", True, None) == "marks"
    underlined = "Fix the loop:\nx = compute(1)\n----------\ny = compute(2)\n"
    assert SLOT.sub(r"{\1}", skeleton(underlined, {}, SlotStore())) == "Fix the loop:\n{code}\n"


def test_lines_of_marks_after_a_label_fence_a_value_and_keep_the_prose_between_the_templates_parts() -> None:
    """``======`` lines after a label fence a template's value (a problem's words, generated tests, a class),
    whatever its lines look like: each value is one slot, the marks and the prose between them text. Read as
    code, the marks made one code slot from the first value to the last, the labels and instructions between
    them inside; a fenced value of prose was text, split by its words."""
    tests = "- input: |\n    8\n  output: |\n    NO"
    classes = "class Test(BaseModel):\n    input: str\n    output: str"
    prompt = (f"problem description:\n======\nFind the shortest path in the grid.\n\nInput\n\nThe grid.\n======\n\n\n"
              f"Here are the tests:\n============\n{tests}\n============\n\n\nYour task is to generate six more tests.\n"
              f"Sort them by difficulty.\n\nThe output must match these definitions:\n======\n{classes}\n======\n\nAnswer:\n")
    assert SLOT.sub(r"{\1}", skeleton(prompt, {}, SlotStore())) == (
        "problem description:\n======\n{code}\n======\n\n\nHere are the tests:\n============\n{code}\n============\n\n\n"
        "Your task is to generate six more tests.\nSort them by difficulty.\n\nThe output must match these definitions:\n"
        "======\n{code}\n======\n\nAnswer:\n")


def test_the_users_words_after_a_closing_tag_are_no_cursor() -> None:
    """A prompt whose file ends the code and whose user's words close it without a full stop: the words after
    ``</file>`` are the user's request, not the end of a line of code at the cursor (as ``def tes`` is)."""
    prompt = "<file>\nimport os\nprint(os.getcwd())\n</file>\n</files>\nexplain what this script prints"
    assert SLOT.sub(r"{\1}", skeleton(prompt, {}, SlotStore())).endswith("</file>\n</files>\nexplain what this script prints")
    assert SLOT.sub(r"{\1}", skeleton("x = 1\nprint(os.getcwd(x))\ndef tes", {}, SlotStore())) == "{code}"


def test_a_heading_between_runs_of_marks_is_text_and_a_line_left_open_is_code() -> None:
    """``===Tables`` heads a section of the template (text, not a code line that took the sections around it
    into one slot); ``CREATE TABLE note (``, three words and a bracket left open, is the start of code."""
    prompt = (
        "Please answer from the context.\n===Tables \nCREATE TABLE note (\n    note_id INT PRIMARY KEY,\n    body TEXT\n)\n\n"
        "===Response Guidelines \n1. If the context is sufficient, generate a valid query.\n2. Be brief.\n"
    )
    assert SLOT.sub(r"{\1}", skeleton(prompt, {}, SlotStore())) == (
        "Please answer from the context.\n===Tables \n{code}\n\n"
        "===Response Guidelines \n1. If the context is sufficient, generate a valid query.\n2. Be brief.\n"
    )
    assert line_kinds.line_kind("=== Response Guidelines ===", True, None) == "text"
    assert line_kinds.line_kind("==== x = 1", True, None) == "code"
    assert line_kinds.line_kind("CREATE TABLE note (", True, None) == "code"


def test_a_prompt_of_static_code_logged_many_times_is_a_template_of_its_own() -> None:
    """An instruction that reads as code as a whole (a dict literal in it) is one code slot, the same in every
    prompt; prompts that are code alone, each its own, are one slot too. One slot each, they are one template
    position by position; the slot logged verbatim in many prompts is static text, a template of its own."""
    static = "Reply with a dict {path: reason} for every file you pick; e.g. {'src/app.py': 'the entry point'}"
    assert SLOT.fullmatch(skeleton(static, {}, SlotStore()))
    code = [f"def handler_{i}(event):\n    total = {i} * event.size\n    return total + {i}\n" for i in range(20)]
    prompts = [static] * 10 + code
    result = mine_prompts({"prompt": p} for p in prompts)
    ours, others = set(result.assignments[:10]), set(result.assignments[10:])
    assert len(ours) == 1 and not ours & others
    assert result.templates[next(iter(ours))] == static

