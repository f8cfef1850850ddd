"""Context trimming: exact kept units per language, budget, cursor path, incremental == cold, fallback."""

from __future__ import annotations

import dataclasses
import re

import polars as pl
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from logmine.runtime.trim import scan as trim_scan
from logmine.runtime.trim.trimmer import TrimConfig, Trimmer, count_tokens, recent_files, trim_slots
from logmine.runtime.trim.evaluate import completion_uses, evaluate, f1, nearest_lines, referenced_units
from logmine.runtime.trim.score import (
    FEATURES,
    PARTIAL,
    Plan,
    build_plan,
    expected_f1_cut,
    importance,
    line_signals,
    ranked,
    typed_word,
)

NO_CAP = TrimConfig(max_kept=0)

PYTHON = '''import os
import json
from typing import Any, Optional
from collections import OrderedDict

MAX_SIZE = 100
DEFAULT_NAME = "x"


def load(path):
    with open(path) as f:
        return json.load(f)


def unrelated(a, b):
    return a * b


class Cache:
    """A cache."""

    limit: int = MAX_SIZE

    def __init__(self):
        self.items = OrderedDict()

    def clear(self):
        self.items.clear()

    def get(self, key: str) -> Optional[Any]:
        data = load(key)
        if len(self.items) > self.li'''

JAVA = '''package org.example;

import java.util.List;
import java.util.Map;
import java.io.File;

public class Orders {
    private final Map<String, Order> byId;
    private int count = 0;

    public Orders(Map<String, Order> byId) {
        this.byId = byId;
    }

    private Order lookup(String id) {
        return byId.get(id);
    }

    public void save(File target) {
        target.delete();
    }

    public List<Order> find(List<String> ids) {
        List<Order> out = new ArrayList<>();
        for (String id : ids) {
            count += 1;
            out.add(look'''

TYPESCRIPT = '''import { readFile } from "fs";
import * as path from "path";
import express, { Router } from "express";

const PORT = 8080;
let counter = 0;

export function parse(text: string): number {
  return Number(text);
}

function unrelated(): void {}

export class Server {
  private router: Router;

  constructor() {
    this.router = Router();
  }

  listen(): void {
    const file = path.join(__dirname, "x");
    this.router.get("/", () => par'''

JAVASCRIPT = '''const fs = require("fs");
import { join } from "path";

const LIMIT = 5;

function parse(text) {
  return Number(text);
}

function unrelated() {}

class Reader {
  lines = [];

  read(file) {
    this.lines = fs.readFileSync(file).toString().split("\\n");
  }

  first() {
    return this.lines.slice(0, LIM'''

GO = '''package store

import (
\t"fmt"
\t"strings"
\tlog "github.com/sirupsen/logrus"
)

const maxItems = 10

type Item struct {
\tName  string
\tCount int
}

func helper(s string) string {
\treturn strings.ToUpper(s)
}

func unrelated() {}

func (it *Item) Label() string {
\treturn fmt.Sprintf("%s:%d", it.Name, it.Count)
}

func Describe(items []Item) {
\tfor _, it := range items {
\t\tlog.Info(it.Lab'''

RUST = '''use std::collections::HashMap;
use std::fmt::{self, Display};
use crate::util::{helper, other as renamed};

const LIMIT: usize = 3;

#[derive(Debug)]
pub struct Counter {
    counts: HashMap<String, usize>,
}

fn unrelated() {}

impl Counter {
    pub fn new() -> Self {
        Counter { counts: HashMap::new() }
    }

    fn bump(&mut self, key: &str) {
        *self.counts.entry(key.to_string()).or_insert(0) += 1;
    }

    pub fn add_all(&mut self, keys: &[String]) {
        for k in keys.iter().take(LIMIT) {
            self.bu'''


def _first_lines(code: str, result, indices) -> list[str]:  # noqa: ANN001
    data = code.encode()
    return [data[result.units[i].start : result.units[i].end].decode().strip().splitlines()[0] for i in sorted(indices)]


