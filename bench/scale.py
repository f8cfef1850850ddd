"""Scale-out benchmark: the same nightly pipeline on the local engine and on 1 and 2 Ray workers.

Side by side in one run, over the same ingested workspace (copied per engine, so each starts
with every partition new):

- local:  the partitions one after another in this process (the default engine);
- ray×1:  each partition a Ray task, Ray started here with 1 CPU;
- ray×2:  the same with 2 CPUs.

Data: ``logmine sample --format native`` logs (one file per simulated day, so one partition per
day), N events (default 10M; that needs ~7.5 GB and hours on a 2-core box: pass --events).
Measured per engine: each analysis stage's wall time (flows, heatmap, templates), the engine's
map wall time and every task's own seconds (the per-partition cost), and the rest of the stage
(planning, reading stored partials, merging, finalizing, writing: the merge cost). The tables are
checked identical across engines. Printed: throughput (events/s and per worker), the speed-up
of ray×2 over ray×1, and a projection for a cluster from the measured per-partition and merge
costs: with W workers and P partitions, time ≈ fixed + merge + ceil(P/W) × mean partition cost.

Example:
    python bench/scale.py --events 200000 --out out/bench/scale.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("RAY_DEDUP_LOGS", "0")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from logmine.engine import EngineConfig  # noqa: E402
from logmine.pipeline import run_pipeline  # noqa: E402

STAGES = ("flows", "heatmap", "templates")
ENGINES = {"local": EngineConfig("local", 1), "ray1": EngineConfig("ray", 1), "ray2": EngineConfig("ray", 2)}
PIPELINE = """name = "scale"
workspace = "{ws}"

[[inputs]]
name = "native"
paths = ["{logs}/native/{{date}}.jsonl"]
format = "native"

[stages.heatmap]
html = false

[stages.report]
enabled = false

[metrics]
enabled = false
"""


def sample(data: Path, events: int, seed: int) -> Path:
    """``logmine sample`` native logs under data/logs (reused when already there for these options)."""
    logs = data / "logs"
    stamp = logs / ".bench-options.json"
    want = {"events": events, "seed": seed}
    if stamp.is_file() and json.loads(stamp.read_text()) == want:
        return logs
    from logmine.sample import SampleConfig, generate

    shutil.rmtree(logs, ignore_errors=True)
    started = time.perf_counter()
    generate(logs, SampleConfig(events=events, seed=seed, formats=("native",)))
    print(f"sample: {events:,} events in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    stamp.write_text(json.dumps(want))
    return logs


def ingested(data: Path, logs: Path) -> Path:
    """A workspace with the logs ingested (the pipeline's own ingest, analysis stages off)."""
    base = data / "ws_base"
    shutil.rmtree(base, ignore_errors=True)
    path = data / "ingest.toml"
    text = PIPELINE.format(ws=base, logs=logs).replace("[stages.heatmap]\nhtml = false\n", "[stages.heatmap]\nenabled = false\n")
    path.write_text(text + "\n[stages.flows]\nenabled = false\n\n[stages.templates]\nenabled = false\n")
    rec = run_pipeline(path)
    print(f"ingest: {rec.counts['lines_read']:,} lines in {rec.stages['ingest']['seconds']:.1f} s", file=sys.stderr)
    return base


def run_engine(data: Path, logs: Path, base: Path, name: str) -> dict[str, Any]:
    ws = data / f"ws_{name}"
    shutil.rmtree(ws, ignore_errors=True)
    shutil.copytree(base, ws)
    shutil.rmtree(ws / "runs", ignore_errors=True)  # the base's run record files (the runs table stays: it is data)
    (ws / "logmine.duckdb").unlink(missing_ok=True)  # its views name the base's files: rebuilt on open
    path = data / f"{name}.toml"
    path.write_text(PIPELINE.format(ws=ws, logs=logs))
    config = ENGINES[name]
    startup = _start_ray(config.workers) if config.kind == "ray" else 0.0
    try:
        started = time.perf_counter()
        rec = run_pipeline(path, engine=config)
        total = time.perf_counter() - started
    finally:
        if config.kind == "ray":
            import ray

            ray.shutdown()
    out: dict[str, Any] = {"engine": rec.engine, "run_seconds": round(total, 3), "ray_start_seconds": round(startup, 2), "stages": {}}
    for stage in STAGES:
        info = rec.stages[stage]
        maps = info.get("engine", [])
        wall = sum(m["wall_seconds"] for m in maps)
        tasks = sum(m["tasks"] for m in maps)
        task_sum = sum(m["task_seconds_sum"] for m in maps)
        out["stages"][stage] = {
            "seconds": info["seconds"], "partitions": tasks, "map_wall_seconds": round(wall, 3),
            "task_seconds_sum": round(task_sum, 3), "task_seconds_max": max((m["task_seconds_max"] for m in maps), default=0.0),
            "merge_seconds": round(info["seconds"] - wall, 3),
        }
    out["analysis_seconds"] = round(sum(s["seconds"] for s in out["stages"].values()), 3)
    return out


def _warm(n: int) -> int:
    """A no-op partition that imports the stages, so workers are up before the clock starts."""
    import logmine.pipeline.flows_step  # noqa: F401
    import logmine.pipeline.heatmap_step  # noqa: F401
    import logmine.pipeline.templates_step  # noqa: F401

    return n


def _start_ray(workers: int) -> float:
    """Start Ray with ``workers`` CPUs and warm every worker; the pipeline then reuses it."""
    import ray

    from logmine.engine import make_engine

    started = time.perf_counter()
    ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False, configure_logging=False)
    make_engine(EngineConfig("ray", workers)).map(_warm, list(range(4 * workers)))
    return time.perf_counter() - started


