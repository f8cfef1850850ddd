"""Flows: how actions follow each other within sessions.

``logmine flows OUT`` reads the workspace's ``events`` table and writes

- ``flows_dfg``: the directly-follows graph: per ordered pair of actions the transitions
  (``count``), the sessions holding it and the gap between the two events (mean, p50, p95,
  min, max, seconds). ``count`` equals pm4py's ``discover_dfg`` and the gaps its performance
  DFG, given cases = ``flows_sessions.session`` and events ordered by ``ts``, ties by
  ``source_file`` then ``source_line``. ``flows_dfg_gaps`` holds each edge's gap sketch: per
  ``bin`` (a :mod:`logmine.sketch` bucket of the gap in microseconds, relative accuracy 1 %;
  :data:`logmine.sketch.ZERO_BUCKET` holds the zero gaps) its ``(lower_s, upper_s]`` range
  in seconds and the ``count`` of gaps in it.
- ``flows_activities``: per action its events, sessions, session starts and ends.
- ``flows_ngrams``: contiguous action sequences of length 2..5, count and session support.
- ``flows_cooccurrence``: action pairs within a window of k events and/or W seconds.
- ``flows_patterns``: frequent sequential patterns (PrefixSpan semantics, optional max gap).
- ``flows_outcomes``: the n-grams before accepted vs rejected completions.
- ``flows_variants``: whole-session action sequences and their counts.
- ``flows_sessions``: the sessions themselves (after idle-gap splitting).

Sessions: a row's session is its ``session_id``; rows without one are grouped by user, IDE
and source file. Either way a session is split where two consecutive events are more than
``idle_gap_s`` apart (default 30 minutes); the pieces are named ``<session>~2``, ``~3``...

Partitions: :func:`compute_partial` on disjoint sets of *whole* sessions, then
:func:`merge_partials` and :func:`finalize`, gives exactly the counts, sums, means and gap
sketches of one run over everything; p50/p95 then come from the sketches (within 1 % of the
exact lower quantile) unless exact quantiles are supplied. A session that crosses a partition
boundary (a day, a file) must be assigned whole to one partition, e.g. by the date of its
first event, re-computing that partition while the session may still grow; otherwise the
step across the boundary is lost and the session counted twice. Sequential patterns are
not additive and are mined over the whole input.

Weights: each row is one event (pm4py parity). The ``weighted_*`` columns count a merged
JetBrains event of weight w as w consecutive occurrences (w-1 extra self-transitions,
without a gap). n-grams, windows, patterns and variants ignore weights.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from logmine.errors import OptionError
from logmine.pseudonyms import pseudonymise
from logmine.stages.flows import graph, windows
from logmine.stages.flows.patterns import PatternConfig, prefixspan
from logmine.stages.flows.render import write_pictures
from logmine.workspace import Workspace

log = logging.getLogger(__name__)

ProgressFn = Callable[[str, int, int], None]
TABLES = (
    "flows_dfg", "flows_dfg_gaps", "flows_activities", "flows_ngrams", "flows_cooccurrence",
    "flows_patterns", "flows_outcomes", "flows_variants", "flows_sessions",
)


def _no_progress(description: str, done: int, total: int) -> None:
    return None


@dataclass(frozen=True)
class FlowsConfig:
    """Options of the flows stage."""

    idle_gap_s: float | None = 1800.0
    """Split a session where consecutive events are further apart than this; None: never."""
    since: datetime | None = None
    """Only events at or after this time."""
    until: datetime | None = None
    """Only events before this time."""
    users: tuple[str, ...] = ()
    """Only these users (pseudonymised ids, or raw ids when run on a workspace)."""
    ides: tuple[str, ...] = ()
    """Only these IDEs."""
    models: tuple[str, ...] = ()
    """Only sessions that used one of these models (llm_requests.model or an event's attrs.model)."""
    ngram_lengths: tuple[int, int] = (2, 5)
    """Shortest and longest n-gram."""
    ngram_min_sessions: int = 1
    """Keep n-grams found in at least this many sessions."""
    window_events: int | None = 5
    """Co-occurrence window: this many events from the anchor on (None: no event limit)."""
    window_seconds: float | None = None
    """Co-occurrence window: events at most this many seconds after the anchor (None: no time limit)."""
    min_support: float = 0.01
    """Sequential patterns: least share of sessions that must contain a pattern."""
    max_pattern_length: int = 4
    """Sequential patterns: longest pattern."""
    min_pattern_length: int = 1
    """Sequential patterns: shortest pattern reported."""
    min_pattern_sessions: int = 2
    """Sequential patterns: least number of sessions, whatever the share (1 % of 8 sessions is not a pattern)."""
    max_gap: int | None = None
    """Sequential patterns: consecutive items at most this many events apart (1: contiguous)."""
    patterns: bool = True
    """Mine sequential patterns (the costliest step)."""
    outcome_max_n: int = 3
    """Longest n-gram looked at before a completion outcome."""
    exact_quantiles: bool = True
    """Exact gap p50/p95 (else estimated from the mergeable gap sketches)."""
    graph_edges: int = 60
    """Most edges drawn in the DOT/Mermaid/SVG picture (the most frequent)."""

    def check(self) -> None:
        lo, hi = self.ngram_lengths
        if not 1 <= lo <= hi <= 8:
            raise OptionError("--ngram-lengths", self.ngram_lengths, "1 <= min <= max <= 8")
        if not 0 < self.min_support <= 1:
            raise OptionError("--min-support", self.min_support, "a share of sessions in (0, 1]")
        if not 1 <= self.min_pattern_length <= self.max_pattern_length:
            raise OptionError("--max-length", self.max_pattern_length, f"at least 1 and at least the shortest length {self.min_pattern_length}")
        if self.min_pattern_sessions < 1:
            raise OptionError("--min-sessions", self.min_pattern_sessions, "at least 1")
        if self.max_gap is not None and self.max_gap < 1:
            raise OptionError("--max-gap", self.max_gap, "at least 1 event")
        if self.window_events is not None and self.window_events < 1:
            raise OptionError("--window-events", self.window_events, "at least 1")
        if self.window_seconds is not None and self.window_seconds < 0:
            raise OptionError("--window-seconds", self.window_seconds, "not negative")
        if self.window_events is None and self.window_seconds is None:
            raise OptionError("--window-events", None, "set a window in events, seconds or both")
        if self.idle_gap_s is not None and self.idle_gap_s < 0:
            raise OptionError("--idle-gap", self.idle_gap_s, "not negative")


@dataclass
class FlowsPartial:
    """Additive counts over a set of whole sessions (see the module doc)."""

    sessions: int
    events: int
    activities: pl.DataFrame
    dfg: pl.DataFrame
    gaps: pl.DataFrame
    ngrams: pl.DataFrame
    variants: pl.DataFrame
    windows: int
    window_actions: pl.DataFrame
    window_pairs: pl.DataFrame
    outcomes: pl.DataFrame


@dataclass
class FlowsResult:
    """Every flows table, a summary, and the files written (empty for :func:`compute_flows`)."""

    dfg: pl.DataFrame
    dfg_gaps: pl.DataFrame
    activities: pl.DataFrame
    ngrams: pl.DataFrame
    cooccurrence: pl.DataFrame
    patterns: pl.DataFrame
    outcomes: pl.DataFrame
    variants: pl.DataFrame
    sessions: pl.DataFrame
    summary: dict[str, Any] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)

    def tables(self) -> dict[str, pl.DataFrame]:
        return {
            "flows_dfg": self.dfg, "flows_dfg_gaps": self.dfg_gaps, "flows_activities": self.activities,
            "flows_ngrams": self.ngrams, "flows_cooccurrence": self.cooccurrence, "flows_patterns": self.patterns,
            "flows_outcomes": self.outcomes, "flows_variants": self.variants, "flows_sessions": self.sessions,
        }

    def top(self, n: int = 10) -> dict[str, list[dict[str, Any]]]:
        """The head of each table, JSON-ready, for reports."""
        out = self.outcomes.filter(pl.col("outcomes") >= 5)
        return {
            "dfg": _rows(self.dfg.select("src", "dst", "count", "sessions", "gap_mean_s", "gap_p50_s", "gap_p95_s"), n),
            "ngrams": _rows(self.ngrams.sort(["count", "n"], descending=[True, True]).select("n", "ngram", "count", "sessions", "support"), n),
            "cooccurrence": _rows(self.cooccurrence.sort(["lift", "windows"], descending=True).filter(pl.col("windows") >= 5)
                                  .select("action", "other", "windows", "confidence", "lift", "pmi"), n),
            "patterns": _rows(self.patterns.filter(pl.col("length") > 1).select("pattern", "sessions", "support"), n),
            "outcomes_raise": _rows(out.sort("lift", descending=True, nulls_last=True).select("context", "outcomes", "acceptance_rate", "lift", "wilson_low", "wilson_high"), n),
            "outcomes_lower": _rows(out.sort("lift", nulls_last=True).select("context", "outcomes", "acceptance_rate", "lift", "wilson_low", "wilson_high"), n),
            "variants": _rows(self.variants.select("variant", "sessions", "share"), n),
        }