# The expected-F1 cut keeps the likeliest few: the imports the near lines use (learned weight below
# definitions', less often referenced by the next lines than used once more) and a constant the
# cursor's line already uses (Rust's LIMIT) are no longer kept.
CASES = [
    pytest.param(PYTHON, "python", [
        "limit: int = MAX_SIZE", "def __init__(self):", "def clear(self):",
    ], ["class Cache:", "def get(self, key: str) -> Optional[Any]:"], id="python"),
    pytest.param(JAVA, "java", [
        "private int count = 0;", "private Order lookup(String id) {",
    ], ["public class Orders {", "public List<Order> find(List<String> ids) {"], id="java"),
    pytest.param(TYPESCRIPT, "typescript", [
        "export function parse(text: string): number {", "private router: Router;", "constructor() {",
    ], ["export class Server {", "listen(): void {"], id="typescript"),
    pytest.param(JAVASCRIPT, "javascript", [
        "const LIMIT = 5;", "lines = [];", "read(file) {",
    ], ["class Reader {", "first() {"], id="javascript"),
    pytest.param(GO, "go", [
        "import (", "type Item struct {", "func (it *Item) Label() string {",
    ], ["func Describe(items []Item) {"], id="go"),
    pytest.param(RUST, "rust", [
        "fn bump(&mut self, key: &str) {",
    ], ["impl Counter {", "pub fn add_all(&mut self, keys: &[String]) {"], id="rust"),
]


@pytest.mark.parametrize(("code", "language", "kept", "path"), CASES)
def test_exact_kept_units(code: str, language: str, kept: list[str], path: list[str]) -> None:
    result = Trimmer(NO_CAP).prefix(code, language)
    assert _first_lines(code, result, result.path) == path
    assert _first_lines(code, result, set(result.kept) - result.path) == kept
    assert result.text.endswith(code.splitlines()[-1])


def test_cap_keeps_the_best_scored_units() -> None:
    result = Trimmer(TrimConfig(max_kept=2)).prefix(PYTHON, "python")
    off_path = set(result.kept) - result.path
    assert len(off_path) == 2
    # the member the cursor is typing (self.li -> limit) and __init__, which assigns the self.items
    # the near lines use (NO_CAP adds a third: clear)
    assert _first_lines(PYTHON, result, off_path) == ["limit: int = MAX_SIZE", "def __init__(self):"]


@pytest.mark.parametrize(("code", "language"), [pytest.param(*c.values[:2], id=c.id) for c in CASES])
def test_importance_is_the_fitted_model_of_the_recorded_features(code: str, language: str) -> None:
    t = Trimmer()
    data = code.encode()
    units, path, _ = t.layout(data, language)
    plan = build_plan(units, path, *t._body_uses(data, units, path, language), t.config, record=True)
    assert plan.cand and set(plan.features) == set(plan.cand)
    for i in plan.cand:
        assert plan.base[i][0] == pytest.approx(importance(plan.features[i]))
    assert plan.mass == pytest.approx(sum(plan.base[i][0] for i in plan.cand))
    # the units the cursor's line uses or the typed identifier matches: their features change there
    line = code.rsplit("\n", 1)[1]
    hits, typed = line_signals(plan, line, language, t.config)
    probs: dict[int, float] = {}
    list(ranked(plan, line, language, 1.0, (), t.config, probs))
    assert set(probs) == hits | typed
    for i, p in probs.items():
        f = list(plan.features[i])
        f[FEATURES.index("cursor_line")], f[FEATURES.index("typed")] = float(i in hits), float(i in typed)
        assert p == pytest.approx(importance(f))


