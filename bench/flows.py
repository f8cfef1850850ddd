"""Benchmark: logmine flows vs pm4py (DFG + performance DFG) and vs PyPI prefixspan (patterns).

    .venv/bin/python bench/flows.py dfg --events 10000000 --sessions 1000000 --actions 30
    .venv/bin/python bench/flows.py patterns --sessions 100000 --mean-length 20 --actions 30

``dfg``: generates a Markov-chain event log (ties in ts included), writes it as Parquet in
time order (ties by source file and line), then runs each side in its own subprocess from
that same Parquet file: logmine = scan_parquet + sessions + DFG + performance DFG (mean,
exact median and p95) + start/end counts; pm4py = pandas.read_parquet + discover_dfg +
discover_performance_dfg. Imports are not timed. Each side reports its wall time and its
own peak RSS; the counts, start/end activities, min/max/median and mean gaps are compared.

``patterns``: generates sessions, sessionizes them with logmine, then times logmine's
pattern mining (from the sessionized frame) and ``PrefixSpan(db).frequent(minsup)`` with
``maxlen`` (from prepared lists of ints) in this process, and compares the pattern sets.

pm4py and prefixspan are test oracles and benchmark peers only (AGPL / not runtime deps).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import polars as pl  # noqa: E402

US = 1_000_000


def markov_sessions(n_sessions: int, mean_len: float, n_actions: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Action codes of every session back to back, and the session offsets.

    Actions follow a Markov chain whose rows are Dirichlet(0.3) draws (a few likely next
    actions per action, like real editor logs); first actions are Zipf-distributed; session
    lengths are 1 + Poisson(mean_len - 1).
    """
    rng = np.random.default_rng(seed)
    cum = np.cumsum(rng.dirichlet(np.full(n_actions, 0.3), size=n_actions), axis=1)
    start = 1.0 / np.arange(1, n_actions + 1)
    lengths = 1 + rng.poisson(mean_len - 1, size=n_sessions)
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    items = np.empty(int(offsets[-1]), dtype=np.int64)
    cur = rng.choice(n_actions, size=n_sessions, p=start / start.sum())
    items[offsets[:-1]] = cur
    for t in range(1, int(lengths.max())):
        alive = np.flatnonzero(lengths > t)
        nxt = np.minimum((cum[cur[alive]] < rng.random(alive.size)[:, None]).sum(1), n_actions - 1)
        cur[alive] = nxt
        items[offsets[alive] + t] = nxt
    return items, offsets


def event_log(n_events: int, n_sessions: int, n_actions: int, seed: int = 0) -> pl.DataFrame:
    """An events table (logmine columns) of about ``n_events`` rows, in time order."""
    items, offsets = markov_sessions(n_sessions, n_events / n_sessions, n_actions, seed)
    rng = np.random.default_rng(seed + 1)
    lengths = np.diff(offsets)
    session = np.repeat(np.arange(n_sessions), lengths)
    start = rng.integers(0, 30 * 86400 * US, size=n_sessions) + 1_735_689_600 * US
    gaps = np.round(rng.lognormal(np.log(2e6), 1.5, size=items.size), -3).astype(np.int64)  # ms resolution
    gaps[rng.random(items.size) < 0.1] = 0  # ties
    gaps[offsets[:-1]] = 0
    ts = start[session] + np.cumsum(gaps) - np.repeat(np.cumsum(gaps)[offsets[:-1]], lengths)
    names = np.array([f"action.{i:02d}" for i in range(n_actions)])
    files = np.array([f"logs/host{i}.jsonl" for i in range(8)])
    df = pl.DataFrame({
        "session_id": pl.Series(session),
        "user_id": pl.Series(session % 5000).cast(pl.String),
        "ide": pl.Series(np.where(session % 3 == 0, "jetbrains", "vscode")),
        "ts": pl.Series(ts).cast(pl.Datetime("us", "UTC")),
        "action": pl.Series(names[items]),
        "source_file": pl.Series(files[session % 8]),
        "weight": pl.Series(np.ones(items.size, dtype=np.int64)),
    })
    df = df.with_columns(pl.concat_str(pl.lit("s"), pl.col("session_id").cast(pl.String)).alias("session_id"))
    df = df.sort("ts", "source_file", maintain_order=True)
    return df.with_columns(pl.int_range(pl.len()).over("source_file").cast(pl.Int64).alias("source_line"))


# -- workers (run in their own process) ------------------------------------------------------

