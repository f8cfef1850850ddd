"""Context trimming for code slots: keep the most useful top-level units within a token budget.

A code context (the prefix before the cursor, the suffix after it, or declarations) is split
into top-level units from a tree-sitter parse (imports, classes, functions, statements). Each
unit gets::

    score = 0.7 * importance + 0.3 * recency

- importance: the unit's kind (imports and definitions over loose statements), whether it
  encloses the cursor (always kept), and whether it defines a name that the code near the
  cursor uses;
- recency: least-recently-used decay over the files recently edited or opened (from the
  ``events`` table, before the request), times the unit's proximity to the cursor.

Units are taken best score first while they fit the budget, then emitted in source order.
The pure core is :func:`trim`; :func:`evaluate` measures F1 of kept units against the units
the logged completion actually references, beside the "keep the nearest lines" baseline.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from logmine.code import GRAMMARS, parse

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
TOKEN = re.compile(r"\w+|[^\w\s]")

# Node kinds per class of unit, across the supported grammars.
IMPORT_KINDS = frozenset({
    "import_statement", "import_from_statement", "future_import_statement", "import_declaration",
    "use_declaration", "extern_crate_declaration", "package_clause", "package_declaration",
})
DEFINITION_KINDS = frozenset({
    "function_definition", "class_definition", "decorated_definition", "function_declaration",
    "method_declaration", "class_declaration", "interface_declaration", "enum_declaration",
    "type_alias_declaration", "lexical_declaration", "variable_declaration", "export_statement",
    "function_item", "struct_item", "enum_item", "impl_item", "trait_item", "const_item", "static_item",
    "mod_item", "type_item", "macro_definition", "type_declaration", "const_declaration", "var_declaration",
    "record_declaration", "generator_function_declaration", "abstract_class_declaration",
})
KIND_WEIGHT = {"import": 0.5, "definition": 0.4, "statement": 0.2, "comment": 0.05}


@dataclass(frozen=True)
class TrimConfig:
    """Options of context trimming."""

    budget_tokens: int = 256
    """Token budget for the trimmed context (approximate tokens: words and punctuation)."""
    ast_weight: float = 0.7
    """Weight of AST importance in the score (recency gets the rest)."""
    near_lines: int = 12
    """Lines before the cursor whose identifiers count as 'used near the cursor'."""
    lru_decay: float = 0.5
    """Recency factor per step back in the least-recently-used file list."""
    min_score: float = 0.45
    """Units scoring below this are not kept even when the budget has room."""


@dataclass(frozen=True)
class Unit:
    """A top-level unit of a code context."""

    start: int  # byte offsets into the context
    end: int
    kind: str  # import | definition | statement | comment
    node_type: str
    defines: frozenset[str]
    tokens: int


@dataclass
class TrimResult:
    """The trimmed text and which units were kept."""

    text: str
    units: list[Unit]
    kept: list[int] = field(default_factory=list)
    path: set[int] = field(default_factory=set)


def count_tokens(text: str) -> int:
    return len(TOKEN.findall(text))


CONTAINER_KINDS = frozenset({
    "class_definition", "decorated_definition", "class_declaration", "interface_declaration", "impl_item",
    "trait_item", "mod_item", "abstract_class_declaration", "export_statement", "enum_declaration",
})
BODY_KINDS = frozenset({"block", "class_body", "declaration_list", "interface_body", "enum_body", "field_declaration_list"})


class ContextParser:
    """Parses contexts with tree-sitter, reusing each file's previous tree (incremental parsing).

    Autocomplete logs hold many requests per file as the user types: consecutive contexts differ
    by a few bytes, and tree-sitter re-parses only the edited region when given the old tree.
    """

    def __init__(self, max_files: int = 256) -> None:
        self.trees: dict[tuple[str, str], tuple[bytes, object]] = {}
        self.max_files = max_files

    def parse(self, data: bytes, language: str, key: str | None = None) -> object:
        from logmine.code import get_parser

        parser = get_parser(language)
        if key is None:
            return parser.parse(data)
        cache_key = (language, key)
        old = self.trees.pop(cache_key, None)
        if old is None:
            tree = parser.parse(data)
        else:
            tree = parser.parse(data, _edit(old[1], old[0], data))
        self.trees[cache_key] = (data, tree)
        if len(self.trees) > self.max_files:
            self.trees.pop(next(iter(self.trees)))
        return tree


def _edit(tree, old: bytes, new: bytes):  # noqa: ANN001, ANN202 - tree-sitter types
    """Tell ``tree`` about the single edit that turns ``old`` into ``new`` (common prefix/suffix)."""
    from tree_sitter import Point

    n = min(len(old), len(new))
    start = 0
    step = 4096
    while start < n and old[start : start + step] == new[start : start + step]:
        start += step
    start = min(start, n)
    while start > 0 and old[:start] != new[:start]:
        start -= 1
    while start < n and old[start] == new[start]:
        start += 1
    tail = 0
    while tail < n - start and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]:
        tail += 1
    old_end, new_end = len(old) - tail, len(new) - tail

    def point(data: bytes, pos: int) -> Point:
        row = data.count(b"\n", 0, pos)
        return Point(row, pos - (data.rfind(b"\n", 0, pos) + 1))

    tree.edit(start, old_end, new_end, point(old, start), point(old, old_end), point(new, new_end))
    return tree


def units_of(code: str | bytes, language: str, parser: ContextParser | None = None, key: str | None = None) -> tuple[list[Unit], set[int]]:
    """Units of a prefix context and the indices on the cursor's path (always kept).

    Top-level children of the parse, except that a container enclosing the cursor (a class,
    an impl block) is opened: its header joins the cursor path and its members become units.
    An unsupported language falls back to one unit per line.
    """
    data = code.encode("utf-8") if isinstance(code, str) else code
    if language not in GRAMMARS:
        units = _line_units(data)
        return units, {len(units) - 1} if units else set()
    tree = (parser or _DEFAULT_PARSER).parse(data, language, key)
    units: list[Unit] = []
    path: set[int] = set()
    nodes = list(tree.root_node.children)
    while nodes:
        for node in nodes[:-1]:
            units.append(_unit(node, data))
        last = nodes[-1]
        body = _container_body(last)
        if body is None:
            path.add(len(units))
            units.append(_unit(last, data))
            break
        path.add(len(units))
        header = data[last.start_byte : body.start_byte]
        units.append(Unit(last.start_byte, body.start_byte, "definition", last.type, _defined_names(last, header), count_tokens(header.decode("utf-8", "replace"))))
        nodes = [c for c in body.children if c.is_named or c.type not in {"{", "}", ":"}]
        if not nodes:
            break
    return units, path


def _container_body(node):  # noqa: ANN001, ANN202
    inner = node
    while inner.type in {"decorated_definition", "export_statement"} and inner.named_child_count:
        inner = inner.named_children[-1]
    if inner.type not in CONTAINER_KINDS:
        return None
    body = inner.child_by_field_name("body")
    return body if body is not None and body.type in BODY_KINDS else None


def _unit(node, data: bytes) -> Unit:  # noqa: ANN001
    text = data[node.start_byte : node.end_byte]
    return Unit(node.start_byte, node.end_byte, _classify(node.type), node.type, _defined_names(node, text),
                count_tokens(text.decode("utf-8", "replace")))


def _classify(node_type: str) -> str:
    if node_type in IMPORT_KINDS:
        return "import"
    if node_type in DEFINITION_KINDS:
        return "definition"
    if "comment" in node_type:
        return "comment"
    return "statement"


ASSIGN_KINDS = frozenset({"expression_statement", "lexical_declaration", "variable_declaration", "const_declaration",
                          "var_declaration", "short_var_declaration", "assignment", "let_declaration"})
_STRINGS_COMMENTS = re.compile(r"\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'|`[^`]*`|#[^\n]*|//[^\n]*|/\*[\s\S]*?\*/")
_ASSIGN = re.compile(r"^([^=\n]*?)(?<![=!<>:+\-*/%&|^])=(?!=)")
_IMPORT_NAMES = re.compile(r"\bimport\s+(.+)$|^\s*use\s+(.+?);", re.S)


def identifiers(text: str) -> set[str]:
    """Identifiers of code text, outside strings and comments."""
    return set(IDENT.findall(_STRINGS_COMMENTS.sub(" ", text)))


def _defined_names(node, text: bytes) -> frozenset[str]:  # noqa: ANN001 - a tree-sitter node
    """Names a unit defines: its ``name`` field(s), names an import binds, left sides of assignments,
    and the members of a class-like body."""
    names: set[str] = set()
    inner = node
    while True:
        name = inner.child_by_field_name("name")
        if name is not None:
            names.add(name.text.decode("utf-8", "replace"))
        if inner.type in {"decorated_definition", "export_statement"} and inner.named_child_count:
            inner = inner.named_children[-1]
            continue
        break
    decoded = text.decode("utf-8", "replace")
    if node.type in IMPORT_KINDS:
        names |= _import_bindings(decoded)
    elif inner.type in ASSIGN_KINDS:
        m = _ASSIGN.match(_STRINGS_COMMENTS.sub(" ", decoded))
        if m:
            names |= set(IDENT.findall(m.group(1))) - {"const", "let", "var", "mut", "pub", "static", "final"}
    body = _container_body(node)
    for child in body.named_children if body is not None else ():
        sub = child
        while sub.type in {"decorated_definition", "export_statement"} and sub.named_child_count:
            sub = sub.named_children[-1]
        n = sub.child_by_field_name("name")
        if n is not None:
            names.add(n.text.decode("utf-8", "replace"))
    return frozenset(names)


def _import_bindings(text: str) -> set[str]:
    """Names bound by an import/use statement: aliases, imported names, a module's first component."""
    text = _STRINGS_COMMENTS.sub(" ", text) if "from" in text or "use" in text else text
    m = _IMPORT_NAMES.search(text)
    if not m:
        return set()
    body = (m.group(1) or m.group(2) or "").replace("(", " ").replace(")", " ").replace("{", ",").replace("}", ",")
    out = set()
    for part in body.split(","):
        words = IDENT.findall(part.split(" from ")[0])
        if not words:
            continue
        if " as " in part:
            out.add(words[-1])
        elif text.lstrip().startswith("import ") and "." in part and "from" not in text:
            out.add(words[0])
        else:
            out.add(words[-1])
    return out


