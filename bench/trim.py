"""Context trimming benchmark: F1 of kept units (ours vs "keep the nearest lines") and contexts/s.

Data: autocomplete-like request streams cut from real source files. For each file, ``--sites``
cursor sites; at each site the user "types" the file's real text: ``--requests`` requests, the
cursor moving 1-8 characters between them. A request's prefix is the last ``--prefix-lines``
lines up to the cursor; the logged completion is the rest of the cursor's line and the next
``--completion-lines - 1`` lines. Files are read from ``--code-dir`` (repeatable): .py, .java,
.js/.mjs/.cjs, .ts, .go, .rs, and rustdoc's rendered sources (``*.rs.html``).

Truth per request: the units off the cursor's path that define an identifier the completion
uses; F1 is averaged over requests with a non-empty truth (micro F1 beside it). Speed runs the
whole stream through one Trimmer per process, either with caches (incremental parsing, as a
serving process would see consecutive requests of a file) or cold (every request parsed from
scratch); the 2-process figure hands the files, biggest first, to two pool workers as they free up.

``--judge N`` judges trimming by what the bundled generator writes instead (bench/judge.py): N
requests drawn at random, a budget of ``--keep-share`` (a third) of each context's SmolLM2 tokens,
16 greedy tokens from the untrimmed prompt, from ours (``TrimConfig(fill=True)``) and from the
nearest lines; edit similarity and exact match of the outputs, recall of the referenced units.

Example:
    .venv/bin/python bench/trim.py --code-dir .venv/lib/python3.11/site-packages/rich --budget 256
    .venv/bin/python bench/trim.py --code-dir .venv/lib/python3.11/site-packages/rich --prefix-lines 60 --judge 200 --judge-limit-s 240
    .venv/bin/python bench/trim.py --tune --code-dir .venv/lib/python3.11/site-packages/pydantic
    .venv/bin/python bench/trim.py --fit --code-dir .venv/lib/python3.11/site-packages/pydantic
"""

from __future__ import annotations

import argparse
import html
import itertools
import json
import multiprocessing as mp
import os
import random
import re
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from logmine.code import GRAMMARS, get_parser  # noqa: E402
from logmine.runtime.trim.trimmer import TrimConfig, Trimmer  # noqa: E402
from logmine.runtime.trim.evaluate import evaluate, nearest_lines, referenced_path, referenced_units  # noqa: E402
from logmine.runtime.trim.oracle import SIGNALS, bounds  # noqa: E402
from logmine.runtime.trim.score import FEATURES, build_plan, line_signals  # noqa: E402

EXT = {".py": "python", ".java": "java", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
       ".ts": "typescript", ".go": "go", ".rs": "rust"}
_ANCHOR = re.compile(r"<a href=#\d+ id=\d+ data-nosnippet>\d+</a>")
_TAG = re.compile(r"<[^>]+>")


def read_source(path: Path) -> tuple[str, str] | None:
    """``(language, text)`` of a source file, or None."""
    name = path.name
    if name.endswith(".rs.html"):
        raw = path.read_text("utf-8", "replace")
        m = re.search(r'<pre class="rust"><code>(.*?)</code></pre>', raw, re.S)
        return ("rust", html.unescape(_TAG.sub("", _ANCHOR.sub("", m.group(1))))) if m else None
    lang = EXT.get(path.suffix)
    if lang is None or name.endswith((".d.ts", ".min.js")):
        return None
    try:
        return lang, path.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def load_files(dirs: list[str], per_language: int, min_lines: int, seed: int, snippets: bool = False) -> list[tuple[str, str, str]]:
    """Up to ``per_language`` files per language: ``(path, language, text)``; ``snippets`` adds the
    small Java/JS/TS/Go/Rust files that ``logmine sample`` embeds."""
    by_lang: dict[str, list[tuple[str, str, str]]] = {}
    if snippets:
        from logmine.sample.snippets import SNIPPETS

        for path, text in SNIPPETS.items():
            lang = EXT.get(Path(path).suffix)
            if lang:
                by_lang.setdefault(lang, []).append((path, lang, text))
    for d in dirs:
        for root, subdirs, names in os.walk(d):
            subdirs[:] = sorted(s for s in subdirs if not s.startswith(".") and s not in ("__pycache__", "tests", "test"))
            for name in sorted(names):
                p = Path(root) / name
                if p.stat().st_size > 400_000:
                    continue
                got = read_source(p)
                if got and got[1].count("\n") >= min_lines:
                    by_lang.setdefault(got[0], []).append((str(p), got[0], got[1].replace("\r\n", "\n")))
    rng = random.Random(seed)
    out = []
    for lang in sorted(by_lang):
        files = by_lang[lang]
        rng.shuffle(files)
        out.extend(files[:per_language])
    return out


