"""A held-out template-mining benchmark with exact ground truth: log lines rendered from the
logging calls of real source code on this machine, logmine's default next to Drain3's default.

Harvest: every ``<logger>.<level>("...", args)`` call (``debug``, ``info``, ``warning``, ``warn``,
``error``, ``exception``, ``critical``, ``fatal``) whose first argument is a plain string literal
(%-style specifiers or none; f-strings and ``.format`` calls are left out: their text is not one
literal) in the Python packages under ``--roots`` (the shared venv's site-packages, Debian's
dist-packages and the Google Cloud SDK's lib by default), tests left out. The format strings
are whitespace-collapsed and kept when they hold at least two constant words of letters. A
*system* is a top-level package, or for a big one each second-level package with enough format
strings (the rest of it pooled); a system needs ``--min-templates`` distinct templates and holds
at most ``--max-templates`` of them (a seeded sample).

Render: ``--lines`` lines per system; templates drawn with Zipf weights (a few frequent, a long
tail, each at least once when lines allow), every specifier filled with a value of the kind it
implies: ``%d`` an integer, ``%f`` a float, ``%x`` hex, ``%r`` a quoted repr, ``%s`` by the words
around it and its name (a path after ``file``/``dir``, ``host:port`` after ``host``/``address``,
a duration after ``took``/``in``, a byte size after ``size``, an id after ``id``, a user/host
WORD, a dotted name, a class name, a quoted name, occasionally a short phrase). Each slot draws
its words from a pool of its own (8, 30 or 300 values), as real variables repeat. Each system has
a *shape*, from its name: ``plain`` (the message), ``proc`` (a variable process name first:
``chrome.exe - message``), ``pipe`` (``thread|logger|message``, the thread a word that varies)
or ``kv`` (``pid=<n> level=<LEVEL> msg``). The truth of a line is its format string with every
specifier (and the varying fields of its shape) written ``<*>``: GA against it
(:func:`logmine.evaluate.score`).

Split, fixed before any result was seen: a system is in the ``dev`` half when the first byte of
blake2b(top-level package name) is even, else ``out``; the subsystems of one package stay in
one half. Develop on ``dev``; ``out`` is the out-of-sample check.

Example:
    python bench/source_logs.py                     # both halves, per system and means
    python bench/source_logs.py --half dev --worst 5 --json out/bench/source_logs.json
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import random
import re
import sys
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("POLARS_MAX_THREADS", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from loghub import run_drain3, run_logmine  # noqa: E402

from logmine.evaluate import Scores, score  # noqa: E402

DEFAULT_ROOTS = (
    Path(sys.prefix) / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages",
    Path("/usr/lib/python3/dist-packages"),
    Path("/usr/lib/google-cloud-sdk/lib"),
)
LEVELS = frozenset({"debug", "info", "warning", "warn", "error", "exception", "critical", "fatal"})
_CALL = re.compile(r"\.(?:debug|info|warning|warn|error|exception|critical|fatal)\(\s*[rRuU]?[\"']")
_SPEC = re.compile(r"%(?:\((?P<name>[^)]*)\))?(?P<flags>[-+ #0]*)(?P<width>\*|\d+)?(?:\.(?P<prec>\*|\d+))?[hlL]?(?P<conv>[diouxXeEfFgGcrsa%])")
_WORD = re.compile(r"[A-Za-z]{2,}")
SHAPES = ("plain", "plain", "proc", "pipe", "kv")


# -- harvest ---------------------------------------------------------------------------------
def harvest(roots: tuple[Path, ...]) -> dict[tuple[str, str], set[str]]:
    """``{(package, subpackage): format strings}`` of the logging calls under ``roots``."""
    out: dict[tuple[str, str], set[str]] = defaultdict(set)
    for root in roots:
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*.py")):
            parts = path.relative_to(root).parts
            if len(parts) < 2 or parts[0].endswith((".dist-info", ".egg-info")) or any(p in ("tests", "test", "testing") for p in parts):
                continue
            try:
                text = path.read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            if not _CALL.search(text):
                continue
            sub = parts[1].removesuffix(".py") if len(parts) > 2 else ""
            for fmt in format_strings(text):
                out[(parts[0], sub)].add(fmt)
    return out


def format_strings(source: str) -> Iterator[str]:
    """The %-format strings of the logging calls in ``source`` (whitespace collapsed)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in LEVELS and node.args):
            continue
        first = node.args[0]
        if isinstance(first, ast.Constant) and isinstance(first.value, str):
            fmt = " ".join(first.value.split())
            if usable(fmt, len(node.args) - 1):
                yield fmt


