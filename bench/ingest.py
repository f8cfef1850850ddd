"""Ingest benchmark: `logmine ingest` vs DuckDB `read_json_auto` -> `COPY ... TO parquet`, same file, same run.

The script writes N native JSONL records with realistic fields (about 300 bytes a line: editor
events with ISO times, some with attrs; code-assistant requests with epoch-ms times, code in
prefix/suffix/completion and per-token timings) into --data-dir (kept for later runs), then runs
each side in its own subprocess, interleaved --repeat times, and reports wall time, MB/s, rows/s
and the peak RSS of each (from wait4), and the ratio of the throughputs. Optionally it also runs
logmine's per-line reader (--per-line) and times the other formats' readers on small inputs made
by `logmine sample` (--other-events).

    .venv/bin/python bench/ingest.py --events 5000000 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable

ACTIONS = {
    "file.open": "workbench.action.files.openFile", "file.save": "workbench.action.files.save",
    "editor.edit": "type", "editor.navigate": "cursorMove", "editor.find": "actions.find",
    "completion.shown": "inlineSuggest.shown", "completion.accepted": "inlineSuggest.commit",
    "completion.rejected": "inlineSuggest.hide", "run.start": "workbench.action.debug.run", "build": "build",
    "test.run": "testing.runAll", "vcs.commit": "git.commit", "chat.request": "chat.submit", "window.focus": "focus",
}
LANGUAGES = {"python": "py", "typescript": "ts", "java": "java", "go": "go", "rust": "rs", "Python": "py", "golang": "go"}
IDES = ("vscode", "intellij", "pycharm", "neovim")
MODELS = ("starcoder2-3b", "gpt-4o-mini", "qwen2.5-coder-7b", "codestral-latest")
WORDS = ("def", "return", "self", "import", "from", "class", "if", "else", "for", "while", "value", "result", "data",
         "items", "config", "path", "token", "model", "request", "(", ")", ":", "=", "+", "[", "]", "0", "1", "None")

PEER = """
import duckdb, sys, time
started = time.perf_counter()
con = duckdb.connect()
con.execute("SET enable_progress_bar = false")
con.execute("COPY (SELECT * FROM read_json_auto(?)) TO '" + sys.argv[2].replace("'", "''") + "' (FORMAT parquet)", [sys.argv[1]])
rows = con.execute("SELECT count(*) FROM read_parquet(?)", [sys.argv[2]]).fetchone()[0]
print(rows, time.perf_counter() - started)
"""


def generate(path: Path, n: int, seed: int) -> None:
    """Write ``n`` native records to ``path`` (atomically: a killed run leaves no half file)."""
    rng = random.Random(seed)
    users = [f"user{i}@example.com" for i in range(300)]
    sessions = [f"{rng.getrandbits(64):016x}" for _ in range(5000)]
    t0 = 1_740_988_800_000  # 2025-03-03T08:00:00Z
    tmp = path.with_suffix(".tmp")
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(tmp, "wb", buffering=1 << 22) as fh:
        for i in range(n):
            ts = t0 + i * 53 + rng.randrange(50)
            lang = rng.choice(list(LANGUAGES))
            base = {"session_id": rng.choice(sessions), "user_id": rng.choice(users), "ide": rng.choice(IDES),
                    "file_path": f"src/pkg{rng.randrange(40)}/module_{rng.randrange(500)}.{LANGUAGES[lang]}", "language": lang}
            obj = _event(rng, i, ts, base) if rng.random() < 0.85 else _request(rng, i, ts, base)
            fh.write(orjson.dumps(obj) + b"\n")
            if i % 500_000 == 0 and i:
                print(f"  generated {i:,} records", file=sys.stderr)
    os.replace(tmp, path)


def _iso(ms: int) -> str:
    secs, frac = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(secs)) + f".{frac:03d}Z"


def _event(rng: random.Random, i: int, ts: int, base: dict[str, object]) -> dict[str, object]:
    action = rng.choice(list(ACTIONS))
    obj: dict[str, object] = {"type": "event", "ts": _iso(ts), "action": action, **base}
    if rng.random() < 0.7:
        obj["duration_ms"] = round(rng.random() * 800, 2)
    if rng.random() < 0.3:
        obj["event_id"] = f"e-{i:09d}"
    if rng.random() < 0.4:
        obj["attrs"] = {"raw_action": ACTIONS[action], "lines": rng.randrange(400), "dirty": rng.random() < 0.5}
    return obj


def _request(rng: random.Random, i: int, ts: int, base: dict[str, object]) -> dict[str, object]:
    tokens = [rng.choice(WORDS) for _ in range(rng.randrange(4, 16))]
    times, at = [], 80 + rng.random() * 300
    for _ in tokens:
        at += rng.random() * 35
        times.append(round(at, 1))
    obj: dict[str, object] = {
        "type": "llm_request", "ts": ts, "kind": rng.choice(("completion", "completion", "chat", "edit")),
        "request_id": f"r-{i:09d}", **base, "model": rng.choice(MODELS),
        "prefix": " ".join(rng.choice(WORDS) for _ in range(rng.randrange(20, 60))),
        "suffix": " ".join(rng.choice(WORDS) for _ in range(rng.randrange(0, 12))), "completion": " ".join(tokens),
        "accepted": rng.random() < 0.3, "ttft_ms": times[0], "total_ms": times[-1],
        "prompt_tokens": rng.randrange(50, 2000), "completion_tokens": len(tokens), "token_times_ms": times,
    }
    if rng.random() < 0.5:
        obj["token_texts"] = tokens
    return obj


def measure(cmd: list[str], env: dict[str, str] | None = None) -> dict[str, object]:
    """Run ``cmd``; wall seconds, peak RSS (MiB, from wait4) and stdout."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    out, err = proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n{err.decode()[-3000:]}")
    return {"seconds": seconds, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_rss_mib": usage.ru_maxrss / 1024,
            "stdout": out.decode()}