def requests_of(path: str, text: str, sites: int, per_site: int, prefix_lines: int, completion_lines: int,
                seed: int) -> list[tuple[str, str]]:
    """``(prefix, completion)`` of each request of a file, in the order the user typed them."""
    rng = random.Random(f"{seed}:{path}")
    starts = [0]
    for i, ch in enumerate(text):
        if ch == "\n":
            starts.append(i + 1)
    out = []
    for _ in range(sites):
        line = rng.randrange(min(20, len(starts) - 2), len(starts) - 2)
        pos = starts[line] + len(text[starts[line]:].split("\n", 1)[0]) - len(text[starts[line]:].split("\n", 1)[0].lstrip())
        for _ in range(per_site):
            if pos >= len(text):
                break
            line = _line_of(starts, pos)
            first = starts[max(0, line - prefix_lines + 1)]
            end_line = min(len(starts) - 1, line + completion_lines)
            end = starts[end_line] - 1 if end_line > line else len(text)
            out.append((text[first:starts[line]] + _indentation(text, starts, line, pos), text[pos:max(end, pos)]))
            pos += rng.randint(1, 8)
    return out


def _indentation(text: str, starts: list[int], line: int, pos: int) -> str:
    """The cursor's line up to the cursor; inside leading whitespace (or on a blank line), the IDE has
    already indented the line like the next line of code."""
    before = text[starts[line]:pos]
    if before.strip():
        return before
    for nxt in range(line, min(line + 50, len(starts))):
        row = text[starts[nxt]:].split("\n", 1)[0]
        if row.strip():
            return row[: len(row) - len(row.lstrip())]
    return before


def _line_of(starts: list[int], pos: int) -> int:
    import bisect

    return bisect.bisect_right(starts, pos) - 1


_WORKER: dict = {}


def _init(barrier, cfg: TrimConfig, mode: str) -> None:  # noqa: ANN001
    """A pool worker's Trimmer, kept across the files it is handed; wait until every worker is ready."""
    _WORKER["trimmer"] = Trimmer(cfg, cache=(mode != "cold"))
    barrier.wait()


def _trim_stream(t: Trimmer, files: list, opts: dict, timing_only: bool) -> tuple[list, float, float, int]:
    """Evaluate (or only trim, for timing) every request of ``files`` with ``t``:
    ``(rows, wall seconds, CPU seconds, requests)``, timing the trimming alone (the grammars are
    loaded before, as a serving process loads them once at startup)."""
    rows, n = [], 0
    streams = [(p, lang, requests_of(p, text, opts["sites"], opts["requests"], opts["prefix_lines"],
                                     opts["completion_lines"], opts["seed"])) for p, lang, text in files]
    for lang in {lang for _, lang, _ in files if lang in GRAMMARS}:
        get_parser(lang)
    t0, c0 = time.perf_counter(), time.process_time()
    for path, lang, reqs in streams:
        for prefix, completion in reqs:
            if timing_only:
                t.prefix(prefix, lang, path)
            else:
                rows.append((lang, evaluate(prefix, lang, completion, trimmer=t, file_path=path)))
            n += 1
    return rows, time.perf_counter() - t0, time.process_time() - c0, n


