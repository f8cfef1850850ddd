"""Template-mining benchmark on Loghub-2k: logmine vs Drain3 (default and tuned), same lines, same run.

Accuracy: for each system of ``--data`` (the ``Content`` column of the corrected CSV), logmine
with its one default config, Drain3 0.9.11 with its default config, and Drain3 with the
benchmark's tuned per-dataset settings (masking regexes, depth, similarity threshold from
``drain_tuned_settings.json``). GA, FGA, PA and FTA against the corrected labels and the
original ones (definitions: ``logmine.evaluate`` and the data's README).

Speed: the systems' lines concatenated and repeated to ``--lines`` lines, each parser in a
process of its own (one after the other), lines/s and the ratio. logmine runs with its caches
(the default), without its exact-line cache (``line_cache_size=0``: every line is masked, word
by word with the masked words remembered, and looked up by its masked text) and with no cache at
all (``mask_cache_size=0`` too: every line masked whole by the rules' regex). With ``--fresh``
every copy after the first gets new values: the digits inside the true template's variables are
redrawn (same length and kind), so no exact line repeats, as in a big real log; with ``--fresh-ids``
every letter and digit of the variables is (names, ids and words no copy had). Lines/s are wall
clock; lines per CPU-second are the process's own time (steadier on a shared machine).

Out of sample (``--cv``): two-fold cross-validation over systems. The systems, sorted by name, are
dealt alternately into fold A (1st, 3rd, ...) and fold B (2nd, 4th, ...). On each fold a fitting
procedure fixes the rules and thresholds (backward elimination of the masking rules: a rule, or a
part of one, stays only when removing it lowers the fold's mean GA; then each threshold of
the clustering core (``MineConfig``'s and ``ClusterParams``') set to the grid value with the best
mean GA, the default on ties), and the config
it fixed is scored on the other fold. In-sample is the default config on every system (it was
written with all of them in view); out of sample is each system scored by the config fixed on the
fold it is not in. ``--redrawn`` scores both parsers again on the lines with every letter and
digit of each true variable replaced by a random one of its class (names, ids and words no rule
has seen: a check that the templates come from how positions vary, not from the values). ``--ablate`` removes one masking rule (or part) at a time from the default
config and prints its effect on each fold.

Example:
    python bench/loghub.py                       # accuracy + speed (400,000 lines)
    python bench/loghub.py --lines 100000 --json out/bench/loghub.json
    python bench/loghub.py --cv --ablate --no-speed
    python bench/loghub.py --no-accuracy --no-speed --redrawn
    python bench/loghub.py --no-accuracy --fresh --lines 400000
    python bench/loghub.py --no-accuracy --fresh-ids --lines 400000
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import resource
import string
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

os.environ.setdefault("POLARS_MAX_THREADS", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import polars as pl  # noqa: E402

from logmine.evaluate import Scores, score  # noqa: E402
from logmine.masking import DEFAULT_RULES, MaskRule  # noqa: E402
from logmine.stages.templates.cluster import ClusterParams  # noqa: E402
from logmine.stages.templates.miner import MineConfig, mine_templates  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "benchmarks" / "loghub-2k"
PARSERS = ("logmine", "drain3", "drain3-tuned")
SPEED_PARSERS = ("drain3", "logmine", "logmine-no-line-cache", "logmine-no-caches")


LABELS = {"corrected": "_2k.log_structured_corrected.csv", "original": "_2k.log_structured.csv"}
"""The label files a system's folder may hold (either will do; the corrected ones are the reference)."""


def systems(data: Path) -> list[str]:
    """The folders of ``data`` that hold a labelled system (corrected or original labels)."""
    return sorted(p.name for p in data.iterdir() if p.is_dir() and any((p / f"{p.name}{end}").is_file() for end in LABELS.values()))