def usable(fmt: str, args: int) -> bool:
    """A format string worth a template: short, specifiers that match its arguments, two constant words."""
    if not fmt or len(fmt) > 200:
        return False
    specs = [m for m in _SPEC.finditer(fmt) if m["conv"] != "%"]
    named = any(m["name"] is not None for m in specs)
    if any(m["width"] == "*" or m["prec"] == "*" for m in specs) or (not named and len(specs) != args):
        return False
    constant = _SPEC.sub(" ", fmt)
    return len(_WORD.findall(constant)) >= 2 and "{" not in fmt


def truth_of(fmt: str) -> str:
    """The template of a format string: each specifier ``<*>``, ``%%`` a ``%``."""
    return _SPEC.sub(lambda m: "%" if m["conv"] == "%" else "<*>", fmt)


def systems_of(found: dict[tuple[str, str], set[str]], min_templates: int) -> dict[str, list[str]]:
    """Systems: a second-level package with ``min_templates`` templates of its own is one; the
    rest of each top-level package is pooled into one."""
    out: dict[str, set[str]] = defaultdict(set)
    for (pkg, sub), fmts in sorted(found.items()):
        name = f"{pkg}.{sub}" if sub and len({truth_of(f) for f in fmts}) >= min_templates else pkg
        out[name] |= fmts
    return {n: sorted(f) for n, f in out.items() if len({truth_of(x) for x in f}) >= min_templates}


def half(system: str) -> str:
    """``dev`` or ``out``, by the top-level package's name (fixed before any result was seen)."""
    return "dev" if hashlib.blake2b(system.split(".")[0].encode()).digest()[0] % 2 == 0 else "out"


# -- render ----------------------------------------------------------------------------------
WORDS = ("alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy", "mallory", "oscar", "peggy",
         "trent", "victor", "walter", "admin", "root", "deploy", "build", "backup", "worker", "scheduler", "gateway",
         "primary", "replica", "standby", "master", "leader", "follower", "alpha", "beta", "gamma", "delta", "omega",
         "default", "staging", "prod", "canary", "local", "remote", "cache", "index", "queue", "stream", "batch")
NOUNS = ("model", "dataset", "session", "config", "plugin", "module", "tensor", "buffer", "handler", "client", "server",
         "request", "response", "table", "column", "record", "image", "layer", "graph", "node", "task", "job", "actor")
STATES = ("RUNNING", "PENDING", "FAILED", "STOPPED", "READY", "DEAD", "ALIVE", "IDLE", "BUSY", "DRAINING", "STARTING")
PROCS = ("chrome.exe", "svchost.exe", "firefox.exe", "outlook.exe", "python", "java", "nginx", "postgres", "sshd",
         "dockerd", "kubelet", "systemd", "explorer.exe", "Teams.exe", "node", "code", "redis-server")
PHRASES = ("connection reset by peer", "no such file or directory", "permission denied", "operation timed out",
           "resource temporarily unavailable", "broken pipe", "out of memory", "invalid argument", "not found")
DOMAINS = ("example.com", "corp.local", "cluster.internal", "cs.uni.edu", "svc.cloud")
EXTS = ("py", "json", "log", "csv", "yaml", "txt", "so", "bin", "pt", "parquet")
HINTS = (
    ("path", ("file", "path", "dir", "directory", "folder", "filename", "config", "cache", "from", "to", "into", "at", "load", "loading", "saving", "save", "wrote", "reading", "writing")),
    ("host", ("host", "hostname", "address", "addr", "server", "endpoint", "peer", "connect", "connecting", "listening", "ip", "port")),
    ("url", ("url", "uri", "link", "download", "downloading", "fetch", "fetching")),
    ("duration", ("took", "after", "elapsed", "timeout", "seconds", "duration", "waited", "waiting", "delay", "time")),
    ("size", ("size", "bytes", "memory", "mem", "allocated", "free", "used")),
    ("id", ("id", "uuid", "key", "token", "hash", "digest", "sha", "commit", "pid", "rank")),
    ("user", ("user", "username", "owner", "by", "login", "account", "as")),
    ("state", ("state", "status", "mode", "level", "phase")),
    ("name", ("name", "model", "module", "class", "type", "plugin", "package", "named", "function", "op", "backend")),
)