def _run_files(args: tuple) -> tuple[list, float, float, int, dict]:
    """Every request of some files through one Trimmer: ``(rows, wall seconds, CPU seconds, requests, parse stats)``."""
    files, cfg, opts, mode, timing_only = args
    t = Trimmer(cfg, cache=(mode != "cold"))
    return (*_trim_stream(t, files, opts, timing_only), dict(t.parser.stats))


def _run_file(args: tuple) -> tuple[int, list, float, float, int, dict]:
    """One file's requests in a pool worker: ``(pid, rows, wall, CPU seconds, requests, parse stats of the file)``."""
    file, opts, timing_only = args
    t = _WORKER["trimmer"]
    before = dict(t.parser.stats)
    rows, wall, cpu, n = _trim_stream(t, [file], opts, timing_only)
    return os.getpid(), rows, wall, cpu, n, {k: v - before.get(k, 0) for k, v in t.parser.stats.items()}


def measure(files: list, cfg: TrimConfig, opts: dict, mode: str, processes: int,
            timing_only: bool) -> tuple[list, float, float, int, dict]:
    """Rows, wall and CPU seconds of the slowest worker, requests, parse stats.

    With several processes, the files are handed out one at a time, biggest first, to whichever
    worker is free (each file's stream stays in one worker, which keeps one Trimmer for all it gets);
    a worker's time is the sum of its files' trimming times."""
    if processes == 1:
        return _run_files((files, cfg, opts, mode, timing_only))
    ctx = mp.get_context("fork")
    tasks = [(f, opts, timing_only) for f in sorted(files, key=lambda f: -len(f[2]))]
    with ctx.Pool(processes, initializer=_init, initargs=(ctx.Barrier(processes), cfg, mode)) as pool:
        parts = list(pool.imap_unordered(_run_file, tasks, chunksize=1))
    wall: dict[int, float] = {}
    cpu: dict[int, float] = {}
    stats: dict = {}
    for pid, _, w, c, _, st in parts:
        wall[pid], cpu[pid] = wall.get(pid, 0.0) + w, cpu.get(pid, 0.0) + c
        for k, v in st.items():
            stats[k] = stats.get(k, 0) + v
    return [r for p in parts for r in p[1]], max(wall.values()), max(cpu.values()), sum(p[4] for p in parts), stats


def summary(rows: list) -> dict:
    scored = [e for _, e in rows if e.f1 is not None]
    if not scored:
        return {"contexts": len(rows), "with_truth": 0}
    tp, kept, truth = sum(e.hits for e in scored), sum(e.kept for e in scored), sum(e.truth for e in scored)
    btp, bkept = sum(e.baseline_hits for e in scored), sum(e.baseline_kept for e in scored)
    return {
        "contexts": len(rows), "with_truth": len(scored),
        "f1": statistics.fmean(e.f1 for e in scored), "f1_base": statistics.fmean(e.f1_baseline for e in scored),
        "micro_f1": 2 * tp / (kept + truth) if kept + truth else 0.0,
        "micro_f1_base": 2 * btp / (bkept + truth) if bkept + truth else 0.0,
        "precision": tp / kept if kept else 0.0, "recall": tp / truth,
        "kept_when_no_truth": statistics.fmean([e.kept for _, e in rows if e.f1 is None] or [0]),
        # another convention: every request counts, "nothing referenced, nothing kept" scores 1
        "f1_all": statistics.fmean(e.f1 if e.f1 is not None else float(e.kept == 0) for _, e in rows),
        "nothing_all": (len(rows) - len(scored)) / len(rows),
        # the literal figure: the cursor's path counts on both sides when the completion uses its names
        "literal": len(lit := [e for _, e in rows if e.f1_literal is not None]),
        "f1_literal": statistics.fmean(e.f1_literal for e in lit) if lit else 0.0,
        "f1_literal_base": statistics.fmean(e.f1_baseline_literal for e in lit) if lit else 0.0,
    }