_DEFAULT_PARSER = ContextParser()


def _line_units(data: bytes) -> list[Unit]:
    out, pos = [], 0
    for line in data.splitlines(keepends=True):
        text = line.decode("utf-8", "replace")
        out.append(Unit(pos, pos + len(line), "statement", "line", frozenset(), count_tokens(text)))
        pos += len(line)
    return out


def trim(
    code: str,
    language: str,
    config: TrimConfig | None = None,
    recent_files: Sequence[str] = (),
    file_path: str | None = None,
    parser: ContextParser | None = None,
) -> TrimResult:
    """Keep the best units of a prefix-style context (cursor at the end) within the budget.

    The cursor's path is always kept; other units are kept best score first while they fit
    and score at least ``config.min_score`` (a unit nothing near the cursor points to is noise).
    """
    config = config or TrimConfig()
    data = code.encode("utf-8")
    units, path = units_of(data, language, parser, file_path)
    if not units:
        return TrimResult(code, units, [])
    scores = score_units(data, units, path, config, recent_files, file_path)
    kept, used = set(path), sum(units[i].tokens for i in path)
    for i in sorted((i for i in range(len(units)) if i not in path), key=lambda i: -scores[i]):
        if scores[i] < config.min_score:
            break
        if used + units[i].tokens <= config.budget_tokens:
            kept.add(i)
            used += units[i].tokens
    order = sorted(kept)
    text = b"\n".join(data[units[i].start : units[i].end] for i in order).decode("utf-8", "replace")
    return TrimResult(text, units, order, path)