def test_expected_f1_cut() -> None:
    plan = Plan(opener="", base={0: (0.9, 0.0, 0.0), 1: (0.5, 0.0, 0.0), 2: (0.05, 0.0, 0.0)}, mass=1.45)
    # expected F1 of the first k: 0.9 / 2.45, 1.4 / 3.45 (best), 1.45 / 4.45
    assert expected_f1_cut([0, 1, 2], plan, {}, 0.0) == 2
    # the cursor's line raised unit 2 to 0.9: 0.9 / 3.3, 1.4 / 4.3, 2.3 / 5.3 (best)
    assert expected_f1_cut([0, 1, 2], plan, {2: 0.9}, 0.0) == 3
    # more referenced units expected beyond the candidates: keeping more pays
    assert expected_f1_cut([0, 2], plan, {}, 0.0) == 1
    assert expected_f1_cut([0, 2], plan, {}, 30.0) == 2
    assert (expected_f1_cut([2], plan, {}, 0.0), expected_f1_cut([], plan, {}, 0.0)) == (1, 0)


def test_kept_text_is_the_units_in_source_order() -> None:
    result = Trimmer(NO_CAP).prefix(GO, "go")
    assert result.text.startswith("import (")
    assert "func helper" not in result.text and "func unrelated" not in result.text
    assert result.text.endswith("\t\tlog.Info(it.Lab")
    assert result.tokens == sum(result.units[i].tokens for i in result.kept)


@pytest.mark.parametrize("language", ["python", "java", "typescript", "javascript", "go", "rust"])
def test_definitions_per_language(language: str) -> None:
    code = {"python": PYTHON, "java": JAVA, "typescript": TYPESCRIPT, "javascript": JAVASCRIPT, "go": GO, "rust": RUST}[language]
    units, _, _ = Trimmer().layout(code.encode(), language)
    data = code.encode()
    by_head = {data[u.start : u.end].decode().strip().splitlines()[0]: (sorted(u.defines), sorted(u.members)) for u in units}
    expected = {
        "python": {"import os": (["os"], []), "from typing import Any, Optional": (["Any", "Optional"], []),
                   "MAX_SIZE = 100": (["MAX_SIZE"], []), "def __init__(self):": (["__init__"], ["__init__", "items"]),
                   "limit: int = MAX_SIZE": (["limit"], ["limit"])},
        "java": {"import java.util.List;": (["List"], []), "private int count = 0;": (["count"], ["count"]),
                 "public Orders(Map<String, Order> byId) {": (["Orders"], ["Orders", "byId"])},
        "typescript": {'import express, { Router } from "express";': (["Router", "express"], []),
                       "const PORT = 8080;": (["PORT"], []), "private router: Router;": (["router"], ["router"])},
        "javascript": {'const fs = require("fs");': (["fs"], []), 'import { join } from "path";': (["join"], [])},
        "go": {"import (": (["fmt", "log", "strings"], []), "type Item struct {": (["Item"], ["Count", "Name"]),
               "func (it *Item) Label() string {": ([], ["Label"]), "const maxItems = 10": (["maxItems"], [])},
        "rust": {"use std::fmt::{self, Display};": (["Display", "fmt"], []),
                 "use crate::util::{helper, other as renamed};": (["helper", "renamed"], []),
                 "#[derive(Debug)]": (["Counter"], ["counts"]), "fn unrelated() {}": (["unrelated"], ["unrelated"])},
    }[language]
    for head, names in expected.items():
        assert by_head[head] == names, head


def test_class_members_count_only_after_a_dot() -> None:
    code = "class Point:\n    x: int = 0\n    def norm(self):\n        return 1\n\n\ndef f(p):\n    y = p.norm()\n    "
    units, path, _ = Trimmer().layout(code.encode(), "python")
    point = next(i for i, u in enumerate(units) if "Point" in u.defines)
    assert units[point].members == {"x", "norm"}
    assert referenced_units(units, set(path), "return p.norm() + x", "python") == {point}
    assert referenced_units(units, set(path), "norm = 3", "python") == set()


