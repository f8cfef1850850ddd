"""Test data for pipelines: native JSONL logs in date folders, and pipeline files over them.

Each day holds whole sessions (none crosses midnight), assistant requests whose prompts follow
a few templates, token timings for the heatmap, and a couple of malformed lines to reject.
"""

from __future__ import annotations

import json
import random
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl
from polars.testing import assert_frame_equal

from logmine.embedding import HashingEmbedder
from logmine.workspace import Workspace

sys.path.insert(0, str(Path(__file__).resolve().parent / "serving"))
from serving_helpers import ScriptedGenerator

ACTIONS = ["file.open", "editor.edit", "completion.requested", "completion.shown", "completion.accepted",
           "completion.rejected", "file.save", "test.run", "build", "vcs.commit"]
PROMPTS = [
    "You are a careful coding assistant. Complete the {lang} code in {path}.\n{code}",
    "Explain what the function {name} in {path} does, in two sentences. Use password: correcthorsebattery for the staging API.",
    "Write a unit test for {name} using pytest. Keep it short.\nCode:\n{code}",
]
COMPLETIONS = [
    (["x", " =", " \"", "abc", "\"", "\n"], "python"),
    (["return", " a", " +", " 1", "\n"], "python"),
    (["let", " n", " =", " 42", ";", "\n"], "javascript"),
]


def day_records(day: str, seed: int, sessions: int = 6) -> list[dict]:
    """Events and requests of one day: ``sessions`` sessions between 08:00 and 18:00 UTC."""
    rnd = random.Random(f"{day}:{seed}")
    start = datetime.fromisoformat(day).replace(hour=8, tzinfo=UTC)
    out: list[dict] = []
    for s in range(sessions):
        sid = f"{day}-s{s}"
        user = f"user{rnd.randrange(4)}"
        t = start + timedelta(minutes=rnd.randrange(0, 600))
        for _ in range(rnd.randrange(5, 14)):
            t += timedelta(seconds=rnd.uniform(1, 90))
            out.append({"type": "event", "ts": t.isoformat(), "action": rnd.choice(ACTIONS), "session_id": sid,
                        "user_id": user, "ide": "vscode", "language": "python"})
            if rnd.random() < 0.5:
                out.append(_request(rnd, t, sid, user))
    return out


def _request(rnd: random.Random, t: datetime, sid: str, user: str) -> dict:
    tokens, lang = rnd.choice(COMPLETIONS)
    times, clock = [], rnd.uniform(80, 300)
    for tok in tokens:
        clock += rnd.uniform(5, 40) * (4 if tok.strip('" ').isalpha() and tok.startswith('"') is False and len(tok) > 3 else 1)
        times.append(round(clock, 3))
    prompt = rnd.choice(PROMPTS).format(
        lang=lang, path=f"src/mod{rnd.randrange(20)}.py", name=f"f{rnd.randrange(50)}",
        code="def g():\n    return " + str(rnd.randrange(1000)))
    return {"type": "llm_request", "ts": t.isoformat(), "kind": "completion", "session_id": sid, "user_id": user,
            "ide": "vscode", "model": rnd.choice(["m-small", "m-large"]), "language": lang, "file_path": "src/a.py",
            "prompt": prompt, "prefix": "def f():\n    ", "completion": "".join(tokens), "token_texts": tokens,
            "token_times_ms": times, "accepted": rnd.random() < 0.6}


def write_day(logs: Path, day: str, seed: int = 0, bad_lines: int = 1, sessions: int = 6) -> Path:
    """Write one day's log file (plus ``bad_lines`` malformed lines); return it."""
    path = logs / day / "native" / "assistant.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(r) for r in day_records(day, seed, sessions)]
    lines[1:1] = ["{not json"] * bad_lines
    path.write_text("\n".join(lines) + "\n")
    return path


def write_pipeline(dir_: Path, name: str = "test", workspace: str = "ws", extra: str = "", report: bool = False) -> Path:
    """A pipeline file over ``dir_/logs/{date}/native/*.jsonl``."""
    text = f'''name = "{name}"
workspace = "{workspace}"

[[inputs]]
name = "native"
paths = ["logs/{{date}}/native/*.jsonl"]
format = "native"

[stages.heatmap]
html = false

[stages.report]
enabled = {"true" if report else "false"}
{extra}'''
    path = dir_ / f"{name}.toml"
    path.write_text(text)
    return path


RESULT_TABLES = [
    "flows_dfg", "flows_dfg_gaps", "flows_activities", "flows_ngrams", "flows_cooccurrence", "flows_outcomes",
    "flows_variants", "flows_sessions", "heatmap_by_type", "heatmap_by_type_position", "heatmap_by_model_type",
    "heatmap_by_language_type", "heatmap_by_hour_model", "heatmap_latency_time", "templates", "request_templates",
]


def canon(df: pl.DataFrame) -> pl.DataFrame:
    """Row order and list columns made comparable."""
    df = df.with_columns(pl.col(c).cast(pl.List(pl.String)).list.join("\x1f") for c, t in df.schema.items() if isinstance(t, pl.List))
    return df.sort(df.columns, nulls_last=True)


def assert_same_tables(a: Path, b: Path, tables: list[str] = RESULT_TABLES) -> None:
    wa, wb = Workspace.open(a), Workspace.open(b)
    for name in tables:
        assert_frame_equal(canon(wa.read(name)), canon(wb.read(name)), rel_tol=1e-9, abs_tol=1e-9)


def word_count(texts: list[str]) -> list[int]:
    return [len(t.split()) for t in texts]


FAKE_MODELS = {"embedder": HashingEmbedder(), "count_tokens": word_count, "generator": ScriptedGenerator()}
"""Stand-ins for the sentence model, the tokenizer and the generator (which judges what the pack ships
where validation is on: by default when the bundled generator is installed)."""
