"""``logmine sample``: realistic synthetic IDE and code-assistant logs in every supported format.

:func:`generate` simulates developers' sessions (:mod:`logmine.sample.model`), renders the
assistant's prompts from logmine's own template set (:mod:`logmine.sample.templates`) filled
with real code (:mod:`logmine.sample.code`), and writes each format's files the way the real
tool does (:mod:`logmine.sample.writers`), plus ``truth.json``: what was planted (templates,
latency factors, acceptance pattern, secrets, malformed lines per file). Same seed, same
options, same code directory: byte-identical output. Sessions are written one at a time, so
memory stays bounded for any number of events.
"""

from __future__ import annotations

import logging
import math
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from logmine.errors import InputPathError, OptionError, OutputPathError
from logmine.sample.code import Corpus, load_corpus
from logmine.sample.model import Event, Simulator, model_truth
from logmine.sample.templates import TEMPLATES
from logmine.sample.timing import latency_truth
from logmine.sample.truth import FORMAT_VERSION, Truth, secret_list
from logmine.sample.writers import WRITERS

log = logging.getLogger(__name__)

FORMATS = tuple(WRITERS)
"""Format names in generation order: native, continue, continue-llm, tabby, jetbrains, kave, otel."""
START_MS = 1740988800000
"""2025-03-03T08:00:00Z, when the first simulated session starts."""
TRUTH_FILE = "truth.json"

ProgressFn = Callable[[str, int, int], None]


def _no_progress(description: str, done: int, total: int) -> None:
    return None


@dataclass(frozen=True)
class SampleConfig:
    """Options of :func:`generate`."""

    events: int = 10_000
    """Simulated events (editor actions and assistant requests) in all, split evenly over the formats."""
    seed: int = 0
    """Seed of every random choice: the same seed gives byte-identical files."""
    formats: tuple[str, ...] = FORMATS
    """Which formats to write (names as in :data:`FORMATS`)."""
    code_dir: Path | None = None
    """Where the code in prompts comes from; None: the frozen corpus (logmine.sample.code.FROZEN_CORPUS)."""
    malformed_rate: float = 0.005
    """Share of lines followed by a planted malformed line, per file."""
    secret_rate: float = 0.03
    """Share of requests with a planted fake secret or personal datum in the prompt."""
    max_prefix_chars: int = 1200
    """Longest code prefix before the cursor in a completion prompt."""
    max_suffix_chars: int = 400
    """Longest code suffix after the cursor in a completion prompt."""
    session_events: int = 120
    """Median events of a session."""
    overwrite: bool = False
    """Replace the format folders and truth.json of a previous run in the output directory."""


@dataclass
class FormatReport:
    """What was written for one format."""

    name: str
    files: int = 0
    lines: int = 0
    malformed: int = 0
    bytes: int = 0
    sessions: int = 0
    users: int = 0
    events: int = 0
    requests: int = 0


@dataclass
class SampleReport:
    """The outcome of :func:`generate`."""

    out_dir: str
    seed: int
    events: int
    formats: list[FormatReport] = field(default_factory=list)
    seconds: float = 0.0

    def summary(self) -> dict[str, Any]:
        return {
            "out_dir": self.out_dir, "seed": self.seed, "events": self.events,
            "files": sum(f.files for f in self.formats), "lines": sum(f.lines for f in self.formats),
            "malformed_lines": sum(f.malformed for f in self.formats), "bytes": sum(f.bytes for f in self.formats),
            "truth": str(Path(self.out_dir) / TRUTH_FILE), "seconds": round(self.seconds, 3),
        }

    def to_json(self) -> dict[str, Any]:
        return {**self.summary(), "formats": [vars(f) for f in self.formats]}