def test_locals_of_a_closed_function_are_out_of_scope() -> None:
    code = "        total = 0\n        return total\n\ndef other():\n    "
    units, path, _ = Trimmer().layout(code.encode(), "python")
    assert all(not u.defines for u in units[:-1] if u.node_type != "function_definition")
    assert referenced_units(units, set(path), "total += 1", "python") == set()


@pytest.mark.parametrize("budget", [1, 5, 20, 60, 200])
@pytest.mark.parametrize("code, language", [(PYTHON, "python"), (JAVA, "java"), (RUST, "rust"), (GO, "go")])
def test_budget_is_respected_and_cursor_kept(code: str, language: str, budget: int) -> None:
    result = Trimmer(TrimConfig(budget_tokens=budget, max_kept=0, min_score=0.0)).prefix(code, language)
    assert count_tokens(result.text) <= budget
    assert result.tokens <= budget
    last = code.splitlines()[-1]
    assert result.text and (last.endswith(result.text) or result.text.endswith(last))


@pytest.mark.parametrize("budget", [1, 5, 20, 60, 200])
@pytest.mark.parametrize("code, language", [(PYTHON, "python"), (JAVA, "java"), (RUST, "rust"), (GO, "go")])
def test_fill_respects_the_budget_and_ends_with_the_nearest_lines(code: str, language: str, budget: int) -> None:
    result = Trimmer(TrimConfig(budget_tokens=budget, fill=True)).prefix(code, language)
    assert count_tokens(result.text) <= budget
    if result.near_start is not None:  # the lines from near_start to the cursor are kept verbatim, at the end
        tail = code.encode()[result.near_start :].decode()
        assert result.text.endswith(tail) and tail.endswith(code.splitlines()[-1])


FILL = "import os\nimport json\nimport re\n\n" + "".join(
    f"def helper{i}(x):\n    return x + {i}\n\n\n" for i in range(12)) + (
    'config = json.loads(os.environ["CFG"])\nname = config["name"]\npath = os.path.join(')


def test_fill_keeps_the_nearest_lines_then_the_best_units() -> None:
    result = Trimmer(TrimConfig(budget_tokens=60, fill=True, near_share=0.5)).prefix(FILL, "python")
    assert result.text.endswith('config = json.loads(os.environ["CFG"])\nname = config["name"]\npath = os.path.join(')
    assert "import os\nimport json\n" in result.text  # used near the cursor: kept though far away
    assert "import re" not in result.text or count_tokens(result.text) <= 60
    assert count_tokens(result.text) <= 60
    assert "helper0" not in result.text  # unrelated and far: the budget went to the near lines and the imports
    # the F1 cut keeps fewer units: fill is the recall-oriented choice
    cut = Trimmer(TrimConfig(budget_tokens=60)).prefix(FILL, "python")
    assert len(cut.kept) <= len(result.kept) and cut.near_start is None


def test_emit_ranges_merges_and_joins_like_units() -> None:
    from logmine.runtime.trim.units import emit_ranges

    data = b"a = 1\nb = 2\n\nc = 3\nd = 4\n"
    assert emit_ranges(data, [(0, 6), (4, 12), (19, 25)]) == "a = 1\nb = 2\nd = 4\n"
    assert emit_ranges(data, [(0, 5), (13, 18)]) == "a = 1\nc = 3"
    assert emit_ranges(data, [(6, 12), (12, 14)]) == "b = 2\n\nc"


def test_cursor_unit_over_budget_keeps_its_last_lines() -> None:
    body = "".join(f"    v{i} = compute({i})\n" for i in range(40))
    code = "import x\n\ndef big():\n" + body + "    return v3"
    result = Trimmer(TrimConfig(budget_tokens=30)).prefix(code, "python")
    assert result.text.endswith("    v39 = compute(39)\n    return v3")
    assert count_tokens(result.text) <= 30
    assert "import x" not in result.text