def bounds_rows(files: list, cfg: TrimConfig, opts: dict) -> list:
    """``(language, Bounds)`` of every request, one incremental Trimmer over the streams; the recently
    edited symbols of a request are the names of the units that enclosed the file's earlier cursors."""
    t, rows = Trimmer(cfg), []
    for path, lang, text in files:
        recent: list[str] = []
        for prefix, completion in requests_of(path, text, opts["sites"], opts["requests"], opts["prefix_lines"],
                                              opts["completion_lines"], opts["seed"]):
            b, units, upath = bounds(prefix, lang, completion, t, path, recent)
            rows.append((lang, b))
            if upath:
                names = sorted(units[upath[-1]].defines)
                recent = ([n for n in recent if n not in names] + names)[-32:]
    return rows


def print_bounds(rows: list, langs: list[str], budget: int) -> None:
    """The oracle table: mean F1 over the requests with truth, and which signals see the referenced units."""
    print(f"\nupper bounds, budget {budget} tokens (mean F1 over requests whose completion references a unit)")
    print(f"{'language':12} {'w/ truth':>8} {'ours':>6} {'cutoff':>6} {'vis-code':>8} {'visible':>7} {'budget':>6} "
          f"{'path>bud':>8} {'units':>6} " + " ".join(f"{s:>6}" for s in (*SIGNALS, "code", "any")))
    for lang in langs + ["all"]:
        bs = [b for l, b in rows if lang in ("all", l) and b.ours is not None]
        if not bs:
            continue
        units = sum(b.truth for b in bs)
        cover = [sum(b.covered[s] for b in bs) / units for s in (*SIGNALS, "narrow", "any")]
        print(f"{lang:12} {len(bs):8d} {statistics.fmean(b.ours for b in bs):6.3f} "
              f"{statistics.fmean(b.cutoff for b in bs):6.3f} {statistics.fmean(b.visible_narrow for b in bs):8.3f} "
              f"{statistics.fmean(b.visible for b in bs):7.3f} {statistics.fmean(b.budget for b in bs):6.3f} "
              f"{sum(b.path_over_budget for b in bs) / len(bs):8.3f} {units:6d} " + " ".join(f"{c:6.3f}" for c in cover))
    print("(cutoff: our ranking, best per-request cutoff; vis-code: best subset of the referenced units that the"
          "\n code signals (uses, typed, class) single out; visible: also recent symbols and imports; budget: of all"
          "\n referenced units; path>bud: share of requests whose cursor path alone is over budget; signal columns:"
          "\n share of referenced units each signal singles out; see logmine.runtime.trim.oracle)")


def unit_rows(files: list, cfg: TrimConfig, opts: dict) -> tuple[list[list[float]], list[int]]:
    """Every candidate unit of every request: its importance features and whether the completion references it."""
    t, xs, ys = Trimmer(cfg), [], []
    for path, lang, text in files:
        for prefix, completion in requests_of(path, text, opts["sites"], opts["requests"], opts["prefix_lines"],
                                              opts["completion_lines"], opts["seed"]):
            res = t.prefix(prefix, lang, path)
            if not res.path or not res.units:
                continue
            truth = referenced_units(res.units, res.path, completion, lang, prefix)
            data = prefix.encode("utf-8")
            units, upath, _ = t.layout(data, lang, path)
            plan = build_plan(units, upath, *t._body_uses(data, units, upath, lang, path), cfg, record=True)
            hits, typed = line_signals(plan, data[data.rfind(b"\n") + 1 :].decode("utf-8", "replace"), lang, cfg)
            at_line, at_typed = FEATURES.index("cursor_line"), FEATURES.index("typed")
            for i in plan.cand:
                row = list(plan.features[i])
                row[at_line], row[at_typed] = float(i in hits), float(i in typed)
                xs.append(row)
                ys.append(int(i in truth))
    return xs, ys


def fit(files: list, opts: dict, budget: int) -> None:
    """Fit the importance weights (logistic regression) on the given (tuning) files; prints the constants."""
    from sklearn.linear_model import LogisticRegression

    xs, ys = unit_rows(files, TrimConfig(budget_tokens=budget), opts)
    model = LogisticRegression(C=1.0, max_iter=5000).fit(xs, ys)
    print(f"{len(ys)} candidate units, {sum(ys)} referenced")
    print(f"IMPORTANCE_BIAS = {model.intercept_[0]:.3f}")
    print("IMPORTANCE = {" + ", ".join(f'"{f}": {w:.3f}' for f, w in zip(FEATURES, model.coef_[0])) + "}")


