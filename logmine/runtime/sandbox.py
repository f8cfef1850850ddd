"""Safe prompt rendering (the pack runtime's sandbox): pack templates are untrusted input, slot values are data.

Three layers keep a hostile pack from executing anything:

1. **An allow-list of template syntax.** A template is parsed once and every node of its
   syntax tree is checked: prompt templates need output of variables, literal text,
   ``{% if %}`` on variables and a few filters without arguments, nothing more. Attribute
   and item access, calls (``"{0.__class__}".format``), loops, ``range``, macros (recursion),
   arithmetic (``"a" * 10**9``), ``set``, imports and includes are refused before anything
   runs, with an :class:`UnsafeTemplateError` naming the construct.
2. **Jinja2's ImmutableSandboxedEnvironment** with ``StrictUndefined``: should anything slip
   past the allow-list, unsafe attributes and mutation are still blocked, and a missing slot
   is an error rather than an empty string.
3. **Bounded sizes.** Template sources and slot values have a size limit, so a render's time
   and memory are linear in its inputs.

Slot values are never parsed as templates: a value ``{{ 7*7 }}`` is rendered literally.
Compiled templates are kept in an LRU cache keyed by the blake2b hash of their source.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jinja2
from jinja2 import meta, nodes
from jinja2.sandbox import ImmutableSandboxedEnvironment

from logmine.errors import RenderError, UnsafeTemplateError

# Expression and statement nodes a prompt template may contain.
_ALLOWED_NODES: tuple[type[nodes.Node], ...] = (
    nodes.Template, nodes.Output, nodes.TemplateData, nodes.Name, nodes.Const,
    nodes.If, nodes.CondExpr, nodes.Not, nodes.And, nodes.Or, nodes.Compare, nodes.Operand,
    nodes.Filter, nodes.Test,
)
ALLOWED_FILTERS = frozenset({"trim", "lower", "upper", "default", "d", "string"})
ALLOWED_TESTS = frozenset({"defined", "undefined", "none", "string", "number"})
ALLOWED_COMPARISONS = frozenset({"eq", "ne", "in", "notin"})
SLOT_TYPES = (str, int, float, bool, type(None))


@dataclass(frozen=True)
class RenderLimits:
    """Size limits that bound a render's time and memory."""

    max_template_chars: int = 200_000
    """Longest template source accepted."""
    max_value_chars: int = 1_000_000
    """Longest total of all slot values of one render."""
    max_filter_const_chars: int = 1_000
    """Longest constant argument of a filter (``default('...')``)."""


@dataclass(frozen=True)
class CompiledTemplate:
    """A checked, compiled template and the slot names it needs."""

    key: str
    name: str
    template: jinja2.Template
    variables: frozenset[str]