def _rows(df: pl.DataFrame, n: int) -> list[dict[str, Any]]:
    return df.head(n).to_dicts()


# -- the pure core -------------------------------------------------------------------------

def filter_events(events: pl.LazyFrame, config: FlowsConfig, requests: pl.LazyFrame | None = None) -> pl.LazyFrame:
    """Apply the time range, user, IDE and model filters."""
    lf = events
    if config.since is not None:
        lf = lf.filter(pl.col("ts") >= _utc(config.since))
    if config.until is not None:
        lf = lf.filter(pl.col("ts") < _utc(config.until))
    if config.users:
        lf = lf.filter(pl.col("user_id").is_in(list(config.users)))
    if config.ides:
        lf = lf.filter(pl.col("ide").is_in(list(config.ides)))
    if config.models:
        models = list(config.models)
        in_attrs = pl.col("attrs").str.json_path_match("$.model").is_in(models).fill_null(False)
        keep = in_attrs
        if requests is not None:
            sessions = requests.filter(pl.col("model").is_in(models)).select("session_id").drop_nulls().unique().collect()
            keep = keep | pl.col("session_id").is_in(sessions["session_id"].to_list()).fill_null(False)
        tagged = lf.filter(keep).select("session_id").drop_nulls().unique().collect()["session_id"].to_list()
        lf = lf.filter(keep | pl.col("session_id").is_in(tagged).fill_null(False))
    return lf


