"""The report's pictures: Altair (Vega-Lite) specs rendered offline by vl-convert to SVG data URIs.

No scripts and no network: each chart is an ``<img src="data:image/svg+xml;base64,...">``.
Altair and vl-convert are the optional ``viz`` extra; without them :func:`available` is False
and the page says how to get the pictures.
"""

from __future__ import annotations

import base64
import logging
import math
from typing import Any

log = logging.getLogger(__name__)


def _libs() -> tuple[Any, Any] | None:
    try:
        import altair as alt
        import vl_convert as vlc
    except ImportError:
        return None
    return alt, vlc


def available() -> bool:
    return _libs() is not None


def svg_uri(spec: dict[str, Any]) -> str:
    """A Vega-Lite spec rendered to an SVG data URI."""
    libs = _libs()
    assert libs is not None
    alt, vlc = libs
    wanted = ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
    version = wanted if wanted in vlc.get_vegalite_versions() else None
    svg = vlc.vegalite_to_svg(spec, vl_version=version)
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")


def bar(rows: list[dict[str, Any]], x: str, y: str, title: str, color: str | None = None, x_title: str | None = None,
        width: int = 520) -> dict[str, Any]:
    """Horizontal bars: ``y`` (a category) by ``x`` (a number), optionally stacked by ``color``."""
    alt, _ = _libs()  # type: ignore[misc]
    enc: dict[str, Any] = {
        "x": alt.X(f"{x}:Q", title=x_title or x.replace("_", " ")),
        "y": alt.Y(f"{y}:N", sort="-x", title=None, axis=alt.Axis(labelLimit=360)),
        "tooltip": [alt.Tooltip(f"{y}:N"), alt.Tooltip(f"{x}:Q", format=",")],
    }
    if color:
        enc["color"] = alt.Color(f"{color}:N", title=color.replace("_", " "))
        enc["tooltip"].append(alt.Tooltip(f"{color}:N"))
    chart = alt.Chart(alt.Data(values=rows)).mark_bar().encode(**enc)
    return chart.properties(title=title, width=width, height=alt.Step(18)).to_dict()


def grouped(rows: list[dict[str, Any]], category: str, series: list[str], title: str, value_title: str) -> dict[str, Any]:
    """Side-by-side bars of several numeric columns per category (e.g. tokens before / after)."""
    alt, _ = _libs()  # type: ignore[misc]
    chart = (
        alt.Chart(alt.Data(values=rows))
        .transform_fold(series, as_=["measure", "value"])
        .mark_bar()
        .encode(
            y=alt.Y(f"{category}:N", title=None, axis=alt.Axis(labelLimit=300)),
            yOffset=alt.YOffset("measure:N"),
            x=alt.X("value:Q", title=value_title),
            color=alt.Color("measure:N", title=None),
            tooltip=[alt.Tooltip(f"{category}:N"), alt.Tooltip("measure:N"), alt.Tooltip("value:Q", format=",.1f")],
        )
    )
    return chart.properties(title=title, width=520).to_dict()


def graph(nodes: list[tuple[str, int]], edges: list[tuple[str, str, int]], title: str) -> dict[str, Any]:
    """A directly-follows graph: actions on a circle, edges as lines (width: transitions).

    Self-loops are drawn as rings around their node.
    """
    alt, _ = _libs()  # type: ignore[misc]
    n = max(len(nodes), 1)
    pos = {name: (math.cos(2 * math.pi * i / n - math.pi / 2), math.sin(2 * math.pi * i / n - math.pi / 2)) for i, (name, _) in enumerate(nodes)}
    top = max((c for _, _, c in edges), default=1)
    lines = [{"src": s, "dst": d, "count": c, "x": pos[s][0], "y": pos[s][1], "x2": pos[d][0], "y2": pos[d][1],
              "w": 0.5 + 5.5 * c / top} for s, d, c in edges if s in pos and d in pos and s != d]
    loops = [{"action": s, "count": c, "x": pos[s][0], "y": pos[s][1]} for s, d, c in edges if s == d and s in pos]
    points = [{"action": name, "events": events, "x": x, "y": y, "label_x": x * 1.18, "label_y": y * 1.12}
              for name, events in nodes for x, y in [pos[name]]]
    scale = alt.Scale(domain=[-1.6, 1.6])
    x, y = alt.X("x:Q", scale=scale, axis=None), alt.Y("y:Q", scale=scale, axis=None)
    layers = [
        alt.Chart(alt.Data(values=lines)).mark_rule(opacity=0.45, color="#4c78a8").encode(
            x=x, y=y, x2="x2:Q", y2="y2:Q", strokeWidth=alt.StrokeWidth("w:Q", legend=None),
            tooltip=[alt.Tooltip("src:N"), alt.Tooltip("dst:N"), alt.Tooltip("count:Q", format=",")]),
        alt.Chart(alt.Data(values=loops or [{"action": "", "count": 0, "x": 9, "y": 9}])).mark_point(
            size=900, opacity=0.5, color="#4c78a8", filled=False).encode(x=x, y=y),
        alt.Chart(alt.Data(values=points)).mark_circle(color="#e45756", opacity=0.9).encode(
            x=x, y=y, size=alt.Size("events:Q", legend=None, scale=alt.Scale(range=[60, 700])),
            tooltip=[alt.Tooltip("action:N"), alt.Tooltip("events:Q", format=",")]),
        alt.Chart(alt.Data(values=points)).mark_text(fontSize=11).encode(
            x=alt.X("label_x:Q", scale=scale, axis=None), y=alt.Y("label_y:Q", scale=scale, axis=None), text="action:N"),
    ]
    return alt.layer(*layers).properties(title=title, width=560, height=560).configure_view(stroke=None).to_dict()