def identical(data: Path, names: list[str]) -> bool:
    sys.path.insert(0, str(ROOT / "tests"))
    from pipeline_data import RESULT_TABLES, assert_same_tables

    for other in names[1:]:
        try:
            assert_same_tables(data / f"ws_{names[0]}", data / f"ws_{other}", RESULT_TABLES)
        except AssertionError as exc:
            print(f"DIFFERENT: {names[0]} vs {other}: {exc}", file=sys.stderr)
            return False
    return True


def projection(res: dict[str, Any], events: int, workers: list[int], partitions: int) -> list[dict[str, Any]]:
    """Analysis time on W workers for ``partitions`` partitions of the measured size."""
    rows = []
    stages = res["stages"]
    per_part = {s: v["task_seconds_sum"] / max(v["partitions"], 1) for s, v in stages.items()}
    merge = sum(v["merge_seconds"] for v in stages.values())
    measured_parts = max(v["partitions"] for v in stages.values())
    merge_per_part = merge / max(measured_parts, 1)
    for w in workers:
        t = merge_per_part * partitions + sum(math.ceil(partitions / w) * c for c in per_part.values())
        ev = events / measured_parts * partitions
        rows.append({"workers": w, "partitions": partitions, "seconds": round(t, 1), "events_per_s": round(ev / t) if t else None})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=10_000_000, help="Simulated events (logmine sample --events).")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data", type=Path, default=ROOT / "bench" / "data" / "scale", help="Where logs and workspaces go.")
    ap.add_argument("--engines", default="local,ray1,ray2", help="Comma-separated: local, ray1, ray2.")
    ap.add_argument("--project", default="1,2,4,8,16,32", help="Worker counts for the cluster projection.")
    ap.add_argument("--project-partitions", type=int, default=90, help="Partitions (days) of the projected backfill.")
    ap.add_argument("--out", type=Path, help="Write the results as JSON here too.")
    args = ap.parse_args()
    names = [n.strip() for n in args.engines.split(",") if n.strip()]
    args.data.mkdir(parents=True, exist_ok=True)
    logs = sample(args.data, args.events, args.seed)
    base = ingested(args.data, logs)
    results = {}
    for name in names:
        results[name] = run_engine(args.data, logs, base, name)
        print(f"{name}: analysis {results[name]['analysis_seconds']:.2f} s", file=sys.stderr)
    same = identical(args.data, names)
    report(args, names, results, same)


def report(args: argparse.Namespace, names: list[str], results: dict[str, Any], same: bool) -> None:
    events = args.events
    print(f"\nscale-out: {events:,} events, {platform.machine()} {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}; "
          f"tables identical across engines: {'yes' if same else 'NO'}\n")
    print("| engine | workers | flows s | heatmap s | templates s | analysis s | events/s | events/s per worker |")
    print("|---|---|---|---|---|---|---|---|")
    for name in names:
        r = results[name]
        w = r["engine"].get("workers", 1) if r["engine"]["engine"] == "ray" else 1
        st = r["stages"]
        eps = events / r["analysis_seconds"]
        print(f"| {name} | {w} | {st['flows']['seconds']:.2f} | {st['heatmap']['seconds']:.2f} | {st['templates']['seconds']:.2f} | "
              f"{r['analysis_seconds']:.2f} | {eps:,.0f} | {eps / w:,.0f} |")
    starts = ", ".join(f"{n} {results[n]['ray_start_seconds']:.1f} s" for n in names if results[n]["ray_start_seconds"])
    if starts:
        print(f"\nRay start and worker warm-up (not in the figures above): {starts}")
    print("\n| engine | stage | partitions | map wall s | task s (sum) | task s (max) | merge s |")
    print("|---|---|---|---|---|---|---|")
    for name in names:
        for stage, s in results[name]["stages"].items():
            print(f"| {name} | {stage} | {s['partitions']} | {s['map_wall_seconds']:.2f} | {s['task_seconds_sum']:.2f} | "
                  f"{s['task_seconds_max']:.2f} | {s['merge_seconds']:.2f} |")
    if "ray1" in results and "ray2" in results:
        print(f"\nray×2 over ray×1: {results['ray1']['analysis_seconds'] / results['ray2']['analysis_seconds']:.2f}× "
              f"(map wall only: {_map_wall(results['ray1']) / _map_wall(results['ray2']):.2f}×)")
    base = results.get("ray1") or results[names[0]]
    workers = [int(w) for w in args.project.split(",")]
    rows = projection(base, events, workers, args.project_partitions)
    print(f"\nprojection from {('ray1' if 'ray1' in results else names[0])}'s per-partition and merge costs, "
          f"{args.project_partitions} partitions of the measured size (ideal scheduling, no data movement):\n")
    print("| workers | seconds | events/s |")
    print("|---|---|---|")
    for row in rows:
        print(f"| {row['workers']} | {row['seconds']:,} | {row['events_per_s']:,} |")
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps({"events": events, "identical": same, "results": results, "projection": rows}, indent=2))


def _map_wall(r: dict[str, Any]) -> float:
    return sum(s["map_wall_seconds"] for s in r["stages"].values()) or 1e-9


if __name__ == "__main__":
    main()
