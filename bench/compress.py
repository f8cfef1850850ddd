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

``--judge N`` also builds, for every request with slot values, the prompt the pack serves (compressed
template, shared prefix, code-context slots trimmed) and reports tokens per request logged vs served
(uncached: outside 16-token blocks an earlier request already had, as a prefix-caching server sees
them) and, for N requests per pack template, the bundled generator's 16 greedy tokens from both
prompts compared (bench/judge.py; ``--reuse`` judges WORK/ws as it is).

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


# -- judged by the model: the served prompts against the logged ones --------------------------------
def served_prompts(ws: Path) -> list[dict]:
    """Every request of the workspace with slot values: its logged prompt, the prompt the pack serves for it
    (the compressed template, which starts with its shared prefix, code-context slots trimmed as the pack's
    ``trimming`` says) and its pack template; in log order. Requests whose slots do not render back to
    the logged prompt through the pack's original template are left out (counted in ``skipped``)."""
    import duckdb

    from logmine.stages.compress import TrimConfig, Trimmer, trim_slots
    from logmine.stages.compress.instances import render

    pack = json.loads((ws / "pack" / "pack.json").read_text())
    templates = {t["id"]: t for t in pack["templates"]}
    heads = {p["id"]: p["text"] for p in pack["shared_prefixes"]}
    tr = pack.get("trimming") or {}
    cfg = TrimConfig(budget_tokens=tr.get("prefix_budget_tokens", 256), suffix_budget_tokens=tr.get("suffix_budget_tokens", 128),
                     declarations_budget_tokens=tr.get("declarations_budget_tokens", 256))
    con = duckdb.connect(str(ws / "logmine.duckdb"), read_only=True)
    rows = con.sql("select r.request_id, r.ts, r.session_id, r.language, r.file_path, r.prompt, s.pack_template_id, s.slots "
                   "from template_slots s join llm_requests r using (request_id) order by r.ts, r.request_id").fetchall()
    out, skipped = [], 0
    todo = []
    for rid, ts, session, lang, path, prompt, tid, slots in rows:
        t = templates.get(tid)
        values = json.loads(slots) if slots else None
        if t is None or values is None or render(t["original_source"], values) != prompt:
            skipped += 1
            continue
        roles = t.get("trimmed_slots") or {}
        todo.append((rid, ts, prompt, t, values, roles))
        out.append({"slots": {role: values.get(name, "") for name, role in roles.items()}, "language": lang,
                    "file_path": path, "session_id": session})
    trimmed = trim_slots(out, trimmer=Trimmer(cfg))
    served = []
    for (rid, ts, prompt, t, values, roles), res in zip(todo, trimmed, strict=True):
        new = dict(values)
        for name, role in roles.items():
            new[name] = res.values.get(role, new.get(name, ""))
        text = render(t["source"], new)
        head = heads.get(t["shared_prefix_id"], "") if t.get("shared_prefix_id") else ""
        if not text.startswith(head):  # a pack whose sources leave the shared prefix out
            text = head + text
        served.append({"request_id": rid, "template": t["id"], "name": t["name"], "original": prompt,
                       "served": text, "fim": t["source"] == t["original_source"] and bool(roles),
                       "context": "".join(values.get(n, "") for n in roles), "context_after": "".join(new.get(n, "") for n in roles),
                       "tail": _after_first_slot(t["original_source"]), "tail_after": _after_first_slot(t["source"])})
    print(f"{len(served):,} requests with slot values rendered back, {skipped:,} skipped", file=sys.stderr)
    return served


def _after_first_slot(source: str) -> str:
    """The static text of a template after its first slot (what a prefix cache cannot reuse across requests)."""
    from logmine.stages.compress.fidelity import segments

    parts = segments(source)
    first = next((k for k, p in enumerate(parts) if p.slot), len(parts))
    return "".join(p.text for p in parts[first:] if p.slot is None)


def apc_uncached(token_ids: list[list[int]], block: int = 16) -> list[int]:
    """Per prompt, in order, its tokens outside the 16-token blocks an earlier prompt already had (the
    chained block hashes of vLLM's automatic prefix caching, an unbounded cache)."""
    seen: set[int] = set()
    out = []
    for ids in token_ids:
        h, cached = 0, 0
        for k in range(0, len(ids) - len(ids) % block, block):
            h = hash((h, tuple(ids[k : k + block])))
            if h in seen:
                cached += block
            else:
                seen.add(h)
        out.append(len(ids) - cached)
    return out


