"""Prompt logs of another shape: a Continue chat log whose chats join several templates.

The records of :mod:`prompt_logs` carry their values (the FIM prefix and suffix, the file path,
the language), and every prompt is one template. A real chat log gives neither: Continue's LLM
interaction log (``continue-llm``: ``startChat`` with the chat's messages, ``startComplete``
with a rendered completion prompt) carries only the text, and one chat joins a system prompt,
the files the user attached and the user's turn. This module writes that shape:

- each template of the file is the *user turn* of one chat shape; a seeded half of the shapes
  also open with a *system turn*, another template of the same set (one of at least
  ``SYSTEM_MIN_CHARS`` characters: the long, Markdown-heavy ones), and a seeded share carry one
  or two *file turns* (Continue's code context item: a fence whose info string is the file's path,
  holding real code). A shape is fixed per template, so the truth of a chat is its sequence of
  turn templates, and there are as many true chat templates as templates;
- fill-in-the-middle templates and model chat formats (Jinja) are ``startComplete`` prompts, as
  Continue logs them;
- placeholder values that are words, not code: the language is a language's name drawn per
  chat (``Rust``, ``TypeScript``), the user's request, titles and names are words; code
  placeholders hold real code of this machine's Python standard library (read at bench time).

Example: ``python bench/prompts.py --shape chat``.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prompt_logs import (
    MARK,
    CodeCorpus,
    Record,
    instruction,
    other_path,
    render,
    skeleton_key,
    value_for,
)

SYSTEM_MIN_CHARS = 600
"""A template this long may open other chats as their system prompt."""
SYSTEM_SHARE = 0.5
"""Share of chat shapes that open with a system turn."""
FILES_SHARE = 0.5
"""Share of chat shapes with file turns (one or two)."""
LANGUAGES = ["Python", "TypeScript", "JavaScript", "Rust", "Go", "Java", "Kotlin", "C++", "C#", "Ruby", "Swift", "PHP",
             "Scala", "Haskell", "Elixir", "Lua"]
NAMES = ["alice", "bob", "carol", "dmitri", "erin", "farah", "gustavo", "hana", "ivan", "jun", "kwame", "lena"]
COMPLETION_KINDS = ("fim", "fim-context", "chat-template")
WORD_KEYS = {"reponame": "repo", "title": "title", "new_section_title": "title"}
_FILE_TRUTH = f"```{MARK}\n{MARK}\n```"


@dataclass(frozen=True)
class Shape:
    """One chat template: the turns of its chats, by template index (system, files, user)."""

    system: int | None
    files: int
    user: int


def shapes(rows: list[dict[str, Any]], seed: int) -> list[Shape]:
    """A fixed chat shape per template (seeded)."""
    rng = random.Random(seed + 17)
    long = [i for i, r in enumerate(rows) if len(r["template"]) >= SYSTEM_MIN_CHARS and r["kind"] not in COMPLETION_KINDS]
    out = []
    for i, row in enumerate(rows):
        if row["kind"] in COMPLETION_KINDS:
            out.append(Shape(None, 0, i))
            continue
        others = [j for j in long if j != i]
        system = rng.choice(others) if others and rng.random() < SYSTEM_SHARE else None
        files = rng.choice((1, 2)) if rng.random() < FILES_SHARE else 0
        out.append(Shape(system, files, i))
    return out


def chat_records(rows: list[dict[str, Any]], per_template: int, seed: int = 0, requests: str = "varied") -> Iterator[tuple[Record, list[dict[str, str]] | None]]:
    """``per_template`` chats of every template's shape, in a seeded random order: each a Record
    (prompt as ingest renders the messages, truth) and its messages (None for a completion prompt)."""
    rng = random.Random(seed)
    corpus = CodeCorpus(rng)
    plan = shapes(rows, seed)
    truths = [skeleton_key(r) for r in rows]
    order = [s for s in plan for _ in range(per_template)]
    rng.shuffle(order)
    for shape in order:
        file_path, prefix, suffix = corpus.cursor()
        ctx = {"prefix": prefix, "suffix": suffix, "file_path": file_path, "language": rng.choice(LANGUAGES), "requests": requests}
        user_row = rows[shape.user]
        if user_row["kind"] in COMPLETION_KINDS:
            prompt = render(user_row, _values(user_row, ctx, corpus, rng))
            yield Record(prompt, truths[shape.user], "completion", None, None, file_path, ctx["language"], user_row["name"]), None
            continue
        messages, truth = [], []
        if shape.system is not None:
            row = rows[shape.system]
            messages.append({"role": "system", "content": render(row, _values(row, dict(ctx), corpus, rng))})
            truth.append(("system", truths[shape.system]))
        for _ in range(shape.files):
            messages.append({"role": "user", "content": f"```{other_path(corpus)}\n{corpus.snippet(4, 40)}\n```"})
            truth.append(("user", _FILE_TRUTH))
        messages.append({"role": "user", "content": render(user_row, _values(user_row, ctx, corpus, rng))})
        truth.append(("user", truths[shape.user]))
        prompt = "\n".join(f"{m['role']}: {m['content']}" for m in messages)  # as logmine's ingest renders a chat
        key = "\n".join(f"{role}: {t}" for role, t in truth)
        yield Record(prompt, key, "chat", None, None, file_path, ctx["language"], user_row["name"]), messages


def _values(row: dict[str, Any], ctx: dict[str, str], corpus: CodeCorpus, rng: random.Random) -> Any:
    """Placeholder values: words where the placeholder names words, else as :func:`prompt_logs.value_for`."""

    def values(name: str) -> str:
        if row["placeholder_syntax"] == "jinja2":
            return instruction(rng, corpus if ctx["requests"] == "varied" else None)
        key = re.sub(r"^(otherData|args)\.", "", name.strip()).lower()
        if key in WORD_KEYS:
            kind = WORD_KEYS[key]
            if kind == "repo":
                return f"{rng.choice(NAMES)}/{corpus.rng.choice(corpus.files).stem}"
            return " ".join(w.capitalize() for w in instruction(rng).split()[:rng.randint(2, 5)])
        return value_for(name, ctx, corpus, rng)

    return values


def write_chat_log(recs: list[tuple[Record, list[dict[str, str]] | None]], out: Path, seed: int = 0) -> list[tuple[str, int]]:
    """Write the chats as one Continue LLM interaction log (``continue-llm``); return where each
    record went: ``(file, line of its start item)``, in record order."""
    rng = random.Random(seed + 2)
    path = out / "continue-llm" / "bench" / "llm_log-2026-01-05.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    where: list[tuple[str, int]] = []
    t0 = 1_767_600_000_000
    line = 0
    with path.open("w") as fh:
        for i, (rec, messages) in enumerate(recs):
            iid = f"chat-{i:07d}"
            ts = t0 + 7000 * i
            options = {"model": "bench-model", "maxTokens": 4096}
            if messages is None:
                start = {"interactionId": iid, "timestamp": ts, "kind": "startComplete", "prompt": rec.prompt, "options": options,
                         "provider": "ollama"}
            else:
                start = {"interactionId": iid, "timestamp": ts, "kind": "startChat", "messages": messages, "options": options,
                         "provider": "ollama"}
            items = [start, {"interactionId": iid, "timestamp": ts + rng.randint(80, 400), "kind": "success", "promptTokens": 0,
                             "generatedTokens": 0, "thinkingTokens": 0}]
            for item in items:
                fh.write(json.dumps(item) + "\n")
                line += 1
                if item is start:
                    where.append((str(path), line))
    return where