def _utc(ts: datetime) -> datetime:
    from datetime import UTC

    return ts.replace(tzinfo=UTC) if ts.tzinfo is None else ts.astimezone(UTC)


def sequence(events: pl.LazyFrame, config: FlowsConfig) -> tuple[pl.DataFrame, pl.LazyFrame]:
    """The sessionized frame and its per-row session info (see :func:`logmine.stages.flows.graph.sessionize`)."""
    return graph.sessionize(events, config.idle_gap_s)


def compute_partial(seq: pl.DataFrame, config: FlowsConfig, steps: pl.DataFrame | None = None, exact: bool = False) -> FlowsPartial:
    """Additive counts of one set of whole sessions.

    With ``exact`` the DFG also carries the non-additive exact quantile columns (see
    :func:`split_exact`), computed in the same pass; such a partial must not be merged.
    """
    steps = graph.transitions(seq) if steps is None else steps
    dfg, gaps = graph.dfg_partial(seq, steps, exact)
    lo, hi = config.ngram_lengths
    n_windows, w_actions, w_pairs = windows.cooccurrence_partial(seq, config.window_events, config.window_seconds)
    return FlowsPartial(
        sessions=int(seq["case"].n_unique()) if seq.height else 0,
        events=seq.height,
        activities=graph.activities_partial(seq),
        dfg=dfg,
        gaps=gaps,
        ngrams=graph.ngrams_partial(seq, range(lo, hi + 1)),
        variants=graph.variants_partial(seq),
        windows=n_windows,
        window_actions=w_actions,
        window_pairs=w_pairs,
        outcomes=windows.outcomes_partial(seq, config.outcome_max_n),
    )


