"""Aggregating replayed requests: per-template records and the traffic-weighted total of `logmine validate`."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Any

PAIRS = ("prompt_tokens", "uncached_prompt_tokens", "output_tokens", "ttft_ms", "tokens_per_s", "itl_p50_ms", "itl_p90_ms", "itl_p99_ms")
"""Metrics reported for both prompts (``original``: the logged one, ``compressed``: the served one) and their ratio."""
MEANS = ("same_prompt", "exact_match", "edit_similarity", "parses_original", "parses_compressed", "cached_prompt_tokens")
"""Metrics reported once."""


def summarise(results: Sequence[Any]) -> dict[str, Any]:
    """Agreement and speed over ``results`` (:class:`~logmine_serving.validate.CaseResult`): means,
    medians, latency percentiles and ratios."""
    if not results:
        return {"requests": 0}
    o = [r.original for r in results]
    c = [r.compressed for r in results]
    out: dict[str, Any] = {
        "requests": len(results),
        "same_prompt": _mean([r.same_prompt for r in results]),
        "exact_match": _mean([r.exact for r in results]),
        "edit_similarity": _mean([r.edit_similarity for r in results]),
        "parses_original": _mean([r.parses_original for r in results if r.parses_original is not None]),
        "parses_compressed": _mean([r.parses_compressed for r in results if r.parses_compressed is not None]),
        "prompt_tokens": _pair(_mean([x.prompt_tokens for x in o]), _mean([x.prompt_tokens for x in c])),
        "uncached_prompt_tokens": _pair(_mean([x.prompt_tokens - x.cached_tokens for x in o]),
                                        _mean([x.prompt_tokens - x.cached_tokens for x in c])),
        "cached_prompt_tokens": _mean([x.cached_tokens for x in c]),
        "output_tokens": _pair(_mean([len(x.token_ids) for x in o]), _mean([len(x.token_ids) for x in c])),
        "ttft_ms": _pair(_median([x.ttft for x in o], 1000), _median([x.ttft for x in c], 1000)),
        "tokens_per_s": _pair(_median([x.tokens_per_s for x in o]), _median([x.tokens_per_s for x in c])),
    }
    for q in (50, 90, 99):
        out[f"itl_p{q}_ms"] = _pair(_percentile([d for x in o for d in x.inter_token], q, 1000),
                                    _percentile([d for x in c for d in x.inter_token], q, 1000))
    return out


def weighted_total(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The traffic-weighted total of per-template records (each weighted by its ``n_requests``):
    requests and skips add up; every other metric is the weighted mean over the templates that have it,
    and a pair's ratio is that of its weighted means."""
    out: dict[str, Any] = {"requests": sum(r.get("requests", 0) for r in records),
                           "skipped": sum(r.get("skipped", 0) for r in records), "weighting": "n_requests"}
    measured = [r for r in records if r.get("requests")]
    for key in MEANS:
        out[key] = _weighted([(r.get(key), r.get("n_requests", 1)) for r in measured])
    for key in PAIRS:
        o = _weighted([(r.get(key, {}).get("original"), r.get("n_requests", 1)) for r in measured])
        c = _weighted([(r.get(key, {}).get("compressed"), r.get("n_requests", 1)) for r in measured])
        out[key] = _pair(o, c)
    return out


def flat_record(record: Mapping[str, Any]) -> dict[str, Any]:
    """``{"ttft_ms": {"original": 1}}`` -> ``{"ttft_ms_original": 1}`` (for tables)."""
    out: dict[str, Any] = {}
    for key, value in record.items():
        if isinstance(value, Mapping):
            out.update({f"{key}_{k}": v for k, v in value.items()})
        else:
            out[key] = value
    return out


def _weighted(pairs: Sequence[tuple[Any, float]]) -> float | None:
    vals = [(float(v), w) for v, w in pairs if v is not None]
    mass = sum(w for _, w in vals)
    return sum(v * w for v, w in vals) / mass if mass else None


def _pair(original: float | None, compressed: float | None) -> dict[str, float | None]:
    ratio = compressed / original if original and compressed is not None else None
    return {"original": original, "compressed": compressed, "ratio": ratio}


def _mean(values: Sequence[Any]) -> float | None:
    return float(statistics.fmean(float(v) for v in values)) if values else None


def _median(values: Sequence[float | None], scale: float = 1.0) -> float | None:
    vals = [v * scale for v in values if v is not None]
    return float(statistics.median(vals)) if vals else None


def _percentile(values: Sequence[float], q: int, scale: float = 1.0) -> float | None:
    if not values:
        return None
    ordered = sorted(v * scale for v in values)
    k = (len(ordered) - 1) * q / 100
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return float(ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo))
