"""Ingest benchmark: `logmine ingest` vs DuckDB `read_json_auto` -> `COPY ... TO parquet`, three input shapes, same run.

Shapes, each run by both sides on the same files, interleaved --repeat times (each side in its own
subprocess: whole-process wall time, user+sys CPU and peak RSS from wait4):

* lean: N native JSONL records of about 300 bytes (editor events with ISO times, some with attrs;
  code-assistant requests with epoch-ms times, short code and per-token timings), one file, written
  into --data-dir and kept (--events);
* prompt-heavy: the output of `python -m logmine sample DIR --events N --seed 3 --format native`
  (--sample-events): a few files of tens of MB, 16 % requests with whole prompts, completions and
  token timings, 0.5 % planted malformed lines;
* small files: one file of that sample (the second by name) cut at line ends into files of about
  --small-bytes (306 files of ~300 KB for the issue's 400,000 events).

DuckDB reads the directory's files with one glob (`ignore_errors = true` where lines are malformed)
into one Parquet file; logmine ingests the directory into a fresh workspace. The ratio is DuckDB's
median wall time over logmine's (logmine's throughput over DuckDB's; the target is >= 0.5).
Optionally it also runs logmine's per-line reader on the lean file (--per-line) and times the other
formats' readers on small inputs made by `logmine sample` (--other-events).

    .venv/bin/python bench/ingest.py --events 5000000 --sample-events 400000 --repeat 3
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
from dataclasses import dataclass
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
options = ", format = 'newline_delimited'" + (", ignore_errors = true" if sys.argv[3] == "1" else "")
con.execute("COPY (SELECT * FROM read_json_auto(?" + options + ")) TO '" + sys.argv[2].replace("'", "''") + "' (FORMAT parquet)", [sys.argv[1]])
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


def run_peer(shape: Shape, work: Path) -> dict[str, object]:
    out = work / "peer.parquet"
    result = measure([PYTHON, "-c", PEER, shape.peer_input, str(out), "1" if shape.malformed else "0"])
    rows, inner = result.pop("stdout").split()[-2:]  # type: ignore[union-attr]
    out.unlink(missing_ok=True)
    return {**result, "rows": int(rows), "inner_seconds": float(inner)}


def run_logmine(shape: Shape, work: Path, per_line: bool = False) -> dict[str, object]:
    ws = work / "ws"
    shutil.rmtree(ws, ignore_errors=True)
    env = dict(os.environ)
    if per_line:
        env["LOGMINE_NATIVE_FAST"] = "0"
    result = measure([PYTHON, "-m", "logmine", "ingest", str(shape.path), "-o", str(ws), "-q", "--format", "json"], env)
    report = json.loads(result.pop("stdout"))  # type: ignore[arg-type]
    shutil.rmtree(ws, ignore_errors=True)
    rows = report["events"] + report["llm_requests"]
    if report["lines_read"] != shape.lines or report["lines_accepted"] + report["lines_rejected"] != shape.lines:
        raise SystemExit(f"logmine did not account for every line of {shape.name} ({shape.lines:,} lines): {report}")
    if not shape.malformed and (report["lines_rejected"] or rows != shape.lines):
        raise SystemExit(f"logmine did not accept every line of {shape.name}: {report}")
    return {**result, "rows": rows, "inner_seconds": report["seconds"]}


@dataclass(frozen=True)
class Shape:
    """One input shape: a file or a directory of native JSONL, with what the peer needs to read it."""

    name: str
    path: Path
    files: int
    size: int
    lines: int
    malformed: bool
    """Whether some lines are malformed (DuckDB then reads with ``ignore_errors = true``)."""

    @property
    def peer_input(self) -> str:
        return str(self.path / "*.jsonl") if self.path.is_dir() else str(self.path)

    @classmethod
    def of(cls, name: str, path: Path, malformed: bool) -> Shape:
        files = sorted(path.glob("*.jsonl")) if path.is_dir() else [path]
        lines = 0
        for f in files:
            with open(f, "rb") as fh:  # also warms the page cache for both sides alike
                while block := fh.read(1 << 24):
                    lines += block.count(b"\n")
                fh.seek(-1, os.SEEK_END)
                lines += fh.read(1) != b"\n"
        return cls(name, path, len(files), sum(f.stat().st_size for f in files), lines, malformed)


def sample_dir(data_dir: Path, events: int) -> Path:
    """`logmine sample` output of ``events`` events (seed 3, native), made once."""
    out = data_dir / f"sample-{events}-s3"
    native = out / "native"
    if not native.is_dir():
        print(f"generating {out} ...", file=sys.stderr)
        shutil.rmtree(out, ignore_errors=True)
        subprocess.run([PYTHON, "-m", "logmine", "sample", str(out), "--events", str(events), "--seed", "3", "--format", "native",
                        "-q"], check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
    return native


def small_files(native: Path, size: int) -> Path:
    """The sample's second file (by name) cut at line ends into files of about ``size`` bytes, made once."""
    source = sorted(native.glob("*.jsonl"))[min(1, len(list(native.glob("*.jsonl"))) - 1)]
    out = native.parent / f"small-{size}"
    if not out.is_dir():
        tmp = native.parent / f".small-{size}.tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        data, at, index = source.read_bytes(), 0, 0
        while at < len(data):
            end = data.find(b"\n", at + size)
            end = len(data) if end < 0 else end + 1
            (tmp / f"{source.stem}-{index:05d}.jsonl").write_bytes(data[at:end])
            at, index = end, index + 1
        os.replace(tmp, out)
    return out


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
    parser.add_argument("--events", type=int, default=5_000_000, help="lean native records to generate and ingest (0: skip the shape)")
    parser.add_argument("--sample-events", type=int, default=400_000,
                        help="`logmine sample --events` for the prompt-heavy and small-file shapes (0: skip both)")
    parser.add_argument("--small-bytes", type=int, default=300_000, help="about this many bytes per file of the small-file shape (0: skip it)")
    parser.add_argument("--data-dir", type=Path, default=ROOT / "bench" / "data")
    parser.add_argument("--seed", type=int, default=0, help="seed of the lean file")
    parser.add_argument("--repeat", type=int, default=3, help="interleaved runs per side and shape; figures use the median")
    parser.add_argument("--per-line", action="store_true", help="also time logmine's per-line reader on the lean file (slow)")
    parser.add_argument("--other-events", type=int, default=0, help="`logmine sample` events for the other readers' rows/s")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args()

    shapes: list[Shape] = []
    if args.events:
        lean = args.data_dir / f"native-{args.events}-s{args.seed}.jsonl"
        if not lean.is_file():
            print(f"generating {lean} ...", file=sys.stderr)
            generate(lean, args.events, args.seed)
        shapes.append(Shape.of("lean events", lean, malformed=False))
    if args.sample_events:
        native = sample_dir(args.data_dir, args.sample_events)
        shapes.append(Shape.of("prompt-heavy sample", native, malformed=True))
        if args.small_bytes:
            shapes.append(Shape.of("many small files", small_files(native, args.small_bytes), malformed=True))
    results: dict[str, object] = {"cpus": os.cpu_count(), "load_before": os.getloadavg()[0], "repeat": args.repeat, "shapes": {}}
    runs: dict[str, tuple[list[dict[str, object]], list[dict[str, object]]]] = {s.name: ([], []) for s in shapes}
    with tempfile.TemporaryDirectory(prefix="bench-ingest-", dir=args.data_dir) as tmp:
        work = Path(tmp)
        for i in range(args.repeat):
            for shape in shapes:
                peer, ours = runs[shape.name]
                peer.append(run_peer(shape, work))
                ours.append(run_logmine(shape, work))
                print(f"run {i + 1}, {shape.name}: duckdb {peer[-1]['seconds']:.2f} s, logmine {ours[-1]['seconds']:.2f} s"
                      f" (load {os.getloadavg()[0]:.1f})", file=sys.stderr)
        for shape in shapes:
            peer, ours = runs[shape.name]
            d, m = figures(peer, shape.size), figures(ours, shape.size)
            results["shapes"][shape.name] = {  # type: ignore[index]
                "path": str(shape.path), "files": shape.files, "bytes": shape.size, "lines": shape.lines, "duckdb": d, "logmine": m,
                "ratio": round(d["median_s"] / m["median_s"], 3), "ratio_best": round(d["best_s"] / m["best_s"], 3),
                "ratio_cpu": round(d["median_cpu_s"] / m["median_cpu_s"], 3),
                "runs": {"duckdb": [round(float(r["seconds"]), 2) for r in peer],  # type: ignore[arg-type]
                         "logmine": [round(float(r["seconds"]), 2) for r in ours]},  # type: ignore[arg-type]
            }
        if args.per_line and args.events:
            results["lean_per_line"] = figures([run_logmine(shapes[0], work, per_line=True)], shapes[0].size)
    results["load_after"] = os.getloadavg()[0]
    if args.other_events:
        results["other_readers"] = other_readers(args.other_events, args.data_dir)
    report(results)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