def tune(files: list, opts: dict, budget: int) -> TrimConfig:
    """Grid search on the given (tuning) files; prints each setting's F1."""
    grid = {
        "max_kept": [0, 1, 2, 3, 4],
        "unseen_mass": [0.0, 0.3, 0.6, 1.0],
        "prefix_min_score": [0.0, 0.25, 0.3, 0.35],
    }
    best, best_cfg = -1.0, None
    keys = list(grid)
    for values in itertools.product(*(grid[k] for k in keys)):
        cfg = replace(TrimConfig(budget_tokens=budget), **dict(zip(keys, values)))
        rows = _run_files((files, cfg, opts, "incremental", False))[0]
        s = summary(rows)
        print(f"  {dict(zip(keys, values))}: F1 {s['f1']:.3f}  P {s['precision']:.3f} R {s['recall']:.3f}"
              f"  F1 all {s['f1_all']:.3f}")
        if s["f1"] > best:
            best, best_cfg = s["f1"], cfg
    print(f"best: F1 {best:.3f} with {best_cfg}")
    return best_cfg


# -- judged by the model: what the generator writes from the trimmed prompt -------------------------
def judge_requests(files: list, opts: dict, n: int, seed: int) -> list[tuple[str, str, str, str]]:
    """``n`` requests ``(path, language, prefix, completion)`` drawn at random (``seed``) from every file's
    stream, in stream order (the Trimmer's caches follow the streams)."""
    every = [(p, lang, prefix, completion) for p, lang, text in files
             for prefix, completion in requests_of(p, text, opts["sites"], opts["requests"], opts["prefix_lines"],
                                                   opts["completion_lines"], opts["seed"])]
    picked = sorted(random.Random(seed).sample(range(len(every)), min(n, len(every))))
    return [every[i] for i in picked]


def judge_variants(reqs: list, share: float, variants: dict[str, TrimConfig]) -> list[dict]:
    """Per request: the untrimmed prompt, each variant's trimmed prompt (``{name: TrimConfig}``, plus the
    nearest-lines baseline) at a budget of ``share`` of the context's tokens (SmolLM2's tokenizer), the
    kept-token share, and recall of the referenced units (strict: off the cursor's path; literal: the path too)."""
    from logmine.models import load_tokenizer

    tok = load_tokenizer()

    def count(text: str) -> int:
        return len(tok(text, add_special_tokens=False).input_ids)

    trimmers = {name: Trimmer(cfg, count=count) for name, cfg in variants.items()}
    rows = []
    for path, lang, prefix, completion in reqs:
        total = count(prefix)
        budget = int(total * share)
        row = {"path": path, "lang": lang, "completion": completion, "tokens": total, "budget": budget,
               "prompts": {"full": prefix}, "kept_tokens": {}, "recall": {}, "recall_literal": {}}
        res = None
        for name, t in trimmers.items():
            res, b = t.prefix(prefix, lang, path, budget=budget), budget
            for _ in range(4):  # the pieces' counts can add up to less than the joined text's: hold the share
                over = count(res.text) - budget
                if over <= 0:
                    break
                b -= over
                res = t.prefix(prefix, lang, path, budget=max(b, 0))
            near = res.near_start if res.near_start is not None else len(prefix.encode("utf-8"))
            kept = set(res.kept) | {i for i, u in enumerate(res.units) if u.end > near}
            row["prompts"][name], row["kept_tokens"][name] = res.text, count(res.text)
            _recall(row, name, res, kept, prefix, completion, lang)
        base = nearest_lines(prefix, budget, count)
        start = len(prefix.encode("utf-8")) - len(base.encode("utf-8"))
        row["prompts"]["nearest"], row["kept_tokens"]["nearest"] = base, count(base)
        if res is not None:
            _recall(row, "nearest", res, {i for i, u in enumerate(res.units) if u.end > start}, prefix, completion, lang)
        rows.append(row)
    return rows