def worker_logmine(path: str, out: str) -> dict:
    from logmine.stages.flows import graph
    from logmine.stages.flows.core import FlowsConfig, sequence

    t, c = time.perf_counter(), time.process_time()
    seq, _ = sequence(pl.scan_parquet(path), FlowsConfig(idle_gap_s=None))
    steps = graph.transitions(seq)
    edges, hist = graph.dfg_partial(seq, steps, exact=True, gaps=False)  # the flows_dfg columns
    dfg = graph.finalize_dfg(edges.drop("mid_lo_us", "mid_hi_us", "p95_us"), hist, edges.select("src", "dst", "mid_lo_us", "mid_hi_us", "p95_us"))
    acts = graph.activities_partial(seq)
    seconds, cpu = time.perf_counter() - t, time.process_time() - c
    dfg = dfg.filter(pl.col("count") > 0)
    result = {
        "dfg": {f"{r['src']}\t{r['dst']}": [r["count"], r["gap_mean_s"], r["gap_p50_s"], r["gap_min_s"], r["gap_max_s"]] for r in dfg.to_dicts()},
        "start": {r["action"]: r["starts"] for r in acts.filter(pl.col("starts") > 0).to_dicts()},
        "end": {r["action"]: r["ends"] for r in acts.filter(pl.col("ends") > 0).to_dicts()},
    }
    Path(out).write_text(json.dumps(result))
    return {"seconds": seconds, "cpu": cpu}


def worker_pm4py(path: str, out: str) -> dict:
    import pandas as pd

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        import pm4py
    t, c = time.perf_counter(), time.process_time()
    df = pd.read_parquet(path, columns=["session_id", "action", "ts"])
    df = df.rename(columns={"session_id": "case:concept:name", "action": "concept:name", "ts": "time:timestamp"})
    dfg, start, end = pm4py.discover_dfg(df)
    perf, _, _ = pm4py.discover_performance_dfg(df)
    seconds, cpu = time.perf_counter() - t, time.process_time() - c
    result = {
        "dfg": {f"{a}\t{b}": [int(c), float(perf[a, b]["mean"]), float(perf[a, b]["median"]), float(perf[a, b]["min"]), float(perf[a, b]["max"])]
                for (a, b), c in dfg.items()},
        "start": {k: int(v) for k, v in start.items()},
        "end": {k: int(v) for k, v in end.items()},
    }
    Path(out).write_text(json.dumps(result))
    return {"seconds": seconds, "cpu": cpu}