def load(data: Path, system: str) -> tuple[list[str], list[str], list[str] | None]:
    """``(lines, corrected templates, original templates)`` in line order. A system with one label
    file only scores against it: its corrected labels are the original ones where only those are
    there, and it has no original ones (None) where only the corrected are."""
    frames = {k: pl.read_csv(f, infer_schema=False) for k, end in LABELS.items() if (f := data / system / f"{system}{end}").is_file()}
    reference = frames.get("corrected", frames.get("original"))
    if reference is None:
        raise FileNotFoundError(f"{data / system}: no {system}{LABELS['corrected']} nor {system}{LABELS['original']}")
    original = frames.get("original")
    return (reference["Content"].to_list(), reference["EventTemplate"].to_list(),
            None if original is None else original["EventTemplate"].to_list())


def tuned_settings(data: Path) -> dict[str, Any]:
    """The benchmark's tuned Drain settings per system (``drain_tuned_settings.json``), or none: a
    held-out folder may not have them, and its systems then get no Drain3-tuned column."""
    path = data / "drain_tuned_settings.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def run_logmine(lines: list[str], config: MineConfig | None = None) -> tuple[list[str], list[str]]:
    result = mine_templates(lines, config)
    return result.assignments, [result.templates[t] for t in result.assignments]


def drain3_miner(settings: dict[str, Any] | None = None) -> Any:
    """A Drain3 TemplateMiner: its default config, or the benchmark's tuned settings for a system."""
    from drain3 import TemplateMiner
    from drain3.masking import MaskingInstruction
    from drain3.template_miner_config import TemplateMinerConfig

    config = TemplateMinerConfig()  # explicit: TemplateMiner() alone would read ./drain3.ini
    if settings:
        config.drain_sim_th = settings["st"]
        config.drain_depth = settings["depth"]
        config.masking_instructions = [MaskingInstruction(rx, "*") for rx in settings["regex"]]
    return TemplateMiner(config=config)


def run_drain3(lines: list[str], settings: dict[str, Any] | None = None) -> tuple[list[int], list[str]]:
    miner = drain3_miner(settings)
    ids = [miner.add_log_message(line)["cluster_id"] for line in lines]
    text = {c.cluster_id: c.get_template() for c in miner.drain.clusters}
    return ids, [text[i] for i in ids]


def accuracy(data: Path, names: list[str]) -> dict[str, dict[str, dict[str, Scores]]]:
    """``result[parser][system][labels]`` with labels ``corrected`` / ``original``; a system without
    tuned settings has no ``drain3-tuned`` entry, one without original labels no ``original`` score."""
    tuned = tuned_settings(data)
    out: dict[str, dict[str, dict[str, Scores]]] = {p: {} for p in PARSERS}
    for name in names:
        lines, corrected, original = load(data, name)
        runs = {"logmine": run_logmine(lines), "drain3": run_drain3(lines)}
        if name in tuned:
            runs["drain3-tuned"] = run_drain3(lines, tuned[name])
        for parser, (ids, texts) in runs.items():
            out[parser][name] = {"corrected": score(corrected, ids, texts)}
            if original is not None:
                out[parser][name]["original"] = score(original, ids, texts)
        print(f"  {name}: " + ", ".join(f"{p} {out[p][name]['corrected'].ga:.3f}" for p in runs), file=sys.stderr)
    return out


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def accuracy_tables(result: dict[str, dict[str, dict[str, Scores]]], names: list[str]) -> str:
    """GA per system and every metric's mean, per label set; ``-`` where a parser or label set is
    missing for a system, and a mean over fewer systems says over how many."""
    def cell(p: str, name: str, labels: str) -> str:
        s = result[p].get(name, {}).get(labels)
        return "-" if s is None else f"{s.ga:.3f}"

    lines = []
    for labels in ("corrected", "original"):
        if not any(labels in result["logmine"].get(n, {}) for n in names):
            continue
        lines += [f"Grouping accuracy (GA), {labels} labels:", "",
                  "| system | logmine | Drain3 default | Drain3 tuned |", "|---|---:|---:|---:|"]
        for name in names:
            lines.append(f"| {name} | " + " | ".join(cell(p, name, labels) for p in PARSERS) + " |")
        scored = {p: [result[p][n][labels] for n in names if labels in result[p].get(n, {})] for p in PARSERS}

        def over(p: str) -> str:
            return "" if len(scored[p]) == len(names) else f" ({len(scored[p])} of {len(names)})"

        lines.append("| **mean** | " + " | ".join(f"**{mean([x.ga for x in scored[p]]):.3f}**{over(p)}" if scored[p] else "-"
                                                  for p in PARSERS) + " |")
        lines.append("")
        lines += [f"All metrics, mean over the {len(names)} systems, {labels} labels:", "",
                  "| parser | GA | FGA | PA | FTA | pairwise F1 |", "|---|---:|---:|---:|---:|---:|"]
        for p in PARSERS:
            s = scored[p]
            if s:
                lines.append(f"| {p}{over(p)} | {mean([x.ga for x in s]):.3f} | {mean([x.fga for x in s]):.3f} | {mean([x.pa for x in s]):.3f} | "
                             f"{mean([x.fta for x in s]):.3f} | {mean([x.pairwise_f1 for x in s]):.3f} |")
        lines.append("")
    return "\n".join(lines)