def _recall(row: dict, name: str, res, kept: set[int], prefix: str, completion: str, lang: str) -> None:  # noqa: ANN001
    truth = referenced_units(res.units, res.path, completion, lang, prefix)
    own = referenced_path(res.units, res.path, completion, lang, prefix)
    row["recall"][name] = len(kept & truth) / len(truth) if truth else None
    row["recall_literal"][name] = len(kept & (truth | own)) / len(truth | own) if truth | own else None
    row.setdefault("truth", len(truth))


def judge_table(rows: list, names: list[str], judge) -> dict:  # noqa: ANN001
    """Mean edit similarity and exact-match rate of each variant's output against the untrimmed prompt's,
    recall of the referenced units and the kept-token share, per language and over all."""
    from judge import edit_similarity

    out = {}
    langs = sorted({r["lang"] for r in rows})
    print(f"\n{'language':12} {'variant':9} {'n':>4} {'edit sim':>8} {'exact':>6} {'line':>6} {'vs logged':>9} {'recall':>6} "
          f"{'w/ truth':>8} {'micro':>6} {'literal':>7} {'kept':>6} {'max kept':>8}")
    for lang in [*langs, "all"]:
        sel = [r for r in rows if lang in ("all", r["lang"])]
        for name in names:
            outs = [(judge.output(r["prompts"]["full"]), judge.output(r["prompts"][name])) for r in sel]
            sims = [edit_similarity(a, b) for a, b in outs]
            logged = [edit_similarity(r["completion"][: len(b)], b) for r, (_, b) in zip(sel, outs, strict=True)]
            rec = [r["recall"][name] for r in sel if r["recall"].get(name) is not None]
            lit = [r["recall_literal"][name] for r in sel if r["recall_literal"].get(name) is not None]
            hit = sum(round(r["recall"][name] * r["truth"]) for r in sel if r["recall"].get(name) is not None)
            truth = sum(r["truth"] for r in sel if r["recall"].get(name) is not None)
            kept = [r["kept_tokens"][name] / r["tokens"] for r in sel if r["tokens"]]
            line = sum(a.lstrip("\n").split("\n")[0] == b.lstrip("\n").split("\n")[0] for a, b in outs) / len(outs)
            s = {"n": len(sel), "edit_similarity": statistics.fmean(sims), "exact": sum(a == b for a, b in outs) / len(outs),
                 "first_line_exact": line,
                 "edit_similarity_logged": statistics.fmean(logged),
                 "recall": statistics.fmean(rec) if rec else None, "with_truth": len(rec),
                 "recall_micro": hit / truth if truth else None, "recall_literal": statistics.fmean(lit) if lit else None,
                 "kept_share": statistics.fmean(kept), "kept_share_max": max(kept)}
            out[f"{lang}/{name}"] = s
            fmt = lambda x: f"{x:.3f}" if x is not None else "  -  "  # noqa: E731
            print(f"{lang:12} {name:9} {s['n']:4d} {s['edit_similarity']:8.3f} {s['exact']:6.3f} {s['first_line_exact']:6.3f} {s['edit_similarity_logged']:9.3f} "
                  f"{fmt(s['recall']):>6} {s['with_truth']:8d} {fmt(s['recall_micro']):>6} {fmt(s['recall_literal']):>7} "
                  f"{s['kept_share']:6.3f} {s['kept_share_max']:8.3f}")
    print("(edit sim / exact: the variant's 16 greedy tokens against the untrimmed prompt's; line: their first"
          "\n non-empty lines equal; vs logged: against the"
          "\n logged completion cut to the output's length; recall: of the units off the cursor's path that the logged"
          "\n completion references, mean over requests with one (w/ truth), micro pooled, literal with the path;"
          "\n kept: tokens of the trimmed prompt over the context's, mean and max)")
    return out


