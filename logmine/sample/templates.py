"""logmine's own prompt template set for the synthetic logs.

Written for logmine (not copied from any assistant): fill-in-the-middle prompts per model
family with that family's sentinel tokens, edit / rewrite prompts, chat system prompts and
slash commands (/explain /test /fix /doc /commit), and an answer-engine prompt. Like real
assistants' prompts, the chat, edit and slash-command templates are long: most share one
Markdown-formatted system prompt (which ends by restating its own rules), and their own text
restates instructions of the system prompt and of itself. Most templates have near-duplicate
variants (``variant_of``): a changed word, an added sentence or another placeholder syntax;
those are the ground truth of template mining and deduplication.

Placeholder syntaxes: ``mustache`` ``{{{x}}}``, ``handlebars`` ``{{x}}``, ``jinja`` ``{{ x }}``,
``js`` ``${x}`` and ``python`` ``{x}``. Placeholder values: prefix, suffix, file_path,
language, code, user_input, repo, diff.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from functools import cached_property

SYNTAX_RE = {
    "mustache": re.compile(r"\{\{\{\s*(\w+)\s*\}\}\}"),
    "handlebars": re.compile(r"\{\{(\w+)\}\}"),
    "jinja": re.compile(r"\{\{ (\w+) \}\}"),
    "js": re.compile(r"\$\{(\w+)\}"),
    "python": re.compile(r"\{(\w+)\}"),
}
"""How each placeholder syntax marks a placeholder."""

PLACEHOLDERS = ("prefix", "suffix", "file_path", "language", "code", "user_input", "repo", "diff")


@dataclass(frozen=True)
class Template:
    """One prompt template: a list of (role, text) messages whose text holds placeholders."""

    name: str
    kind: str  # fim | chat | edit | slash
    syntax: str
    messages: tuple[tuple[str, str], ...]
    family: str | None = None
    """For FIM templates: the model family whose sentinel tokens it uses."""
    command: str | None = None
    """For slash commands: the command, e.g. ``/explain``."""
    variant_of: str | None = None
    """The template this one is a near-duplicate of, or None for a base template."""
    change: str | None = None
    """How a variant differs: ``word``, ``sentence`` or ``syntax``."""
    weight: float = 1.0
    """Relative popularity among the templates of its slot."""
    parts: tuple[tuple[tuple[str, bool], ...], ...] = field(default=(), compare=False, repr=False)

    def __post_init__(self) -> None:
        pattern = SYNTAX_RE[self.syntax]
        compiled = []
        for _, text in self.messages:
            pieces: list[tuple[str, bool]] = []
            pos = 0
            for match in pattern.finditer(text):
                if match.start() > pos:
                    pieces.append((text[pos : match.start()], False))
                pieces.append((match.group(1), True))
                pos = match.end()
            if pos < len(text):
                pieces.append((text[pos:], False))
            compiled.append(tuple(pieces))
        object.__setattr__(self, "parts", tuple(compiled))

    @cached_property
    def placeholders(self) -> tuple[str, ...]:
        names = [name for msg in self.parts for name, is_slot in msg if is_slot]
        return tuple(dict.fromkeys(names))

    @cached_property
    def template_id(self) -> str:
        """Versioned content hash of the template's text and syntax."""
        return content_id({"syntax": self.syntax, "messages": [list(m) for m in self.messages]})

    @cached_property
    def skeleton_id(self) -> str:
        """Hash of the text with every placeholder replaced by ``<*>``: syntax variants share it."""
        skeleton = [[role, "".join("<*>" if slot else text for text, slot in parts)]
                    for (role, _), parts in zip(self.messages, self.parts, strict=True)]
        return content_id({"messages": skeleton})

    def render(self, values: dict[str, str]) -> list[tuple[str, str]]:
        """The messages with every placeholder filled from ``values``."""
        return [(role, "".join(values[text] if slot else text for text, slot in parts))
                for (role, _), parts in zip(self.messages, self.parts, strict=True)]

    def describe(self) -> dict[str, object]:
        return {
            "name": self.name, "id": self.template_id, "skeleton_id": self.skeleton_id, "kind": self.kind,
            "family": self.family, "command": self.command, "variant_of": self.variant_of, "change": self.change,
            "syntax": self.syntax, "placeholders": list(self.placeholders),
            "messages": [{"role": r, "text": t} for r, t in self.messages],
        }


def content_id(obj: object) -> str:
    """``b2:`` + blake2b of canonical JSON (the project's content id)."""
    data = json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    return "b2:" + hashlib.blake2b(data, digest_size=16).hexdigest()


