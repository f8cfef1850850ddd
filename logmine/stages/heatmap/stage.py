"""The heatmap stage against a workspace.

:func:`heatmap` recomputes only the days whose requests changed since the last run (a
fingerprint per day in ``heatmap_days``), keeps each day's sketch as a partition of
``heatmap_sketch``, merges them for the ``since``/``until`` window and writes the ``heatmap_*``
tables, the PNGs and ``OUT/heatmap/index.html``.
"""

from __future__ import annotations

import time
from collections import Counter
from datetime import UTC, date, datetime
from pathlib import Path

import polars as pl

from logmine.errors import OptionError
from logmine.stages.heatmap import store
from logmine.stages.heatmap.aggregate import (
    LABELS_VERSION,
    HeatmapConfig,
    HeatmapResult,
    ProgressFn,
    _no_progress,
    finalize,
    measure,
    merge_partials,
    sketch_partial,
)
from logmine.stages.heatmap.render import render
from logmine.workspace import Workspace


def heatmap(workspace: Workspace | Path | str, config: HeatmapConfig | None = None, progress: ProgressFn = _no_progress) -> HeatmapResult:
    """Compute (incrementally) and write the token latency heatmaps of ``workspace``."""
    config = config or HeatmapConfig()
    _check(config)
    started = time.perf_counter()
    ws = workspace if isinstance(workspace, Workspace) else Workspace.open(workspace)
    with ws.lock():
        ws = ws.reload()
        plan = store.plan_days(ws, config, LABELS_VERSION)
        txn = ws.transaction()
        store.ensure_tables(txn)
        partials: list[pl.LazyFrame | pl.DataFrame] = store.stored_partials(ws, plan.reused)
        figures = {}
        for index, day in enumerate(plan.compute):
            progress(f"heatmap {day}", index, len(plan.compute))
            tokens, requests = measure(store.read_day(ws, day), config.chunk_fraction)
            partial = sketch_partial(tokens, config.alpha, config.exact_max)
            figures[day] = store.put_day(txn, day, partial, tokens if config.keep_tokens else None, requests, config.alpha)
            partials.append(partial)
        progress("heatmap", len(plan.compute), len(plan.compute))
        store.write_days(txn, plan, figures)
        sketch = store.filtered(merge_partials(partials, config.exact_max), config)
        tables = finalize(sketch, config.alpha, config.include_first_token, config.exact_max, config.min_rank_tokens)
        for name, table in tables.items():
            txn.replace_table(name, table)
        txn.commit()
    result = HeatmapResult(str(ws.root), tables, days_computed=plan.compute, days_reused=plan.reused)
    _account(result, store.read_requests(ws, plan.kept, config))
    if config.html or config.png:
        out_dir = config.out_dir or ws.root / "heatmap"
        examples = store.slow_examples(ws, plan.kept, config) if config.html else None
        result.files = [str(p) for p in render(result, out_dir, config, examples)]
    result.seconds = time.perf_counter() - started
    return result


def _check(config: HeatmapConfig) -> None:
    if config.since and config.until and config.since > config.until:
        raise OptionError("--since", config.since.isoformat(), f"must not be after --until {config.until.isoformat()}")
    if not 0.0 < config.alpha < 0.5:
        raise OptionError("alpha", config.alpha, "a relative accuracy in (0, 0.5)")
    if not 0.0 <= config.chunk_fraction <= 1.0:
        raise OptionError("chunk_fraction", config.chunk_fraction, "a fraction in [0, 1]")
    if config.exact_max < 0 or config.min_rank_tokens < 0:
        raise OptionError("exact_max / min_rank_tokens", (config.exact_max, config.min_rank_tokens), "counts of 0 or more")


def _account(result: HeatmapResult, requests: pl.DataFrame) -> None:
    result.requests = requests.height
    measured = requests.filter(pl.col("status") == "measured")
    result.measured = measured.height
    result.tokens = int(measured["tokens"].sum() or 0)
    result.skipped = _counts(requests["skip_reason"].drop_nulls())
    result.granularity = _counts(measured["granularity"].drop_nulls())
    result.language_sources = _counts(measured["language_source"].drop_nulls())
    result.issues = dict(Counter(i for issues in requests["issues"].to_list() for i in (issues or [])))


def _counts(series: pl.Series) -> dict[str, int]:
    return {str(k): int(v) for k, v in Counter(series.to_list()).items()}


def parse_day(value: str | date | None, option: str) -> date | None:
    """A ``YYYY-MM-DD`` (or ISO datetime) option as a UTC date."""
    if value is None or isinstance(value, date):
        return value  # type: ignore[return-value]
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise OptionError(option, value, "a date like 2025-01-31") from None
    return (parsed.astimezone(UTC) if parsed.tzinfo else parsed).date()


__all__ = ["heatmap", "parse_day"]
