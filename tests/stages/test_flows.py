"""The flows stage: DFG, n-grams, variants, sessions, windows and outcomes.

pm4py (AGPL) is only a test oracle here: the DFG, performance DFG, start/end activities and
variants must equal pm4py's on generated logs with ties in ``ts``, single-event sessions,
missing and empty session ids and unicode action names.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import math
import random
from collections import Counter, defaultdict
from datetime import UTC, datetime, timedelta

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logmine.records import EVENTS_SCHEMA, LLM_REQUESTS_SCHEMA, conform
from logmine.stages.flows import graph
from logmine.stages.flows.core import (
    FlowsConfig,
    compute_flows,
    compute_partial,
    filter_events,
    finalize,
    merge_partials,
    sequence,
)
from logmine.stages.flows.windows import window_ends

ACTIONS = ("file.open", "editor.edit", "file.save", "completion.requested", "completion.shown",
           "completion.accepted", "completion.rejected", "build", "ünïcode ✓ action", "中文.动作")
T0 = datetime(2025, 3, 1, 9, 0, tzinfo=UTC)


def make_events(n_sessions: int = 40, seed: int = 0, max_len: int = 12, actions: tuple[str, ...] = ACTIONS) -> pl.DataFrame:
    """Events with ties in ts (also across files), single-event sessions, null and "" session ids."""
    rng = random.Random(seed)
    rows, line = [], Counter()
    for s in range(n_sessions):
        sid = None if s % 9 == 4 else "" if s % 9 == 7 else f"sess-{s % max(n_sessions - 3, 1)}"  # a few ids reused
        user, ide = f"user{s % 4}", rng.choice(["vscode", "jetbrains"])
        t = T0 + timedelta(seconds=rng.randrange(0, 5 * 86400))
        for _ in range(1 if s % 5 == 0 else rng.randrange(1, max_len + 1)):
            t += timedelta(microseconds=rng.choice([0, 0, 1, 250_000, 917_000, 1_234_567, 3_000_000, 400_000_000, 3_000_000_000]))
            src = rng.choice(["b.jsonl", "a.jsonl"])
            line[src] += 1
            rows.append({
                "ts": t, "session_id": sid, "user_id": user, "ide": ide, "action": rng.choice(actions), "weight": rng.choice([1, 1, 1, 4]),
                "source_file": src, "source_line": line[src], "attrs": '{"model": "m-%d"}' % (s % 3),
            })
    rng.shuffle(rows)  # the input order must not matter
    return conform(pl.DataFrame(rows), EVENTS_SCHEMA)


def reference_cases(events: pl.DataFrame, idle_gap_s: float | None) -> list[tuple[str, dict]]:
    """(case id, row) for every event, sessionized in plain Python as the docs describe."""
    groups: dict[object, list[dict]] = defaultdict(list)
    for row in events.to_dicts():
        sid = row["session_id"]
        key = sid if sid not in (None, "") else ("auto", row["user_id"], row["ide"], row["source_file"])
        groups[key].append(row)
    out = []
    for key, rows in groups.items():
        rows.sort(key=lambda r: (r["ts"], r["source_file"], r["source_line"]))
        seg = 0
        for i, row in enumerate(rows):
            if i and idle_gap_s and (row["ts"] - rows[i - 1]["ts"]).total_seconds() > idle_gap_s:
                seg += 1
            out.append((f"{key}#{seg}", row))
    return out


def pm4py_frame(events: pl.DataFrame, idle_gap_s: float | None):  # noqa: ANN201 - pandas
    import pandas as pd

    cases = reference_cases(events, idle_gap_s)
    # grouped by case, ties in file/line order: pm4py's sort is stable and its variants read rows in order
    cases.sort(key=lambda cr: (cr[0], cr[1]["ts"], cr[1]["source_file"], cr[1]["source_line"]))
    return pd.DataFrame({
        "case:concept:name": [c for c, _ in cases],
        "concept:name": [r["action"] for _, r in cases],
        "time:timestamp": pd.to_datetime([r["ts"] for _, r in cases], utc=True),
    })


def quiet_pm4py():  # noqa: ANN201
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        import pm4py
    return pm4py


@pytest.mark.parametrize("idle_gap_s", [None, 1800.0, 0.2], ids=["no-split", "30min", "200ms"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_dfg_equals_pm4py(seed: int, idle_gap_s: float | None) -> None:
    pm4py = quiet_pm4py()
    events = make_events(seed=seed)
    result = compute_flows(events, FlowsConfig(idle_gap_s=idle_gap_s, patterns=False))
    frame = pm4py_frame(events, idle_gap_s)
    dfg, starts, ends = pm4py.discover_dfg(frame)
    perf, _, _ = pm4py.discover_performance_dfg(frame)

    # rows with count 0 only carry weighted self-loops of merged events; pm4py sees rows, not weights
    ours = {(r["src"], r["dst"]): r for r in result.dfg.filter(pl.col("count") > 0).to_dicts()}
    assert {k: r["count"] for k, r in ours.items()} == {k: int(v) for k, v in dfg.items()}
    acts = result.activities
    assert dict(acts.filter(pl.col("starts") > 0).select("action", "starts").iter_rows()) == {k: int(v) for k, v in starts.items()}
    assert dict(acts.filter(pl.col("ends") > 0).select("action", "ends").iter_rows()) == {k: int(v) for k, v in ends.items()}
    assert result.summary["sessions"] == frame["case:concept:name"].nunique()
    assert set(perf) == set(ours)
    for key, p in perf.items():
        row = ours[key]
        assert row["gap_min_s"] == float(p["min"]) and row["gap_max_s"] == float(p["max"])
        assert row["gap_p50_s"] == float(p["median"]), key
        assert math.isclose(row["gap_mean_s"], float(p["mean"]), rel_tol=1e-12, abs_tol=1e-12), key


def test_variants_equal_pm4py() -> None:
    pm4py = quiet_pm4py()
    events = make_events(n_sessions=80, seed=5, max_len=4, actions=ACTIONS[:3])
    result = compute_flows(events, FlowsConfig(patterns=False))
    expected = {tuple(k): int(v) for k, v in pm4py.get_variants(pm4py_frame(events, 1800.0)).items()}
    assert {tuple(r["variant"]): r["sessions"] for r in result.variants.to_dicts()} == expected
    assert result.variants["sessions"].sum() == result.summary["sessions"]


def test_sessions_split_at_idle_gap_and_group_missing_ids() -> None:
    rows = [
        {"ts": T0, "session_id": "s1", "action": "a", "source_file": "f", "source_line": 1},
        {"ts": T0 + timedelta(minutes=10), "session_id": "s1", "action": "b", "source_file": "f", "source_line": 2},
        {"ts": T0 + timedelta(minutes=41), "session_id": "s1", "action": "c", "source_file": "f", "source_line": 3},  # 31 min idle
        {"ts": T0, "session_id": None, "user_id": "u", "ide": "vscode", "action": "a", "source_file": "g", "source_line": 1},
        {"ts": T0, "session_id": "", "user_id": "u", "ide": "vscode", "action": "b", "source_file": "g", "source_line": 2},
        {"ts": T0 + timedelta(days=2), "session_id": None, "user_id": "u", "ide": "vscode", "action": "c", "source_file": "g", "source_line": 3},
    ]
    result = compute_flows(conform(pl.DataFrame(rows), EVENTS_SCHEMA), FlowsConfig(patterns=False))
    sessions = result.sessions.select("session", "segment", "events").sort("session").rows()
    assert sessions == [("auto:u|vscode|g", 1, 2), ("auto:u|vscode|g~2", 2, 1), ("s1", 1, 2), ("s1~2", 2, 1)]
    assert result.summary["split_sessions"] == 2
    assert sorted(result.dfg.select("src", "dst", "count").rows()) == [("a", "b", 2)]


def test_ties_are_ordered_by_source_file_then_line() -> None:
    rows = [
        {"ts": T0, "session_id": "s", "action": "third", "source_file": "b.log", "source_line": 1},
        {"ts": T0, "session_id": "s", "action": "second", "source_file": "a.log", "source_line": 9},
        {"ts": T0, "session_id": "s", "action": "first", "source_file": "a.log", "source_line": 2},
    ]
    result = compute_flows(conform(pl.DataFrame(rows), EVENTS_SCHEMA), FlowsConfig(patterns=False))
    assert result.variants["variant"].to_list() == [["first", "second", "third"]]
    assert sorted(result.dfg.select("src", "dst", "gap_mean_s").rows()) == [("first", "second", 0.0), ("second", "third", 0.0)]


def _check_conservation(result) -> None:  # noqa: ANN001
    acts = {r["action"]: r for r in result.activities.to_dicts()}
    out_count, in_count, out_weighted = Counter(), Counter(), Counter()
    for r in result.dfg.to_dicts():
        out_count[r["src"]] += r["count"]
        in_count[r["dst"]] += r["count"]
        out_weighted[r["src"]] += r["weighted_count"]
    for name, a in acts.items():
        assert out_count[name] == a["events"] - a["ends"], name
        assert in_count[name] == a["events"] - a["starts"], name
        assert out_weighted[name] == a["weighted_events"] - a["ends"], name
    assert sum(a["starts"] for a in acts.values()) == result.summary["sessions"]
    bigrams = {tuple(r["ngram"]): r["count"] for r in result.ngrams.filter(pl.col("n") == 2).to_dicts()}
    assert bigrams == {(r["src"], r["dst"]): r["count"] for r in result.dfg.filter(pl.col("count") > 0).to_dicts()}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 30), st.integers(0, 10_000), st.sampled_from([None, 60.0, 1.0]))
def test_every_transition_is_conserved(n_sessions: int, seed: int, idle_gap_s: float | None) -> None:
    events = make_events(n_sessions=n_sessions, seed=seed, max_len=6)
    _check_conservation(compute_flows(events, FlowsConfig(idle_gap_s=idle_gap_s, patterns=False)))


def test_ngrams_count_occurrences_and_sessions() -> None:
    events = make_events(n_sessions=30, seed=3)
    result = compute_flows(events, FlowsConfig(idle_gap_s=600, patterns=False))
    cases = defaultdict(list)
    for case, row in reference_cases(events, 600):
        cases[case].append(row["action"])
    for n in range(2, 6):
        count, holders = Counter(), defaultdict(set)
        for case, acts in cases.items():
            for i in range(len(acts) - n + 1):
                count[tuple(acts[i:i + n])] += 1
                holders[tuple(acts[i:i + n])].add(case)
        got = result.ngrams.filter(pl.col("n") == n)
        assert {tuple(r["ngram"]): (r["count"], r["sessions"]) for r in got.to_dicts()} == {k: (v, len(holders[k])) for k, v in count.items()}
        assert all(math.isclose(r["support"], r["sessions"] / len(cases)) for r in got.to_dicts())


def test_partials_of_whole_sessions_merge_exactly() -> None:
    config = FlowsConfig(idle_gap_s=900, patterns=False)
    events = make_events(n_sessions=60, seed=8)
    seq, _ = sequence(events.lazy(), config)
    whole = compute_partial(seq, config)
    parts = [compute_partial(seq.filter(pl.col("case") % 3 == k), config) for k in range(3)]
    merged = merge_partials(parts)
    assert (merged.sessions, merged.events, merged.windows) == (whole.sessions, whole.events, whole.windows)
    keys = {"activities": ["action"], "dfg": ["src", "dst"], "gaps": ["src", "dst", "bucket"], "ngrams": ["n", "ngram"],
            "variants": ["variant"], "window_actions": ["action"], "window_pairs": ["a", "b"], "outcomes": ["n", "context"]}
    for name, key in keys.items():
        a, b = getattr(merged, name), getattr(whole, name)
        assert a.sort(key).select(sorted(a.columns)).equals(b.sort(key).select(sorted(b.columns))), name
    steps = graph.transitions(seq)
    vocab = seq["action"].dtype.categories.to_list()
    exact = finalize(whole, config, graph.exact_gap_quantiles(steps, vocab))["dfg"].sort("src", "dst")
    approx = finalize(merged, config)["dfg"].sort("src", "dst")
    assert approx.drop("gap_p50_s", "gap_p95_s").equals(exact.drop("gap_p50_s", "gap_p95_s"))
    # a sketch estimate is within the sketch's relative accuracy of the exact lower quantile
    gaps = graph.edge_names(steps.group_by("edge").agg(pl.col("gap_us").sort()), vocab)
    estimates = {(r["src"], r["dst"]): r for r in approx.to_dicts()}
    for src, dst, values in gaps.iter_rows():
        for q, col in ((0.5, "gap_p50_s"), (0.95, "gap_p95_s")):
            lower = values[math.floor(q * (len(values) - 1))] / 1e6
            assert abs(estimates[src, dst][col] - lower) <= graph.GAP_ALPHA * lower * (1 + 1e-9), (src, dst, col)
    assert any(len(values) > 3 for *_, values in gaps.iter_rows())


def test_gap_table_counts_each_edge_gap_in_its_bucket() -> None:
    events = make_events(n_sessions=40, seed=5)
    config = FlowsConfig(idle_gap_s=900, patterns=False)
    result = compute_flows(events, config)
    seq, _ = sequence(events.lazy(), config)
    steps = graph.transitions(seq)
    gaps = graph.edge_names(steps, seq["action"].dtype.categories.to_list())
    table = result.dfg_gaps
    assert table.columns == ["src", "dst", "bin", "lower_s", "upper_s", "count"]
    assert table["count"].sum() == steps.height == result.dfg["count"].sum()
    joined = gaps.join(table, on=["src", "dst"]).with_columns((pl.col("gap_us") / 1e6).alias("gap_s"))
    inside = (pl.col("gap_s") > pl.col("lower_s")) & (pl.col("gap_s") <= pl.col("upper_s") * (1 + 1e-12))
    zero = (pl.col("gap_us") == 0) & (pl.col("upper_s") == 0)
    held = joined.filter(inside | zero).group_by("src", "dst", "bin").agg(pl.len().alias("n"))
    assert held.join(table, on=["src", "dst", "bin"], how="full", coalesce=True).filter(pl.col("n") != pl.col("count")).height == 0
    assert held.height == table.height
    # buckets are narrow: upper / lower = gamma of the sketch's relative accuracy
    widths = table.filter(pl.col("lower_s") > 0).select(pl.col("upper_s") / pl.col("lower_s"))
    assert widths.to_series().is_between(1.0, (1 + graph.GAP_ALPHA) / (1 - graph.GAP_ALPHA) * (1 + 1e-9)).all()


def test_weighted_columns_count_merged_events_as_repeats() -> None:
    rows = [
        {"ts": T0, "session_id": "s", "action": "edit", "weight": 3, "source_file": "f", "source_line": 1},
        {"ts": T0 + timedelta(seconds=2), "session_id": "s", "action": "save", "weight": 1, "source_file": "f", "source_line": 2},
    ]
    result = compute_flows(conform(pl.DataFrame(rows), EVENTS_SCHEMA), FlowsConfig(patterns=False))
    dfg = {(r["src"], r["dst"]): (r["count"], r["weighted_count"], r["weighted_sessions"]) for r in result.dfg.to_dicts()}
    assert dfg == {("edit", "save"): (1, 1, 1), ("edit", "edit"): (0, 2, 1)}
    assert result.summary["weighted_events"] == 4


def test_filters_by_time_user_ide_and_model() -> None:
    events = make_events(n_sessions=40, seed=4)
    lf = events.lazy()

    def kept(**kw: object) -> pl.DataFrame:
        return filter_events(lf, FlowsConfig(**kw)).collect()

    since, until = T0 + timedelta(days=1), T0 + timedelta(days=3)
    assert kept(since=since, until=until).height == events.filter((pl.col("ts") >= since) & (pl.col("ts") < until)).height
    assert kept(since=since.replace(tzinfo=None)).height == events.filter(pl.col("ts") >= since).height
    assert set(kept(users=("user1",))["user_id"].to_list()) == {"user1"}
    assert set(kept(ides=("jetbrains",))["ide"].to_list()) == {"jetbrains"}
    # a model keeps whole sessions: events tagged with it, and every event of a session id that has one
    tagged = events.filter(pl.col("attrs") == '{"model": "m-1"}')
    expected = events.filter((pl.col("attrs") == '{"model": "m-1"}') | pl.col("session_id").is_in(tagged["session_id"].drop_nulls().to_list()))
    assert kept(models=("m-1",)).sort("source_file", "source_line").equals(expected.sort("source_file", "source_line"))
    assert expected.height > tagged.height
    requests = conform(pl.DataFrame([{"session_id": "sess-0", "model": "gpt-x", "ts": T0}]), LLM_REQUESTS_SCHEMA).lazy()
    by_request = filter_events(lf, FlowsConfig(models=("gpt-x",)), requests).collect()
    assert by_request.height == events.filter(pl.col("session_id") == "sess-0").height > 0


def _reference_windows(cases: dict[str, list[dict]], k: int | None, w: float | None) -> tuple[int, Counter, Counter]:
    n, single, pair = 0, Counter(), Counter()
    for rows in cases.values():
        for i, row in enumerate(rows):
            win = set()
            for j in range(i, len(rows)):
                if k is not None and j - i >= k:
                    break
                if w is not None and (rows[j]["ts"] - row["ts"]).total_seconds() > w:
                    break
                win.add(rows[j]["action"])
            n += 1
            single.update(win)
            pair.update(itertools.permutations(sorted(win), 2))
    return n, single, pair


@pytest.mark.parametrize(("k", "w"), [(5, None), (1, None), (None, 3.5), (3, 300.0), (2, 0.0)])
def test_cooccurrence_matches_brute_force(k: int | None, w: float | None) -> None:
    events = make_events(n_sessions=35, seed=11)
    result = compute_flows(events, FlowsConfig(window_events=k, window_seconds=w, patterns=False))
    cases = defaultdict(list)
    for case, row in reference_cases(events, 1800.0):
        cases[case].append(row)
    n, single, pair = _reference_windows(cases, k, w)
    got = {(r["action"], r["other"]): r for r in result.cooccurrence.to_dicts()}
    assert {key: r["windows"] for key, r in got.items()} == dict(pair)
    for (a, b), r in got.items():
        assert (r["windows_a"], r["windows_b"]) == (single[a], single[b])
        assert math.isclose(r["support"], pair[a, b] / n)
        assert math.isclose(r["confidence"], pair[a, b] / single[a])
        assert math.isclose(r["lift"], pair[a, b] * n / (single[a] * single[b]))
        assert math.isclose(r["pmi"], math.log2(r["lift"]), abs_tol=1e-12)


def test_window_ends_never_cross_sessions() -> None:
    import numpy as np

    case = np.array([0, 0, 0, 1, 1, 2])
    ts = np.array([0, 10, 10, 11, 5_000_000, 6_000_000])
    assert window_ends(case, ts, None, None).tolist() == [2, 2, 2, 4, 4, 5]
    assert window_ends(case, ts, 2, None).tolist() == [1, 2, 2, 4, 4, 5]
    assert window_ends(case, ts, None, 0.00001).tolist() == [2, 2, 2, 3, 4, 5]


def test_outcomes_match_brute_force() -> None:
    events = make_events(n_sessions=60, seed=12)
    result = compute_flows(events, FlowsConfig(patterns=False, outcome_max_n=2))
    cases = defaultdict(list)
    for case, row in reference_cases(events, 1800.0):
        if row["action"] not in ("completion.requested", "completion.shown"):
            cases[case].append(row["action"])
    acc, rej = Counter(), Counter()
    for acts in cases.values():
        for i, a in enumerate(acts):
            if a in ("completion.accepted", "completion.rejected"):
                for n in (1, 2):
                    if i >= n:
                        (acc if a == "completion.accepted" else rej)[tuple(acts[i - n:i])] += 1
    got = {tuple(r["context"]): r for r in result.outcomes.to_dicts()}
    assert {k: (r["accepted"], r["rejected"]) for k, r in got.items()} == {k: (acc[k], rej[k]) for k in acc.keys() | rej.keys()}
    total_acc = sum(1 for acts in cases.values() for a in acts if a == "completion.accepted")
    total = sum(1 for acts in cases.values() for a in acts if a in ("completion.accepted", "completion.rejected"))
    for r in got.values():
        assert math.isclose(r["baseline_rate"], total_acc / total)
        assert math.isclose(r["lift"], (r["accepted"] / r["outcomes"]) / (total_acc / total))
        assert 0 <= r["wilson_low"] <= r["acceptance_rate"] <= r["wilson_high"] <= 1


def test_empty_input_gives_empty_tables() -> None:
    result = compute_flows(pl.DataFrame(schema=EVENTS_SCHEMA), FlowsConfig())
    assert result.summary["events"] == 0 and result.summary["sessions"] == 0
    assert all(df.height == 0 for df in result.tables().values())


def test_everything_filtered_out_gives_empty_tables() -> None:
    result = compute_flows(make_events(), FlowsConfig(since=T0 + timedelta(days=3650)))
    assert result.summary["events"] == 0 and result.dfg.height == 0


keys_strategy = st.lists(
    st.tuples(st.integers(0, 5), st.integers(-(2**40), 2**40), st.none() | st.integers(0, 3), st.none() | st.integers(0, 2**41)),
    min_size=1, max_size=40,
)


@settings(max_examples=100, deadline=None)
@given(keys_strategy, st.booleans())
def test_packed_sort_equals_plain_sort(rows: list[tuple], wide: bool) -> None:
    """The packed two-key sort orders like the four-key one, including nulls and its fallback."""
    df = pl.DataFrame(rows, schema={"k": pl.UInt64, "t": pl.Int64, "f": pl.UInt64, "line": pl.Int64}, orient="row")
    if wide:  # k too large to pack with t: the fallback path
        df = df.with_columns(pl.col("k") + 2**40)
    df = df.with_row_index("row")
    expected = df.sort(["k", "t", "f", "line"], nulls_last=True, maintain_order=True)["row"].to_list()
    assert graph._sort_order(df)["row"].to_list() == expected


@settings(max_examples=100, deadline=None)
@given(keys_strategy, st.booleans())
def test_presorted_fast_path_orders_like_the_full_sort(rows: list[tuple], presort: bool) -> None:
    """The one-key fast path gives the four-key order whenever it answers, and answers on rows already in order."""
    df = pl.DataFrame(rows, schema={"k": pl.UInt64, "t": pl.Int64, "f": pl.UInt64, "line": pl.Int64}, orient="row")
    if presort:  # each k's rows in (t, file, line) order, ks interleaved as in a time-ordered log
        df = df.sort(["t", "f", "line"], nulls_last=True, maintain_order=True)
    df = df.with_row_index("row")
    files = df["f"].cast(pl.String).str.zfill(3)  # file names whose order is the codes' order
    found = graph._presorted_order(df["k"].to_numpy(), df["t"].to_numpy(), files, df["line"])
    expected = df.sort(["k", "t", "f", "line"], nulls_last=True, maintain_order=True)
    if presort:
        assert found is not None
    if found is not None:
        order, k_sorted, t_sorted = found
        assert order.tolist() == expected["row"].to_list()
        assert (k_sorted.tolist(), t_sorted.tolist()) == (expected["k"].to_list(), expected["t"].to_list())