def report(r: dict[str, object]) -> None:
    print(f"\nmedian of {r['repeat']} interleaved runs per side and shape, whole processes"
          f" (load average {r['load_before']:.1f} before, {r['load_after']:.1f} after; {r['cpus']} CPUs)\n")
    print("| shape | files | MB | lines | DuckDB s (best) | DuckDB CPU s | DuckDB peak RSS MiB | logmine s (best) | logmine CPU s"
          " | logmine peak RSS MiB | ratio (best) | CPU ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, f in r["shapes"].items():  # type: ignore[union-attr]
        d, m = f["duckdb"], f["logmine"]
        print(f"| {name} | {f['files']} | {f['bytes'] / 1e6:,.0f} | {f['lines']:,} | {d['median_s']} ({d['best_s']}) | {d['median_cpu_s']}"
              f" | {d['peak_rss_mib']} | {m['median_s']} ({m['best_s']}) | {m['median_cpu_s']} | {m['peak_rss_mib']}"
              f" | **{f['ratio']}** ({f['ratio_best']}) | {f['ratio_cpu']} |")
    print("\nratio: DuckDB's median wall time / logmine's (target >= 0.5); runs (s):")
    for name, f in r["shapes"].items():  # type: ignore[union-attr]
        print(f"- {name}: duckdb {f['runs']['duckdb']}, logmine {f['runs']['logmine']}")
    if "lean_per_line" in r:
        f = r["lean_per_line"]
        print(f"\nlean file, logmine's per-line reader: {f['median_s']} s, {f['median_cpu_s']} CPU s, {f['peak_rss_mib']} MiB")  # type: ignore[index]
    if "other_readers" in r:
        print("\n| format | files | MB | lines | rows | s | rows/s |")
        print("|---|---|---|---|---|---|---|")
        for fmt, f in r["other_readers"].items():  # type: ignore[union-attr]
            print(f"| {fmt} | {f['files']} | {f['mb']} | {f['lines']:,} | {f['rows']:,} | {f['seconds']} | {f['rows_per_s']:,} |")

if __name__ == "__main__":
    main()