def _t(name: str, kind: str, syntax: str, *messages: tuple[str, str], **kw: object) -> Template:
    return Template(name, kind, syntax, tuple(messages), **kw)  # type: ignore[arg-type]


def _p(text: str) -> tuple[str, str]:
    return ("prompt", text)


def _sys(text: str) -> tuple[str, str]:
    return ("system", text)


def _user(text: str) -> tuple[str, str]:
    return ("user", text)


_FENCE = "```"
_CODE = _FENCE + "{{{language}}}\n{{{code}}}\n" + _FENCE
"""A fenced block of the code at hand (mustache syntax)."""


def _as_js(text: str) -> str:
    """The same text with ``${x}`` placeholders instead of ``{{{x}}}`` (a syntax variant)."""
    return re.sub(r"\{\{\{(\w+)\}\}\}", r"${\1}", text)


# The system prompt most chat, slash-command and edit templates share, as real assistants do: long,
# Markdown-formatted, and ending with a reminder that restates its own rules.
_SYS_RULES = (
    "- **Be brief:** give the answer first, keep the explanation to a few sentences and do not repeat the question.\n"
    "- **Show code in fenced blocks:** put every piece of code in a fenced Markdown block and name the language after the opening fence.\n"
    "- **Say where code goes:** when a change belongs in a particular file, write the path of that file on the line above the code block.\n"
    "- **Do not guess:** if you are not sure how a library or an API behaves, say that you are not sure instead of guessing.\n"
    "- **Change only what was asked:** leave unrelated code, names and formatting exactly as they are.\n"
)
_SYS_STYLE = (
    "## Style of the code you write\n"
    "- Follow the naming, formatting and comment conventions that the surrounding code already uses.\n"
    "- Prefer small, readable changes to clever ones, and keep public interfaces stable.\n"
    "- Never make up functions, files, settings or command line flags that the project does not have.\n"
)
_SYS_HEAD = (
    "You are the logmine coding assistant, a pair programmer that runs inside the developer's editor "
    "and can see the files of the open project.\n"
    "Your job is to help the developer read, write, fix, test and explain the code of that project.\n\n"
    "## How to answer\n"
)
_SYS_REMINDER = "Remember: answer briefly, put all code in fenced Markdown blocks, and change only what the developer asked for."
_SYS = _SYS_HEAD + _SYS_RULES + "\n" + _SYS_STYLE + "\n" + _SYS_REMINDER
_SYS_WORD = _SYS.replace("**Be brief:**", "**Be concise:**")
_SYS_ASK = _SYS + "\nIf a question is ambiguous, ask one short clarifying question before you answer it."

_CTX_USER = (
    "The developer is looking at {{{file_path}}}. Here is the relevant code from that file.\n\n"
    + _CODE + "\n\n"
    "Question: {{{user_input}}}\n\n"
    "Answer the question about the code above. Be brief, and put any code you show in a fenced Markdown block "
    "that names the language. If the answer depends on code that is not shown here, say so instead of guessing."
)
_CTX_USER_ASK = _CTX_USER + " If the question is ambiguous, ask one short clarifying question first."

_EXPERT_SYS = (
    "You are an experienced {{ language }} developer pairing with the user on {{ file_path }}.\n"
    "Think like a careful reviewer: prefer small, tested changes, and explain the trade-offs of a change in a sentence or two.\n"
    "Point out risks such as broken callers, missing tests or changed behaviour before the user runs into them.\n"
    "Keep your answers short and practical, and show code in fenced Markdown blocks.\n"
    "When you suggest a change, keep the style of the existing {{ language }} code in {{ file_path }}."
)

_ANSWER_SYS = (
    "You are the logmine answer engine. You answer questions about a code base with the help of the code "
    "snippets that a search over the repository returned.\n\n"
    "## How to use the snippets\n"
    "- Base the answer on the snippets you are given. If they do not contain the answer, say that the repository "
    "does not seem to contain it.\n"
    "- Mention the file a snippet comes from whenever your answer relies on it.\n"
    "- Do not invent code, functions or files that are not in the snippets.\n\n"
    "## How to write the answer\n"
    "- Start with a direct answer in one or two sentences, then give the details.\n"
    "- Put code in fenced Markdown blocks that name the language.\n"
    "- Keep the answer brief and do not repeat the question."
)
_ANSWER_USER = (
    "Snippets from the repository {{{repo}}}, found in {{{file_path}}}.\n\n"
    + _CODE + "\n\n"
    "Question: {{{user_input}}}\n\n"
    "Answer the question using only the snippets above. If the snippets are not enough to answer it, say so "
    "instead of guessing. Mention the file the snippet comes from."
)

