"""The heatmap stage's pictures: Vega-Lite heatmaps as PNGs and one self-contained HTML page.

Each chart is one Vega-Lite spec (built with Altair) rendered offline by vl-convert: to PNG,
and embedded in ``index.html`` with the Vega/Vega-Lite/vega-embed bundle inlined, so the page
opens without a network. The page also holds the token-type table, the request accounting and
a *slow tokens* view: real completions with each token coloured by its latency.
"""

from __future__ import annotations

import json
import logging
import math
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from logmine.errors import MissingDependencyError
from logmine.sketch import ZERO_BUCKET, bucket_bounds
from logmine.stages.heatmap.aggregate import POSITION_BUCKETS

if TYPE_CHECKING:
    from logmine.stages.heatmap.aggregate import HeatmapConfig, HeatmapResult

log = logging.getLogger(__name__)

METRICS = {"mean_us": "mean", "p50_us": "p50", "p95_us": "p95", "p99_us": "p99"}
MAX_TIME_COLUMNS = 240
"""The latency heat map merges time into wider bins beyond this many columns."""
MAX_LATENCY_ROWS = 120
"""... and merges adjacent sketch buckets beyond this many rows."""
PAGE_TEMPLATE = Path(__file__).with_name("page.html.j2")


def _imports() -> tuple[Any, Any]:
    try:
        import altair as alt
        import vl_convert as vlc
    except ImportError as exc:  # pragma: no cover - the viz extra is missing
        raise MissingDependencyError(exc.name or "altair", "viz", "rendering heatmaps (or run with --no-png --no-html)") from exc
    return alt, vlc


def chart_specs(result: HeatmapResult, alpha: float) -> dict[str, tuple[str, dict[str, Any]]]:
    """``name -> (title, Vega-Lite spec)`` for every heatmap that has data."""
    alt, _ = _imports()
    t = result.tables
    specs: dict[str, tuple[str, dict[str, Any]]] = {}
    order = [name for _, _, name in POSITION_BUCKETS]
    views = [
        ("type_position", "Token type × position in the completion", t["heatmap_by_type_position"], "position_bucket", "token_type", order),
        ("model_type", "Model × token type", t["heatmap_by_model_type"], "token_type", "model", None),
        ("language_type", "Language × token type", t["heatmap_by_language_type"], "token_type", "language", None),
        ("hour_model", "Hour of day (UTC) × model", t["heatmap_by_hour_model"], "hour", "model", list(range(-1, 24))),
    ]
    for name, title, table, x, y, x_order in views:
        if table.height:
            specs[name] = (title, _metric_heatmap(alt, name, table, x, y, x_order).to_dict())
    latency = _latency_time_chart(alt, t["heatmap_latency_time"], alpha)
    if latency is not None:
        specs["latency_time"] = ("Latency heat map: time × latency (sketch buckets), colour = tokens", latency.to_dict())
    return specs


def _metric_heatmap(alt: Any, name: str, table: pl.DataFrame, x: str, y: str, x_order: list[Any] | None) -> Any:
    metric = alt.param(name=f"{name}_metric", value="mean_us",
                       bind=alt.binding_select(options=list(METRICS), labels=list(METRICS.values()), name="latency "))
    data = table.select(x, y, "count", *METRICS).to_dicts()
    x_enc = alt.X(f"{x}:O", sort=x_order, title=x.replace("_", " "))
    return (
        alt.Chart(alt.Data(values=data))
        .transform_fold(list(METRICS), as_=["metric", "value"])
        .transform_filter(alt.datum.metric == metric)
        .mark_rect()
        .encode(
            x=x_enc,
            y=alt.Y(f"{y}:N", title=y.replace("_", " ")),
            color=alt.Color("value:Q", scale=alt.Scale(type="log", scheme="inferno", reverse=True), title="latency (µs)"),
            tooltip=[alt.Tooltip(f"{x}:O"), alt.Tooltip(f"{y}:N"), alt.Tooltip("count:Q", format=","),
                     *[alt.Tooltip(f"{m}:Q", title=f"{label} (µs)", format=",.0f") for m, label in METRICS.items()]],
        )
        .add_params(metric)
        .properties(width=420, height=alt.Step(22))
    )


