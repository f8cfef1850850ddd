"""Token types from the parse: exact labels on hand-labelled completions in every language."""

from __future__ import annotations

import pytest
from heatmap_helpers import HAND_LABELLED

from logmine.stages.heatmap.labels import PromptContext, label_tokens, prompt_context


@pytest.mark.parametrize("language", sorted(HAND_LABELLED))
def test_hand_labelled_tokens(language: str) -> None:
    prefix, tokens = HAND_LABELLED[language]
    labels = label_tokens([t for t, _ in tokens], prefix, "completion", language, None)
    assert list(zip([t for t, _ in tokens], labels.token_types)) == tokens
    assert (labels.language, labels.language_source) == (language, "record")


@pytest.mark.parametrize("language", sorted(HAND_LABELLED))
def test_language_from_extension_or_detection_gives_the_same_labels(language: str) -> None:
    prefix, tokens = HAND_LABELLED[language]
    ext = {"python": "py", "java": "java", "javascript": "js", "typescript": "ts", "go": "go", "rust": "rs"}[language]
    by_ext = label_tokens([t for t, _ in tokens], prefix, "completion", None, f"src/file.{ext}")
    assert by_ext.language_source == "extension" and [t for _, t in tokens] == by_ext.token_types


def test_detected_language_when_the_log_has_none() -> None:
    labels = label_tokens(["    return", " x", " +", " 1", "\n"], "def f(x):\n", "other", None, None)
    assert (labels.language, labels.language_source) == ("python", "detected")
    assert labels.token_types == ["keyword", "identifier", "operator", "number", "whitespace"]


def test_raw_node_types_are_kept() -> None:
    labels = label_tokens(["    s", " =", ' "', "hi", '"', "\n"], "def f():\n", "completion", "python", None)
    assert labels.node_types == ["identifier", "=", "string_start", "string_content", "string_end", "newline"]


def test_completion_that_starts_inside_an_identifier() -> None:
    labels = label_tokens(["nt", "(", "1", ")"], "pri", "completion", "python", None)
    assert labels.token_types == ["identifier", "punctuation", "number", "punctuation"]


def test_non_ascii_offsets() -> None:
    labels = label_tokens([' "', "héllo ✓", '"', " +", " x"], "s = ", "completion", "python", None)
    assert labels.token_types == ["string", "string", "string", "operator", "identifier"]


def test_chat_prose_with_a_fenced_block() -> None:
    tokens = ["Use", " this", ":\n", "```", "go", "\n", "x", " :=", " 1", "\n", "```", "\n", "Done", "."]
    labels = label_tokens(tokens, None, "chat", None, None)
    assert labels.token_types == ["prose", "prose", "prose", "prose", "prose", "whitespace", "identifier", "operator", "number",
                                  "whitespace", "prose", "whitespace", "prose", "prose"]
    assert (labels.language, labels.language_source) == ("go", "fence")


def test_unclosed_fence_and_unknown_fence_language() -> None:
    open_block = label_tokens(["Here", ":\n", "```", "\n", "def", " f", "():"], None, "chat", "python", None)
    assert open_block.token_types[-3:] == ["keyword", "identifier", "punctuation"]
    shell = label_tokens(["```", "bash", "\n", "ls", " -la", "\n", "```"], None, "chat", None, None)
    assert shell.token_types[3:5] == ["error", "error"] and shell.node_types[3] == "unparsed"


def test_prose_without_code() -> None:
    labels = label_tokens(["The", " answer", " is", " yes", "."], None, "chat", None, None)
    assert labels.token_types == ["prose"] * 5 and labels.language is None and labels.language_source == "prose"
    other = label_tokens(["Hello", " there"], None, "other", None, None)
    assert other.token_types == ["prose", "prose"]