def split_exact(part: FlowsPartial) -> pl.DataFrame | None:
    """Take the exact quantile columns out of a partial's DFG (None if it has none)."""
    cols = ["mid_lo_us", "mid_hi_us", "p95_us"]
    if "mid_lo_us" not in part.dfg.columns:
        return None
    exact = part.dfg.select("src", "dst", *cols)
    part.dfg = part.dfg.drop(cols)
    return exact


def merge_partials(parts: Sequence[FlowsPartial]) -> FlowsPartial:
    """Add partials of disjoint sets of whole sessions."""
    parts = [p for p in parts if p.events]
    if not parts:
        raise ValueError("no non-empty partials to merge")
    m = graph.merge_sum
    n_windows, w_actions, w_pairs = windows.merge_cooccurrence([(p.windows, p.window_actions, p.window_pairs) for p in parts])
    return FlowsPartial(
        sessions=sum(p.sessions for p in parts),
        events=sum(p.events for p in parts),
        activities=m([p.activities for p in parts], ["action"]),
        dfg=m([p.dfg for p in parts], ["src", "dst"], mins=("gap_min_us",), maxs=("gap_max_us",)),
        gaps=graph.merge_gaps([p.gaps for p in parts]),
        ngrams=m([p.ngrams for p in parts], ["n", "ngram"]),
        variants=m([p.variants for p in parts], ["variant"]),
        windows=n_windows, window_actions=w_actions, window_pairs=w_pairs,
        outcomes=m([p.outcomes for p in parts], ["n", "context"]) if any(p.outcomes.height for p in parts) else parts[0].outcomes,
    )


def finalize(part: FlowsPartial, config: FlowsConfig, exact: pl.DataFrame | None = None) -> dict[str, pl.DataFrame]:
    """The reported tables (all but patterns and sessions) from additive counts."""
    total = max(part.sessions, 1)
    gaps = part.gaps.with_columns(*graph.bucket_bounds_s(part.gaps["bucket"]), pl.col("bucket").cast(pl.Int64).alias("bin"))
    gaps = gaps.select("src", "dst", "bin", "lower_s", "upper_s", "count").sort("src", "dst", "bin")
    return {
        "dfg": graph.finalize_dfg(part.dfg, part.gaps, exact),
        "dfg_gaps": gaps,
        "activities": part.activities.sort(["events", "action"], descending=[True, False]),
        "ngrams": part.ngrams.filter(pl.col("sessions") >= config.ngram_min_sessions)
        .with_columns((pl.col("sessions") / total).alias("support"))
        .sort(["n", "count", "ngram"], descending=[False, True, False]),
        "cooccurrence": windows.finalize_cooccurrence(part.windows, part.window_actions, part.window_pairs),
        "outcomes": windows.finalize_outcomes(part.outcomes),
        "variants": part.variants.with_columns(
            pl.col("variant").list.len().cast(pl.Int64).alias("length"), (pl.col("sessions") / total).alias("share")
        ).select("variant", "length", "sessions", "share").sort(["sessions", "length", "variant"], descending=[True, False, False]),
    }


def mine_patterns(seq: pl.DataFrame, config: FlowsConfig, tick: Callable[[int], None] | None = None) -> pl.DataFrame:
    """Frequent sequential patterns over the sessions (PrefixSpan, see flows_patterns)."""
    schema = {"pattern": pl.List(pl.String), "length": pl.Int64, "sessions": pl.Int64, "support": pl.Float64}
    n_sessions = int(seq["case"].n_unique()) if seq.height else 0
    if not config.patterns or n_sessions == 0:
        return pl.DataFrame(schema=schema)
    min_count = max(1, config.min_pattern_sessions, math.ceil(config.min_support * n_sessions - 1e-9))
    codes = seq["action"].to_physical().to_numpy().astype(np.int64)
    case = seq["case"].to_numpy()
    offsets = np.r_[0, np.flatnonzero(np.diff(case)) + 1, case.size]
    found = prefixspan(codes, offsets, PatternConfig(min_count, config.max_pattern_length, config.min_pattern_length, config.max_gap), tick)
    vocab = seq["action"].dtype.categories.to_list()
    rows = {"pattern": [[vocab[i] for i in p] for p, _ in found], "length": [len(p) for p, _ in found], "sessions": [s for _, s in found]}
    df = pl.DataFrame(rows, schema={k: schema[k] for k in rows})
    return df.with_columns((pl.col("sessions") / n_sessions).alias("support")).sort(
        ["sessions", "length", "pattern"], descending=[True, False, False]
    )


