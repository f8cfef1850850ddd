"""The tokenizer and the planted token latency model."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from logmine.sample.timing import KIND_FACTOR, TAIL_START, TTFT_CLIP_MS, token_times, tokenize


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_tokens_cover_the_text_exactly(text: str) -> None:
    texts, kinds = tokenize(text)
    assert "".join(texts) == text
    assert len(kinds) == len(texts)
    assert all(t for t in texts)


def test_token_kinds_of_code() -> None:
    texts, kinds = tokenize('x = f("a b", 12)  # note\n        return `t`')
    assert list(zip(texts, kinds, strict=True)) == [
        ("x", "I"), (" ", "W"), ("=", "O"), (" ", "W"), ("f", "I"), ("(", "O"), ('"a b"', "S"), (",", "O"),
        (" ", "W"), ("12", "N"), (")", "O"), ("  ", "W"), ("# note", "C"), ("\n", "L"), ("    ", "W"), ("    ", "W"),
        ("return", "I"), (" ", "W"), ("`t`", "S"),
    ]


def test_markdown_fences_are_operators_not_strings() -> None:
    texts, kinds = tokenize("```py\nx\n```")
    assert list(zip(texts, kinds, strict=True)) == [("```", "O"), ("py", "I"), ("\n", "L"), ("x", "I"), ("\n", "L"), ("```", "O")]


def test_string_tokens_are_five_times_slower() -> None:
    rng = np.random.default_rng(0)
    kinds = "IS" * 30  # short enough that the slow tail does not start
    gaps: dict[str, list[float]] = {"I": [], "S": []}
    for _ in range(300):
        times = token_times(rng, kinds, token_ms=20.0, ttft_median_ms=300.0).token_times_ms
        for i in range(1, len(kinds)):
            gaps[kinds[i]].append(times[i] - times[i - 1])
    ratio = float(np.median(gaps["S"]) / np.median(gaps["I"]))
    assert KIND_FACTOR["S"] == 5.0
    assert 4.5 < ratio < 5.5


def test_ttft_is_the_first_token_and_within_the_clip() -> None:
    rng = np.random.default_rng(1)
    for _ in range(500):
        timing = token_times(rng, "IOI", token_ms=10.0, ttft_median_ms=250.0)
        assert timing.token_times_ms[0] == timing.ttft_ms
        assert TTFT_CLIP_MS[0] <= timing.ttft_ms <= TTFT_CLIP_MS[1]
        assert timing.token_times_ms == sorted(timing.token_times_ms)
        assert timing.total_ms >= timing.token_times_ms[-1]


def test_long_completions_slow_down() -> None:
    rng = np.random.default_rng(2)
    n = TAIL_START + 200
    early, late = [], []
    for _ in range(100):
        times = np.diff(token_times(rng, "I" * n, token_ms=10.0, ttft_median_ms=200.0).token_times_ms)
        early.append(np.median(times[1:TAIL_START]))
        late.append(np.median(times[-20:]))
    assert np.median(late) > 2.5 * np.median(early)


def test_no_tokens_still_has_a_total() -> None:
    timing = token_times(np.random.default_rng(3), "", token_ms=10.0, ttft_median_ms=200.0)
    assert timing.token_times_ms == []
    assert timing.total_ms > timing.ttft_ms
