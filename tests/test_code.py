"""logmine.code: parsers per language, language resolution, leaves and the token taxonomy."""

from __future__ import annotations

import pytest

from logmine.code import (
    SUPPORTED_LANGUAGES,
    TOKEN_TYPES,
    detect_language,
    enclosing_category,
    get_parser,
    leaf_category,
    leaf_spans,
    parse,
    resolve_language,
    resolve_language_source,
)


def spans(code: str, language: str, start: int = 0) -> list[tuple[str, str, str]]:
    starts, ends, types, cats = leaf_spans(parse(code, language), start)
    data = code.encode()
    return [(data[s:e].decode(), t, c) for s, e, t, c in zip(starts, ends, types, cats)]


@pytest.mark.parametrize("language", SUPPORTED_LANGUAGES)
def test_every_grammar_loads(language: str) -> None:
    assert get_parser(language) is get_parser(language)
    assert parse("x", language).root_node is not None


def test_python_leaves_and_categories() -> None:
    assert spans('x = f"a{b}" + 1.5  # c', "python") == [
        ("x", "identifier", "identifier"), ("=", "=", "operator"), ('f"', "string_start", "string"),
        ("a", "string_content", "string"), ("{", "{", "punctuation"), ("b", "identifier", "identifier"),
        ("}", "}", "punctuation"), ('"', "string_end", "string"), ("+", "+", "operator"), ("1.5", "float", "number"),
        ("# c", "comment", "comment"),
    ]


def test_leaf_spans_skips_what_ends_before_start() -> None:
    code = "def f(a):\n    return None\n"
    assert spans(code, "python", code.index("return")) == [("return", "return", "keyword"), ("None", "none", "keyword")]
    # a leaf that straddles the start is kept
    assert spans(code, "python", code.index("eturn"))[0] == ("return", "return", "keyword")


@pytest.mark.parametrize(
    ("code", "language", "text", "expected"),
    [
        ("let s = `a ${b} c`;", "javascript", "b", ("identifier", "identifier")),
        ("let s = `a ${b} c`;", "javascript", "a ", ("string_fragment", "string")),
        ("let r = /ab+/g;", "javascript", "ab+", ("regex_pattern", "string")),
        ("let x: string = 'a';", "typescript", "string", ("string", "keyword")),
        ("int x = 0x1F;", "java", "0x1F", ("hex_integer_literal", "number")),
        ("char c = 'c';", "java", "'c'", ("character_literal", "string")),
        ("x := `raw`", "go", "raw", ("raw_string_literal_content", "string")),
        ("let mut x: i32 = 5;", "rust", "mut", ("mutable_specifier", "keyword")),
        ("let mut x: i32 = 5;", "rust", "i32", ("primitive_type", "keyword")),
    ],
    ids=["js-substitution", "js-template", "js-regex", "ts-predefined", "java-hex", "java-char", "go-raw", "rust-mut", "rust-i32"],
)
def test_categories_in_context(code: str, language: str, text: str, expected: tuple[str, str]) -> None:
    found = {(t, c) for s, t, c in spans(code, language) if s == text}
    assert found == {expected}


def test_text_outside_every_leaf_takes_the_enclosing_comment() -> None:
    code = "fn main() { // hi there\n}"
    tree = parse(code, "rust")
    offset = code.index("hi")
    assert all(not s <= offset < e for s, e in zip(*leaf_spans(tree)[:2]))
    assert enclosing_category(tree, offset) == ("line_comment", "comment")


def test_leaf_category_fallbacks() -> None:
    assert leaf_category("ERROR", True) == "error"
    assert leaf_category("metavariable", True) == "identifier"
    assert leaf_category("=>", False) == "operator"
    assert leaf_category("(", False) == "punctuation"
    assert leaf_category("elif", False) == "keyword"
    assert leaf_category("identifier", True, "string") == "string"
    assert set(TOKEN_TYPES) >= {"identifier", "keyword", "string", "number", "comment", "operator", "punctuation", "whitespace", "error", "prose"}


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("Python", None, None), ("python", "record")),
        (("golang", "x.rs", None), ("go", "record")),
        ((None, "src/a.rs", None), ("rust", "extension")),
        (("kotlin", None, "fun main() {}"), (None, "unsupported")),
        ((None, "Main.kt", "def f(): pass"), (None, "unsupported")),
        ((None, None, "def f(x):\n    return x\n"), ("python", "detected")),
        ((None, None, "Sure, I can help with that."), (None, "none")),
        ((None, None, None), (None, "none")),
    ],
    ids=["record", "record-alias", "extension", "unsupported-record", "unsupported-extension", "detected", "prose", "nothing"],
)
def test_resolve_language_source(args: tuple[str | None, str | None, str | None], expected: tuple[str | None, str]) -> None:
    assert resolve_language_source(*args) == expected


def test_resolve_language_keeps_its_contract() -> None:
    assert resolve_language("py") == "python"
    assert resolve_language(None, "a.go") == "go"
    assert resolve_language(None, None, "package main\nfunc main() {}\n") == "go"
    assert detect_language("The weather is nice today.") is None