def test_unknown_language_is_unparsed_not_guessed() -> None:
    labels = label_tokens(["fun", " main", "()", " {", "}"], None, "completion", "kotlin", "Main.kt")
    assert labels.token_types == ["error"] * 5 and labels.node_types == ["unparsed"] * 5
    assert labels.language is None and labels.language_source == "unsupported"
    nothing = label_tokens(["zz", " qq"], None, "completion", None, None)
    assert nothing.token_types == ["error", "error"] and nothing.language_source == "none"


def test_syntax_errors_still_label_the_leaves() -> None:
    labels = label_tokens([" =", " 1", " $", " 2"], "x", "completion", "python", None)
    assert labels.parse_error
    assert labels.token_types == ["operator", "number", "error", "number"]


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("<|repo_name|>r\n<|file_sep|>/src/api/client.ts\n<|fim_prefix|>const a = 1;\n<|fim_suffix|>x<|fim_middle|>",
         PromptContext("const a = 1;\n", "/src/api/client.ts", None, "x")),
        ("<file_sep>/x/t.py\n<fim_prefix>def f():\n<fim_suffix>\n<fim_middle>", PromptContext("def f():\n", "/x/t.py", None, "\n")),
        ("user: [SUFFIX]\n}\n[PREFIX]package org;\n\nclass A", PromptContext("package org;\n\nclass A", None, None, "\n}\n")),
        ("<PRE> def f(): <SUF> pass <MID>", PromptContext("def f(): ", None, None, " pass ")),
        ("Complete:\n```typescript\nexport interface User {", PromptContext("export interface User {", None, "typescript")),
        ("```go\nfunc f() {\n\t<HOLE>\n}\n```\nWrite the code that replaces <HOLE>.", PromptContext("func f() {\n\t", None, "go", "\n}\n")),
        ("/fix\n```python\nx = 1\n```\nFind the bug", PromptContext(None, None, None)),
        (None, PromptContext(None, None, None)),
    ],
    ids=["qwen", "starcoder", "codestral", "codellama", "open-fence", "hole", "closed-fence", "none"],
)
def test_prompt_context(prompt: str | None, expected: PromptContext) -> None:
    assert prompt_context(prompt) == expected


def test_prefix_and_language_from_the_prompt_when_the_log_has_neither() -> None:
    prompt = "<|file_sep|>/src/app.go\n<|fim_prefix|>package main\n\nfunc f() string {\n\treturn \"ab<|fim_suffix|>\n}<|fim_middle|>"
    labels = label_tokens(["cd", '"', "\n"], None, "completion", None, None, prompt)
    assert (labels.language, labels.language_source) == ("go", "extension")
    assert labels.token_types == ["string", "string", "whitespace"]
    fenced = label_tokens(["1", ")"], None, "completion", None, None, "```python\nprint(")
    assert (fenced.language, fenced.language_source, fenced.token_types) == ("python", "prompt", ["number", "punctuation"])


def test_fenced_edit_answer_is_markdown() -> None:
    labels = label_tokens(["```", "java", "\n", "int", " x", ";", "\n", "```"], "class A {", "edit", "java", None)
    assert labels.token_types == ["prose", "prose", "whitespace", "keyword", "identifier", "punctuation", "whitespace", "prose"]


def test_language_from_the_suffix_or_the_cleanest_parse() -> None:
    suffix = "\n\ndef main():\n    import sys\n    return 0\n"
    by_suffix = label_tokens(["Some", " docs", "."], "x = 1\n# ", "completion", None, None, None, suffix)
    assert (by_suffix.language, by_suffix.language_source) == ("python", "detected")
    assert by_suffix.token_types == ["comment", "comment", "comment"]
    clean = label_tokens(["n", " =", " sum", "(", "x", " for", " x", " in", " xs", ")"], None, "completion", None, None)
    assert (clean.language, clean.language_source) == ("python", "detected")
    assert clean.token_types[:3] == ["identifier", "operator", "identifier"] and clean.token_types[5] == "keyword"
