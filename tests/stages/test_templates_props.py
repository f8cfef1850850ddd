"""Invariants of the miner, checked with hypothesis on generated logs."""

from __future__ import annotations

import random
import re

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from logmine.masking import Masker, build_rules
from logmine.stages.templates.miner import MineConfig, merge_results, mine_templates, template_regex

FRAMES = [
    "Failed password for {} from {} port {} ssh2",
    "Opened project {} in {} ms ({})",
    "{}: job {} finished with status {}",
    "cache {} for key {} in {}",
    "[{}] GET {} -> {}",
]
words = st.sampled_from(["alice", "bob", "root", "my project", "ui kit", "x", "Big Legacy Service", "en0", "true", "/var/log/a.log"])
values = st.one_of(
    words,
    st.integers(-5, 10**9).map(str),
    st.tuples(*[st.integers(0, 255)] * 4).map(lambda t: ".".join(map(str, t))),
    st.text(alphabet="abcXYZ019_-.:/=<>*", min_size=1, max_size=10),
)
templated = st.tuples(st.sampled_from(FRAMES), st.lists(values, min_size=3, max_size=3)).map(lambda fv: fv[0].format(*fv[1]))
any_text = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=40)
logs = st.lists(st.one_of(templated, templated, templated, any_text), min_size=1, max_size=50)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@example([
    "Failed password for alice from bob port bob ssh2", "", "0", ":", "Failed password for alice from alice port alice ssh2",
    "Failed password for alice from alice port bob ssh2", "Failed password for alice from alice port my project ssh2",
    "Failed password for alice from bob port alice ssh2", "Failed password for alice from 0 port alice ssh2",
], False)  # a compaction kept a group of lines of different lengths as its first line's literal tokens
@given(logs, st.booleans())
def test_every_line_matches_its_template(lines: list[str], collapse_spaces: bool) -> None:
    result = mine_templates(lines, MineConfig(collapse_spaces=collapse_spaces, max_units=8))
    assert len(result.assignments) == len(lines)
    patterns = {tid: template_regex(text) for tid, text in result.templates.items()}
    for line, tid in zip(lines, result.assignments):
        assert patterns[tid].match(line), (line, result.templates[tid])


@SETTINGS
@given(any_text, st.booleans())
def test_masking_is_idempotent(text: str, typed: bool) -> None:
    masker = Masker(build_rules([{"pattern": r"req-[a-z]+", "mask_with": "REQ"}]), typed=typed)
    once = masker.collapse(masker.mask(text))
    assert masker.collapse(masker.mask(once)) == once


@SETTINGS
@given(templated)
def test_masking_is_idempotent_on_log_lines(text: str) -> None:
    masker = Masker()
    once = masker.collapse(masker.mask(text))
    assert masker.collapse(masker.mask(once)) == once


spaced = st.lists(st.one_of(templated, any_text, st.sampled_from(["2017-07-03 10:00:01", "Sat Jun 18 02:08:09 2005", "Jun  8 02:08:09", "5.2 KB", "12 bytes", "7 B", "\n", "  "])),
                  min_size=1, max_size=6).map(" ".join)
RULE_SETS = [(), ({"pattern": r"req-[a-z]+", "mask_with": "REQ"},), ({"pattern": r"user \w+", "mask_with": "USER"},)]


@SETTINGS
@given(spaced, st.sampled_from(RULE_SETS), st.booleans())
def test_masking_piece_by_piece_equals_masking_whole(text: str, extra: tuple[dict[str, str], ...], typed: bool) -> None:
    masker = Masker(build_rules(extra), typed=typed)
    assert masker.piecewise == (not any(" " in r["pattern"] for r in extra))
    assert masker.mask_words(text) == masker.masked(text).split()
    assert masker.mask_lines(text) == masker.masked(text)
    assert masker.mask_words(text) == masker.masked(text).split()  # from the cache


@SETTINGS
@given(logs, st.randoms(use_true_random=False))
def test_ids_do_not_depend_on_input_order(lines: list[str], rnd: random.Random) -> None:
    shuffled = list(lines)
    rnd.shuffle(shuffled)
    a, b = mine_templates(lines), mine_templates(shuffled)
    assert a.templates.keys() == b.templates.keys()
    assert {line: tid for line, tid in zip(lines, a.assignments)} == {line: tid for line, tid in zip(shuffled, b.assignments)}


@SETTINGS
@given(logs, st.integers(0, 50))
def test_shards_merge_into_the_single_run(lines: list[str], cut: int) -> None:
    cut = min(cut, len(lines))
    whole = mine_templates(lines)
    merged = merge_results(mine_templates(lines[:cut]), mine_templates(lines[cut:]))
    assert merged.templates == whole.templates and merged.assignments == whole.assignments


def _redraw_digits(text: str, rnd: random.Random) -> str:
    return "".join(rnd.choice("0123456789") if c.isascii() and c.isdigit() else c for c in text)