# -- out of sample: two-fold cross-validation over systems ------------------------------------
def folds(names: list[str]) -> tuple[list[str], list[str]]:
    """Fold A: the 1st, 3rd, ... system by sorted name; fold B: the 2nd, 4th, ..."""
    ordered = sorted(names)
    return ordered[0::2], ordered[1::2]


def rule_variants() -> list[tuple[str, tuple[MaskRule, ...]]]:
    """The default rules less one rule, or less one part of a rule, each with its name."""
    rules = list(DEFAULT_RULES)
    seen: dict[str, int] = {}
    out = []
    for i, r in enumerate(rules):
        seen[r.mask_with] = seen.get(r.mask_with, 0) + 1
        name = r.mask_with + (f"#{seen[r.mask_with]}" if sum(x.mask_with == r.mask_with for x in rules) > 1 else "")
        out.append((f"no {name}", tuple(rules[:i] + rules[i + 1 :])))
        for part, cut in RULE_PARTS.get(r.mask_with, ()):
            if cut in r.pattern:
                reduced = MaskRule(pattern=r.pattern.replace(cut, ""), mask_with=r.mask_with)
                out.append((f"{name} without {part}", tuple(rules[:i] + [reduced] + rules[i + 1 :])))
    return out


RULE_PARTS = {"NUM": [("its byte unit", "(?: ?(?:[KMGTP]i?B|B|bytes)\\b)?")],
              "ID": [("its version-number exception", "(?![A-Za-z]+\\d{1,2}(?![A-Za-z0-9_]))")]}
"""Parts of a default rule that the ablation removes on their own (the regex text cut out)."""

@dataclass(frozen=True)
class FitConfig(MineConfig):
    """MineConfig with every threshold of the clustering core open to fitting."""

    min_determined: int = ClusterParams.min_determined
    key_candidates: int = ClusterParams.key_candidates
    min_context_chars: int = ClusterParams.min_context_chars
    unique_region_ratio: float = ClusterParams.unique_region_ratio

    @property
    def cluster_params(self) -> ClusterParams:
        fields = ("max_constant_values", "variable_ratio", "min_context_tokens", "min_determined", "key_candidates",
                  "min_context_chars", "unique_region_ratio")
        return ClusterParams(**{f: getattr(self, f) for f in fields})


THRESHOLDS = {"max_constant_values": (2, 3, 4, 5, 6, 8), "variable_ratio": (0.3, 0.4, 0.5, 0.6, 0.7),
              "min_context_tokens": (1, 2, 3, 4, 5, 99), "min_determined": (1, 2, 3, 99), "key_candidates": (4, 8, 16),
              "min_context_chars": (8, 12, 16, 999), "unique_region_ratio": (0.2, 0.3, 0.5)}
"""The grid each threshold is fitted over (99 and 999 turn a mechanism off: key positions, region merges)."""