def generate(out_dir: Path | str, config: SampleConfig | None = None, progress: ProgressFn = _no_progress) -> SampleReport:
    """Write synthetic logs of ``config.events`` events under ``out_dir`` and return the report."""
    config = config or SampleConfig()
    _check(config)
    out = Path(out_dir)
    _prepare(out, config)
    started = time.perf_counter()
    corpus = load_corpus(config.code_dir)
    truth = Truth()
    report = SampleReport(str(out), config.seed, config.events)
    simulated: dict[str, Any] = {}
    done = 0
    selected = [f for f in FORMATS if f in config.formats]
    for index, fmt in enumerate(selected):
        budget = config.events // len(selected) + (1 if index < config.events % len(selected) else 0)
        fmt_report, fmt_truth = _run_format(out, fmt, budget, config, corpus, truth,
                                            lambda n, fmt=fmt: progress(f"sample {fmt}", done + n, config.events))
        done += budget
        report.formats.append(fmt_report)
        simulated[fmt] = fmt_truth
    progress("sample", config.events, config.events)
    body = truth.to_json({
        "format_version": FORMAT_VERSION,
        "generator": {"command": _command(config), "seed": config.seed, "events": config.events, "formats": selected,
                      "code_dir": str(config.code_dir) if config.code_dir else "logmine package (default)",
                      "code_digest": corpus.digest, "code_files": len(corpus.files), "languages": corpus.languages(),
                      "malformed_rate": config.malformed_rate, "secret_rate": config.secret_rate},
        "formats": simulated,
        "token_latency": latency_truth(),
        **model_truth(),
        "template_count": len(TEMPLATES),
    })
    (out / TRUTH_FILE).write_bytes(orjson.dumps(body, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n")
    (out / ".logmineignore").write_text("# Not logs: the sample's description and its ground truth.\nREADME.md\ntruth.json\n")
    report.seconds = time.perf_counter() - started
    log.info("sample: %d events in %.1f s under %s", config.events, report.seconds, out)
    return report


def _check(config: SampleConfig) -> None:
    if config.events < 1:
        raise OptionError("--events", config.events, "a positive number of events")
    unknown = [f for f in config.formats if f not in WRITERS]
    if unknown or not config.formats:
        raise OptionError("--format", ",".join(unknown) or "", "one or more of " + ", ".join(FORMATS))
    if not 0.0 <= config.malformed_rate <= 0.5:
        raise OptionError("malformed_rate", config.malformed_rate, "a share between 0 and 0.5")
    if not 0.0 <= config.secret_rate <= 1.0:
        raise OptionError("secret_rate", config.secret_rate, "a share between 0 and 1")


def _prepare(out: Path, config: SampleConfig) -> None:
    if out.exists() and not out.is_dir():
        raise InputPathError(out, "is a file; OUT_DIR must be a directory")
    ours = [out / name for name in (*FORMATS, TRUTH_FILE)]
    existing = [p for p in ours if p.exists()]
    if existing and not config.overwrite:
        raise InputPathError(out, f"already holds generated logs ({existing[0].name}); use --overwrite or another OUT_DIR")
    for path in existing:
        shutil.rmtree(path) if path.is_dir() else path.unlink()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputPathError(out, "sample logs", exc) from exc


def _command(config: SampleConfig) -> str:
    parts = ["logmine sample OUT_DIR", f"--events {config.events}", f"--seed {config.seed}"]
    if tuple(config.formats) != FORMATS:
        parts += [f"--format {f}" for f in config.formats]
    if config.code_dir:
        parts.append(f"--code-dir {config.code_dir}")
    return " ".join(parts)


def _run_format(out: Path, fmt: str, budget: int, config: SampleConfig, corpus: Corpus, truth: Truth,
                tick: Callable[[int], None]) -> tuple[FormatReport, dict[str, Any]]:
    """Simulate ``budget`` events of sessions for ``fmt`` and write them."""
    index = FORMATS.index(fmt)
    writer_cls = WRITERS[fmt]
    sim = Simulator(np.random.default_rng([config.seed, index, 0]), corpus, secret_rate=config.secret_rate,
                    max_prefix=config.max_prefix_chars, max_suffix=config.max_suffix_chars, ides=writer_cls.IDES,
                    no_code_share=writer_cls.NO_CODE_SHARE, first_secret=index)
    writer = writer_cls(out, np.random.default_rng([config.seed, index, 1]), config.malformed_rate, truth)
    project = (config.code_dir.resolve().name if config.code_dir else "logmine").replace(" ", "-") or "project"
    n_users = min(400, max(2, math.ceil(budget / (config.session_events * 5))))
    users = [sim.make_user(i, project) for i in range(n_users)]
    free = [0.0] * n_users
    d = sim.draw
    rep = FormatReport(fmt, users=n_users)
    clock, left, step = float(START_MS), budget, max(1, budget // 100)
    while left > 0:
        length = min(left, max(15, min(1500, int(d.lognormal(config.session_events, 0.6)))))
        if left - length < 15:
            length = left
        u = rep.sessions if rep.sessions < n_users else d.below(n_users)  # every user gets a session first
        start = max(clock, free[u])
        session = sim.run_session(users[u], start, length)
        writer.write(session)
        free[u] = sim.t + d.lognormal(1_800_000, 0.5)
        rep.sessions += 1
        n_events = sum(isinstance(item, Event) for item in session.items)
        rep.events += n_events
        rep.requests += len(session.items) - n_events
        before = left
        left -= length
        if before // step != left // step:
            tick(budget - left)
        clock += d.exponential(43_200_000 / n_users)
    stats = writer.close()
    for rel, s in stats.items():
        rep.files += 1
        rep.lines += s.lines
        rep.malformed += sum(s.malformed.values())
        rep.bytes += (out / rel).stat().st_size
    fmt_truth = {
        "events_budget": budget, "sessions": rep.sessions, "users": n_users, "simulated_events": rep.events,
        "simulated_requests": rep.requests,
        "acceptance_observed": dict(sorted(sim.acceptance.items())),
        "secret_pool": secret_list(sim.secrets),
        "files": {rel: s.to_json() for rel, s in sorted(stats.items())},
    }
    return rep, fmt_truth