def test_unsupported_language_falls_back_to_nearest_lines() -> None:
    code = "fun a() = 1\nfun b() = 2\nval c = a()\nval d = b("
    result = Trimmer(TrimConfig(budget_tokens=12)).prefix(code, "kotlin")
    assert result.text == nearest_lines(code, 12)
    assert result.text == "val c = a()\nval d = b("
    assert Trimmer().prefix(code, None).text == code


def test_completion_read_in_the_prefix_state() -> None:
    # inside a docstring, the completion's prose is not code; after it, code is
    assert completion_uses('def f():\n    """About List', ' and Dict.\n    """\n    return Foo(x)', "python") == (
        {"return", "Foo", "x"}, set())
    assert completion_uses("x = 1  # talks about List", " and Dict\ny = Bar", "python") == ({"y", "Bar"}, set())
    # the identifier the cursor splits is whole
    assert completion_uses("x = Sty", "le(color=1)", "python") == ({"Style", "color"}, set())
    assert completion_uses("x = self.fo", "o()", "python") == (set(), {"foo"})


def test_evaluate_counts_against_referenced_units() -> None:
    ev = evaluate(PYTHON, "python", "mit:\n            self.items.popitem(last=False)", NO_CAP)
    # truth: the units defining limit (split identifier "li"+"mit") and items (__init__); kept has 3
    assert (ev.truth, ev.hits, ev.kept) == (2, 2, 3)
    assert ev.f1 == pytest.approx(f1({1, 2, 3}, {1, 2}))
    assert ev.f1_baseline is not None
    assert evaluate(PYTHON, "python", "   # nothing here\n", NO_CAP).f1 is None


def test_literal_f1_counts_the_cursor_path_when_the_completion_uses_its_names() -> None:
    # the completion calls the method being written: the strict figure leaves the enclosing unit out,
    # the literal one counts it on both sides (kept by trimming, and by the nearest lines)
    ev = evaluate(PYTHON, "python", "mit:\n            return self.get(key)", NO_CAP)
    assert (ev.truth, ev.hits, ev.kept) == (1, 1, 3)
    assert ev.f1 == pytest.approx(f1(set(range(3)), {0}))
    assert ev.f1_literal == pytest.approx(f1(set(range(4)), {0, 3}))
    assert ev.f1_baseline_literal == pytest.approx(f1(set(range(13)), {0, 12}))
    # no name of the path used: both figures agree; nothing referenced at all: both None
    same = evaluate(PYTHON, "python", "mit:\n            self.items.popitem(last=False)", NO_CAP)
    assert (same.f1_literal, same.f1_baseline_literal) == (same.f1, same.f1_baseline)
    none = evaluate(PYTHON, "python", "   # nothing here\n", NO_CAP)
    assert (none.f1_literal, none.f1_baseline_literal) == (None, None)
    # only the path referenced: the strict figure has nothing to score, the literal one does
    own = evaluate(PYTHON, "python", "   return self.get(key)\n", NO_CAP)
    assert own.f1 is None and own.f1_literal == pytest.approx(f1(set(range(4)), {3}))


def test_f1() -> None:
    assert f1(set(), set()) is None
    assert f1({1}, set()) == 0.0
    assert f1({1, 2}, {2}) == pytest.approx(2 / 3)


@settings(max_examples=300, deadline=None)
@given(text=st.text(st.characters(max_codepoint=127)) | st.text())
@example(text="a\x1cb_1 .x\x00\ty\u00e9")
def test_count_tokens_counts_words_and_punctuation(text: str) -> None:
    assert count_tokens(text) == len(re.findall(r"\w+|[^\w\s]", text))


