"""Heatmap benchmark: labelling + aggregation throughput against tree-sitter's raw parse-and-walk,
and the sketch quantiles' relative error against exact quantiles, on the same completions.

Side by side in one run, over the requests that the heatmap stage parses as code:

- peer:   tree-sitter alone — parse ``prefix + completion`` in the request's language and walk
          every node of the tree with a TreeCursor (reading each node's type);
- logmine: the heatmap core — per-token latencies, labels from the parse, the day sketch
          (:func:`sketch_partial`) and every aggregate (:func:`finalize`).

Both are reported as tokens/s (the generated tokens measured), with the ratio logmine/peer.
Then every aggregate's p50/p95/p99 is compared with the exact quantile of the same tokens (the
interpolated one for a group small enough to be exact, the lower one for a sketched group) and
the maximum relative error is printed.

Data: a workspace's ``llm_requests`` (--workspace), else ``logmine sample`` logs generated
and ingested into a temporary workspace (--events, --seed).

Example:
    python bench/heatmap.py --events 20000 --repeat 5
    python bench/heatmap.py --workspace ws/ --out out/bench/heatmap.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("POLARS_MAX_THREADS", "1")  # tree-sitter runs on one thread; so does the stage here
os.environ.setdefault("OMP_NUM_THREADS", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import polars as pl  # noqa: E402

from logmine.code import parse  # noqa: E402
from logmine.sketch import DEFAULT_ALPHA  # noqa: E402
from logmine.stages.heatmap import FIRST_TOKEN_VIEWS, VIEWS, finalize, measure, merge_partials, sketch_partial  # noqa: E402
from logmine.stages.heatmap.labels import prompt_context  # noqa: E402
from logmine.workspace import Workspace  # noqa: E402

QUANTILES = {"p50_us": 0.5, "p95_us": 0.95, "p99_us": 0.99}


def load_requests(args: argparse.Namespace) -> tuple[pl.DataFrame, str]:
    if args.workspace:
        return Workspace.open(args.workspace).read("llm_requests"), f"workspace {args.workspace}"
    from logmine.sample import SampleConfig, generate
    from logmine.stages.ingest.core import ingest

    tmp = Path(tempfile.mkdtemp(prefix="bench-heatmap-"))
    generate(tmp / "logs", SampleConfig(events=args.events, seed=args.seed))
    ingest([tmp / "logs"], tmp / "ws")
    return Workspace.open(tmp / "ws").read("llm_requests"), f"logmine sample --events {args.events} --seed {args.seed}"


def code_requests(requests: pl.DataFrame) -> tuple[pl.DataFrame, list[tuple[bytes, str]], int]:
    """The requests the stage parses as one code document, with that document and its language."""
    tokens, accounting = measure(requests)
    parsed = accounting.filter(
        (pl.col("status") == "measured") & pl.col("language_source").is_in(["record", "extension", "prompt", "detected"])
    )
    subset = requests.join(parsed.select("request_id"), on="request_id", how="semi")
    langs = dict(zip(parsed["request_id"], parsed["language"]))
    docs = []
    for row in subset.iter_rows(named=True):
        texts = row["token_texts"]
        text = "".join(t or "" for t in texts) if texts and any(texts) else (row["completion"] or "")
        prefix = row["prefix"]
        if prefix is None and row["kind"] != "chat":
            prefix = prompt_context(row["prompt"]).prefix
        docs.append((((prefix or "") + text).encode("utf-8"), langs[row["request_id"]]))
    n_tokens = int(tokens.join(parsed.select("request_id"), on="request_id", how="semi").height)
    return subset, docs, n_tokens


def parse_and_walk(docs: list[tuple[bytes, str]]) -> int:
    """The peer: parse each document and visit every node (reading its type)."""
    nodes = 0
    for code, language in docs:
        cursor = parse(code, language).walk()
        while True:
            nodes += 1
            _ = cursor.node.type
            if cursor.goto_first_child():
                continue
            while not cursor.goto_next_sibling():
                if not cursor.goto_parent():
                    break
            else:
                continue
            break
    return nodes


def heatmap_core(requests: pl.DataFrame) -> tuple[pl.DataFrame, dict[str, pl.DataFrame]]:
    tokens, _ = measure(requests)
    partial = sketch_partial(tokens, DEFAULT_ALPHA)
    return tokens, finalize(merge_partials([partial]), DEFAULT_ALPHA)


def timed(fn: Any, *args: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    out = fn(*args)
    return time.perf_counter() - started, out


def side_by_side(repeat: int, docs: list[tuple[bytes, str]], subset: pl.DataFrame) -> tuple[float, int, float, Any]:
    """Best of ``repeat`` runs of each side, interleaved so both see the same machine load."""
    peer_s = ours_s = float("inf")
    nodes, out = 0, None
    for _ in range(repeat):
        t, nodes = timed(parse_and_walk, docs)
        peer_s = min(peer_s, t)
        t, out = timed(heatmap_core, subset)
        ours_s = min(ours_s, t)
    return peer_s, nodes, ours_s, out


def max_relative_error(tokens: pl.DataFrame, tables: dict[str, pl.DataFrame]) -> tuple[float, str, int]:
    """The largest |sketch - exact| / exact over every group and quantile of every view."""
    worst, where, groups = 0.0, "", 0
    tokens = tokens.with_columns(pl.col("hour").fill_null(-1))
    for name, keys in VIEWS.items():
        view = tokens if name in FIRST_TOKEN_VIEWS else tokens.filter(pl.col("position") > 1)
        exact = view.group_by(*keys).agg(  # a small group's quantiles are exact and interpolated, a sketched one's the lower quantile
            *[pl.col("latency_us").quantile(q, interpolation="lower").alias(f"x_{c}") for c, q in QUANTILES.items()],
            *[pl.col("latency_us").quantile(q, interpolation="linear").alias(f"xl_{c}") for c, q in QUANTILES.items()],
        )
        joined = tables[name].join(exact, on=list(keys))
        groups += joined.height
        for col in QUANTILES:
            x = np.where(joined["exact"].to_numpy(), joined[f"xl_{col}"].to_numpy(), joined[f"x_{col}"].to_numpy())
            est = joined[col].to_numpy()
            rel = np.where(x > 0, np.abs(est - x) / np.where(x > 0, x, 1), np.where(est == 0, 0.0, np.inf))
            if rel.size and rel.max() > worst:
                worst, where = float(rel.max()), f"{name}.{col}"
    return worst, where, groups


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--workspace", type=Path, help="Use this workspace's llm_requests instead of generated sample logs.")
    ap.add_argument("--events", type=int, default=20000, help="Events for `logmine sample` (default 20000).")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--repeat", type=int, default=5, help="Best of this many timed runs per side (interleaved).")
    ap.add_argument("--out", type=Path, help="Also write the figures as JSON here.")
    args = ap.parse_args()

    requests, source = load_requests(args)
    subset, docs, n_tokens = code_requests(requests)
    if not docs:
        sys.exit("no code completions with token timings in the data")
    peer_s, nodes, ours_s, (tokens, tables) = side_by_side(args.repeat, docs, subset)
    rel, where, groups = max_relative_error(tokens, tables)
    code_bytes = sum(len(c) for c, _ in docs)
    result = {
        "data": source, "requests": len(docs), "tokens": n_tokens, "code_bytes": code_bytes, "tree_nodes": nodes,
        "peer_parse_walk_s": round(peer_s, 4), "logmine_label_aggregate_s": round(ours_s, 4),
        "peer_tokens_per_s": round(n_tokens / peer_s), "logmine_tokens_per_s": round(n_tokens / ours_s),
        "ratio": round(peer_s / ours_s, 3), "target_ratio": 0.30,
        "quantile_max_rel_error": rel, "quantile_worst": where, "quantile_groups": groups, "alpha": DEFAULT_ALPHA,
        "python": platform.python_version(), "machine": platform.machine(), "polars_threads": os.environ["POLARS_MAX_THREADS"],
    }
    print(f"data: {source}: {len(docs)} code completions, {n_tokens:,} tokens, {code_bytes:,} bytes of code, {nodes:,} tree nodes")
    print(f"tree-sitter parse + walk (peer):      {peer_s:8.3f} s  {n_tokens / peer_s:12,.0f} tokens/s")
    print(f"logmine label + aggregate (heatmap):  {ours_s:8.3f} s  {n_tokens / ours_s:12,.0f} tokens/s")
    print(f"ratio logmine/peer: {peer_s / ours_s:.3f} (target >= 0.30)")
    print(f"quantiles: max relative error {rel:.7f} over {groups} groups x p50/p95/p99 (worst {where}; bound {DEFAULT_ALPHA})")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