def judge_served(served: list[dict], args: argparse.Namespace) -> dict:
    """Tokens per request before (logged) and after (served), traffic-weighted over the log, and the generator's
    outputs from ``--judge`` requests per template (greedy, 16 tokens) compared."""
    import hashlib
    import statistics

    from judge import Judge, edit_similarity
    from logmine.models import load_tokenizer

    tok = load_tokenizer()
    ids = {k: tok([r[k] for r in served], add_special_tokens=False)["input_ids"] for k in ("original", "served")}
    unc = {k: apc_uncached(v) for k, v in ids.items()}
    n = len(served)
    parts = {k: tok([r[k] for r in served], add_special_tokens=False)["input_ids"]
             for k in ("context", "context_after", "tail", "tail_after")}
    figures = {"requests": n,
               "tokens_before": sum(map(len, ids["original"])) / n, "tokens_after": sum(map(len, ids["served"])) / n,
               "apc_uncached_before": sum(unc["original"]) / n, "apc_uncached_after": sum(unc["served"]) / n,
               **{f"{k}_tokens": sum(map(len, v)) / n for k, v in parts.items()}}
    cut = lambda a, b: f"{b / a - 1:+.1%}"  # noqa: E731
    print(f"\n| per request, {n:,} requests | logged | served | change |\n|---|---|---|---|")
    print(f"| prompt tokens | {figures['tokens_before']:.1f} | {figures['tokens_after']:.1f} | "
          f"{cut(figures['tokens_before'], figures['tokens_after'])} |")
    print(f"| uncached tokens, unbounded prefix cache (16-token blocks, log order) | {figures['apc_uncached_before']:.1f} | "
          f"{figures['apc_uncached_after']:.1f} | {cut(figures['apc_uncached_before'], figures['apc_uncached_after'])} |")
    print(f"| code-context slots (trimmed) | {figures['context_tokens']:.1f} | {figures['context_after_tokens']:.1f} | |")
    print(f"| static text after the first slot | {figures['tail_tokens']:.1f} | {figures['tail_after_tokens']:.1f} | |")
    by_template: dict[str, list[dict]] = {}
    for r in served:
        by_template.setdefault(r["template"], []).append(r)
    picked = [r for rs in by_template.values()
              for r in sorted(rs, key=lambda r: hashlib.blake2b(r["request_id"].encode(), digest_size=8).digest())[: args.judge]]
    j = Judge(args.judge_cache, 16, args.judge_batch)
    prompts = [r[k] for r in picked for k in ("original", "served")]
    print(f"judging {len(picked)} requests of {len(by_template)} templates: {len(j.missing(prompts))} prompts to generate",
          file=sys.stderr)
    done = j.run(prompts, args.judge_limit_s)
    if j.generated:
        print(f"generated {j.generated} prompts in {j.seconds:.1f} s ({j.seconds / j.generated:.2f} s a prompt)", file=sys.stderr)
    if not done:
        print(f"time limit reached: {len(j.missing(prompts))} prompts left; run the same command again to go on")
        return figures

    def agree(rs: list[dict]) -> dict:
        pairs = [(j.output(r["original"]), j.output(r["served"])) for r in rs]
        return {"n": len(rs), "edit_similarity": statistics.fmean(edit_similarity(a, b) for a, b in pairs),
                "exact": sum(a == b for a, b in pairs) / len(pairs),
                "unchanged_prompt": sum(r["original"] == r["served"] for r in rs) / len(rs)}
    figures["judge"] = {"all": agree(picked), "fim": agree([r for r in picked if r["fim"]] or picked[:1]),
                        "changed": agree([r for r in picked if r["original"] != r["served"]] or picked[:1]),
                        "per_template": {rs[0]["name"]: agree([r for r in picked if r["template"] == t])
                                         for t, rs in by_template.items()}}
    # a validated pack: a template keeps its served form only when its judged outputs agree (edit similarity >= 0.9)
    ok = {t for t, rs in by_template.items() if agree([r for r in picked if r["template"] == t])["edit_similarity"] >= 0.9}
    mixed = [ids["served"][k] if r["template"] in ok else ids["original"][k] for k, r in enumerate(served)]
    figures["validated"] = {"templates_kept": len(ok), "templates": len(by_template),
                            "tokens_after": sum(map(len, mixed)) / n, "apc_uncached_after": sum(apc_uncached(mixed)) / n}
    print(f"validated pack (a template keeps its served form only when its outputs agree, edit similarity >= 0.9): "
          f"{len(ok)} of {len(by_template)} templates; prompt tokens {figures['validated']['tokens_after']:.1f}, "
          f"uncached {figures['validated']['apc_uncached_after']:.1f} per request")
    (args.work / "judged.json").write_text(json.dumps(figures, indent=2) + "\n")
    for k in ("all", "changed", "fim"):
        g = figures["judge"][k]
        print(f"outputs ({k}): {g['n']} requests, edit similarity {g['edit_similarity']:.3f}, exact {g['exact']:.3f}, "
              f"prompt unchanged {g['unchanged_prompt']:.3f}")
    return figures


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
    ap.add_argument("--judge", type=int, metavar="N", help="also generate from N logged and served prompts per template")
    ap.add_argument("--judge-cache", type=Path, default=Path("/tmp/logmine-judge-cache.jsonl"))
    ap.add_argument("--judge-batch", type=int, default=8)
    ap.add_argument("--judge-limit-s", type=float, help="--judge: stop generating after this many seconds (rerun to go on)")
    ap.add_argument("--reuse", action="store_true", help="use WORK/ws as it is (do not run logmine compress again)")
    ap.add_argument("extra", nargs="*", help="more options for logmine compress (after --)")
    args = ap.parse_args()
    args.format = args.format or ["native", "continue"]
    args.work.mkdir(parents=True, exist_ok=True)
    logs = args.logs or (real_logs(args) if args.real_templates else generate(args))
    if args.reuse and args.judge:
        judge_served(served_prompts(args.work / "ws"), args)
        return
    summary, wall, peak = run_compress(logs, args)
    ceil = ceiling(Path(summary["pack"]) / "pack.json", None) if args.ceiling else None
    fac = factored(Path(summary["pack"]) / "pack.json")
    report(summary, wall, peak, ceil, fac)
    print(f"shared prefixes: {fac['shared_prefix_tokens']} tokens per request factored out, "
          f"{fac['templates_with_prefix_share']:.1%} of the traffic on templates that reference one")
    stages = stage_times(args.work / "ws") if args.stages else None
    if stages:
        print("export stage alone (s): " + ", ".join(f"{k} {v}" for k, v in stages.items()))
    judged = judge_served(served_prompts(args.work / "ws"), args) if args.judge else None
    if args.json:
        args.json.write_text(json.dumps({"summary": summary, "wall_s": wall, "peak_rss_mb": peak, "ceiling": ceil, "factored": fac,
                                         "stages": stages, "judged": judged}, indent=2) + "\n")


if __name__ == "__main__":
    main()