class Scorer:
    """GA/PA of a config on a system, each computed once."""

    def __init__(self, data: Path, names: list[str]) -> None:
        self.sets = {n: load(data, n) for n in names}
        self._memo: dict[tuple[MineConfig, str], Scores] = {}

    def __call__(self, config: MineConfig, name: str) -> Scores:
        key = (config, name)
        if key not in self._memo:
            lines, corrected, _ = self.sets[name]
            self._memo[key] = score(corrected, *run_logmine(lines, config))
        return self._memo[key]

    def mean_ga(self, config: MineConfig, names: list[str]) -> float:
        return mean([self(config, n).ga for n in names])


def fit(scorer: Scorer, train: list[str]) -> tuple[MineConfig, list[str]]:
    """The config a developer who saw only ``train`` would fix, and the choices made."""
    config, choices = FitConfig(), []
    for name, rules in rule_variants():
        kept = set(config.mask_rules)
        # apply the variant to the rules still kept: drop what it drops, take what it adds
        candidate = replace(config, mask_rules=tuple(r for r in rules if r in kept or r not in DEFAULT_RULES))
        if candidate.mask_rules != config.mask_rules and scorer.mean_ga(candidate, train) >= scorer.mean_ga(config, train):
            config = candidate
            choices.append(name)
    for knob, grid in THRESHOLDS.items():
        best = max(grid, key=lambda v: (round(scorer.mean_ga(replace(config, **{knob: v}), train), 6), v == getattr(config, knob)))
        if best != getattr(config, knob):
            choices.append(f"{knob}={best}")
            config = replace(config, **{knob: best})
    return config, choices


def cross_validate(data: Path, names: list[str]) -> dict[str, Any]:
    scorer = Scorer(data, names)
    a, b = folds(names)
    fitted = {"A": fit(scorer, a), "B": fit(scorer, b)}
    rows = {}
    for n in names:
        own, other = ("A", "B") if n in a else ("B", "A")
        lines, corrected, _ = scorer.sets[n]
        drain = score(corrected, *run_drain3(lines))
        rows[n] = {"fold": own, "default": scorer(MineConfig(), n), "in_fold": scorer(fitted[own][0], n),
                   "out_of_sample": scorer(fitted[other][0], n), "drain3": drain}
    return {"folds": {"A": a, "B": b}, "choices": {k: v[1] for k, v in fitted.items()}, "rows": rows}


def cv_table(cv: dict[str, Any]) -> str:
    rows = cv["rows"]
    out = ["Two-fold cross-validation over systems (corrected labels). Fold A: " + ", ".join(cv["folds"]["A"])
           + "; fold B: " + ", ".join(cv["folds"]["B"]) + ".", ""]
    for fold, choices in cv["choices"].items():
        out.append(f"Fixed on fold {fold}: " + (", ".join(choices) if choices else "the default config unchanged") + ".")
    out += ["", "| system | fold | default GA (in-sample) | default PA | fitted on own fold GA | fitted on other fold GA (out of sample) | PA | Drain3 default GA |",
            "|---|---|---:|---:|---:|---:|---:|---:|"]
    for n, r in rows.items():
        out.append(f"| {n} | {r['fold']} | {r['default'].ga:.3f} | {r['default'].pa:.3f} | {r['in_fold'].ga:.3f} | "
                   f"{r['out_of_sample'].ga:.3f} | {r['out_of_sample'].pa:.3f} | {r['drain3'].ga:.3f} |")
    for label, sel in (("fold A", cv["folds"]["A"]), ("fold B", cv["folds"]["B"]), ("all", list(rows))):
        m = {k: mean([rows[n][k].ga for n in sel]) for k in ("default", "in_fold", "out_of_sample", "drain3")}
        m["pa"] = mean([rows[n]["default"].pa for n in sel])
        m["oos_pa"] = mean([rows[n]["out_of_sample"].pa for n in sel])
        out.append(f"| **mean {label}** | | **{m['default']:.3f}** | {m['pa']:.3f} | {m['in_fold']:.3f} | **{m['out_of_sample']:.3f}** | "
                   f"{m['oos_pa']:.3f} | {m['drain3']:.3f} |")
    return "\n".join(out) + "\n"