@dataclass
class Slot:
    """One specifier of one format string and the pool its values come from."""

    kind: str
    conv: str
    spec: str
    pool: list[str]


def kind_of(conv: str, name: str | None, before: str, rng: random.Random) -> str:
    if conv in "diu":
        return "int"
    if conv in "eEfFgG":
        return "float"
    if conv in "xX":
        return "hex"
    words = [w.lower() for w in re.findall(r"[A-Za-z_]+", (name or "") + " " + " ".join(before.split()[-2:]))]
    for kind, cues in HINTS:
        if any(w in cues or any(w.endswith("_" + c) for c in cues) for w in words):
            return kind
    return rng.choices(("word", "name", "dotted", "quoted", "int", "phrase", "class"), (5, 4, 2, 2, 2, 1, 2))[0]


def value(kind: str, rng: random.Random) -> str:
    r = rng.random
    if kind == "int":
        return str(rng.choice((rng.randrange(10), rng.randrange(1000), rng.randrange(10**7))))
    if kind == "float":
        return f"{r() * rng.choice((1, 100, 10000)):.{rng.choice((1, 2, 3, 6))}f}"
    if kind == "hex":
        return f"{rng.getrandbits(32):x}"
    if kind == "path":
        depth = rng.randrange(1, 5)
        parts = [rng.choice(WORDS + NOUNS) for _ in range(depth)]
        leaf = f"{rng.choice(NOUNS)}_{rng.randrange(100)}.{rng.choice(EXTS)}" if r() < 0.7 else rng.choice(NOUNS)
        return rng.choice(("/", "/home/", "/var/lib/", "./", "")) + "/".join(parts + [leaf])
    if kind == "host":
        host = f"{rng.choice(WORDS)}{rng.randrange(1, 40)}.{rng.choice(DOMAINS)}" if r() < 0.5 else ".".join(str(rng.randrange(256)) for _ in range(4))
        return host + (f":{rng.choice((80, 443, 8080, 6379, rng.randrange(1024, 65536)))}" if r() < 0.6 else "")
    if kind == "url":
        return f"https://{rng.choice(WORDS)}.{rng.choice(DOMAINS)}/{rng.choice(NOUNS)}/{rng.randrange(1000)}"
    if kind == "duration":
        return rng.choice((f"{r() * 10:.3f}s", f"{rng.randrange(1, 5000)}ms", f"{r() * 100:.2f}", f"{rng.randrange(1, 60)}m{rng.randrange(60)}s"))
    if kind == "size":
        return rng.choice((f"{r() * 1000:.1f} MB", f"{rng.randrange(1, 10**9)} bytes", f"{rng.randrange(1, 64)}GiB", str(rng.randrange(1, 10**6))))
    if kind == "id":
        return rng.choice((f"{rng.getrandbits(64):016x}", f"{rng.getrandbits(128):032x}", str(rng.randrange(1, 100000)),
                           f"{rng.choice(NOUNS)}-{rng.getrandbits(24):06x}"))
    if kind == "user":
        return rng.choice(WORDS)
    if kind == "state":
        return rng.choice(STATES)
    if kind == "name":
        return rng.choice((rng.choice(NOUNS), f"{rng.choice(WORDS)}_{rng.choice(NOUNS)}", f"{rng.choice(NOUNS)}{rng.choice(('', '2', '_v2', 's'))}"))
    if kind == "dotted":
        return ".".join(rng.choice(WORDS + NOUNS) for _ in range(rng.randrange(2, 4)))
    if kind == "quoted":
        return f"'{rng.choice(WORDS + NOUNS)}'"
    if kind == "class":
        return rng.choice(NOUNS).capitalize() + rng.choice(("Handler", "Manager", "Config", "Error", "Worker", "Client", ""))
    if kind == "phrase":
        return rng.choice(PHRASES)
    return rng.choice(WORDS)


