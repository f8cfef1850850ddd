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


def count_tokens(text: str) -> int:
    return len(TOKEN.findall(text))


def units_of(code: str, language: str) -> list[Unit]:
    """Top-level units of ``code`` from a tree-sitter parse; unsupported language -> line units."""
    data = code.encode("utf-8")
    if language not in GRAMMARS:
        return _line_units(data)
    root = parse(data, language).root_node
    out = []
    for node in root.children:
        kind = _classify(node.type)
        text = data[node.start_byte : node.end_byte]
        out.append(Unit(node.start_byte, node.end_byte, kind, node.type, _defined_names(node, text), count_tokens(text.decode("utf-8", "replace"))))
    return out


def _classify(node_type: str) -> str:
    if node_type in IMPORT_KINDS:
        return "import"
    if node_type in DEFINITION_KINDS:
        return "definition"
    if "comment" in node_type:
        return "comment"
    return "statement"


def _defined_names(node, text: bytes) -> frozenset[str]:
    """Names a unit defines: its ``name`` field, and for imports / assignments the bound identifiers."""
    names = set()
    name = node.child_by_field_name("name")
    if name is not None:
        names.add(name.text.decode("utf-8", "replace"))
    inner = node
    while inner.type in {"decorated_definition", "export_statement"} and inner.named_child_count:
        inner = inner.named_children[-1]
        sub = inner.child_by_field_name("name")
        if sub is not None:
            names.add(sub.text.decode("utf-8", "replace"))
    if node.type in IMPORT_KINDS or node.type in {"expression_statement", "lexical_declaration", "variable_declaration",
                                                  "const_declaration", "var_declaration", "short_var_declaration"}:
        head = text.split(b"=", 1)[0] if node.type not in IMPORT_KINDS else text
        names.update(IDENT.findall(head.decode("utf-8", "replace")))
    if inner.type in {"class_definition", "class_declaration", "impl_item", "struct_item"}:
        body = inner.child_by_field_name("body")
        for child in body.named_children if body is not None else ():
            sub = child.child_by_field_name("name")
            if sub is None and child.type == "decorated_definition" and child.named_child_count:
                sub = child.named_children[-1].child_by_field_name("name")
            if sub is not None:
                names.add(sub.text.decode("utf-8", "replace"))
    return frozenset(names)


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
) -> TrimResult:
    """Keep the best units of a prefix-style context (cursor at the end) within the budget."""
    config = config or TrimConfig()
    units = units_of(code, language)
    if not units:
        return TrimResult(code, units, [])
    data = code.encode("utf-8")
    scores = score_units(data, units, config, recent_files, file_path)
    cursor = len(units) - 1
    kept, used = {cursor}, units[cursor].tokens
    for i in sorted(range(len(units) - 1), key=lambda i: -scores[i]):
        if used + units[i].tokens <= config.budget_tokens:
            kept.add(i)
            used += units[i].tokens
    order = sorted(kept)
    text = b"\n".join(data[units[i].start : units[i].end] for i in order).decode("utf-8", "replace")
    return TrimResult(text, units, order)


def score_units(data: bytes, units: list[Unit], config: TrimConfig, recent_files: Sequence[str], file_path: str | None) -> list[float]:
    """0.7 x importance + 0.3 x recency for each unit (the last unit encloses the cursor)."""
    cursor = units[-1]
    near_start = _nth_line_back(data, cursor.end, config.near_lines)
    used_near = set(IDENT.findall(data[near_start : cursor.end].decode("utf-8", "replace")))
    file_recency = _lru_recency(recent_files, file_path, config.lru_decay)
    n = len(units)
    scores = []
    for i, unit in enumerate(units):
        importance = KIND_WEIGHT[unit.kind]
        if i == n - 1:
            importance = 1.0
        elif unit.defines & used_near:
            importance = min(1.0, importance + 0.5)
        proximity = 1.0 / (1.0 + (n - 1 - i) / 8.0)
        recency = file_recency * proximity
        scores.append(config.ast_weight * importance + (1 - config.ast_weight) * recency)
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


def referenced_units(units: list[Unit], completion: str) -> set[int]:
    """Units (other than the cursor's) defining a name that the completion uses."""
    used = set(IDENT.findall(completion))
    return {i for i, u in enumerate(units[:-1]) if u.defines & used}


def f1(kept: set[int], truth: set[int]) -> float | None:
    """F1 of kept units against the referenced ones; None when neither has any unit."""
    if not kept and not truth:
        return None
    tp = len(kept & truth)
    if tp == 0:
        return 0.0
    p, r = tp / len(kept), tp / len(truth)
    return 2 * p * r / (p + r)


def evaluate(code: str, language: str, completion: str, config: TrimConfig | None = None) -> tuple[float | None, float | None]:
    """``(f1_trim, f1_nearest_lines)`` on one logged context, cursor unit excluded from both."""
    config = config or TrimConfig()
    result = trim(code, language, config)
    truth = referenced_units(result.units, completion)
    if not truth:
        return None, None
    kept = set(result.kept) - {len(result.units) - 1}
    base_text = nearest_lines(code, config.budget_tokens)
    base_start = len(code.encode("utf-8")) - len(base_text.encode("utf-8"))
    base = {i for i, u in enumerate(result.units[:-1]) if u.end > base_start}
    return f1(kept, truth), f1(base, truth)
