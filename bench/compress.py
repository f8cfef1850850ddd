"""`logmine compress` benchmark: template tokens before and after, per request, at scale.

Generates sample logs with about ``--requests`` LLM requests (``logmine sample``, native and
continue formats by default) or reads ``--logs``, then runs ``logmine compress`` end to end as a
subprocess (wall time, peak RSS of the process tree) and reads its JSON summary and pack. Reported,
traffic-weighted per request:

- static template tokens before, after the lossless stage alone, and with the lossy stage;
- rendered-prompt tokens and uncached tokens (not inside a prefix shared with another template),
  before, lossless alone, with the lossy stage, and with the code-context slots trimmed;
- the share of prompt tokens in fully shared 16-token KV blocks, before and after;
- context trimming's F1 on the logged completions beside the nearest-lines baseline.

``--real-templates FILE`` runs the same measurement on a log built from real assistant templates
instead of logmine's own sample (a ``templates.jsonl`` of ``{"name", "template", "kind",
"placeholder_syntax"}`` rows, rendered ``--per-template`` times each with real code by
bench/prompt_logs.py, written as native JSONL and Continue dev data): the check that a cut is not an
artefact of the sample's templates. Every template gets the same traffic there.

There is no compression peer on this machine (no LLMLingua or similar, no model downloads), so the
peer column is the reference the issue quotes (89 -> 32 static tokens at fidelity 0.94) and, for
trimming, the nearest-lines baseline at the same budget. ``--ceiling`` also reads the pack to say
how much of the static text is editable prose at all (whole lines of instructions; FIM sentinels,
role labels, text beside slots and quoted code are never edited), which bounds the static-token cut.

Example:
    .venv/bin/python bench/compress.py --requests 100000 --seed 7 --work /tmp/bench-compress --ceiling --stages
    .venv/bin/python bench/compress.py --real-templates ../shared/benchmarks/prompt-templates/templates.jsonl \
        --per-template 100 --work /tmp/bench-compress-real --ceiling
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
LOGMINE = [sys.executable, "-m", "logmine"]
EVENTS_PER_REQUEST = 6.2
"""`logmine sample` writes about one LLM request per 6.2 events with native + continue (measured at seed 7)."""
REFERENCE = {"static_tokens_before": 89, "static_tokens_after": 32, "fidelity": 0.94}
"""What the analysis this tool grew from reports (the issue's target: at least a 60 % cut at fidelity >= 0.94)."""


def generate(args: argparse.Namespace) -> Path:
    logs = args.work / "logs"
    if logs.is_dir() and not args.regenerate:
        return logs
    shutil.rmtree(logs, ignore_errors=True)
    events = int(args.requests * EVENTS_PER_REQUEST)
    cmd = [*LOGMINE, "sample", str(logs), "--events", str(events), "--seed", str(args.seed), "-q", "--report", "json"]
    for fmt in args.format:
        cmd += ["--format", fmt]
    started = time.perf_counter()
    report = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT).stdout)
    print(f"generated {sum(f['requests'] for f in report['formats']):,} requests, {report['bytes'] / 1e6:,.0f} MB "
          f"in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    return logs


def real_logs(args: argparse.Namespace) -> Path:
    """Logs of ``--per-template`` renderings of every template of ``--real-templates`` (bench/prompt_logs.py)."""
    from prompt_logs import load_templates, records, write_logs

    logs = args.work / "real-logs"
    if logs.is_dir() and not args.regenerate:
        return logs
    shutil.rmtree(logs, ignore_errors=True)
    rows = load_templates(args.real_templates)
    recs = list(records(rows, args.per_template, args.seed))
    write_logs(recs, logs, args.seed)
    fim = sum(1 for r in rows if r["kind"] in ("fim", "fim-context", "fim-chat"))
    print(f"{len(rows)} real templates ({fim} fill-in-the-middle), {len(recs):,} requests written", file=sys.stderr)
    return logs


def run_compress(logs: Path, args: argparse.Namespace) -> tuple[dict, float, float]:
    """Run the CLI on a fresh workspace: (summary, wall seconds, peak RSS of the child in MB)."""
    ws = args.work / "ws"
    shutil.rmtree(ws, ignore_errors=True)
    cmd = [*LOGMINE, "compress", str(logs), "-o", str(ws), "--format", "json", "-q", *args.extra]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "TOKENIZERS_PARALLELISM": "false", "LOGMINE_THREADS": "1"}
    started = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT, env=env).stdout
    wall = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return json.loads(out), wall, peak