def score_units(data: bytes, units: list[Unit], path: set[int], config: TrimConfig, recent_files: Sequence[str],
                file_path: str | None) -> list[float]:
    """0.7 x importance + 0.3 x recency for each unit."""
    cursor = units[max(path)]
    near_start = max(cursor.start, _nth_line_back(data, cursor.end, config.near_lines))
    used_near = identifiers(data[near_start : cursor.end].decode("utf-8", "replace"))
    file_recency = _lru_recency(recent_files, file_path, config.lru_decay)
    n = len(units)
    scores = []
    for i, unit in enumerate(units):
        if i in path:
            scores.append(1.0)
            continue
        importance = KIND_WEIGHT[unit.kind] * 0.4
        if unit.defines & used_near:
            importance += 0.6
        proximity = 1.0 / (1.0 + (n - 1 - i) / 8.0)
        scores.append(config.ast_weight * importance + (1 - config.ast_weight) * file_recency * proximity)
    return scores


def _nth_line_back(data: bytes, end: int, lines: int) -> int:
    pos = end
    for _ in range(lines):
        pos = data.rfind(b"\n", 0, pos - 1) if pos > 0 else -1
        if pos < 0:
            return 0
    return pos


def _lru_recency(recent_files: Sequence[str], file_path: str | None, decay: float) -> float:
    """1.0 for the most recently used file, ``decay`` for the one before it, and so on."""
    if not file_path:
        return 1.0
    try:
        rank = list(reversed(recent_files)).index(file_path)
    except ValueError:
        return decay ** len(recent_files) if recent_files else 1.0
    return decay**rank


def nearest_lines(code: str, budget_tokens: int) -> str:
    """The baseline: the lines just before the cursor that fit the budget."""
    lines = code.splitlines(keepends=True)
    kept, used = [], 0
    for line in reversed(lines):
        t = count_tokens(line)
        if used + t > budget_tokens:
            break
        kept.append(line)
        used += t
    return "".join(reversed(kept))


def referenced_units(units: list[Unit], path: set[int], completion: str) -> set[int]:
    """Units (off the cursor's path) defining a name that the completion uses."""
    used = identifiers(completion)
    return {i for i, u in enumerate(units) if i not in path and u.defines & used}


def f1(kept: set[int], truth: set[int]) -> float | None:
    """F1 of kept units against the referenced ones; None when neither has any unit."""
    if not kept and not truth:
        return None
    tp = len(kept & truth)
    if tp == 0:
        return 0.0
    p, r = tp / len(kept), tp / len(truth)
    return 2 * p * r / (p + r)


def evaluate(code: str, language: str, completion: str, config: TrimConfig | None = None,
             parser: ContextParser | None = None, file_path: str | None = None) -> tuple[float | None, float | None]:
    """``(f1_trim, f1_nearest_lines)`` on one logged context, the cursor's path excluded from both."""
    config = config or TrimConfig()
    result = trim(code, language, config, parser=parser, file_path=file_path)
    truth = referenced_units(result.units, result.path, completion)
    if not truth:
        return None, None
    kept = set(result.kept) - result.path
    base_text = nearest_lines(code, config.budget_tokens)
    base_start = len(code.encode("utf-8")) - len(base_text.encode("utf-8"))
    base = {i for i, u in enumerate(result.units) if i not in result.path and u.end > base_start}
    return f1(kept, truth), f1(base, truth)
