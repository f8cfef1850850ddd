"""Token types from a real parse: each generated token gets the tree-sitter leaf it falls in.

Code (a completion or an edit) is parsed as ``prefix + generated text`` in the request's
language (the record's, else the file extension's, else detected from the code). A token is
labelled by the leaf under its first non-whitespace byte: the raw node type is kept
(``string_content``, ``identifier``, ``def``...) and mapped onto :data:`logmine.code.TOKEN_TYPES`.
Chat answers are Markdown: fenced code blocks are parsed in the fence's language, the text
around them is ``prose``. Code in a language without a grammar is ``error`` / ``unparsed``.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from logmine.code import GRAMMARS, detect_language, enclosing_category, leaf_spans, parse, resolve_language_source
from logmine.formats._base import normalise_language

CODE_KINDS = frozenset({"completion", "edit"})
"""Request kinds whose text is code even when its language cannot be told."""
UNPARSED = "unparsed"
"""Node type of tokens in code that has no grammar here (category ``error``)."""


@dataclass(frozen=True, slots=True)
class Labels:
    """Each token's category and raw node type, and how the language was decided."""

    token_types: list[str]
    node_types: list[str]
    language: str | None
    """The grammar used (for chat: the first fenced block's), None when nothing was parsed."""
    language_source: str
    """record | extension | detected | fence | unsupported | none | prose."""
    parse_error: bool = False
    """The parse had ERROR or MISSING nodes (the labels are still the leaves')."""


def label_tokens(
    tokens: Sequence[str],
    prefix: str | None,
    kind: str | None,
    language: str | None,
    file_path: str | None,
) -> Labels:
    """Label ``tokens`` (which join up to a prefix of the generated text) for one request."""
    text = "".join(tokens)
    if kind not in CODE_KINDS and ("```" in text or "~~~" in text or kind == "chat"):
        return _label_markdown(tokens, text, language, file_path)
    prefix = prefix or ""
    lang, source = resolve_language_source(language, file_path, prefix[-4000:] + text)
    if lang is None:
        fallback = ("error", UNPARSED) if source == "unsupported" or kind in CODE_KINDS else ("prose", "prose")
        types, nodes = _constant(tokens, *fallback)
        return Labels(types, nodes, None, source if fallback[0] == "error" else "prose")
    code = (prefix + text).encode("utf-8")
    lo = len(code) - len(text.encode("utf-8"))
    tree = parse(code, lang)
    types, nodes = _assign(tokens, _byte_starts(tokens, lo), tree, leaf_spans(tree, lo))
    return Labels(types, nodes, lang, source, tree.root_node.has_error)


def _byte_starts(tokens: Sequence[str], base: int = 0) -> list[int]:
    starts = []
    pos = base
    for tok in tokens:
        starts.append(pos)
        pos += len(tok) if tok.isascii() else len(tok.encode("utf-8"))
    return starts


def _whitespace(tok: str) -> tuple[str, str]:
    return "whitespace", ("newline" if "\n" in tok else "whitespace")


def _constant(tokens: Sequence[str], category: str, node_type: str) -> tuple[list[str], list[str]]:
    types, nodes = [], []
    for tok in tokens:
        cat, node = _whitespace(tok) if tok.isspace() or not tok else (category, node_type)
        types.append(cat)
        nodes.append(node)
    return types, nodes


def _assign(
    tokens: Sequence[str], starts: Sequence[int], tree: Any, leaves: tuple[list[int], list[int], list[str], list[str]]
) -> tuple[list[str], list[str]]:
    """Each token's (category, node type): the leaf under its first non-whitespace byte."""
    lstarts, lends, ltypes, lcats = leaves
    types: list[str] = []
    nodes: list[str] = []
    for tok, start in zip(tokens, starts):
        stripped = tok.lstrip()
        if not stripped:
            cat, node = _whitespace(tok)
        else:
            lead = len(tok) - len(stripped)
            off = start + (lead if tok.isascii() else len(tok[:lead].encode("utf-8")))
            i = bisect.bisect_right(lstarts, off) - 1
            if i >= 0 and lends[i] > off:
                cat, node = lcats[i], ltypes[i]
            else:
                node, cat = enclosing_category(tree, off)
        types.append(cat)
        nodes.append(node)
    return types, nodes


# -- Markdown answers ----------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Block:
    start: int
    """Byte offset of the block's code in the generated text."""
    end: int
    code: str
    tag: str | None


def _fenced_blocks(text: str) -> list[_Block]:
    """The fenced code blocks of a Markdown text (an unclosed fence runs to the end)."""
    blocks: list[_Block] = []
    pos = 0  # byte offset of the current line
    fence: str | None = None
    tag: str | None = None
    body_start = 0
    body: list[str] = []
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if fence is None:
            if stripped.startswith(("```", "~~~")):
                marker = stripped[:3]
                fence = marker[0] * (len(stripped) - len(stripped.lstrip(marker[0])))
                tag = stripped[len(fence):].strip().split(" ", 1)[0] or None
                body_start, body = pos + len(line.encode("utf-8")), []
        elif stripped.startswith(fence) and not stripped[len(fence):].strip():
            blocks.append(_Block(body_start, pos, "".join(body), tag))
            fence = None
        else:
            body.append(line)
        pos += len(line.encode("utf-8"))
    if fence is not None:
        blocks.append(_Block(body_start, pos, "".join(body), tag))
    return blocks


def _block_language(block: _Block, language: str | None, file_path: str | None) -> tuple[str | None, str]:
    tag = normalise_language(block.tag)
    if tag in GRAMMARS:
        return tag, "fence"
    if tag:
        return None, "unsupported"
    lang, source = resolve_language_source(language, file_path, None)
    if lang is not None:
        return lang, source
    detected = detect_language(block.code)
    return (detected, "detected") if detected else (None, "none")


def _label_markdown(tokens: Sequence[str], text: str, language: str | None, file_path: str | None) -> Labels:
    types, nodes = _constant(tokens, "prose", "prose")
    starts = _byte_starts(tokens)
    first_lang: str | None = None
    source = "prose"
    has_error = False
    for block in _fenced_blocks(text):
        inside = [i for i, s in enumerate(starts) if block.start <= _first_visible(tokens[i], s) < block.end]
        if not inside:
            continue
        lang, lang_source = _block_language(block, language, file_path)
        if lang is None:
            for i in inside:
                if types[i] != "whitespace":
                    types[i], nodes[i] = "error", UNPARSED
            continue
        tree = parse(block.code, lang)
        has_error = has_error or tree.root_node.has_error
        sub_tokens = [tokens[i] for i in inside]
        sub_starts = [starts[i] - block.start for i in inside]
        sub_types, sub_nodes = _assign(sub_tokens, sub_starts, tree, leaf_spans(tree))
        for i, t, n in zip(inside, sub_types, sub_nodes):
            types[i], nodes[i] = t, n
        if first_lang is None:
            first_lang, source = lang, lang_source
    return Labels(types, nodes, first_lang, source, has_error)


def _first_visible(tok: str, start: int) -> int:
    lead = len(tok) - len(tok.lstrip())
    return start + len(tok[:lead].encode("utf-8"))
