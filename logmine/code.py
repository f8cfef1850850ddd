"""Code parsing shared by the stages: tree-sitter parsers per language and language detection.

Grammars come from the per-language wheels (tree-sitter-python, -java, -javascript,
-typescript, -go, -rust), which work offline. Parsers are cached per process.
"""

from __future__ import annotations

import functools
import importlib
import re
from typing import Any

from logmine.language import language_from_path, normalise_language

# language -> (module, function returning the grammar capsule)
GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "java": ("tree_sitter_java", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
}
SUPPORTED_LANGUAGES = tuple(GRAMMARS)


@functools.lru_cache(maxsize=None)
def get_language(language: str) -> Any:
    """The tree-sitter ``Language`` for ``language`` (one of :data:`SUPPORTED_LANGUAGES`)."""
    import tree_sitter

    module, func = GRAMMARS[language]
    return tree_sitter.Language(getattr(importlib.import_module(module), func)())


@functools.lru_cache(maxsize=None)
def get_parser(language: str) -> Any:
    """A cached tree-sitter ``Parser`` for ``language``; raise KeyError when unsupported."""
    import tree_sitter

    return tree_sitter.Parser(get_language(language))


def parse(code: str | bytes, language: str) -> Any:
    """Parse ``code`` and return the tree (tree-sitter works on UTF-8 bytes)."""
    data = code.encode("utf-8") if isinstance(code, str) else code
    return get_parser(language).parse(data)


def resolve_language(language: str | None, file_path: str | None = None, code: str | None = None) -> str | None:
    """The language to parse with: the record's, else the file extension's, else detected from ``code``."""
    for candidate in (normalise_language(language), language_from_path(file_path)):
        if candidate in GRAMMARS:
            return candidate
    if code:
        return detect_language(code)
    return None


# Cheap lexical cues first; the parse decides between the candidates that remain.
_CUES: dict[str, re.Pattern[str]] = {
    "python": re.compile(r"^\s*(def |class \w+.*:|import \w+|from [\w.]+ import|elif |print\()", re.M),
    "java": re.compile(r"\b(public|private|protected)\s+(static\s+)?(class|void|final|[A-Z]\w*)\b|System\.out\.|import java\."),
    "javascript": re.compile(r"\b(function\s*\w*\s*\(|const \w+ = |let \w+ = |=> |console\.log|require\()"),
    "typescript": re.compile(r"\b(interface \w+|: (string|number|boolean)\b|type \w+ = |export (default )?(class|function|const)|implements )"),
    "go": re.compile(r"^\s*(package \w+|func (\(\w+ \*?\w+\) )?\w+\(|import \(|\w+ := )", re.M),
    "rust": re.compile(r"\b(fn \w+|let mut |impl\b|pub fn|use \w+::|println!|-> Result<|&str\b)"),
}


def detect_language(code: str, max_chars: int = 4000) -> str | None:
    """Guess the language of ``code``: cue scores, then the fewest parse errors among candidates.

    Returns None for text that does not look like code in any supported language (prose).
    """
    return detect_language_tree(code, max_chars)[0]


def detect_language_tree(code: str, max_chars: int = 4000) -> tuple[str | None, Any | None]:
    """:func:`detect_language`, plus the winning candidate's tree when that parse covered all of
    ``code`` (so the caller need not parse it again); None when there was nothing to parse.

    A single candidate wins without a parse.
    """
    sample = code[:max_chars]
    scores = {lang: len(rx.findall(sample)) for lang, rx in _CUES.items()}
    candidates = [lang for lang, score in sorted(scores.items(), key=lambda kv: -kv[1]) if score > 0][:3]
    if not candidates:
        return None, None
    if len(candidates) == 1:
        return candidates[0], None
    best, best_key, best_tree = None, None, None
    for lang in candidates:
        tree = parse(sample, lang)
        key = (error_count(tree.root_node), -scores[lang])
        if best_key is None or key < best_key:
            best, best_key, best_tree = lang, key, tree
    return best, best_tree if len(sample) == len(code) else None


def error_count(node: Any, limit: int = 50) -> int:
    """The number of ERROR / MISSING nodes under ``node`` (stops counting at ``limit``)."""
    if not node.has_error:
        return 0
    count, stack = 0, [node]
    while stack and count < limit:
        n = stack.pop()
        if n.is_error or n.is_missing:
            count += 1
        elif n.has_error:
            stack.extend(n.children)
    return count


# -- where a language came from --------------------------------------------------------------------
def resolve_language_source(language: str | None, file_path: str | None = None, code: str | None = None) -> tuple[str | None, str]:
    """Like :func:`resolve_language`, also saying where the answer came from.

    Returns ``(language, source)`` with source one of ``record``, ``extension``, ``detected``,
    ``unsupported`` (the record or extension names a language without a grammar here: no
    guessing, language None) or ``none`` (nothing given and nothing detected: not code).
    """
    record = normalise_language(language)
    if record in GRAMMARS:
        return record, "record"
    ext = language_from_path(file_path)
    if ext in GRAMMARS:
        return ext, "extension"
    if record or ext:
        return None, "unsupported"
    detected = detect_language(code) if code else None
    return (detected, "detected") if detected else (None, "none")


# -- leaves and the token taxonomy -----------------------------------------------------------------
TOKEN_TYPES = ("identifier", "keyword", "string", "number", "comment", "operator", "punctuation", "whitespace", "error", "prose")
"""The small, stable taxonomy every leaf (and every generated token) is mapped onto."""