def run_peer(data: Path, work: Path) -> dict[str, object]:
    out = work / "peer.parquet"
    result = measure([PYTHON, "-c", PEER, str(data), str(out)])
    rows, inner = result.pop("stdout").split()[-2:]  # type: ignore[union-attr]
    out.unlink(missing_ok=True)
    return {**result, "rows": int(rows), "inner_seconds": float(inner)}


def run_logmine(data: Path, work: Path, per_line: bool = False) -> dict[str, object]:
    ws = work / "ws"
    shutil.rmtree(ws, ignore_errors=True)
    env = {**os.environ, "LOGMINE_NATIVE_FAST": "0" if per_line else "1"}
    result = measure([PYTHON, "-m", "logmine", "ingest", str(data), "-o", str(ws), "-q", "--format", "json"], env)
    report = json.loads(result.pop("stdout"))  # type: ignore[arg-type]
    shutil.rmtree(ws, ignore_errors=True)
    rows = report["events"] + report["llm_requests"]
    if report["lines_rejected"] or rows != report["lines_read"]:
        raise SystemExit(f"logmine did not accept every line: {report}")
    return {**result, "rows": rows, "inner_seconds": report["seconds"]}


def figures(runs: list[dict[str, object]], size: int) -> dict[str, float]:
    best = min(float(r["seconds"]) for r in runs)  # type: ignore[arg-type]
    median = statistics.median(float(r["seconds"]) for r in runs)  # type: ignore[arg-type]
    rows = int(runs[0]["rows"])  # type: ignore[arg-type]
    return {
        "best_s": round(best, 2), "median_s": round(median, 2), "mb_per_s": round(size / 1e6 / median, 1),
        "median_cpu_s": round(statistics.median(float(r["cpu_s"]) for r in runs), 2),  # type: ignore[arg-type]
        "rows_per_s": round(rows / median), "peak_rss_mib": round(max(float(r["peak_rss_mib"]) for r in runs)),  # type: ignore[arg-type]
        "rows": rows, "cores": round(statistics.median(float(r["cpu_s"]) / float(r["seconds"]) for r in runs), 2),  # type: ignore[arg-type]
    }