def compute_flows(events: pl.LazyFrame | pl.DataFrame, config: FlowsConfig | None = None, requests: pl.LazyFrame | None = None,
                  progress: ProgressFn = _no_progress) -> FlowsResult:
    """Every flows table from an events frame (the workspace's ``events`` columns); no I/O."""
    config = config or FlowsConfig()
    config.check()
    started = time.perf_counter()
    steps_total = 5 if config.patterns else 4
    progress("flows sessions", 0, steps_total)
    lf = filter_events(events.lazy(), config, requests)
    seq, info = sequence(lf, config)
    progress("flows graph", 1, steps_total)
    part = compute_partial(seq, config, exact=config.exact_quantiles)
    progress("flows finalize", 2, steps_total)
    tables = finalize(part, config, split_exact(part))
    sessions = graph.sessions_table(seq, info)
    progress("flows patterns", 3, steps_total)
    tick = lambda found: progress(f"flows patterns ({found:,} found)", 3, steps_total)  # noqa: E731
    patterns = mine_patterns(seq, config, tick) if config.patterns else mine_patterns(seq.head(0), config)
    progress("flows", steps_total, steps_total)
    result = FlowsResult(patterns=patterns, sessions=sessions, **tables)
    result.summary = {
        "events": part.events,
        "sessions": part.sessions,
        "actions": tables["activities"].height,
        "edges": tables["dfg"].filter(pl.col("count") > 0).height,
        "transitions": int(tables["dfg"]["count"].sum()) if tables["dfg"].height else 0,
        "weighted_events": int(seq["weight"].sum()) if seq.height else 0,
        "split_sessions": int(sessions.filter(pl.col("segment") > 1).height),
        "variants": tables["variants"].height,
        "ngrams": tables["ngrams"].height,
        "patterns": patterns.height,
        "outcomes": int(part.outcomes.filter(pl.col("n") == 0)[["accepted", "rejected"]].sum_horizontal().sum()) if part.outcomes.height else 0,
        "seconds": round(time.perf_counter() - started, 3),
        "config": _config_json(config),
    }
    return result


def _config_json(config: FlowsConfig) -> dict[str, Any]:
    return {k: (v.isoformat() if isinstance(v, datetime) else list(v) if isinstance(v, tuple) else v) for k, v in asdict(config).items()}


# -- the workspace edge --------------------------------------------------------------------

def flows(workspace: Workspace | Path | str, config: FlowsConfig | None = None, progress: ProgressFn = _no_progress) -> FlowsResult:
    """Compute flows over a workspace's events, write the ``flows_*`` tables and OUT/flows/ pictures."""
    ws = workspace if isinstance(workspace, Workspace) else Workspace.open(workspace)
    config = config or FlowsConfig()
    if config.users:
        config = replace(config, users=_resolve_users(ws, config.users))
    events = ws.scan("events")
    requests = ws.scan("llm_requests") if config.models and ws.has_table("llm_requests") else None
    result = compute_flows(events, config, requests, progress)
    with ws.lock():
        ws = ws.reload()
        txn = ws.transaction()
        for name, df in result.tables().items():
            txn.replace_table(name, df)
        txn.commit()
    out_dir = ws.root / "flows"
    result.files = write_pictures(out_dir, result.dfg, result.activities, config.graph_edges)
    summary_path = out_dir / "summary.json"
    summary_path.write_text(json.dumps(result.summary, indent=2, default=str, ensure_ascii=False))
    result.files["summary"] = str(summary_path)
    result.summary["workspace"] = str(ws.root)
    return result


def _resolve_users(ws: Workspace, users: tuple[str, ...]) -> tuple[str, ...]:
    """Users as stored: pseudonymised ids pass through, raw ids are hashed with the workspace key."""
    hashed = pseudonymise(pl.Series(list(users), dtype=pl.String), ws.secret_key()).to_list()
    return tuple(dict.fromkeys([*users, *hashed]))