def latency_time_data(table: pl.DataFrame, alpha: float) -> tuple[pl.DataFrame, str]:
    """The latency heat map's cells (time, lower, upper, count) and the time unit used."""
    cells = table.filter((pl.col("bucket") != ZERO_BUCKET) & (pl.col("hour") >= 0))
    if cells.height == 0:
        return pl.DataFrame(schema={"time": pl.String, "lower": pl.Float64, "upper": pl.Float64, "count": pl.Int64}), "hours"
    lo_b, hi_b = int(cells["bucket"].min()), int(cells["bucket"].max())  # type: ignore[arg-type]
    k = max(1, math.ceil((hi_b - lo_b + 1) / MAX_LATENCY_ROWS))
    hours = cells.select(pl.concat_str("day", pl.lit("T"), pl.col("hour").cast(pl.String).str.zfill(2))).n_unique()
    unit = "hours" if hours <= MAX_TIME_COLUMNS else "date"
    time = pl.concat_str("day", pl.lit("T"), pl.col("hour").cast(pl.String).str.zfill(2), pl.lit(":00:00Z")) if unit == "hours" \
        else pl.concat_str("day", pl.lit("T00:00:00Z"))
    merged = (
        cells.with_columns(time.alias("time"), (pl.col("bucket") // k).alias("group"))
        .group_by("time", "group").agg(pl.col("count").sum()).sort("time", "group")
    )
    groups = merged["group"].to_numpy().astype(np.int64)
    lower, _ = bucket_bounds(groups * k, alpha)
    _, upper = bucket_bounds(groups * k + k - 1, alpha)
    return merged.with_columns(pl.Series("lower", lower), pl.Series("upper", upper)).drop("group"), unit


def _latency_time_chart(alt: Any, table: pl.DataFrame, alpha: float) -> Any | None:
    cells, unit = latency_time_data(table, alpha)
    if cells.height == 0:
        return None
    time_unit = "yearmonthdatehours" if unit == "hours" else "yearmonthdate"
    return (
        alt.Chart(alt.Data(values=cells.to_dicts()))
        .mark_rect()
        .encode(
            x=alt.X("time:T", timeUnit=time_unit, title="time (UTC)"),
            y=alt.Y("lower:Q", scale=alt.Scale(type="log"), title="token latency (µs, log buckets)"),
            y2="upper:Q",
            color=alt.Color("count:Q", scale=alt.Scale(type="log", scheme="yelloworangered"), title="tokens"),
            tooltip=[alt.Tooltip("time:T", timeUnit=time_unit), alt.Tooltip("lower:Q", format=",.1f", title="from µs"),
                     alt.Tooltip("upper:Q", format=",.1f", title="to µs"), alt.Tooltip("count:Q", format=",")],
        )
        .properties(width=640, height=320)
    )


def render(result: HeatmapResult, out_dir: Path, config: HeatmapConfig, examples: pl.DataFrame | None) -> list[Path]:
    """Write the PNGs (``config.png``) and ``index.html`` (``config.html``) under ``out_dir``."""
    alt, vlc = _imports()
    out_dir.mkdir(parents=True, exist_ok=True)
    specs = chart_specs(result, config.alpha)
    vl_version = _vl_version(alt, vlc)
    written: list[Path] = []
    if config.png:
        for name, (_, spec) in specs.items():
            path = out_dir / f"{name}.png"
            path.write_bytes(vlc.vegalite_to_png(spec, vl_version=vl_version, scale=2))
            written.append(path)
    if config.html:
        path = out_dir / "index.html"
        path.write_text(page_html(result, specs, examples, config, vlc.javascript_bundle(vl_version=vl_version)), encoding="utf-8")
        written.append(path)
    log.info("heatmap: wrote %d files under %s", len(written), out_dir)
    return written


def _vl_version(alt: Any, vlc: Any) -> str | None:
    wanted = ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
    return wanted if wanted in vlc.get_vegalite_versions() else None


# -- the page ------------------------------------------------------------------------------------
def page_html(
    result: HeatmapResult, specs: dict[str, tuple[str, dict[str, Any]]], examples: pl.DataFrame | None,
    config: HeatmapConfig, bundle: str,
) -> str:
    """The self-contained page: inline scripts only, data inline, no external references."""
    import jinja2

    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined)
    template = env.from_string(PAGE_TEMPLATE.read_text(encoding="utf-8"))
    charts = [{"id": f"chart-{name}", "title": title} for name, (title, _) in specs.items()]
    spec_json = json.dumps({f"chart-{name}": spec for name, (_, spec) in specs.items()}, ensure_ascii=False)
    return template.render(
        title="logmine token latency heatmaps",
        generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        window=_window(config),
        summary=result.summary(),
        table=result.table_rows(),
        extra=result.by_type.to_dicts(),
        ttft=result.ttft_rows(),
        include_first=config.include_first_token,
        exact_max=config.exact_max,
        min_rank_tokens=config.min_rank_tokens,
        charts=charts,
        examples=_examples(examples) if examples is not None else [],
        spec_json=_script_safe(spec_json.replace("</", "<\\/")),
        bundle=_script_safe(re.sub("</(script)", r"<\\/\1", bundle, flags=re.IGNORECASE)),
    )


def _script_safe(text: str) -> Any:
    import markupsafe

    return markupsafe.Markup(text)


def _window(config: HeatmapConfig) -> str:
    parts = [f"since {config.since}" if config.since else "from the first day", f"until {config.until}" if config.until else "to the last day"]
    if config.model:
        parts.append(f"model {config.model}")
    if config.language:
        parts.append(f"language {config.language}")
    return ", ".join(parts)


def _examples(tokens: pl.DataFrame) -> list[dict[str, Any]]:
    """Completions for the slow-tokens view: each token with its colour and a tooltip."""
    if tokens.height == 0:
        return []
    later = tokens.filter(pl.col("position") > 1)["latency_us"].to_numpy()
    lo, hi = (np.percentile(later, [5, 99]) if later.size else (1.0, 10.0))
    lo, hi = max(float(lo), 1.0), max(float(hi), float(lo) * 1.01 + 1.0)
    out = []
    for (rid,), group in tokens.group_by("request_id", maintain_order=True):
        first = group.row(0, named=True)
        spans = []
        for row in group.iter_rows(named=True):
            us = row["latency_us"]
            spans.append({
                "text": row["token"], "ttft": row["position"] == 1,
                "color": _colour(us, lo, hi) if row["position"] > 1 else "transparent",
                "tip": f"#{row['position']} {row['token_type']} ({row['node_type']}): {us:,.0f} µs",
            })
        later_us = group.filter(pl.col("position") > 1)["latency_us"]
        out.append({"request_id": rid, "model": first["model"], "language": first["language"], "granularity": first["granularity"],
                    "ttft_ms": first["latency_us"] / 1000.0 if first["position"] == 1 else None,
                    "mean_us": float(later_us.mean() or 0.0), "tokens": spans})  # type: ignore[arg-type]
    return out


def _colour(us: float, lo: float, hi: float) -> str:
    """Green (fast) to red (slow) on a log scale between ``lo`` and ``hi``."""
    x = (math.log(max(us, 1e-3)) - math.log(lo)) / (math.log(hi) - math.log(lo))
    x = min(1.0, max(0.0, x))
    return f"hsl({120 - 120 * x:.0f}, 75%, {85 - 25 * x:.0f}%)"


__all__ = ["chart_specs", "latency_time_data", "page_html", "render"]
