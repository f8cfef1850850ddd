"""logmine's own prompt template set for the synthetic logs.

Written for logmine (not copied from any assistant): fill-in-the-middle prompts per model
family with that family's sentinel tokens, edit / rewrite prompts, chat system prompts and
slash commands (/explain /test /fix /doc /commit). Most templates have near-duplicate
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
_SYS_CHAT = ("You are a coding assistant working inside the user's editor. Answer concisely, "
             "show code in fenced Markdown blocks and name the file a change belongs to.")
_SYS_CHAT_WORD = _SYS_CHAT.replace("concisely", "briefly")
_SYS_CHAT_MORE = _SYS_CHAT + " If you are not sure about an API, say so instead of guessing."
_CTX_USER = f"Context from {{{{{{file_path}}}}}}:\n{_FENCE}{{{{{{language}}}}}}\n{{{{{{code}}}}}}\n{_FENCE}\n\n{{{{{{user_input}}}}}}"

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
    _t("edit.rewrite", "edit", "mustache",
       _user(f"Here is {{{{{{language}}}}}} code from {{{{{{file_path}}}}}}:\n{_FENCE}{{{{{{language}}}}}}\n{{{{{{code}}}}}}\n{_FENCE}\n\n"
             "Rewrite it as follows: {{{user_input}}}\nAnswer with the rewritten code in one fenced block and nothing else."),
       weight=4),
    _t("edit.rewrite.word", "edit", "mustache",
       _user(f"Here is {{{{{{language}}}}}} code from {{{{{{file_path}}}}}}:\n{_FENCE}{{{{{{language}}}}}}\n{{{{{{code}}}}}}\n{_FENCE}\n\n"
             "Change it as follows: {{{user_input}}}\nAnswer with the rewritten code in one fenced block and nothing else."),
       variant_of="edit.rewrite", change="word", weight=2),
    _t("edit.rewrite.style", "edit", "mustache",
       _user(f"Here is {{{{{{language}}}}}} code from {{{{{{file_path}}}}}}:\n{_FENCE}{{{{{{language}}}}}}\n{{{{{{code}}}}}}\n{_FENCE}\n\n"
             "Rewrite it as follows: {{{user_input}}}\nKeep the existing naming and comment style. "
             "Answer with the rewritten code in one fenced block and nothing else."),
       variant_of="edit.rewrite", change="sentence", weight=2),
    _t("edit.rewrite.js", "edit", "js",
       _user(f"Here is ${{language}} code from ${{file_path}}:\n{_FENCE}${{language}}\n${{code}}\n{_FENCE}\n\n"
             "Rewrite it as follows: ${user_input}\nAnswer with the rewritten code in one fenced block and nothing else."),
       variant_of="edit.rewrite", change="syntax", weight=1),
    _t("edit.insert", "edit", "mustache",
       _user(f"{_FENCE}{{{{{{language}}}}}}\n{{{{{{prefix}}}}}}<INSERT>\n{{{{{{suffix}}}}}}\n{_FENCE}\n\n"
             "Write the code that belongs at <INSERT>. Instruction: {{{user_input}}}"),
       weight=2),
    _t("edit.inst", "edit", "handlebars",
       _user("[INST] You rewrite {{language}} code exactly as the user asks and return only code.\n\n"
             "Code:\n{{code}}\n\nRequest: {{user_input}} [/INST]"),
       weight=2),
    _t("edit.inst.word", "edit", "handlebars",
       _user("[INST] You rewrite {{language}} code exactly as the user requests and return only code.\n\n"
             "Code:\n{{code}}\n\nRequest: {{user_input}} [/INST]"),
       variant_of="edit.inst", change="word", weight=1),
    # -- chat --------------------------------------------------------------------------------------
    _t("chat.default", "chat", "mustache", _sys(_SYS_CHAT), _user("{{{user_input}}}"), weight=4),
    _t("chat.default.word", "chat", "mustache", _sys(_SYS_CHAT_WORD), _user("{{{user_input}}}"),
       variant_of="chat.default", change="word", weight=2),
    _t("chat.default.unsure", "chat", "mustache", _sys(_SYS_CHAT_MORE), _user("{{{user_input}}}"),
       variant_of="chat.default", change="sentence", weight=2),
    _t("chat.context", "chat", "mustache", _sys(_SYS_CHAT), _user(_CTX_USER), weight=3),
    _t("chat.context.unsure", "chat", "mustache", _sys(_SYS_CHAT_MORE), _user(_CTX_USER),
       variant_of="chat.context", change="sentence", weight=1),
    _t("chat.expert", "chat", "jinja",
       _sys("You are an experienced {{ language }} developer pairing with the user on {{ file_path }}. "
            "Prefer small, tested changes and explain trade-offs in a sentence or two."),
       _user("{{ user_input }}"), weight=2),
    # -- slash commands ----------------------------------------------------------------------------
    _t("slash.explain", "slash", "mustache",
       _user(f"/explain\nExplain what this {{{{{{language}}}}}} code does, step by step:\n{_FENCE}{{{{{{language}}}}}}\n{{{{{{code}}}}}}\n{_FENCE}"),
       command="/explain", weight=3),
    _t("slash.explain.lines", "slash", "mustache",
       _user(f"/explain\nExplain what this {{{{{{language}}}}}} code does, line by line:\n{_FENCE}{{{{{{language}}}}}}\n{{{{{{code}}}}}}\n{_FENCE}"),
       command="/explain", variant_of="slash.explain", change="word", weight=1),
    _t("slash.test", "slash", "mustache",
       _user(f"/test\nWrite unit tests for this {{{{{{language}}}}}} code from {{{{{{file_path}}}}}}. Cover the edge cases.\n"
             f"{_FENCE}{{{{{{language}}}}}}\n{{{{{{code}}}}}}\n{_FENCE}"),
       command="/test", weight=3),
    _t("slash.test.framework", "slash", "mustache",
       _user(f"/test\nWrite unit tests for this {{{{{{language}}}}}} code from {{{{{{file_path}}}}}}. Cover the edge cases. "
             f"Use the test framework the project already uses.\n{_FENCE}{{{{{{language}}}}}}\n{{{{{{code}}}}}}\n{_FENCE}"),
       command="/test", variant_of="slash.test", change="sentence", weight=1),
    _t("slash.fix", "slash", "mustache",
       _user(f"/fix\nThis code has a problem: {{{{{{user_input}}}}}}\n{_FENCE}{{{{{{language}}}}}}\n{{{{{{code}}}}}}\n{_FENCE}\n"
             "Find the cause and show the corrected code."),
       command="/fix", weight=3),
    _t("slash.fix.js", "slash", "js",
       _user(f"/fix\nThis code has a problem: ${{user_input}}\n{_FENCE}${{language}}\n${{code}}\n{_FENCE}\n"
             "Find the cause and show the corrected code."),
       command="/fix", variant_of="slash.fix", change="syntax", weight=1),
    _t("slash.doc", "slash", "mustache",
       _user(f"/doc\nAdd documentation comments to every function and class in this code without changing its behaviour.\n"
             f"{_FENCE}{{{{{{language}}}}}}\n{{{{{{code}}}}}}\n{_FENCE}"),
       command="/doc", weight=2),
    _t("slash.doc.word", "slash", "mustache",
       _user(f"/doc\nAdd docstrings to every function and class in this code without changing its behaviour.\n"
             f"{_FENCE}{{{{{{language}}}}}}\n{{{{{{code}}}}}}\n{_FENCE}"),
       command="/doc", variant_of="slash.doc", change="word", weight=1),
    _t("slash.commit", "slash", "mustache",
       _user("/commit\n{{{diff}}}\n\nWrite a commit message for these changes: a subject line under 60 characters, "
             "a blank line, then a short body saying why."),
       command="/commit", weight=2),
    _t("slash.commit.72", "slash", "mustache",
       _user("/commit\n{{{diff}}}\n\nWrite a commit message for these changes: a subject line under 72 characters, "
             "a blank line, then a short body saying why."),
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
