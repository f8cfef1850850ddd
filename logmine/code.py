"""Code parsing shared by the stages: tree-sitter parsers per language and language detection.

Grammars come from the per-language wheels (tree-sitter-python, -java, -javascript,
-typescript, -go, -rust), which work offline. Parsers are cached per process.
"""

from __future__ import annotations

import functools
import importlib
import re
from typing import Any

from logmine.formats._base import language_from_path, normalise_language

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
    sample = code[:max_chars]
    scores = {lang: len(rx.findall(sample)) for lang, rx in _CUES.items()}
    candidates = [lang for lang, score in sorted(scores.items(), key=lambda kv: -kv[1]) if score > 0][:3]
    if not candidates:
        return None
    best, best_errors = None, None
    for lang in candidates:
        errors = _error_count(parse(sample, lang).root_node)
        key = (errors, -scores[lang])
        if best_errors is None or key < best_errors:
            best, best_errors = lang, key
    return best


def _error_count(node: Any, limit: int = 50) -> int:
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