def test_trim_slots_trims_code_slots_and_counts_tokens() -> None:
    suffix = "\n        return None\n\n    def put(self, key, value):\n        self.items[key] = value\n\n\ndef unrelated_tail():\n    pass\n"
    decls = "def load(path):\n    return open(path).read()\n\n\ndef dump(obj):\n    return str(obj)\n"
    [out] = trim_slots([{"slots": {"prefix": PYTHON, "suffix": suffix, "declarations": decls, "instruction": "keep me"},
                         "language": "python", "file_path": "cache.py", "recent_files": ["other.py", "cache.py"],
                         "session_id": "s1"}], TrimConfig(suffix_budget_tokens=12, declarations_budget_tokens=40))
    assert out.values["instruction"] == "keep me"
    assert out.values["prefix"].endswith("self.li")
    assert out.values["suffix"] == "\n        return None"  # the rest of the cursor's unit fills the suffix budget
    assert out.values["declarations"] == "def load(path):\n    return open(path).read()"  # load is used near the cursor
    for slot in ("prefix", "suffix", "declarations"):
        assert out.tokens_after[slot] <= out.tokens_before[slot]
    assert out.tokens_after["suffix"] <= 12 and out.tokens_after["declarations"] <= 40


def test_recent_files_from_events() -> None:
    ts = pl.datetime_range(pl.datetime(2026, 1, 1), pl.datetime(2026, 1, 1, 0, 0, 5), "1s", eager=True, time_zone="UTC")
    events = pl.DataFrame({
        "session_id": ["s"] * 5 + ["t"], "ts": list(ts[:5]) + [ts[0]],
        "action": ["file.open", "editor.edit", "file.open", "editor.edit", "completion.requested", "file.open"],
        "file_path": ["a.py", "b.py", "c.py", "a.py", "z.py", "other.py"],
    })
    requests = pl.DataFrame({"request_id": ["r1", "r2"], "session_id": ["s", "s"], "ts": [ts[3], ts[5]]})
    got = recent_files(requests, events, k=2).collect().sort("request_id")
    assert got["recent_files"].to_list() == [["b.py", "c.py"], ["c.py", "a.py"]]


# -- incremental == cold ----------------------------------------------------------------------------
SOURCES = {"python": PYTHON, "java": JAVA, "typescript": TYPESCRIPT, "go": GO, "rust": RUST, "javascript": JAVASCRIPT}


def _fingerprint(result) -> tuple:  # noqa: ANN001
    return (result.text, tuple(result.kept), tuple(sorted(result.path)),
            tuple((u.start, u.end, u.kind, u.defines, u.members, u.tokens) for u in result.units))