_REWRITE = (
    "## Task: rewrite code\n"
    "Here is {{{language}}} code from {{{file_path}}}.\n"
    + _CODE + "\n\n"
    "Rewrite the code above as follows: {{{user_input}}}\n\n"
    "## Rules for the rewrite\n"
    "- Make exactly the change that was asked for and nothing more.\n"
    "- Keep the existing names, comments and formatting wherever the change does not touch them.\n"
    "- Keep the indentation of the original code.\n"
    "- Do not add explanations, comments about the change or extra examples.\n\n"
    "Answer with the rewritten code in one fenced Markdown block and nothing else. Do not explain the change. "
    "Only change what the developer asked for."
)
_REWRITE_STYLE = _REWRITE.replace(
    "- Keep the indentation of the original code.\n",
    "- Keep the indentation of the original code.\n- Keep the existing naming and comment style of the file.\n")

_INSERT = (
    "You are completing code inside the developer's editor. The code below has a marker where the new code must go.\n\n"
    + _FENCE + "{{{language}}}\n{{{prefix}}}<INSERT>\n{{{suffix}}}\n" + _FENCE + "\n\n"
    "Instruction from the developer: {{{user_input}}}\n\n"
    "## Rules for the inserted code\n"
    "- Write only the code that belongs at the insert marker, not the code around it.\n"
    "- Match the indentation of the line where the marker is.\n"
    "- Use the names that are already defined in the code above and below the marker.\n\n"
    "Reply with the inserted code only, in one fenced Markdown block. Do not repeat the code around the marker and do not explain it."
)

_INST = (
    "[INST] You rewrite {{language}} code exactly as the user asks and return only code.\n\n"
    "Code:\n{{code}}\n\n"
    "Request: {{user_input}}\n\n"
    "Return only the rewritten code. Do not add any explanation before or after the code.\n"
    "Keep the indentation and the names of the original code unless the request says otherwise.\n"
    "Return only code, with no explanation.\n"
    "[/INST]"
)

_EXPLAIN = (
    "/explain\n"
    "## Task: explain code\n"
    "Explain what the following {{{language}}} code does. Walk through it step by step, in the order in which the code runs.\n\n"
    + _CODE + "\n\n"
    "## What to cover\n"
    "- The purpose of the code as a whole, in one or two sentences.\n"
    "- What each important function, loop or branch does, step by step.\n"
    "- Side effects such as writing files, changing shared state or calling the network.\n"
    "- Anything surprising or easy to get wrong.\n\n"
    "Keep the explanation brief and do not repeat the code back line by line. Do not change the code, only explain it."
)
_TEST = (
    "/test\n"
    "## Task: write unit tests\n"
    "Write unit tests for the {{{language}}} code below, which comes from {{{file_path}}}.\n\n"
    + _CODE + "\n\n"
    "## What the tests must do\n"
    "- Cover the normal case, the edge cases such as empty input and missing values, and the error paths.\n"
    "- Use the test framework and the assertion style that the project already uses.\n"
    "- Give each test a name that says what it checks.\n"
    "- Do not change the code under test.\n\n"
    "Put all of the tests in one fenced Markdown block that names the language. Keep any explanation brief. "
    "Remember to cover the edge cases and the error paths."
)
_FIX = (
    "/fix\n"
    "## Task: fix a bug\n"
    "The developer reports this problem: {{{user_input}}}\n\n"
    + _CODE + "\n\n"
    "## How to fix it\n"
    "1. Find the cause of the problem in the code above and explain it in one or two sentences.\n"
    "2. Show the corrected code in a fenced Markdown block that names the language.\n"
    "3. Change only what is needed to fix the problem and leave everything else as it is.\n\n"
    "Do not guess: if the cause is not in the code shown, say so. Show the corrected code, not just a description of the change."
)
_DOC = (
    "/doc\n"
    "## Task: document code\n"
    "Add documentation comments to every function and class in the {{{language}}} code below.\n\n"
    + _CODE + "\n\n"
    "## Rules for the comments\n"
    "- Use the documentation comment style that is standard for the language and that the project already uses.\n"
    "- Describe what each function does, its parameters and its return value.\n"
    "- Keep each comment short and factual.\n"
    "- Do not change the behaviour of the code, only add comments.\n\n"
    "Return the whole code with the new comments in one fenced Markdown block that names the language. "
    "Do not change the code itself, only add documentation comments."
)
_COMMIT = (
    "/commit\n"
    "## Task: write a commit message\n"
    "Write a commit message for the changes in the diff below.\n\n"
    "{{{diff}}}\n\n"
    "## Format of the message\n"
    "- A subject line in the imperative mood, under 60 characters, without a period at the end.\n"
    "- A blank line.\n"
    "- A short body that says why the change was made, wrapped at 72 characters.\n\n"
    "Write only the commit message, with no code block around it and no explanation. "
    "Keep it brief: the subject line must stay under 60 characters."
)