def ablation(data: Path, names: list[str]) -> list[dict[str, Any]]:
    scorer = Scorer(data, names)
    a, b = folds(names)
    base = MineConfig()
    out = []
    for name, rules in [("default", base.mask_rules), *rule_variants()]:
        config = replace(base, mask_rules=rules)
        out.append({"variant": name, "A": scorer.mean_ga(config, a), "B": scorer.mean_ga(config, b),
                    "all": scorer.mean_ga(config, names),
                    "moved": {n: round(scorer(config, n).ga - scorer(base, n).ga, 3) for n in names
                              if abs(scorer(config, n).ga - scorer(base, n).ga) >= 0.0005}})
    return out


def ablation_table(rows: list[dict[str, Any]]) -> str:
    base = rows[0]
    out = ["Ablation: the default config less one masking rule (or part), mean GA per fold (corrected labels):", "",
           "| variant | fold A | fold B | all | systems that move (GA change) |", "|---|---:|---:|---:|---|"]
    for r in rows:
        moved = ", ".join(f"{n} {d:+.3f}" for n, d in r["moved"].items()) if r is not base else ""
        out.append(f"| {r['variant']} | {r['A']:.3f} ({r['A'] - base['A']:+.3f}) | {r['B']:.3f} ({r['B'] - base['B']:+.3f}) | "
                   f"{r['all']:.3f} | {moved} |")
    return "\n".join(out) + "\n"