def ceiling(pack_path: Path, tokenizer: str | None) -> dict:
    """How much of the static text could be compressed at all: instruction tokens, FIM share."""
    from logmine.models import load_tokenizer
    from logmine.stages.compress.compressor import is_fim
    from logmine.stages.compress.fidelity import segments, static_text, template_lines

    pack = json.loads(pack_path.read_text())
    tok = load_tokenizer(tokenizer)

    def n(texts: list[str]) -> list[int]:
        return [len(x) for x in tok(texts, add_special_tokens=False)["input_ids"]] if texts else []

    ts = pack["templates"]
    total = sum(t["n_requests"] for t in ts) or 1
    fim = [is_fim(t["original_source"]) for t in ts]
    statics = n([static_text(t["original_source"]) for t in ts])
    prose = n(["\n".join(x.text[x.head :] for x in template_lines(segments(t["original_source"])) if x.kind == "prose")
               if not f else "" for t, f in zip(ts, fim, strict=True)])
    weighted = lambda xs: sum(x * t["n_requests"] for x, t in zip(xs, ts, strict=True)) / total  # noqa: E731
    return {
        "fim_traffic_share": round(sum(t["n_requests"] for t, f in zip(ts, fim, strict=True) if f) / total, 4),
        "static_tokens": round(weighted(statics), 2),
        "editable_prose_tokens": round(weighted(prose), 2),
        "static_tokens_fim": round(weighted([s if f else 0 for s, f in zip(statics, fim, strict=True)]), 2),
        "templates_without_editable_prose": sum(1 for p in prose if p == 0),
        "single_request_templates": sum(1 for t in ts if t["n_requests"] == 1),
    }


def factored(pack_path: Path) -> dict:
    """Traffic-weighted tokens of the shared prefixes factored out of the templates' own text: what
    the static-token cut owes to prefix factoring (those tokens are still sent, once cached)."""
    pack = json.loads(pack_path.read_text())
    tokens = {p["id"]: p["tokens"] for p in pack["shared_prefixes"]}
    ts = pack["templates"]
    total = sum(t["n_requests"] for t in ts) or 1
    prefix = sum(tokens.get(t["shared_prefix_id"], 0) * t["n_requests"] for t in ts) / total
    after = sum(t["static_tokens_after"] * t["n_requests"] for t in ts) / total
    before = sum(t["static_tokens_before"] * t["n_requests"] for t in ts) / total
    return {"shared_prefix_tokens": round(prefix, 2), "static_after_with_prefix": round(after + prefix, 2),
            "cut_with_prefix": round(1 - (after + prefix) / before, 4) if before else 0.0,
            "templates_with_prefix_share": round(sum(t["n_requests"] for t in ts if t["shared_prefix_id"]) / total, 4)}


def stage_times(ws: Path) -> dict[str, float]:
    """Re-run the export stage alone on the bench's workspace, timing its steps (the progress callback)."""
    from logmine.jobs import CompressJobConfig, _embedder, _tokenizer
    from logmine.stages.compress.export import ExportConfig
    from logmine.stages.compress.export import run as export
    from logmine.workspace import Workspace

    started = time.perf_counter()
    config = CompressJobConfig()
    embedder, _ = _embedder(config)
    count, ids, _ = _tokenizer(config)
    marks: dict[str, float] = {"load models": time.perf_counter()}

    def progress(description: str, done: int, total: int) -> None:
        if done == 0 and description not in marks:
            marks[description] = time.perf_counter()

    export(Workspace.open(ws), embedder, count, ExportConfig(pack_dir=ws / "bench-pack"), progress, ids)
    names, stamps = list(marks), [*marks.values(), time.perf_counter()]
    out = {"load models": round(stamps[0] - started, 2)}
    out.update({name: round(b - a, 2) for name, a, b in zip(names, stamps, stamps[1:]) if name != "load models"})
    out["export total"] = round(stamps[-1] - started, 2)
    return out