TEMPLATES: tuple[Template, ...] = (
    # -- fill in the middle, per model family --------------------------------------------------
    _t("fim.qwen", "fim", "mustache", _p("<|fim_prefix|>{{{prefix}}}<|fim_suffix|>{{{suffix}}}<|fim_middle|>"),
       family="qwen", weight=3),
    _t("fim.qwen.repo", "fim", "mustache",
       _p("<|repo_name|>{{{repo}}}\n<|file_sep|>{{{file_path}}}\n<|fim_prefix|>{{{prefix}}}<|fim_suffix|>{{{suffix}}}<|fim_middle|>"),
       family="qwen", variant_of="fim.qwen", change="sentence", weight=2),
    _t("fim.qwen.py", "fim", "python", _p("<|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>"),
       family="qwen", variant_of="fim.qwen", change="syntax", weight=1),
    _t("fim.starcoder", "fim", "mustache", _p("<fim_prefix>{{{prefix}}}<fim_suffix>{{{suffix}}}<fim_middle>"),
       family="starcoder", weight=3),
    _t("fim.starcoder.path", "fim", "mustache",
       _p("<file_sep>{{{file_path}}}\n<fim_prefix>{{{prefix}}}<fim_suffix>{{{suffix}}}<fim_middle>"),
       family="starcoder", variant_of="fim.starcoder", change="sentence", weight=2),
    _t("fim.codestral", "fim", "mustache", _p("[SUFFIX]{{{suffix}}}[PREFIX]{{{prefix}}}"), family="codestral", weight=3),
    _t("fim.codestral.js", "fim", "js", _p("[SUFFIX]${suffix}[PREFIX]${prefix}"),
       family="codestral", variant_of="fim.codestral", change="syntax", weight=1),
    _t("fim.codestral.header", "fim", "mustache", _p("[SUFFIX]{{{suffix}}}[PREFIX]+++++ {{{file_path}}}\n{{{prefix}}}"),
       family="codestral", variant_of="fim.codestral", change="sentence", weight=2),
    _t("fim.deepseek", "fim", "mustache", _p("<｜fim▁begin｜>{{{prefix}}}<｜fim▁hole｜>{{{suffix}}}<｜fim▁end｜>"),
       family="deepseek", weight=3),
    _t("fim.deepseek.lang", "fim", "mustache",
       _p("<｜fim▁begin｜>// language: {{{language}}}\n{{{prefix}}}<｜fim▁hole｜>{{{suffix}}}<｜fim▁end｜>"),
       family="deepseek", variant_of="fim.deepseek", change="sentence", weight=1),
    _t("fim.chat", "fim", "mustache",
       _user(f"{_FENCE}{{{{{{language}}}}}}\n{{{{{{prefix}}}}}}<HOLE>{{{{{{suffix}}}}}}\n{_FENCE}\n\n"
             "Write the code that replaces <HOLE>. Reply with that code only, no backticks and no explanation."),
       family="openai", weight=3),
    _t("fim.chat.word", "fim", "mustache",
       _user(f"{_FENCE}{{{{{{language}}}}}}\n{{{{{{prefix}}}}}}<HOLE>{{{{{{suffix}}}}}}\n{_FENCE}\n\n"
             "Write the code that fills <HOLE>. Reply with that code only, no backticks and no explanation."),
       family="openai", variant_of="fim.chat", change="word", weight=1),
    # -- edit / rewrite --------------------------------------------------------------------------
    _t("edit.rewrite", "edit", "mustache", _sys(_SYS), _user(_REWRITE), weight=4),
    _t("edit.rewrite.word", "edit", "mustache", _sys(_SYS), _user(_REWRITE.replace("Rewrite the code above", "Change the code above")),
       variant_of="edit.rewrite", change="word", weight=2),
    _t("edit.rewrite.style", "edit", "mustache", _sys(_SYS), _user(_REWRITE_STYLE),
       variant_of="edit.rewrite", change="sentence", weight=2),
    _t("edit.rewrite.js", "edit", "js", _sys(_as_js(_SYS)), _user(_as_js(_REWRITE)),
       variant_of="edit.rewrite", change="syntax", weight=1),
    _t("edit.insert", "edit", "mustache", _user(_INSERT), weight=2),
    _t("edit.inst", "edit", "handlebars", _user(_INST), weight=2),
    _t("edit.inst.word", "edit", "handlebars", _user(_INST.replace("as the user asks", "as the user requests")),
       variant_of="edit.inst", change="word", weight=1),
    # -- chat --------------------------------------------------------------------------------------
    _t("chat.default", "chat", "mustache", _sys(_SYS), _user("{{{user_input}}}"), weight=4),
    _t("chat.default.word", "chat", "mustache", _sys(_SYS_WORD), _user("{{{user_input}}}"),
       variant_of="chat.default", change="word", weight=2),
    _t("chat.default.unsure", "chat", "mustache", _sys(_SYS_ASK), _user("{{{user_input}}}"),
       variant_of="chat.default", change="sentence", weight=2),
    _t("chat.context", "chat", "mustache", _sys(_SYS), _user(_CTX_USER), weight=3),
    _t("chat.context.unsure", "chat", "mustache", _sys(_SYS), _user(_CTX_USER_ASK),
       variant_of="chat.context", change="sentence", weight=1),
    _t("chat.expert", "chat", "jinja", _sys(_EXPERT_SYS), _user("{{ user_input }}"), weight=2),
    _t("chat.answer", "chat", "mustache", _sys(_ANSWER_SYS), _user(_ANSWER_USER), weight=2),
    # -- slash commands ----------------------------------------------------------------------------
    _t("slash.explain", "slash", "mustache", _sys(_SYS), _user(_EXPLAIN), command="/explain", weight=3),
    _t("slash.explain.lines", "slash", "mustache", _sys(_SYS),
       _user(_EXPLAIN.replace("Walk through it step by step", "Walk through it line by line")),
       command="/explain", variant_of="slash.explain", change="word", weight=1),
    _t("slash.test", "slash", "mustache", _sys(_SYS), _user(_TEST), command="/test", weight=3),
    _t("slash.test.framework", "slash", "mustache", _sys(_SYS),
       _user(_TEST.replace("- Give each test", "- If the project has no tests yet, use the standard test framework of the language.\n- Give each test")),
       command="/test", variant_of="slash.test", change="sentence", weight=1),
    _t("slash.fix", "slash", "mustache", _sys(_SYS), _user(_FIX), command="/fix", weight=3),
    _t("slash.fix.js", "slash", "js", _sys(_as_js(_SYS)), _user(_as_js(_FIX)),
       command="/fix", variant_of="slash.fix", change="syntax", weight=1),
    _t("slash.doc", "slash", "mustache", _sys(_SYS), _user(_DOC), command="/doc", weight=2),
    _t("slash.doc.word", "slash", "mustache", _sys(_SYS),
       _user(_DOC.replace("Add documentation comments to every", "Add docstrings to every")),
       command="/doc", variant_of="slash.doc", change="word", weight=1),
    _t("slash.commit", "slash", "mustache", _sys(_SYS), _user(_COMMIT), command="/commit", weight=2),
    _t("slash.commit.72", "slash", "mustache", _sys(_SYS), _user(_COMMIT.replace("under 60 characters", "under 72 characters")),
       command="/commit", variant_of="slash.commit", change="word", weight=1),
)


BY_NAME = {t.name: t for t in TEMPLATES}
SLASH_COMMANDS = ("/explain", "/test", "/fix", "/doc", "/commit")


def slot_of(template: Template) -> str:
    """The slot a session fills with one template: ``fim:<family>``, ``edit``, ``chat`` or ``slash:<cmd>``."""
    if template.kind == "fim":
        return f"fim:{template.family}"
    if template.kind == "slash":
        return f"slash:{template.command}"
    return template.kind


SLOTS: dict[str, tuple[Template, ...]] = {}
for _template in TEMPLATES:
    SLOTS.setdefault(slot_of(_template), ())
    SLOTS[slot_of(_template)] += (_template,)


def prompt_text(messages: list[tuple[str, str]]) -> str:
    """One prompt string from rendered messages: a bare prompt as is, chat turns as ``<role>`` blocks."""
    if len(messages) == 1 and messages[0][0] in ("prompt", "user"):
        return messages[0][1]
    return "\n\n".join(f"<{role}>\n{text}" for role, text in messages)
