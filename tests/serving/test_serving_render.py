"""Safe rendering: the allow-list, the sandbox, StrictUndefined, values as data, the LRU cache."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from logmine_serving.errors import RenderError, UnsafeTemplateError
from logmine_serving.render import RenderLimits, SafeRenderer, template_key

INJECTIONS = {
    "class-walk": "{{ ''.__class__.__mro__[1].__subclasses__() }}",
    "slot-class": "{{ prefix.__class__ }}",
    "globals-cycler": "{{ cycler.__init__.__globals__.os.popen('id').read() }}",
    "globals-self": "{{ self.__init__.__globals__ }}",
    "globals-lipsum": "{{ lipsum.__globals__['os'] }}",
    "format-string": "{{ '{0.__class__}'.format(prefix) }}",
    "format-method": "{{ prefix.format }}",
    "format-filter": "{{ '%s'|format(prefix.__class__) }}",
    "attr-filter": "{{ prefix|attr('__class__') }}",
    "item-access": "{{ prefix['__class__'] }}",
    "huge-range": "{% for i in range(10**9) %}x{% endfor %}",
    "nested-loops": "{% for a in range(100000) %}{% for b in range(100000) %}{% endfor %}{% endfor %}",
    "bare-range": "{{ range(99999) }}",
    "recursion-macro": "{% macro r(n) %}{{ r(n) }}{% endmacro %}{{ r(1) }}",
    "string-mul": "{{ 'a' * 10**10 }}",
    "slot-mul": "{{ prefix * 100000000 }}",
    "power": "{{ 9**9**9 }}",
    "concat": "{{ prefix ~ prefix }}",
    "set-append": "{% set x = [] %}{{ x.append(1) }}",
    "include": "{% include '/etc/passwd' %}",
    "import": "{% import 'os' as os %}",
    "extends": "{% extends 'base.html' %}",
    "indent-huge": "{{ prefix|indent(1000000000) }}",
    "center-huge": "{{ prefix|center(1000000000) }}",
    "namespace-call": "{{ namespace(a=1) }}",
    "underscore-name": "{{ __builtins__ }}",
    "dict-literal": "{{ {'a': prefix}.items() }}",
    "with-block": "{% with a = prefix %}{{ a }}{% endwith %}",
    "filter-block": "{% filter upper %}{{ prefix }}{% endfilter %}",
    "deep-nesting": "{{ " + "(" * 5000 + "prefix" + ")" * 5000 + " }}",
    "syntax-error": "{{ prefix ",
}


@pytest.mark.parametrize("payload", list(INJECTIONS.values()), ids=list(INJECTIONS))
def test_injection_payloads_are_refused_before_running(payload: str) -> None:
    renderer = SafeRenderer()
    with pytest.raises(UnsafeTemplateError, match="refused"):
        renderer.render(payload, {"prefix": "x", "cycler": "x", "self": "x", "lipsum": "x", "namespace": "x"})


def test_plain_template_renders_and_conditionals_work() -> None:
    r = SafeRenderer()
    src = "{% if language == 'python' %}# {{ file_path }}\n{% endif %}{{ prefix|trim }}<FILL>{{ suffix|default('') }}"
    assert r.render(src, {"language": "python", "file_path": "a.py", "prefix": "  x = ", "suffix": None}) == "# a.py\nx =<FILL>None"
    assert r.render(src, {"language": "go", "file_path": "a.go", "prefix": "x", "suffix": "y"}) == "x<FILL>y"


@pytest.mark.parametrize("value", ["{{ 7*7 }}", "{% for i in range(9) %}{% endfor %}", "{{ ''.__class__ }}", "{0.__class__}"],
                         ids=["expr", "loop", "class", "format"])
def test_slot_values_are_data(value: str) -> None:
    assert SafeRenderer().render("<{{ prefix }}>", {"prefix": value}) == f"<{value}>"


@given(st.text(max_size=200))
@settings(max_examples=100, deadline=None)
def test_any_value_renders_literally(value: str) -> None:
    assert SafeRenderer().render("a{{ x }}b", {"x": value}) == f"a{value}b"


def test_missing_slot_is_a_clear_error() -> None:
    with pytest.raises(RenderError, match=r"missing slot value\(s\): suffix"):
        SafeRenderer().render("{{ prefix }}{{ suffix }}", {"prefix": "x"}, name="fim")


@pytest.mark.parametrize("value", [object(), ["a"], {"a": 1}], ids=["object", "list", "dict"])
def test_non_scalar_slot_values_are_refused(value: object) -> None:
    with pytest.raises(RenderError, match="must be a string"):
        SafeRenderer().render("{{ prefix }}", {"prefix": value})


def test_size_limits_bound_a_render() -> None:
    r = SafeRenderer(RenderLimits(max_template_chars=100, max_value_chars=10))
    with pytest.raises(UnsafeTemplateError, match="over the limit"):
        r.render("x" * 101, {})
    with pytest.raises(RenderError, match="over the limit"):
        r.render("{{ a }}{{ b }}", {"a": "x" * 6, "b": "y" * 6})


def test_compiled_templates_are_cached_by_hash_with_lru_eviction() -> None:
    r = SafeRenderer(cache_size=2)
    a = r.compile("A {{ x }}")
    assert r.compile("A {{ x }}") is a and a.key == template_key("A {{ x }}")
    r.compile("B {{ x }}")
    r.compile("C {{ x }}")  # evicts A, the least recently used
    assert (r.hits, r.misses) == (1, 3)
    assert r.compile("A {{ x }}") is not a
    assert a.variables == frozenset({"x"})