DIGIT_RULE_SETS = [(), ({"pattern": r"req-[a-z]+", "mask_with": "REQ"},), ({"pattern": r"v[1-3]", "mask_with": "V"},),
                   ({"pattern": r"x\d{2}", "mask_with": "X"},)]


@SETTINGS
@example(["eth0 up", "eth1 up", "port 22 open", "port 80 open", "v1 v2 v3"], ({"pattern": r"v[1-3]", "mask_with": "V"},), False, random.Random(0))
@example(["opened in 12 ms (0Xa) (0x1f) (7Xa) 0x0 10x5"], (), True, random.Random(0))  # 0x is hex, 7X is not: 0 is not like the other digits
@example(["at 0x1f_a -0x1f 00x1 0x1fé 0xZZ 0x1f.5 0x1f-3 1x1f ssh0 en10"], (), False, random.Random(0))  # untyped: 0 is like them
@given(st.lists(spaced, min_size=1, max_size=8), st.sampled_from(DIGIT_RULE_SETS), st.booleans(), st.randoms(use_true_random=False))
def test_masking_by_digit_shape_equals_masking_whole(
    texts: list[str], extra: tuple[dict[str, str], ...], typed: bool, rnd: random.Random
) -> None:
    """Each text and a twin with other digits: the word masked by way of its digit shape (found
    for the first) is the word masked alone, and a rule that tells digits apart turns it off."""
    masker = Masker(build_rules(extra), typed=typed)
    assert masker.digit_blind == all("[1-3]" not in r["pattern"] for r in extra)
    for text in texts:
        for t in (text, _redraw_digits(text, rnd)):
            assert masker.mask_words(t) == masker.masked(t).split()
            shape = t.encode("utf-8", "surrogatepass").translate(masker.shape_table).decode("utf-8", "surrogatepass")
            assert masker.mask_words_by_shape(t, masker.mask_words(shape)) == masker.masked(t).split()


hex_words = st.lists(st.text(alphabet="0123456789abcdefABCDEF.:_-xB", min_size=1, max_size=16), min_size=1, max_size=30)


@SETTINGS
@example(["-12B", "12B.5", "24064f3b-e88b-3af9-a0f0-5c425aff64cf", "deadbeef12", "e1", "ab12", "12Bb", "0x1f", "fa12-3"])
@given(hex_words)
def test_hex_words_masked_in_turn_mask_as_alone(words: list[str]) -> None:
    """Words of hex digits, masked one after another (shapes remembered), mask as each word alone does."""
    cached, alone = Masker(), Masker(cache_size=0)
    for w in words:
        assert cached.mask_words(w) == alone.masked(w).split()


@SETTINGS
@given(logs, st.sampled_from(DIGIT_RULE_SETS), st.randoms(use_true_random=False))
def test_lines_remembered_by_digit_shape_mine_as_without_caches(
    lines: list[str], extra: tuple[dict[str, str], ...], rnd: random.Random
) -> None:
    """Lines and their twins with other digits mine the same with the line and word caches as
    with none (every line masked whole)."""
    lines = lines + [_redraw_digits(line, rnd) for line in lines]
    rules = build_rules(extra)
    cached = mine_templates(lines, MineConfig(mask_rules=rules))
    plain = mine_templates(lines, MineConfig(mask_rules=rules, line_cache_size=0, mask_cache_size=0))
    assert cached.templates == plain.templates and cached.assignments == plain.assignments


_LANGUAGE_WORDS = ["python", "Python", "PYTHON", "c", "C", "c++", "C#", "rust", "css", "go", " ", "\n", "code", "codes",
                   "developer", "file", "class", "the", "x.", "/", "-", "+", "#", "c\u017fs", "ru\u017ft", "\u212a", "é", "pythonic",
                   "programmers"]


@SETTINGS
@example("a c\u017fs code for css files", "css")  # the regex matches the long s as s; lower() keeps it
@example("c\u017fs code", "css")  # no css in the lowered text: left as it is
@given(st.lists(st.sampled_from(_LANGUAGE_WORDS), min_size=1, max_size=14).map(" ".join),
       st.sampled_from(["python", "Python", "c", "C++", "c#", "rust", "css", "go", "K"]))
def test_a_language_named_before_a_noun_is_replaced_as_the_regex_alone_does(text: str, value: str) -> None:
    """The language's name before ``code``/``developer``/...: found where the lowered prompt holds it,
    then matched there, gives what scanning the whole prompt case-blind gives (``ſ`` and ``K`` included),
    in a prompt whose lowered text holds the name (the replacement's guard, as before: ``cſs`` alone is no ``css``)."""
    from logmine.stages.templates.skeleton import _LANGUAGE_NOUNS, _replace_language

    scanned = re.sub(rf"(?i)(?<![\w+#./-]){re.escape(value)}(?= {_LANGUAGE_NOUNS})", "{language}", text)
    expected = scanned if value.lower() in text.lower() else text
    assert _replace_language(text, value, "{language}") == expected