# Named nodes whose whole subtree is a string / comment (an interpolation inside resets it).
_STRING_NODES = frozenset({
    "string", "string_literal", "raw_string_literal", "interpreted_string_literal", "template_string", "char_literal",
    "character_literal", "rune_literal", "regex", "jsx_text", "text_block", "string_content", "string_fragment",
    "string_start", "string_end", "escape_sequence", "multiline_string_fragment", "interpreted_string_literal_content",
    "raw_string_literal_content",
})
_RESET_NODES = frozenset({"interpolation", "template_substitution", "string_interpolation"})
_NUMBER_NODES = frozenset({
    "integer", "float", "number", "int_literal", "float_literal", "imaginary_literal", "integer_literal",
    "decimal_integer_literal", "hex_integer_literal", "octal_integer_literal", "binary_integer_literal",
    "decimal_floating_point_literal", "hex_floating_point_literal",
})
_KEYWORD_NODES = frozenset({
    "true", "false", "none", "null", "null_literal", "nil", "this", "super", "self", "primitive_type",
    "predefined_type", "void_type", "boolean_type", "integral_type", "floating_point_type", "undefined",
    "mutable_specifier", "crate", "boolean_literal", "unit_type", "never_type", "this_type",
})
_PUNCTUATION = frozenset({
    "(", ")", "[", "]", "{", "}", ",", ";", ":", ".", "::", '"', "'", "`", '"""', "#", "${", "\\{", "{|", "|}", "@",
    "\\", "</", "/>", "//", "/*", "*/",
})
_CATEGORY_CACHE: dict[tuple[str, bool, str | None], str] = {}


def leaf_category(node_type: str, is_named: bool, context: str | None = None) -> str:
    """The :data:`TOKEN_TYPES` entry of a leaf of type ``node_type`` inside ``context`` (string/comment/None)."""
    key = (node_type, is_named, context)
    cat = _CATEGORY_CACHE.get(key)
    if cat is None:
        cat = _CATEGORY_CACHE[key] = _categorise(node_type, is_named, context)
    return cat


def _categorise(node_type: str, is_named: bool, context: str | None) -> str:
    if context is not None:
        return context
    if node_type == "ERROR":
        return "error"
    if is_named:
        if "comment" in node_type:
            return "comment"
        if node_type in _STRING_NODES:
            return "string"
        if node_type in _NUMBER_NODES:
            return "number"
        if node_type in _KEYWORD_NODES:
            return "keyword"
        if "identifier" in node_type:
            return "identifier"
        return _by_text(node_type)
    if node_type in _PUNCTUATION:
        return "punctuation"
    return "keyword" if any(c.isalpha() for c in node_type) else "operator"


def _by_text(node_type: str) -> str:
    """Fallback for named leaves outside the lists above (metavariables, shebangs, ...)."""
    if node_type.endswith(("_specifier", "_modifier")):
        return "keyword"
    if node_type in {"hash_bang_line", "shebang"}:
        return "comment"
    if node_type == "ellipsis":
        return "operator"
    return "identifier"


def _context(node: Any, outer: str | None) -> str | None:
    if not node.is_named:
        return outer
    t = node.type
    if t in _RESET_NODES:
        return None
    if t in _STRING_NODES:
        return "string"
    if "comment" in t:
        return "comment"
    return outer


def leaf_spans(tree: Any, start_byte: int = 0, end_byte: int | None = None) -> tuple[list[int], list[int], list[str], list[str]]:
    """The non-empty leaves of ``tree`` that overlap ``[start_byte, end_byte)``, in order.

    Returns parallel lists ``(starts, ends, node_types, categories)``: byte offsets, the raw
    tree-sitter node type (``identifier``, ``string_content``, ``def``, ``ERROR``...) and its
    :data:`TOKEN_TYPES` category, which takes the enclosing string or comment into account
    (a leaf inside ``"..."`` is a string, inside ``${...}`` it is itself again).
    Subtrees that end before ``start_byte`` are skipped without being visited.
    """
    hi = tree.root_node.end_byte if end_byte is None else end_byte
    starts: list[int] = []
    ends: list[int] = []
    types: list[str] = []
    cats: list[str] = []
    cursor = tree.walk()
    contexts: list[str | None] = [None]
    while True:
        node = cursor.node
        s, e = node.start_byte, node.end_byte
        if e > start_byte and s < hi:
            if node.child_count == 0:
                if e > s:
                    starts.append(s)
                    ends.append(e)
                    types.append(node.type)
                    cats.append(leaf_category(node.type, node.is_named, contexts[-1]))
            else:
                ctx = _context(node, contexts[-1])
                if cursor.goto_first_child_for_byte(start_byte) is not None:
                    contexts.append(ctx)
                    continue
        elif s >= hi:
            # every later node starts at or after hi too: climb out
            if not cursor.goto_parent():
                break
            contexts.pop()
        while not cursor.goto_next_sibling():
            if not cursor.goto_parent():
                return starts, ends, types, cats
            contexts.pop()
    return starts, ends, types, cats


def enclosing_category(tree: Any, offset: int) -> tuple[str, str]:
    """``(node_type, category)`` of the smallest node around byte ``offset`` that no leaf covers.

    Some grammars leave text outside every leaf (the body of a Rust ``// comment``); it takes
    its category from the enclosing string or comment, else it is ``error``.
    """
    node = tree.root_node.descendant_for_byte_range(offset, offset + 1)
    chain = []
    while node is not None:
        chain.append(node)
        node = node.parent
    context: str | None = None
    for n in reversed(chain):
        context = _context(n, context)
    inner = chain[0] if chain else None
    if inner is None:
        return "(uncovered)", "error"
    if inner.type == "ERROR" or inner.has_error and context is None:
        return inner.type, "error"
    return inner.type, context or "error"