edit = st.tuples(st.integers(0, 10_000), st.integers(0, 6), st.sampled_from(["", "x", "\n", "(", ")", "}", "{", '"', "    ", "def f():\n", "self.", "# c\n", "'''"]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(language=st.sampled_from(sorted(SOURCES)), edits=st.lists(edit, min_size=1, max_size=12),
       windows=st.lists(st.integers(0, 3), min_size=1, max_size=12))
@example(language="java", edits=[(0, 0, ""), (0, 0, ""), (0, 0, ""), (1497, 0, "("), (205, 0, '"')], windows=[2])  # a cached unit read from a tree with a parse error
def test_incremental_equals_cold(language: str, edits: list[tuple[int, int, str]], windows: list[int]) -> None:
    text = SOURCES[language] * 2
    warm, cold = Trimmer(TrimConfig(budget_tokens=120)), Trimmer(TrimConfig(budget_tokens=120), cache=False)
    start = 0
    for (pos, delete, insert), drop in zip(edits, windows * len(edits)):
        pos %= len(text) + 1
        text = text[:pos] + insert + text[pos + delete :]
        for _ in range(drop):  # the window slides: whole lines leave the top
            nl = text.find("\n", start)
            start = nl + 1 if nl >= 0 else start
        context = text[start:]
        assert _fingerprint(warm.prefix(context, language, "f")) == _fingerprint(cold.prefix(context, language, "f"))


@settings(max_examples=60, deadline=None)
@given(language=st.sampled_from(sorted(SOURCES)), cut=st.integers(0, 2000), grow=st.lists(st.integers(1, 200), max_size=6),
       drop=st.lists(st.integers(0, 3), max_size=6))
def test_incremental_lexing_equals_full(language: str, cut: int, grow: list[int], drop: list[int]) -> None:
    text = SOURCES[language] * 3
    syn = trim_scan.SYNTAX[language]
    start, end, prev = 0, cut, None
    for g, d in zip(grow, drop + [0] * len(grow)):
        end = min(len(text), end + g)
        for _ in range(d):
            nl = text.find("\n", start, end)
            start = nl + 1 if nl >= 0 else start
        body = text[start:end]
        body = body[: body.rfind("\n") + 1].encode()
        got, full = trim_scan.lex(body, syn, prev), trim_scan.lex(body, syn)
        assert (got.lines, got.inds, got.cuts, got.stack, got.closer, got.open_at) == (
            full.lines, full.inds, full.cuts, full.stack, full.closer, full.open_at)
        prev = got


@settings(max_examples=400, deadline=None)
@given(line=st.text(st.sampled_from("ab_$9.-:> x(é"), max_size=80))
@example(line="x" * 70 + ".y")
def test_typed_word_is_what_the_partial_pattern_finds(line: str) -> None:
    m = PARTIAL.search(line[-64:])
    word = m.group().lstrip(".-:>")
    assert typed_word(line) == (word, m.group() != word)


_ONE_BY_ONE = rb"|[(\[{]|[)\]}]|\n[ \t]*"


@settings(max_examples=60, deadline=None)
@given(language=st.sampled_from(sorted(SOURCES)), cut=st.integers(0, 3000), edits=st.lists(edit, max_size=6))
def test_flat_bracket_pairs_lex_like_single_brackets(language: str, cut: int, edits: list[tuple[int, int, str]]) -> None:
    text = SOURCES[language] * 2
    for pos, delete, insert in edits:
        pos %= len(text) + 1
        text = text[:pos] + insert + text[pos + delete :]
    body = text[cut:].encode()
    body = body[: body.rfind(b"\n") + 1]
    syn = trim_scan.SYNTAX[language]
    ref = dataclasses.replace(syn, tokens=re.compile(syn.tokens.pattern.replace(trim_scan._BR, _ONE_BY_ONE)))
    got, want = trim_scan.lex(body, syn), trim_scan.lex(body, ref)
    assert (got.lines, got.inds, got.cuts, got.stack, got.closer, got.open_at) == (
        want.lines, want.inds, want.cuts, want.stack, want.closer, want.open_at)
    assert got.inds == [trim_scan.INDENT.match(body, start).end() for start in got.lines]  # newline tokens carry it


def test_placed_units_equal_constructed_ones() -> None:
    from logmine.runtime.trim.units import Unit, _place

    raw = (3, 9, "definition", "function_definition", frozenset({"f"}), 4, frozenset({"f", "x"}), frozenset({"y"}))
    assert _place(raw, 10) == Unit(13, 19, "definition", "function_definition", frozenset({"f"}), 4, frozenset({"f", "x"}),
                                   frozenset({"y"}))
    assert _place(raw, 0, local=True) == Unit(3, 9, "definition", "function_definition", frozenset(), 4, frozenset(),
                                              frozenset({"y"}))
    with pytest.raises(AttributeError):
        _place(raw, 0).start = 1  # still frozen


@settings(max_examples=200, deadline=None)
@given(text=st.text(st.sampled_from("ab _\n/*#\"'`\\"), max_size=200), language=st.sampled_from(["python", "rust", "go", None]))
def test_code_only_blanks_what_the_pattern_finds(text: str, language: str | None) -> None:
    from logmine.runtime.trim.units import _C_STRIP, STRIP, code_only

    assert code_only(text, language) == STRIP.get(language or "", _C_STRIP).sub(" ", text)