def report(s: dict, wall: float, peak: float, ceil: dict | None, fac: dict) -> None:
    def cut(a: float, b: float) -> str:
        return f"{b / a - 1:+.1%}" if a else "n/a"

    print(f"requests {s['requests']:,}; templates found {s['templates_found']}, families {s['families']}, "
          f"traffic covered {s['traffic_covered']:.1%}, instances matched {s['instances_matched']:,}, measured {s['measured_requests']:,}")
    print("| per request (traffic-weighted) | before | lossless | lossy | lossy + trimmed | change (final) | reference |")
    print("|---|---|---|---|---|---|---|")
    print(f"| static template tokens | {s['static_tokens_before']:.2f} | {s['static_tokens_after_lossless']:.2f} | "
          f"{s['static_tokens_after']:.2f} | (same) | {cut(s['static_tokens_before'], s['static_tokens_after'])} | 89 -> 32 (-64 %) |")
    print(f"| static tokens, shared prefix counted in | {s['static_tokens_before']:.2f} | | {fac['static_after_with_prefix']:.2f} | | "
          f"{cut(s['static_tokens_before'], fac['static_after_with_prefix'])} | |")
    print(f"| rendered prompt tokens | {s['rendered_tokens_before']:.1f} | {s['rendered_tokens_after_lossless']:.1f} | "
          f"{s['rendered_tokens_after_lossy']:.1f} | {s['rendered_tokens_after']:.1f} | "
          f"{cut(s['rendered_tokens_before'], s['rendered_tokens_after'])} | |")
    print(f"| uncached tokens | {s['uncached_tokens_before']:.1f} | {s['uncached_tokens_after_lossless']:.1f} | "
          f"{s['uncached_tokens_after_lossy']:.1f} | {s['uncached_tokens_after']:.1f} | "
          f"{cut(s['uncached_tokens_before'], s['uncached_tokens_after'])} | |")
    print(f"| KV-block share (16 tokens) | {s['kv_block_share_before']:.3f} | {s['kv_block_share_after_lossless']:.3f} | | "
          f"{s['kv_block_share_after']:.3f} | | |")
    print(f"fidelity: mean {s['fidelity']:.4f}, min {s['fidelity_min']:.4f}; lossy templates {s['lossy_templates']}; "
          f"secrets redacted {s['secrets_redacted']} {s['secrets_by_kind']}")
    if s.get("trim_f1") is not None:
        print(f"trimming (budget {s['trim_budget_tokens']}): {s['trimmed_requests']:,} requests trimmed; F1 {s['trim_f1']:.3f} vs "
              f"nearest lines {s['trim_f1_nearest_lines']:.3f} over {s['trim_f1_requests']} completions that reference a unit")
    print(f"end to end: {wall:.1f} s wall ({s['requests'] / wall:,.0f} requests/s), peak RSS {peak:,.0f} MB")
    if ceil:
        print("ceiling: " + ", ".join(f"{k} {v}" for k, v in ceil.items()))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--requests", type=int, default=100_000, help="about this many LLM requests are generated")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--format", action="append", default=None, help="sample formats (default: native, continue)")
    ap.add_argument("--logs", type=Path, help="use these logs instead of generating them")
    ap.add_argument("--real-templates", type=Path, help="build the logs from this templates.jsonl of real assistant templates")
    ap.add_argument("--per-template", type=int, default=100, help="with --real-templates: requests per template")
    ap.add_argument("--work", type=Path, default=Path("/tmp/bench-compress"), help="where logs and the workspace go")
    ap.add_argument("--regenerate", action="store_true", help="generate the logs even if WORK/logs exists")
    ap.add_argument("--ceiling", action="store_true", help="also measure how much static text is instructions at all")
    ap.add_argument("--stages", action="store_true", help="also time the export stage's steps (re-run in-process)")
    ap.add_argument("--json", type=Path, help="write the figures here as JSON")
    ap.add_argument("extra", nargs="*", help="more options for logmine compress (after --)")
    args = ap.parse_args()
    args.format = args.format or ["native", "continue"]
    args.work.mkdir(parents=True, exist_ok=True)
    logs = args.logs or (real_logs(args) if args.real_templates else generate(args))
    summary, wall, peak = run_compress(logs, args)
    ceil = ceiling(Path(summary["pack"]) / "pack.json", None) if args.ceiling else None
    fac = factored(Path(summary["pack"]) / "pack.json")
    report(summary, wall, peak, ceil, fac)
    print(f"shared prefixes: {fac['shared_prefix_tokens']} tokens per request factored out, "
          f"{fac['templates_with_prefix_share']:.1%} of the traffic on templates that reference one")
    stages = stage_times(args.work / "ws") if args.stages else None
    if stages:
        print("export stage alone (s): " + ", ".join(f"{k} {v}" for k, v in stages.items()))
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "wall_s": wall, "peak_rss_mb": peak, "ceiling": ceil, "factored": fac,
                                         "stages": stages}, indent=2) + "\n")


if __name__ == "__main__":
    main()