# -- speed -----------------------------------------------------------------------------------
def speed_lines(data: Path, names: list[str], n: int, fresh: bool = False, ids: bool = False) -> list[str]:
    """The systems' lines repeated to ``n``; with ``fresh``, every copy after the first gets new
    values (:func:`fresh_values`), as in a big real log; with ``ids`` too, every letter and digit of
    its variables (:func:`redrawn`: names, ids and words no copy had)."""
    base = [(line, template) for name in names for line, template in zip(*load(data, name)[:2])]
    if not fresh:
        lines = [line for line, _ in base]
        return (lines * (n // len(lines) + 1))[:n]
    rng = random.Random(0)
    spans = [variable_spans(line, template) for line, template in base]
    out = [line for line, _ in base[:n]]
    while len(out) < n:
        new = redrawn if ids else fresh_values
        out.extend(new(line, s, rng) for (line, _), s in zip(base[: n - len(out)], spans))
    return out


def variable_spans(line: str, template: str) -> list[tuple[int, int]]:
    """Where the true template's ``<*>`` fall in ``line`` (none when the template does not match it)."""
    parts = [r"\s*".join(re.escape(w) for w in p.split()) + (r"\s*" if p.endswith(" ") else "") for p in re.split(r"<\*>", template)]
    parts = [(r"\s*" if p.startswith(" ") else "") + q for p, q in zip(re.split(r"<\*>", template), parts)]
    m = re.fullmatch("(.*?)".join(parts), line, re.DOTALL) if template else None
    return [m.span(g) for g in range(1, (m.lastindex or 0) + 1)] if m else []


_VALUE = re.compile(r"0[xX][0-9a-fA-F]+|[0-9a-fA-F]*\d[0-9a-fA-F]*")


def fresh_values(line: str, spans: list[tuple[int, int]], rng: random.Random) -> str:
    """``line`` with new random values in its variables (``spans``): each run of digits (or of hex
    digits holding a digit) is redrawn with the same length and kind (a decimal stays decimal, hex
    keeps its case), so an IP stays an IP, a block id a block id, and the line keeps its template."""

    def draw(m: re.Match[str]) -> str:
        text = m.group(0)
        prefix, body = (text[:2], text[2:]) if text[:2] in ("0x", "0X") else ("", text)
        if body.isdigit():
            alphabet = "0123456789"
        else:
            alphabet = "0123456789ABCDEF" if any(c in "ABCDEF" for c in body) else "0123456789abcdef"
        drawn = "".join(rng.choice(alphabet) for _ in body)
        if len(body) > 1 and body[0] != "0" and drawn[0] == "0":
            drawn = rng.choice(alphabet[1:]) + drawn[1:]  # keep the length of a number
        return prefix + drawn

    out, at = [], 0
    for a, b in spans:
        out += [line[at:a], _VALUE.sub(draw, line[a:b])]
        at = b
    return "".join(out) + line[at:]


def redrawn(line: str, spans: list[tuple[int, int]], rng: random.Random) -> str:
    """``line`` with every letter and digit of its variables (``spans``) replaced by a random one of
    the same class (lower, upper, digit; punctuation kept): names, ids and words no rule has seen."""

    def draw(c: str) -> str:
        if c.isdigit():
            return rng.choice("123456789")
        if c.islower():
            return rng.choice(string.ascii_lowercase)
        return rng.choice(string.ascii_uppercase) if c.isupper() else c

    out, at = [], 0
    for a, b in spans:
        out += [line[at:a], "".join(map(draw, line[a:b]))]
        at = b
    return "".join(out) + line[at:]


def redrawn_accuracy(data: Path, names: list[str]) -> dict[str, dict[str, float]]:
    """``result[system][parser]``: GA (corrected labels) on the system's lines as they are and with
    their variables :func:`redrawn` (seed 0), logmine's default next to Drain3's."""
    out: dict[str, dict[str, float]] = {}
    for name in names:
        lines, truth, _ = load(data, name)
        rng = random.Random(0)
        fresh = [redrawn(line, variable_spans(line, t), rng) for line, t in zip(lines, truth)]
        out[name] = {f"{p}{tag}": score(truth, *run(given)).ga
                     for tag, given in (("", lines), (" redrawn", fresh)) for p, run in (("logmine", run_logmine), ("drain3", run_drain3))}
        print(f"  {name} redrawn: " + ", ".join(f"{k} {v:.3f}" for k, v in out[name].items()), file=sys.stderr)
    return out


def redrawn_table(result: dict[str, dict[str, float]]) -> str:
    cols = ["logmine", "logmine redrawn", "drain3", "drain3 redrawn"]
    lines = ["GA on the lines as they are and with their variables redrawn (corrected labels):", "",
             "| system | " + " | ".join(cols) + " |", "|---|" + "---:|" * len(cols)]
    lines += [f"| {n} | " + " | ".join(f"{r[c]:.3f}" for c in cols) + " |" for n, r in result.items()]
    lines += ["| **mean** | " + " | ".join(f"**{mean([r[c] for r in result.values()]):.3f}**" for c in cols) + " |", ""]
    return "\n".join(lines)


def speed_worker(parser: str, data: Path, n: int, fresh: bool = False, ids: bool = False) -> dict[str, Any]:
    """Time one parser over the repeated lines (run in a process of its own)."""
    lines = speed_lines(data, systems(data), n, fresh or ids, ids)
    started, cpu = time.perf_counter(), time.process_time()
    if parser == "none":
        templates = 0
    elif parser == "drain3":
        miner = drain3_miner()
        for line in lines:
            miner.add_log_message(line)
        templates = len(miner.drain.clusters)
    else:
        config = {"logmine-no-line-cache": MineConfig(line_cache_size=0),
                  "logmine-no-caches": MineConfig(line_cache_size=0, mask_cache_size=0)}.get(parser, MineConfig())
        templates = len(mine_templates(lines, config).templates)
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"parser": parser, "lines": n, "fresh": fresh or ids, "ids": ids, "seconds": round(seconds, 3), "lines_per_s": round(n / seconds),
            "cpu_seconds": round(cpu, 3), "lines_per_cpu_s": round(n / cpu),
            "templates": templates, "peak_rss_mb": round(rss_mb)}


def speed(data: Path, n: int, fresh: bool = False, ids: bool = False) -> list[dict[str, Any]]:
    out = []
    for parser in SPEED_PARSERS:
        cmd = [sys.executable, __file__, "--data", str(data), "--speed-worker", parser, "--lines", str(n)]
        proc = subprocess.run(cmd + (["--fresh"] if fresh else []) + (["--fresh-ids"] if ids else []), check=True, capture_output=True, text=True)
        out.append(json.loads(proc.stdout))
        what = " (fresh ids)" if ids else " (fresh values)" if fresh else ""
        print(f"  {parser}{what}: {out[-1]['lines_per_s']:,} lines/s", file=sys.stderr)
    return out


def speed_table(rows: list[dict[str, Any]]) -> str:
    drain = next(r for r in rows if r["parser"] == "drain3")["lines_per_s"]
    what = ("every variable's letters and digits new in every copy" if rows[0].get("ids")
            else "new values in every copy" if rows[0].get("fresh") else "the same lines repeated")
    lines = [f"Speed, {rows[0]['lines']:,} lines (the 12 systems' lines, {what}), one process each:", "",
             "| parser | lines/s | ratio to Drain3 | seconds | lines per CPU-second | templates | peak RSS MB |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['parser']} | {r['lines_per_s']:,} | {r['lines_per_s'] / drain:.2f}x | {r['seconds']} | {r['lines_per_cpu_s']:,} | "
                     f"{r['templates']} | {r['peak_rss_mb']} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="Loghub-2k directory (one folder per system)")
    parser.add_argument("--lines", type=int, default=400_000, help="lines for the speed run")
    parser.add_argument("--no-speed", action="store_true", help="accuracy only")
    parser.add_argument("--no-accuracy", action="store_true", help="speed only")
    parser.add_argument("--fresh", action="store_true", help="speed on lines with new values in every copy (no exact line repeats)")
    parser.add_argument("--fresh-ids", action="store_true",
                        help="speed on lines whose variables get new letters and digits in every copy (new names and ids, not only numbers)")
    parser.add_argument("--cv", action="store_true", help="also two-fold cross-validation over systems (out of sample)")
    parser.add_argument("--redrawn", action="store_true", help="also GA with every variable's letters and digits redrawn (value freshness)")
    parser.add_argument("--ablate", action="store_true", help="also the default config less one masking rule at a time")
    parser.add_argument("--json", type=Path, help="also write every figure here")
    # "none" builds the lines and mines nothing: run both under `valgrind --tool=cachegrind --cache-sim=no`
    # and the difference of their instruction counts is the mining's, steadier than time on a shared box
    parser.add_argument("--speed-worker", choices=(*SPEED_PARSERS, "none"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.speed_worker:
        print(json.dumps(speed_worker(args.speed_worker, args.data, args.lines, args.fresh, args.fresh_ids)))
        return
    if not args.data.is_dir():
        parser.error(f"{args.data}: no such directory (use --data)")
    names = systems(args.data)
    report: dict[str, Any] = {"machine": f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}", "systems": names}
    print(f"## templates: Loghub-2k ({len(names)} systems)\n\nMachine: {report['machine']}.\n")
    if not args.no_accuracy:
        result = accuracy(args.data, names)
        print(accuracy_tables(result, names))
        report["accuracy"] = {p: {n: {lab: s.to_json() for lab, s in v.items()} for n, v in sys_.items()} for p, sys_ in result.items()}
    if args.cv:
        cv = cross_validate(args.data, names)
        print(cv_table(cv))
        report["cv"] = {**cv, "rows": {n: {k: (v.to_json() if isinstance(v, Scores) else v) for k, v in r.items()} for n, r in cv["rows"].items()}}
    if args.redrawn:
        fresh = redrawn_accuracy(args.data, names)
        print(redrawn_table(fresh))
        report["redrawn"] = fresh
    if args.ablate:
        rows_ = ablation(args.data, names)
        print(ablation_table(rows_))
        report["ablation"] = rows_
    if not args.no_speed:
        rows = speed(args.data, args.lines, args.fresh, args.fresh_ids)
        print(speed_table(rows))
        report["speed"] = rows
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