def peak_rss_mib() -> float:
    """This process's peak RSS: VmHWM, which starts afresh at exec (ru_maxrss keeps the parent's peak across fork + exec)."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run_worker(name: str, path: Path, out: Path) -> dict:
    proc = subprocess.run([sys.executable, __file__, "_worker", name, str(path), str(out)], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{name} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def compare(ours: dict, peer: dict) -> list[str]:
    problems = []
    if ours["start"] != peer["start"] or ours["end"] != peer["end"]:
        problems.append("start/end activities differ")
    if set(ours["dfg"]) != set(peer["dfg"]):
        problems.append(f"edge sets differ: {len(set(ours['dfg']) ^ set(peer['dfg']))} edges")
    for key in set(ours["dfg"]) & set(peer["dfg"]):
        (c1, mean1, med1, lo1, hi1), (c2, mean2, med2, lo2, hi2) = ours["dfg"][key], peer["dfg"][key]
        if c1 != c2 or (med1, lo1, hi1) != (med2, lo2, hi2) or not math.isclose(mean1, mean2, rel_tol=1e-9):
            problems.append(f"{key}: ours {ours['dfg'][key]} pm4py {peer['dfg'][key]}")
    return problems[:10]


def bench_dfg(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(dir=args.tmp) as tmp:
        path = Path(tmp) / "events.parquet"
        t = time.perf_counter()
        log = event_log(args.events, args.sessions, args.actions, args.seed)
        log.write_parquet(path)
        print(f"generated {log.height:,} events in {args.sessions:,} sessions, {args.actions} actions "
              f"({time.perf_counter() - t:.1f}s, {path.stat().st_size / 2**20:.0f} MiB Parquet)", flush=True)
        del log
        ours = run_worker("logmine", path, Path(tmp) / "logmine.json")
        print(f"logmine DFG + performance DFG: {ours['seconds']:.2f}s (cpu {ours['cpu']:.2f}s), peak RSS {ours['rss_mib']:.0f} MiB", flush=True)
        peer = run_worker("pm4py", path, Path(tmp) / "pm4py.json")
        print(f"pm4py discover_dfg + discover_performance_dfg: {peer['seconds']:.2f}s (cpu {peer['cpu']:.2f}s), peak RSS {peer['rss_mib']:.0f} MiB", flush=True)
        problems = compare(json.loads((Path(tmp) / "logmine.json").read_text()), json.loads((Path(tmp) / "pm4py.json").read_text()))
        print("results: " + ("identical counts, start/end activities, min/max/median gaps; means equal to 1e-9" if not problems else "DIFFER"))
        for p in problems:
            print("  " + p)
        print(f"speed-up: {peer['seconds'] / ours['seconds']:.1f}x wall, {peer['cpu'] / ours['cpu']:.1f}x cpu "
              "(input: the same Parquet file, read by each side; imports not timed)")
        print(f"load average during the run: {os.getloadavg()[0]:.1f} (cores: {os.cpu_count()})")


def bench_patterns(args: argparse.Namespace) -> None:
    from prefixspan import PrefixSpan

    from logmine.stages.flows.core import FlowsConfig, mine_patterns, sequence

    items, offsets = markov_sessions(args.sessions, args.mean_length, args.actions, args.seed)
    names = np.array([f"action.{i:02d}" for i in range(args.actions)])
    lengths = np.diff(offsets)
    events = pl.DataFrame({
        "session_id": pl.Series(np.repeat(np.arange(args.sessions), lengths)).cast(pl.String),
        "ts": pl.Series(np.arange(items.size) * US).cast(pl.Datetime("us", "UTC")),
        "action": names[items], "source_line": np.arange(items.size),
    }).with_columns(pl.lit("f").alias("source_file"), pl.lit(1).alias("weight"), pl.lit(None, pl.String).alias("user_id"),
                    pl.lit(None, pl.String).alias("ide"))
    config = FlowsConfig(idle_gap_s=None, min_support=args.min_support, max_pattern_length=args.max_length)
    seq, _ = sequence(events.lazy(), config)
    print(f"{args.sessions:,} sessions, {items.size:,} events, {args.actions} actions; min support {args.min_support:.2%}, "
          f"max length {args.max_length}", flush=True)
    t, c = time.perf_counter(), time.process_time()
    ours = mine_patterns(seq, config)
    ours_s, ours_cpu = time.perf_counter() - t, time.process_time() - c
    print(f"logmine: {ours.height:,} patterns in {ours_s:.2f}s (cpu {ours_cpu:.2f}s)", flush=True)
    db = [items[offsets[i]:offsets[i + 1]].tolist() for i in range(args.sessions)]
    min_count = math.ceil(args.min_support * args.sessions - 1e-9)
    ps = PrefixSpan(db)
    ps.maxlen = args.max_length
    t, c = time.perf_counter(), time.process_time()
    found = ps.frequent(min_count)
    peer_s, peer_cpu = time.perf_counter() - t, time.process_time() - c
    print(f"prefixspan: {len(found):,} patterns in {peer_s:.2f}s (cpu {peer_cpu:.2f}s)", flush=True)
    theirs = {tuple(names[p].tolist()): s for s, p in found}
    same = {tuple(r["pattern"]): r["sessions"] for r in ours.to_dicts()} == theirs
    print("results: " + ("identical pattern sets and supports" if same else "DIFFER"))
    print(f"speed-up: {peer_s / ours_s:.1f}x wall, {peer_cpu / ours_cpu:.1f}x cpu")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_worker":
        name, path, out = sys.argv[2:5]
        report = (worker_logmine if name == "logmine" else worker_pm4py)(path, out)
        report["rss_mib"] = peak_rss_mib()
        print(json.dumps(report))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    dfg = sub.add_parser("dfg", help="DFG + performance DFG vs pm4py")
    dfg.add_argument("--events", type=int, default=10_000_000)
    dfg.add_argument("--sessions", type=int, default=1_000_000)
    dfg.add_argument("--actions", type=int, default=30)
    dfg.add_argument("--seed", type=int, default=0)
    dfg.add_argument("--tmp", default=None, help="Directory for the generated Parquet file.")
    pat = sub.add_parser("patterns", help="sequential patterns vs prefixspan")
    pat.add_argument("--sessions", type=int, default=100_000)
    pat.add_argument("--mean-length", type=float, default=20)
    pat.add_argument("--actions", type=int, default=30)
    pat.add_argument("--min-support", type=float, default=0.01)
    pat.add_argument("--max-length", type=int, default=4)
    pat.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    (bench_dfg if args.what == "dfg" else bench_patterns)(args)


if __name__ == "__main__":
    main()
