"""Test data for the heatmap stage: hand-labelled token streams per language and planted latencies.

Every token below carries the type a person assigns it; the stage must find the same from its
own parse. The planted generator makes string tokens 5x slower than everything else.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

I, K, S, N, C, O, P, W = "identifier", "keyword", "string", "number", "comment", "operator", "punctuation", "whitespace"

# language -> (prefix, [(token, expected type), ...])
HAND_LABELLED: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "python": ("def greet(name):\n", [
        ("    ", W), ("msg", I), (" =", O), (' "', S), ("Hello", S), (", ", S), ('"', S), (" +", O), (" name", I),
        ("  ", W), ("# say hi", C), ("\n", W), ("    ", W), ("return", K), (" len", I), ("(", P), ("msg", I), (")", P),
        (" *", O), (" 2", N), ("\n", W),
    ]),
    "java": ("class A {\n", [
        ("  ", W), ("static", K), (" int", K), (" f", I), ("(", P), ("String", I), (" s", I), (")", P), (" {", P), ("\n", W),
        ("    ", W), ("return", K), (" s", I), (".", P), ("length", I), ("()", P), (" +", O), (" 42", N), (";", P),
        (" // done", C), ("\n", W), ("    ", W), ("String", I), (" t", I), (" =", O), (' "', S), ("x", S), ('"', S), (";", P),
        ("\n", W), ("  ", W), ("}", P), ("\n", W),
    ]),
    "javascript": ("function f(a) {\n", [
        ("  ", W), ("const", K), (" b", I), (" =", O), (" `", S), ("id-", S), ("${", P), ("a", I), ("}", P), ("`", S), (";", P),
        ("\n", W), ("  ", W), ("return", K), (" b", I), (" ===", O), (" 'x'", S), (" ?", O), (" 1.5", N), (" :", P),
        (" null", K), (";", P), (" /* end */", C), ("\n", W), ("}", P), ("\n", W),
    ]),
    "typescript": ("", [
        ("interface", K), (" Point", I), (" {", P), (" x", I), (":", P), (" number", K), (";", P), (" }", P), ("\n", W),
        ("const", K), (" p", I), (":", P), (" Point", I), (" =", O), (" {", P), (" x", I), (":", P), (" 3", N), (" }", P),
        (";", P), (" // origin", C), ("\n", W), ("let", K), (" s", I), (" =", O), (' "', S), ("hi", S), ('"', S), (";", P), ("\n", W),
    ]),
    "go": ("package main\n\n", [
        ("func", K), (" add", I), ("(", P), ("a", I), (",", P), (" b", I), (" int", I), (")", P), (" int", I), (" {", P),
        ("\n", W), ("\t", W), ("s", I), (" :=", O), (' "', S), ("sum", S), ('"', S), (" // label", C), ("\n", W), ("\t", W),
        ("return", K), (" a", I), (" +", O), (" b", I), (" *", O), (" 0x10", N), ("\n", W), ("}", P), ("\n", W),
    ]),
    "rust": ("", [
        ("fn", K), (" main", I), ("()", P), (" {", P), ("\n", W), ("    ", W), ("let", K), (" mut", K), (" x", I), (":", P),
        (" i32", K), (" =", O), (" 5", N), (";", P), (" // five", C), ("\n", W), ("    ", W), ("println", I), ("!", O), ("(", P),
        ('"', S), ("{}", S), ('"', S), (",", P), (" x", I), (")", P), (";", P), ("\n", W), ("}", P), ("\n", W),
    ]),
}

# Code fragments by language for the planted generator: lists of (token, type).
_FRAGMENTS: dict[str, list[list[tuple[str, str]]]] = {
    "python": [
        [("x", I), (" =", O), (' "', S), ("alpha", S), (" beta", S), ('"', S), ("\n", W)],
        [("if", K), (" n", I), (" >", O), (" 10", N), (":", P), ("\n", W), ("    ", W), ("print", I), ("(", P),
         ('"', S), ("big", S), ('"', S), (")", P), ("\n", W)],
        [("total", I), (" +=", O), (" value", I), (" *", O), (" 3", N), ("\n", W)],
    ],
    "javascript": [
        [("const", K), (" s", I), (" =", O), (" '", S), ("hello", S), (" there", S), ("'", S), (";", P), ("\n", W)],
        [("if", K), (" (", P), ("n", I), (" >", O), (" 10", N), (")", P), (" log", I), ("(", P), ('"', S), ("big", S),
         ('"', S), (");", P), ("\n", W)],
        [("total", I), (" +=", O), (" value", I), (" *", O), (" 3", N), (";", P), ("\n", W)],
    ],
    "go": [
        [("s", I), (" :=", O), (' "', S), ("hello", S), (" world", S), ('"', S), ("\n", W)],
        [("if", K), (" n", I), (" >", O), (" 10", N), (" {", P), ("\n", W), ("\t", W), ("log", I), ("(", P), ('"', S),
         ("big", S), ('"', S), (")", P), ("\n", W), ("}", P), ("\n", W)],
        [("total", I), (" +=", O), (" value", I), (" *", O), (" 3", N), ("\n", W)],
    ],
}
_PREFIX = {"python": "def run(n, value, total):\n", "javascript": "function run(n, value, total) {\n",
           "go": "package main\n\nfunc run(n int, value int, total int) {\n"}
_INDENT = {"python": "    ", "javascript": "  ", "go": "\t"}


def native_request(tokens: list[str] | None, times: list[float] | None, **fields: Any) -> dict[str, Any]:
    """One native ``llm_request`` record."""
    rec: dict[str, Any] = {"type": "llm_request", "ts": "2025-03-03T10:00:00Z", "kind": "completion", "model": "m1",
                           "token_texts": tokens, "token_times_ms": times, "completion": "".join(tokens or [])}
    rec.update(fields)
    return rec


def arrival_times(gaps_ms: list[float]) -> list[float]:
    out, t = [], 0.0
    for gap in gaps_ms:
        t += gap
        out.append(round(t, 6))
    return out


def planted_records(n: int, seed: int = 7, string_factor: float = 5.0, days: int = 2) -> list[dict[str, Any]]:
    """``n`` completions in three languages and two models; string tokens ``string_factor`` x slower."""
    rng = random.Random(seed)
    start = datetime(2025, 3, 1, tzinfo=UTC)
    records = []
    for i in range(n):
        lang = ("python", "javascript", "go")[i % 3]
        model = ("fast-model", "slow-model")[i % 2]
        base = 20.0 if model == "fast-model" else 35.0
        tokens: list[tuple[str, str]] = []
        for _ in range(rng.randint(2, 5)):
            frag = rng.choice(_FRAGMENTS[lang])
            tokens += [(_INDENT[lang], W)] + frag
        gaps = [rng.uniform(150, 400)]  # time to first token
        for text, kind in tokens[1:]:
            factor = string_factor if kind == S else 1.0
            gaps.append(base * factor * rng.lognormvariate(0, 0.2))
        ts = start + timedelta(days=i % days, hours=rng.randint(0, 23), minutes=rng.randint(0, 59))
        records.append(native_request(
            [t for t, _ in tokens], arrival_times(gaps), ts=ts.isoformat().replace("+00:00", "Z"), model=model,
            language=lang, prefix=_PREFIX[lang], request_id=f"r{i:05d}",
        ))
    return records


def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def make_workspace(tmp: Path, records: list[dict[str, Any]], name: str = "logs.jsonl") -> Path:
    """Ingest ``records`` (native JSONL) into a fresh workspace under ``tmp``; return its root."""
    from logmine.stages.ingest.core import ingest

    ws = tmp / "ws"
    ingest([write_jsonl(tmp / "logs" / name, records)], ws)
    return ws
