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
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from logmine.code import (
    GRAMMARS,
    SUPPORTED_LANGUAGES,
    detect_language,
    detect_language_tree,
    enclosing_category,
    error_count,
    leaf_spans,
    parse,
    resolve_language_source,
)
from logmine.language import normalise_language
from logmine.prompt_syntax import END_SENTINELS, FILE_SEPARATORS, FIM_MIDDLE_SENTINELS, FIM_PREFIX_SENTINELS, FIM_SUFFIX_SENTINELS, HOLES

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
    """record | extension | prompt | detected | fence | unsupported | none | prose."""
    parse_error: bool = False
    """The parse had ERROR or MISSING nodes (the labels are still the leaves')."""


def label_tokens(
    tokens: Sequence[str],
    prefix: str | None,
    kind: str | None,
    language: str | None,
    file_path: str | None,
    prompt: str | None = None,
    suffix: str | None = None,
) -> Labels:
    """Label ``tokens`` (which join up to a prefix of the generated text) for one request.

    Without a ``prefix``, the code before the cursor (and a file name or fence language) is
    taken from the raw ``prompt`` when it is a fill-in-the-middle or fenced-code prompt.
    A response that opens with a code fence is read as Markdown whatever its kind.
    """
    text = "".join(tokens)
    fenced = text.lstrip().startswith(("```", "~~~")) or (kind not in CODE_KINDS and ("```" in text or "~~~" in text))
    if kind == "chat" or fenced:
        return _label_markdown(tokens, text, language, file_path)
    ctx = prompt_context(prompt) if prefix is None and prompt else None
    if ctx is not None:
        prefix, file_path, suffix = ctx.prefix, file_path or ctx.file_path, suffix or ctx.suffix
    prefix = prefix or ""
    lang, source, tree = _choose_language(language, file_path, ctx, prefix + text, suffix or "", kind)
    if lang is None:
        fallback = ("error", UNPARSED) if source == "unsupported" or kind in CODE_KINDS else ("prose", "prose")
        types, nodes = _constant(tokens, *fallback)
        return Labels(types, nodes, None, source if fallback[0] == "error" else "prose")
    code = (prefix + text).encode("utf-8")
    lo = len(code) - len(text.encode("utf-8"))
    tree = tree or parse(code, lang)
    types, nodes = _assign(tokens, _byte_starts(tokens, lo), tree, leaf_spans(tree, lo))
    return Labels(types, nodes, lang, source, tree.root_node.has_error)


def _choose_language(
    language: str | None, file_path: str | None, ctx: PromptContext | None, code: str, suffix: str, kind: str | None
) -> tuple[str | None, str, Any | None]:
    """``(language, source, tree)``: the record's, the extension's, the prompt fence's, else detected
    from the code (with the suffix after the cursor, and for code kinds the cleanest parse)."""
    lang, source = resolve_language_source(language, file_path, None)
    if source != "none":
        return lang, source, None
    fence = normalise_language(ctx.language) if ctx else None
    if fence in GRAMMARS:
        return fence, "prompt", None
    lang, tree = detect_language_tree(code)
    if lang is None and suffix:
        lang = detect_language(code + suffix)
    if lang is None and kind in CODE_KINDS:
        lang = _cleanest_parse(code)
    return (lang, "detected", tree) if lang else (None, "none", None)


def _cleanest_parse(code: str, max_errors: int = 0) -> str | None:
    """The first grammar that parses a snippet with at most ``max_errors`` errors (none by default)."""
    sample = code[:2000]
    best = min(((_errors(sample, lang), i, lang) for i, lang in enumerate(SUPPORTED_LANGUAGES) if lang != "tsx"), default=None)
    return best[2] if best is not None and best[0] <= max_errors else None


def _errors(code: str, language: str) -> int:
    root = parse(code, language).root_node
    return 0 if not root.has_error else error_count(root)


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


# -- code context from the prompt -------------------------------------------------------------------
_FIM_PREFIX = FIM_PREFIX_SENTINELS
_FIM_OTHER = (*FIM_SUFFIX_SENTINELS, *FIM_MIDDLE_SENTINELS, *FILE_SEPARATORS, *END_SENTINELS)
_PATH_RE = re.compile(r"(?:<\|file_sep\|>|<file_sep>|<filename>|<\|file_name\|>)[ \t]*([^\n<]+?)[ \t]*\n")
_FIM_SUFFIX = FIM_SUFFIX_SENTINELS
_HOLES = HOLES
_OPEN_FENCE_RE = re.compile(r"^[ \t]*```[ \t]*([\w+#.-]*)[^\n]*\n", re.M)


@dataclass(frozen=True, slots=True)
class PromptContext:
    """Code context recovered from a raw prompt when the log has no prefix (Continue, OTel)."""

    prefix: str | None
    """The code before the cursor (a FIM prompt's prefix part, or an unclosed fenced block)."""
    file_path: str | None
    """A file path named in the prompt (``<file_sep>path``), for the extension."""
    language: str | None
    """The language of the fence the prefix came from."""
    suffix: str | None = None
    """The code after the cursor, when the prompt has it (used to detect the language)."""


def prompt_context(prompt: str | None) -> PromptContext:
    """Find the code before the cursor in a FIM prompt (StarCoder, Qwen, DeepSeek, CodeLlama, Codestral)."""
    if not prompt:
        return PromptContext(None, None, None)
    best = max(((prompt.rfind(m), m) for m in _FIM_PREFIX), key=lambda pm: pm[0])
    if best[0] >= 0:
        start = best[0] + len(best[1])
        ends = [i for i in (prompt.find(m, start) for m in _FIM_OTHER) if i >= 0]
        prefix = prompt[start:min(ends) if ends else len(prompt)]
        if best[1] == "<PRE>" and prefix.startswith(" "):
            prefix = prefix[1:]
        paths = _PATH_RE.findall(prompt[:best[0]])
        return PromptContext(prefix, paths[-1] if paths else None, None, _fim_suffix(prompt))
    for hole in _HOLES:  # "complete the code at <HOLE>" prompts: the code before the hole
        at = prompt.find(hole)
        if at >= 0:
            fences = list(_OPEN_FENCE_RE.finditer(prompt, 0, at))
            start = fences[-1] if fences else None
            after = prompt[at + len(hole):]
            close = after.find("```")
            return PromptContext(prompt[start.end() if start else 0:at], None, start.group(1) or None if start else None,
                                 after[:close] if close >= 0 else after)
    fences = list(_OPEN_FENCE_RE.finditer(prompt))
    if len(fences) % 2 == 1:  # an unclosed block at the end: the code the answer continues
        last = fences[-1]
        return PromptContext(prompt[last.end():], None, last.group(1) or None)
    return PromptContext(None, None, None)


def _fim_suffix(prompt: str) -> str | None:
    found = [(prompt.find(m), m) for m in _FIM_SUFFIX]
    at, marker = max(found, key=lambda pm: pm[0])
    if at < 0:
        return None
    start = at + len(marker)
    ends = [i for i in (prompt.find(m, start) for m in _FIM_PREFIX + _FIM_OTHER) if i >= 0]
    return prompt[start:min(ends) if ends else len(prompt)]


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