def judge(files: list, opts: dict, a: argparse.Namespace) -> None:
    """``--judge``: trimmed prompts judged by what the bundled generator writes from them."""
    from judge import Judge

    variants = {"ours": TrimConfig(fill=True, near_share=a.near_share)}
    for share in a.also_near_share or []:
        variants[f"ours@{share:g}"] = TrimConfig(fill=True, near_share=share)
    if a.judge_f1_cut:
        variants["f1-cut"] = TrimConfig()
    reqs = judge_requests(files, opts, a.judge, a.seed)
    t0 = time.perf_counter()
    rows = judge_variants(reqs, a.keep_share, variants)
    trim_s = time.perf_counter() - t0
    names = [*variants, "nearest"]
    j = Judge(a.judge_cache, a.max_new_tokens, a.judge_batch)
    prompts = [r["prompts"][k] for r in rows for k in ("full", *names)]
    todo = len(j.missing(prompts))
    print(f"{len(rows)} requests, budget {a.keep_share:.3f} of each context's tokens (mean context {statistics.fmean(r['tokens'] for r in rows):.0f}"
          f" tokens); trimming {trim_s:.1f} s; {todo} of {len(set(prompts))} prompts to generate")
    done = j.run(prompts, a.judge_limit_s)
    if j.generated:
        print(f"generated {j.generated} prompts x {a.max_new_tokens} tokens in {j.seconds:.1f} s "
              f"({j.seconds / j.generated:.2f} s a prompt, batch {a.judge_batch}, 1 torch thread)")
    if not done:
        print(f"time limit reached: {len(j.missing(prompts))} prompts left; run the same command again to go on")
        return
    table = judge_table(rows, names, j)
    if a.json:
        a.json.write_text(json.dumps({"requests": len(rows), "keep_share": a.keep_share, "table": table}, indent=2) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--code-dir", action="append", required=True)
    ap.add_argument("--files-per-language", type=int, default=60)
    ap.add_argument("--min-lines", type=int, default=60)
    ap.add_argument("--sites", type=int, default=3)
    ap.add_argument("--requests", type=int, default=20, help="requests per site as the user types")
    ap.add_argument("--prefix-lines", type=int, default=150)
    ap.add_argument("--completion-lines", type=int, default=4)
    ap.add_argument("--budget", type=int, action="append")
    ap.add_argument("--processes", type=int, action="append")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--snippets", action="store_true", help="add the Java/JS/TS/Go/Rust snippets of logmine.sample")
    ap.add_argument("--tune", action="store_true", help="grid-search parameters on these files instead")
    ap.add_argument("--fit", action="store_true", help="fit the importance weights on these files instead")
    ap.add_argument("--repeat", type=int, default=3, help="throughput runs per setting (best is shown)")
    ap.add_argument("--speed-only", action="store_true", help="skip the F1 tables")
    ap.add_argument("--bounds", action="store_true", help="print the oracle upper bounds of F1 instead")
    ap.add_argument("--judge", type=int, metavar="N", help="judge N requests by the generator's output instead")
    ap.add_argument("--keep-share", type=float, default=1 / 3, help="--judge: budget as a share of each context's tokens")
    ap.add_argument("--near-share", type=float, default=0.5, help="--judge: TrimConfig.near_share of our trimming")
    ap.add_argument("--also-near-share", type=float, action="append", help="--judge: another near_share to compare")
    ap.add_argument("--judge-f1-cut", action="store_true", help="--judge: also the default (F1-cut) trimming")
    ap.add_argument("--judge-cache", type=Path, default=Path("/tmp/logmine-judge-cache.jsonl"))
    ap.add_argument("--judge-batch", type=int, default=8)
    ap.add_argument("--judge-limit-s", type=float, default=None, help="--judge: stop generating after this many seconds")
    ap.add_argument("--max-new-tokens", type=int, default=16)
    ap.add_argument("--json", type=Path)
    a = ap.parse_args()
    files = load_files(a.code_dir, a.files_per_language, a.min_lines, a.seed, a.snippets)
    opts = {"sites": a.sites, "requests": a.requests, "prefix_lines": a.prefix_lines,
            "completion_lines": a.completion_lines, "seed": a.seed}
    langs = sorted({f[1] for f in files})
    print(f"files: {len(files)} ({', '.join(f'{l}={sum(1 for f in files if f[1] == l)}' for l in langs)})")
    if a.tune:
        tune(files, opts, (a.budget or [256])[0])
        return
    if a.fit:
        fit(files, opts, (a.budget or [256])[0])
        return
    if a.judge:
        judge(files, opts, a)
        return
    if a.bounds:
        for budget in a.budget or [256, 512]:
            print_bounds(bounds_rows(files, TrimConfig(budget_tokens=budget), opts), langs, budget)
        return
    for budget in [] if a.speed_only else a.budget or [256, 512]:
        cfg = TrimConfig(budget_tokens=budget)
        rows = _run_files((files, cfg, opts, "incremental", False))[0]
        print(f"\nbudget {budget} tokens, {len(rows)} requests")
        print(f"{'language':12} {'requests':>8} {'w/ truth':>8} {'F1 ours':>8} {'F1 near':>8} {'ratio':>6} "
              f"{'micro':>6} {'micro near':>10} {'P':>5} {'R':>5} {'F1 all':>7} {'F1 none':>8} "
              f"{'lit w/':>6} {'lit ours':>8} {'lit near':>8}")
        for lang in langs + ["all"]:
            s = summary([r for r in rows if lang in ("all", r[0])])
            if not s.get("with_truth"):
                continue
            print(f"{lang:12} {s['contexts']:8d} {s['with_truth']:8d} {s['f1']:8.3f} {s['f1_base']:8.3f} "
                  f"{s['f1'] / max(s['f1_base'], 1e-9):6.2f} {s['micro_f1']:6.3f} {s['micro_f1_base']:10.3f} "
                  f"{s['precision']:5.2f} {s['recall']:5.2f} {s['f1_all']:7.3f} {s['nothing_all']:8.3f} "
                  f"{s['literal']:6d} {s['f1_literal']:8.3f} {s['f1_literal_base']:8.3f}")
    if not a.speed_only:
        print("(F1 ours / near: mean over requests whose completion references a unit; micro: pooled counts;"
              "\n F1 all: every request, nothing referenced and nothing kept = 1; F1 none: that convention for keeping nothing;"
              "\n lit: the literal figure, the cursor's enclosing unit and class headers counted on both sides when the"
              "\n completion uses a name they define, over the requests it scores (w/))")
    cfg = TrimConfig(budget_tokens=(a.budget or [256])[0])
    print(f"\nthroughput (trim only, prefix slot, budget {cfg.budget_tokens}); load average {os.getloadavg()[0]:.1f} "
          f"on {os.cpu_count()} CPUs")
    print(f"  {'parsing':11} {'processes':>9} {'contexts/s':>11} {'per CPU-s':>10}  segment parses")
    for mode in ("cold", "incremental"):
        for procs in a.processes or [1, 2]:
            runs = [measure(files, cfg, opts, mode, procs, True) for _ in range(a.repeat)]
            n, stats = runs[0][3], runs[0][4]
            wall, cpu = min(r[1] for r in runs), min(r[2] for r in runs)
            print(f"  {mode:11} {procs:9d} {n / wall:11.0f} {n / cpu:10.0f}  {stats}")
    streams = [requests_of(p, text, a.sites, a.requests, a.prefix_lines, a.completion_lines, a.seed) for p, _, text in files]
    c0 = time.process_time()
    n = sum(len(nearest_lines(prefix, cfg.budget_tokens)) >= 0 for reqs in streams for prefix, _ in reqs)
    print(f"  {'nearest-lines baseline':21} 1 {'':11} {n / (time.process_time() - c0):10.0f}")
    print(f"  (best of {a.repeat}; contexts/s: requests over the slowest worker's wall time; per CPU-s: over its"
          " CPU time, what dedicated cores would give)")


if __name__ == "__main__":
    main()