def template_key(source: str) -> str:
    """The cache key of a template source: ``b2:`` + blake2b of its UTF-8 bytes."""
    return "b2:" + hashlib.blake2b(source.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


class SafeRenderer:
    """Check, compile and render templates; compiled templates live in an LRU cache."""

    def __init__(self, limits: RenderLimits | None = None, cache_size: int = 4096) -> None:
        self.limits = limits or RenderLimits()
        self.cache_size = cache_size
        self.env = ImmutableSandboxedEnvironment(
            undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True, cache_size=0,
        )
        self._cache: OrderedDict[str, CompiledTemplate] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def compile(self, source: str, name: str = "<template>") -> CompiledTemplate:
        """The compiled template for ``source`` (from the cache when seen before)."""
        key = template_key(source)
        with self._lock:
            found = self._cache.get(key)
            if found is not None:
                self._cache.move_to_end(key)
                self.hits += 1
                return found
        compiled = self._compile(source, name, key)
        with self._lock:
            self.misses += 1
            self._cache[key] = compiled
            while len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return compiled

    def _compile(self, source: str, name: str, key: str) -> CompiledTemplate:
        if not isinstance(source, str):
            raise UnsafeTemplateError(name, "the template source is not a string")
        if len(source) > self.limits.max_template_chars:
            raise UnsafeTemplateError(name, f"the source has {len(source):,} characters, over the limit of {self.limits.max_template_chars:,}")
        try:
            tree = self.env.parse(source)
        except jinja2.TemplateSyntaxError as exc:
            raise UnsafeTemplateError(name, f"syntax error at line {exc.lineno}: {exc.message}") from exc
        except RecursionError as exc:
            raise UnsafeTemplateError(name, "the template nests too deeply to parse") from exc
        self._check(tree, name)
        try:
            template = self.env.from_string(tree)
        except RecursionError as exc:  # pragma: no cover - parse would have failed first
            raise UnsafeTemplateError(name, "the template nests too deeply to compile") from exc
        return CompiledTemplate(key, name, template, frozenset(meta.find_undeclared_variables(tree)))

    def _check(self, tree: nodes.Template, name: str) -> None:
        stack: list[nodes.Node] = [tree]
        while stack:
            node = stack.pop()
            if not isinstance(node, _ALLOWED_NODES):
                raise UnsafeTemplateError(name, f"it uses {_describe(node)}, which template packs may not use")
            if isinstance(node, nodes.Filter) and node.name is not None:
                self._check_filter(node, name)
            elif isinstance(node, nodes.Test) and node.name not in ALLOWED_TESTS:
                raise UnsafeTemplateError(name, f"it uses the test {node.name!r} (allowed: {', '.join(sorted(ALLOWED_TESTS))})")
            elif isinstance(node, nodes.Operand) and node.op not in ALLOWED_COMPARISONS:
                raise UnsafeTemplateError(name, f"it uses the comparison {node.op!r} (allowed: ==, !=, in, not in)")
            elif isinstance(node, nodes.Name) and (node.ctx != "load" or node.name.startswith("_")):
                raise UnsafeTemplateError(name, f"it uses the variable name {node.name!r} ({node.ctx})")
            elif isinstance(node, (nodes.Filter, nodes.Test)) and (node.dyn_args or node.dyn_kwargs or node.kwargs):
                raise UnsafeTemplateError(name, f"it passes keyword or star arguments to {node.name!r}")
            stack.extend(node.iter_child_nodes())

    def _check_filter(self, node: nodes.Filter, name: str) -> None:
        if node.name not in ALLOWED_FILTERS:
            raise UnsafeTemplateError(name, f"it uses the filter {node.name!r} (allowed: {', '.join(sorted(ALLOWED_FILTERS))})")
        for arg in node.args:
            if not isinstance(arg, nodes.Const) or not isinstance(arg.value, (str, int, float, bool, type(None))):
                raise UnsafeTemplateError(name, f"the filter {node.name!r} takes only constant arguments")
            if node.name not in {"default", "d"}:
                raise UnsafeTemplateError(name, f"the filter {node.name!r} takes no arguments here")
            if isinstance(arg.value, str) and len(arg.value) > self.limits.max_filter_const_chars:
                raise UnsafeTemplateError(name, f"a constant argument of {node.name!r} is too long")

    def render(self, source: str, slots: Mapping[str, Any], name: str = "<template>") -> str:
        """Render ``source`` with ``slots`` (strings, numbers, booleans or None; never templates)."""
        compiled = self.compile(source, name)
        return self.render_compiled(compiled, slots)

    def render_compiled(self, compiled: CompiledTemplate, slots: Mapping[str, Any]) -> str:
        missing = compiled.variables.difference(slots)
        if missing:
            raise RenderError(compiled.name, f"missing slot value(s): {', '.join(sorted(missing))}")
        values: dict[str, Any] = {}
        total = 0
        for var in compiled.variables:
            value = slots[var]
            if not isinstance(value, SLOT_TYPES):
                raise RenderError(compiled.name, f"slot {var!r} must be a string, number, boolean or null, not {type(value).__name__}")
            if isinstance(value, str):
                total += len(value)
            values[var] = value
        if total > self.limits.max_value_chars:
            raise RenderError(compiled.name, f"slot values total {total:,} characters, over the limit of {self.limits.max_value_chars:,}")
        try:
            return compiled.template.render(values)
        except jinja2.UndefinedError as exc:
            raise RenderError(compiled.name, str(exc)) from exc
        except jinja2.exceptions.SecurityError as exc:  # pragma: no cover - the allow-list stops these first
            raise UnsafeTemplateError(compiled.name, f"sandbox violation: {exc}") from exc


def _describe(node: nodes.Node) -> str:
    kinds = {
        nodes.Getattr: "attribute access", nodes.Getitem: "item access", nodes.Call: "a call",
        nodes.For: "a for loop", nodes.Macro: "a macro", nodes.CallBlock: "a call block",
        nodes.Assign: "{% set %}", nodes.AssignBlock: "{% set %}", nodes.Include: "{% include %}",
        nodes.Import: "{% import %}", nodes.FromImport: "{% from ... import %}", nodes.Extends: "{% extends %}",
        nodes.Block: "{% block %}", nodes.With: "{% with %}", nodes.FilterBlock: "a filter block",
        nodes.Mul: "multiplication", nodes.Pow: "exponentiation", nodes.Add: "addition", nodes.Concat: "concatenation (~)",
    }
    for cls, text in kinds.items():
        if isinstance(node, cls):
            return text
    return f"the construct {type(node).__name__}"
