"""Real code for the synthetic prompts: source files read from a directory (default: the frozen
corpus ``corpus.json.zst`` beside this module) plus the embedded snippets of
:mod:`logmine.sample.snippets`, and the cuts a code assistant makes of them (prefix / middle /
suffix at a cursor, a selected block).

The frozen corpus is logmine's own Python package as it stood at version 0.1.0 (commit
3af93c2), 116 files, stored once so that the sample does not change when the source does.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import zstandard

from logmine.errors import InputPathError
from logmine.language import language_from_path
from logmine.sample.draw import Draw
from logmine.sample.snippets import SNIPPETS

CODE_LANGUAGES = frozenset({
    "python", "java", "javascript", "typescript", "go", "rust", "kotlin", "c", "cpp", "csharp", "ruby",
    "php", "swift", "scala", "shell", "sql",
})
"""Languages whose files are read from the code directory."""
MAX_FILE_BYTES = 256 * 1024
"""Larger files are skipped (generated or vendored code)."""
MAX_FILES = 2000
"""At most this many files are read, the first in path order."""
LANGUAGE_WEIGHT = {"python": 5.0, "typescript": 1.6, "javascript": 1.2, "java": 1.2, "go": 0.9, "rust": 0.8}
"""How often a session works in each language (others: 0.5)."""

_IDENT = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]{3,30}\b")
_KEYWORDS = frozenset(
    "self return import from class def None True False else elif while with const function public private "
    "static final void async await export package string number boolean type func struct impl this true false "
    "null none break continue pass raise except finally assert lambda yield global match case enum interface "
    "extends implements throw throws catch default switch new delete typeof instanceof".split()
)


@dataclass
class CodeFile:
    """One source file, its language and line offsets for fast cuts."""

    path: str
    """Path relative to the code directory, with forward slashes."""
    language: str
    text: str
    line_starts: list[int] = field(default_factory=list)
    identifiers: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        starts = [0]
        for i, ch in enumerate(self.text):
            if ch == "\n":
                starts.append(i + 1)
        if starts[-1] == len(self.text):
            starts.pop()
        self.line_starts = starts or [0]
        seen = dict.fromkeys(m.group() for m in _IDENT.finditer(self.text) if m.group() not in _KEYWORDS)
        self.identifiers = list(seen)[:200] or ["value"]

    @property
    def lines(self) -> int:
        return len(self.line_starts)

    def offset(self, line: int) -> int:
        return self.line_starts[line] if line < len(self.line_starts) else len(self.text)


@dataclass
class Corpus:
    """The code files, grouped by language, and a digest of their content."""

    files: list[CodeFile]
    by_language: dict[str, list[CodeFile]]
    digest: str

    def languages(self) -> list[str]:
        return sorted(self.by_language)


FROZEN_CORPUS = Path(__file__).with_name("corpus.json.zst")
"""The default code: ``[[path, text], ...]`` in the order a directory walk reads them."""


def load_corpus(code_dir: Path | None) -> Corpus:
    """Read the code files under ``code_dir`` (default: the frozen corpus) plus the snippets."""
    if code_dir is None:
        read = _read_frozen()
    else:
        root = Path(code_dir)
        if not root.is_dir():
            raise InputPathError(root, "is not a directory (--code-dir)")
        read = _read_dir(root)
    files = read + [CodeFile(p, language_from_path(p) or "text", t) for p, t in SNIPPETS.items()]
    files = [f for f in files if f.lines >= 8]
    by_language: dict[str, list[CodeFile]] = {}
    digest = hashlib.blake2b(digest_size=16)
    for f in files:
        by_language.setdefault(f.language, []).append(f)
        digest.update(f.path.encode() + b"\0" + f.text.encode() + b"\0")
    return Corpus(files, by_language, "b2:" + digest.hexdigest())


def _read_frozen() -> list[CodeFile]:
    pairs = json.loads(zstandard.ZstdDecompressor().decompress(FROZEN_CORPUS.read_bytes()))
    return [CodeFile(path, language_from_path(path) or "text", text) for path, text in pairs]


def _read_dir(root: Path) -> list[CodeFile]:
    out: list[CodeFile] = []
    for dirpath, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in ("__pycache__", "node_modules", "target"))
        for name in sorted(names):
            path = Path(dirpath) / name
            language = language_from_path(name)
            if language not in CODE_LANGUAGES:
                continue
            try:
                if path.stat().st_size > MAX_FILE_BYTES:
                    continue
                text = path.read_bytes().decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            out.append(CodeFile(path.relative_to(root).as_posix(), language, text.replace("\r\n", "\n")))
            if len(out) >= MAX_FILES:
                return out
    return out


@dataclass(frozen=True, slots=True)
class Cut:
    """Where the cursor is: code before it, the real continuation after it, and the rest."""

    prefix: str
    middle: str
    suffix: str


def fim_cut(f: CodeFile, draw: Draw, max_prefix: int, max_suffix: int) -> Cut:
    """A cursor in ``f``: the middle is the real rest of the line plus 0-4 following lines."""
    line = draw.between(1, max(1, f.lines - 2))
    for _ in range(8):  # the cursor sits on a line with code
        if f.text[f.offset(line) : f.offset(line + 1)].strip() or line + 2 >= f.lines:
            break
        line += 1
    start = f.offset(line)
    end_of_line = f.offset(line + 1) - 1 if line + 1 < f.lines else len(f.text)
    text = f.text[start:end_of_line]
    indent = len(text) - len(text.lstrip())
    # the cursor sits after the indentation or somewhere inside the line's code
    col = indent if draw.chance(0.45) or len(text) - indent < 4 else indent + draw.between(1, len(text) - indent - 1)
    cursor = start + col
    extra = 0 if draw.chance(0.55) else draw.between(1, 4)
    middle_end = f.offset(line + 1 + extra) - 1 if line + 1 + extra < f.lines else len(f.text)
    middle_end = max(middle_end, cursor)
    prefix = _tail(f.text[:cursor], max_prefix)
    suffix = _head(f.text[middle_end:], max_suffix)
    return Cut(prefix, f.text[cursor:middle_end], suffix)


def block_cut(f: CodeFile, draw: Draw, max_lines: int, max_context: int) -> Cut:
    """A selected block of whole lines (the middle) with the code around it."""
    n = draw.between(3, max(3, max_lines))
    first = draw.between(0, max(0, f.lines - n))
    start, end = f.offset(first), f.offset(first + n)
    block = f.text[start:end].rstrip("\n")
    return Cut(_tail(f.text[:start], max_context), block, _head(f.text[start + len(block):], max_context))


def _tail(text: str, limit: int) -> str:
    """The last ``limit`` characters of ``text``, starting at a line boundary when possible."""
    if len(text) <= limit:
        return text
    cut = text[-limit:]
    newline = cut.find("\n")
    return cut[newline + 1 :] if 0 <= newline < len(cut) - 1 else cut


def _head(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit]
    newline = cut.rfind("\n")
    return cut[: newline + 1] if newline > 0 else cut


def pick_file(corpus: Corpus, draw: Draw, language: str) -> CodeFile:
    files = corpus.by_language.get(language) or corpus.files
    return files[draw.below(len(files))]


def language_cdf(corpus: Corpus) -> tuple[list[str], list[float]]:
    """The corpus languages and the cumulative weights sessions draw them with."""
    languages = corpus.languages()
    weights = [LANGUAGE_WEIGHT.get(lang, 0.5) for lang in languages]
    total = 0.0
    out = []
    for w in weights:
        total += w
        out.append(total)
    return languages, out