def slots_of(fmt: str, rng: random.Random) -> list[Slot]:
    out = []
    for m in _SPEC.finditer(fmt):
        if m["conv"] == "%":
            continue
        kind = kind_of(m["conv"], m["name"], fmt[: m.start()], rng)
        size = rng.choice((8, 30, 300))
        out.append(Slot(kind, m["conv"], m.group(0), list(dict.fromkeys(value(kind, rng) for _ in range(size)))))
    return out


def render(fmt: str, slots: list[Slot], rng: random.Random) -> str:
    it = iter(slots)

    def fill(m: re.Match[str]) -> str:
        if m["conv"] == "%":
            return "%"
        slot = next(it)
        v = rng.choice(slot.pool)
        return repr(v) if slot.conv == "r" and not v.startswith("'") else v

    return _SPEC.sub(fill, fmt)


def shaped(shape: str, system: str, message: str, truth: str, rng: random.Random) -> tuple[str, str]:
    """The line and its truth in the system's shape."""
    if shape == "proc":
        return f"{rng.choice(PROCS)} - {message}", f"<*> - {truth}"
    if shape == "pipe":
        logger = system.split(".")[-1]
        return f"{rng.choice(WORDS[:24])}|{logger}|{message}", f"<*>|{logger}|{truth}"
    if shape == "kv":
        level = rng.choice(("INFO", "INFO", "INFO", "WARNING", "ERROR", "DEBUG"))
        return f"pid={rng.randrange(100, 60000)} level={level} {message}", f"pid=<*> level=<*> {truth}"
    return message, truth


def shape_of(system: str) -> str:
    return SHAPES[hashlib.blake2b(system.encode()).digest()[1] % len(SHAPES)]


def dataset(system: str, fmts: list[str], lines: int, max_templates: int, seed: int = 0) -> tuple[list[str], list[str]]:
    """``(lines, truths)`` of one system (seeded by its name, and ``seed`` when not 0)."""
    rng = random.Random(system if not seed else f"{system}:{seed}")
    by_truth: dict[str, str] = {}
    for f in fmts:
        by_truth.setdefault(truth_of(f), f)
    chosen = sorted(by_truth.values())
    if len(chosen) > max_templates:
        chosen = sorted(rng.sample(chosen, max_templates))
    rng.shuffle(chosen)
    slots = [slots_of(f, rng) for f in chosen]
    weights = [1 / (rank + 1) ** 1.1 for rank in range(len(chosen))]
    order = list(range(len(chosen)))[:lines] + rng.choices(range(len(chosen)), weights, k=max(0, lines - len(chosen)))
    rng.shuffle(order)
    shape = shape_of(system)
    out_lines, truths = [], []
    for k in order:
        line, truth = shaped(shape, system, render(chosen[k], slots[k], rng), truth_of(chosen[k]), rng)
        out_lines.append(line)
        truths.append(truth)
    return out_lines, truths


# -- run -------------------------------------------------------------------------------------
def evaluate(data: dict[str, tuple[list[str], list[str]]]) -> dict[str, dict[str, Scores]]:
    out = {}
    for name, (lines, truths) in data.items():
        out[name] = {"logmine": score(truths, *run_logmine(lines)), "drain3": score(truths, *run_drain3(lines))}
        print(f"  {name} ({half(name)}, {shape_of(name)}): logmine {out[name]['logmine'].ga:.3f}, drain3 {out[name]['drain3'].ga:.3f}", file=sys.stderr)
    return out