def other_readers(events: int, data_dir: Path) -> dict[str, dict[str, float]]:
    """Rows/s of every format reader present, on `logmine sample` output (reader only, in process)."""
    sys.path.insert(0, str(ROOT))
    from logmine.formats import available_readers, detect_format

    out_dir = data_dir / f"sample-{events}"
    if not (out_dir / "truth.json").is_file():
        from logmine.sample import SampleConfig, generate as sample

        shutil.rmtree(out_dir, ignore_errors=True)
        sample(out_dir, SampleConfig(events=events, seed=0))
    readers = available_readers()
    files: dict[str, list[Path]] = {}
    for path in sorted(p for p in out_dir.rglob("*") if p.is_file() and p.name != "truth.json"):
        fmt = detect_format(path)
        if fmt is not None:
            files.setdefault(fmt, []).append(path)
    result = {}
    for fmt, paths in files.items():
        for batch in readers[fmt].read(paths[0]):  # warm up: imports, compiled patterns
            pass
        started, rows, lines, size = time.perf_counter(), 0, 0, sum(p.stat().st_size for p in paths)
        for path in paths:
            for batch in readers[fmt].read(path):
                rows += len(batch.events) + len(batch.requests)
                lines += batch.lines_read
        seconds = time.perf_counter() - started
        result[fmt] = {"files": len(paths), "mb": round(size / 1e6, 1), "lines": lines, "rows": rows,
                       "seconds": round(seconds, 2), "rows_per_s": round(rows / seconds)}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=5_000_000, help="native records to generate and ingest")
    parser.add_argument("--data-dir", type=Path, default=ROOT / "bench" / "data")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="interleaved runs per side; figures use the median")
    parser.add_argument("--per-line", action="store_true", help="also time logmine's per-line reader (slow)")
    parser.add_argument("--other-events", type=int, default=0, help="`logmine sample` events for the other readers' rows/s")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args()

    data = args.data_dir / f"native-{args.events}-s{args.seed}.jsonl"
    if not data.is_file():
        print(f"generating {data} ...", file=sys.stderr)
        generate(data, args.events, args.seed)
    size = data.stat().st_size
    with open(data, "rb") as fh:  # warm the page cache for both sides alike
        while fh.read(1 << 24):
            pass
    results: dict[str, object] = {"events": args.events, "file": str(data), "bytes": size, "cpus": os.cpu_count(),
                                  "load_before": os.getloadavg()[0]}
    peer, ours = [], []
    with tempfile.TemporaryDirectory(prefix="bench-ingest-", dir=args.data_dir) as tmp:
        work = Path(tmp)
        for i in range(args.repeat):
            peer.append(run_peer(data, work))
            ours.append(run_logmine(data, work))
            print(f"run {i + 1}: duckdb {peer[-1]['seconds']:.2f} s, logmine {ours[-1]['seconds']:.2f} s", file=sys.stderr)
        results["duckdb"] = figures(peer, size)
        results["logmine"] = figures(ours, size)
        results["ratio"] = round(results["logmine"]["mb_per_s"] / results["duckdb"]["mb_per_s"], 3)  # type: ignore[index]
        results["ratio_best"] = round(results["duckdb"]["best_s"] / results["logmine"]["best_s"], 3)  # type: ignore[index]
        results["ratio_cpu"] = round(results["duckdb"]["median_cpu_s"] / results["logmine"]["median_cpu_s"], 3)  # type: ignore[index]
        results["runs"] = {"duckdb": [round(float(r["seconds"]), 2) for r in peer],  # type: ignore[arg-type]
                           "logmine": [round(float(r["seconds"]), 2) for r in ours]}  # type: ignore[arg-type]
        if args.per_line:
            results["logmine_per_line"] = figures([run_logmine(data, work, per_line=True)], size)
    results["load_after"] = os.getloadavg()[0]
    if args.other_events:
        results["other_readers"] = other_readers(args.other_events, args.data_dir)
    report(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


def report(r: dict[str, object]) -> None:
    d, m = r["duckdb"], r["logmine"]
    print(f"\n{r['events']:,} native records, {int(r['bytes']) / 1e6:,.0f} MB; median of {len(r['runs']['duckdb'])} interleaved runs"  # type: ignore[index]
          f" (load average {r['load_before']:.1f} before, {r['load_after']:.1f} after)\n")
    print("| side | median s (best) | MB/s | rows/s | CPU s | cores (CPU s / s) | peak RSS MiB |")
    print("|---|---|---|---|---|---|---|")
    rows = [("DuckDB read_json_auto -> COPY parquet (peer)", d), ("logmine ingest (fast path)", m)]
    if "logmine_per_line" in r:
        rows.append(("logmine ingest, per-line reader", r["logmine_per_line"]))
    for name, f in rows:
        print(f"| {name} | {f['median_s']} ({f['best_s']}) | {f['mb_per_s']} | {f['rows_per_s']:,} | {f['median_cpu_s']} | {f['cores']} | {f['peak_rss_mib']} |")  # type: ignore[index]
    print(f"\nratio logmine / DuckDB throughput (target >= 0.5): median **{r['ratio']}**, best-of-runs {r['ratio_best']},"
          f" CPU time {r['ratio_cpu']}; runs: {r['runs']}")
    if "other_readers" in r:
        print("\n| format | files | MB | lines | rows | s | rows/s |")
        print("|---|---|---|---|---|---|---|")
        for fmt, f in r["other_readers"].items():  # type: ignore[union-attr]
            print(f"| {fmt} | {f['files']} | {f['mb']} | {f['lines']:,} | {f['rows']:,} | {f['seconds']} | {f['rows_per_s']:,} |")


if __name__ == "__main__":
    main()