def table(result: dict[str, dict[str, Scores]], data: dict[str, tuple[list[str], list[str]]]) -> str:
    rows = ["| system | half | shape | templates | logmine GA | Drain3 default GA | logmine PA | Drain3 PA |", "|---|---|---|---:|---:|---:|---:|---:|"]
    for name in sorted(result, key=lambda n: (half(n), n)):
        r = result[name]
        rows.append(f"| {name} | {half(name)} | {shape_of(name)} | {len(set(data[name][1]))} | {r['logmine'].ga:.3f} | {r['drain3'].ga:.3f} | "
                    f"{r['logmine'].pa:.3f} | {r['drain3'].pa:.3f} |")
    for h in ("dev", "out"):
        names = [n for n in result if half(n) == h]
        if names:
            m = {p: sum(result[n][p].ga for n in names) / len(names) for p in ("logmine", "drain3")}
            below = sum(result[n]["logmine"].ga < result[n]["drain3"].ga - 1e-9 for n in names)
            rows.append(f"| **mean {h}** ({len(names)} systems; logmine below Drain3 on {below}) | | | | **{m['logmine']:.3f}** | **{m['drain3']:.3f}** | | |")
    rows += ["", "| half | shape | systems | logmine GA | Drain3 default GA |", "|---|---|---:|---:|---:|"]
    for h in ("dev", "out"):
        for shape in dict.fromkeys(SHAPES):
            names = [n for n in result if half(n) == h and shape_of(n) == shape]
            if names:
                m = {p: sum(result[n][p].ga for n in names) / len(names) for p in ("logmine", "drain3")}
                rows.append(f"| {h} | {shape} | {len(names)} | {m['logmine']:.3f} | {m['drain3']:.3f} |")
    return "\n".join(rows) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--roots", type=Path, nargs="*", default=list(DEFAULT_ROOTS), help="folders of Python packages to harvest")
    parser.add_argument("--lines", type=int, default=2000, help="lines per system")
    parser.add_argument("--min-templates", type=int, default=25, help="templates a system needs")
    parser.add_argument("--max-templates", type=int, default=150, help="templates a system holds at most")
    parser.add_argument("--seed", type=int, default=0, help="another draw of templates and values (0: the reported one)")
    parser.add_argument("--half", choices=("dev", "out", "both"), default="both", help="which half to run")
    parser.add_argument("--worst", type=int, default=0, help="also print the N largest wrongly grouped truths per system")
    parser.add_argument("--json", type=Path, help="also write every figure here")
    parser.add_argument("--dump", type=Path, help="also write each system's lines and truths here (one JSON per system)")
    args = parser.parse_args()
    found = systems_of(harvest(tuple(args.roots)), args.min_templates)
    data = {n: dataset(n, f, args.lines, args.max_templates, args.seed) for n, f in sorted(found.items()) if args.half in ("both", half(n))}
    print(f"## templates: lines rendered from source logging calls ({len(data)} systems)\n")
    result = evaluate(data)
    print(table(result, data))
    if args.worst:
        for name in sorted(data):
            print(worst(name, data[name], args.worst))
    if args.dump:
        args.dump.mkdir(parents=True, exist_ok=True)
        for name, (lines, truths) in data.items():
            (args.dump / f"{name}.json").write_text(json.dumps({"lines": lines, "truths": truths}))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        report: dict[str, Any] = {n: {"half": half(n), "shape": shape_of(n), **{p: s.to_json() for p, s in r.items()}} for n, r in result.items()}
        args.json.write_text(json.dumps(report, indent=1))


def worst(name: str, data: tuple[list[str], list[str]], n: int) -> str:
    """The truths with most lines whose parsed group is not exactly theirs, with how they were split."""
    lines, truths = data
    ids, texts = run_logmine(lines)
    by_truth: dict[str, set[str]] = defaultdict(set)
    by_id: dict[str, set[str]] = defaultdict(set)
    count: dict[str, int] = defaultdict(int)
    for t, i in zip(truths, ids, strict=True):
        by_truth[t].add(i)
        by_id[i].add(t)
        count[t] += 1
    text = dict(zip(ids, texts, strict=True))
    bad = sorted((t for t in by_truth if len(by_truth[t]) > 1 or len(by_id[next(iter(by_truth[t]))]) > 1), key=lambda t: -count[t])
    out = [f"### {name}"]
    for t in bad[:n]:
        kind = f"split into {len(by_truth[t])}" if len(by_truth[t]) > 1 else f"merged with {len(by_id[next(iter(by_truth[t]))]) - 1} other"
        out.append(f"- {count[t]} lines, {kind}: `{t}` -> " + " | ".join(f"`{text[i]}`" for i in sorted(by_truth[t])[:3]))
    return "\n".join(out)


if __name__ == "__main__":
    main()
