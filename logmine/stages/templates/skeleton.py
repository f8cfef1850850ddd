"""Prompt skeletons: a logged prompt with the values its record carries (prefix, suffix,
selection, file path, language) and its code spans replaced by named placeholders and slot
tokens, ready for the miner (:func:`skeleton`)."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from typing import Any

from logmine.code import resolve_language
from logmine.prompt_syntax import CHAT_ROLES, CHAT_TURN, SENTINEL
from logmine.stages.templates.bodies import SlotStore

RECORD_SLOTS = ("prefix", "suffix", "selection", "file_path", "language")
"""Record fields whose values become placeholders of the same name."""
ATTR_SLOTS = {"selection": "selection", "selected_code": "selection", "codeToEdit": "selection", "code_to_edit": "selection"}
"""Keys of a record's ``attrs`` JSON that carry the selection."""
PLACEHOLDER = re.compile(r"\{(prefix|suffix|selection|file_path|language|code\d*|diff\d*)\}")
"""The placeholders this module writes (anything else in braces is static text)."""
MIN_VALUE_CHARS = 8
"""Shorter record values (except the language) are left to the miner: too likely to occur by chance."""
MIN_FIM_VALUE_CHARS = 3
"""A prefix or suffix as short as this is still replaced (its first occurrence: FIM prompts are short)."""
MIN_OVERLAP_CHARS = 24
"""A prefix or suffix the prompt holds only in part must still share this many characters."""


def record_values(record: Mapping[str, Any]) -> dict[str, str]:
    """The slot values a record carries: its own fields, and a selection from ``attrs``."""
    values = {k: v for k in RECORD_SLOTS if isinstance(v := record.get(k), str) and v.strip()}
    attrs = record.get("attrs")
    if isinstance(attrs, str) and attrs.startswith("{"):
        try:
            attrs = json.loads(attrs)
        except ValueError:
            attrs = None
    if isinstance(attrs, Mapping) and "selection" not in values:
        for key, slot in ATTR_SLOTS.items():
            if isinstance(v := attrs.get(key), str) and v.strip():
                values[slot] = v
                break
    return values


def skeleton(prompt: str, values: Mapping[str, str] | None = None, slots: SlotStore | None = None) -> str:
    """``prompt`` with the record's values replaced by placeholders and, given a slot store,
    its code spans by slot tokens."""
    values = values or {}
    text = prompt
    for name, value in sorted(values.items(), key=lambda kv: -len(kv[1])):
        text = _replace_value(text, name, value)
    language = None
    if slots is not None:
        language = resolve_language(values.get("language"), values.get("file_path"))
    if CHAT_TURN.match(text):
        # a chat as ingest renders it (``role: text`` turns): each turn's text is read on its own,
        # so a fence or a code line that opens a turn starts a line of its own
        cuts = [m.end() for m in CHAT_TURN.finditer(text)]
        heads = [0, *(m.start() for m in CHAT_TURN.finditer(text))][1:]
        return "".join(text[h:c] + _turn_skeleton(text[c : nxt], slots, language) for h, c, nxt in zip(heads, cuts, [*heads[1:], len(text)]))
    return _turn_skeleton(text, slots, language)


def _turn_skeleton(text: str, slots: SlotStore | None, language: str | None) -> str:
    if "```" in text or "~~~" in text:
        # a fence's info string is the language even when the record does not say which
        text = _FENCE_INFO.sub(r"\1{language}", text)
    return slots.skeleton(text, language) if slots is not None else text


_FENCE_INFO = re.compile(r"(?m)^([ \t]*(?:```|~~~))(?!\{language\})[A-Za-z][\w+#.-]*(?=[ \t]*$)")


def _replace_value(text: str, name: str, value: str) -> str:
    token = "{" + name + "}"
    if name == "language":
        return _replace_language(text, value, token)
    if name == "file_path":
        return _replace_path(text, value, token)
    if len(value.strip()) < (MIN_FIM_VALUE_CHARS if name in ("prefix", "suffix") else MIN_VALUE_CHARS):
        return _replace_between_sentinels(text, value, token) if name in ("prefix", "suffix") else text
    if value in text:
        return text.replace(value, token, 1) if name in ("prefix", "suffix") else text.replace(value, token)
    if name == "prefix":
        return _replace_overlap(text, value, token, anchor_end=True)
    if name == "suffix":
        return _replace_overlap(text, value, token, anchor_end=False)
    return text


def _replace_between_sentinels(text: str, value: str, token: str) -> str:
    """A prefix or suffix too short to replace anywhere (``ds``) is replaced where it fills the
    whole space between two sentinels (``[SUFFIX]ds[PREFIX]``): there it cannot be chance."""
    for m in SENTINEL.finditer(text):
        end = m.end() + len(value)
        if text.startswith(value, m.end()) and SENTINEL.match(text, end):
            return text[: m.end()] + token + text[end:]
    return text


_LANGUAGE_LABELS = ("```", "~~~", "anguage: ", "LANGUAGE:", "anguage=")
_FENCE_OPENING = rf"(?m:^(?:(?:{'|'.join(CHAT_ROLES)}): )?[ \t]*(?:```|~~~))"
"""A fence that opens a code block: at a line's start (or a chat turn's). A fence inside a line of
prose (``the opening fence and code language, eg: ```python``) is an example of one, static text."""


_LANGUAGE_NOUNS = r"(?:code|file|snippet|function|class|module|program|project|developer|programmer|expert)s?\b"
"""Nouns a template puts right after the language's name (``the following {language} code``)."""


def _replace_language(text: str, value: str, token: str) -> str:
    """The language where a prompt names it: a code fence's info string, a "language:" label,
    or the name right before a noun such as "code" or "developer" (``Here is python code``);
    elsewhere a language name is as likely part of the user's words."""
    v = re.escape(value)
    if any(f"{label}{value}" in text for label in _LANGUAGE_LABELS):
        text = re.sub(rf"({_FENCE_OPENING}|[Ll]anguage: |LANGUAGE:|[Ll]anguage=){v}(?![\w+#-])", lambda m: m.group(1) + token, text)
    lowered, name = text.lower(), value.lower()
    if name in lowered:
        text = _sub_named(_named_language(value), text, lowered, name, token)
    return text


@functools.lru_cache(maxsize=256)
def _named_language(value: str) -> re.Pattern[str]:
    return re.compile(rf"(?i)(?<![\w+#./-]){re.escape(value)}(?= {_LANGUAGE_NOUNS})")


def _sub_named(rx: re.Pattern[str], text: str, lowered: str, name: str, token: str) -> str:
    """``rx.sub(token, text)`` for ``rx`` matching ``name`` case-blind between lookarounds: in ASCII, tried
    only where ``lowered`` holds ``name`` (a whole prompt scanned case-blind by the regex costs more than
    the rest of the language's replacement)."""
    if not (name and text.isascii() and name.isascii()):
        return rx.sub(token, text)
    out, at, i = [], 0, lowered.find(name)
    while i >= 0:
        if rx.match(text, i):
            out += [text[at:i], token]
            at = i + len(name)
            i = lowered.find(name, at)
        else:
            i = lowered.find(name, i + 1)
    return "".join(out) + text[at:] if out else text


def _replace_path(text: str, path: str, token: str) -> str:
    """The longest tail of ``path`` the prompt holds (absolute, relative, or the file name)."""
    parts = path.replace("\\", "/").split("/")
    for i in range(len(parts)):
        tail = "/".join(parts[i:])
        if len(tail) >= 3 and tail in text:
            return _replace_word(text, tail, token)
    return text


def _replace_word(text: str, value: str, token: str) -> str:
    """Every occurrence of ``value`` not inside a longer name or path (no word character, ``/``,
    ``.`` or ``-`` before it, no word character or ``-`` after it) replaced by ``token``."""
    out, pos, at = [], 0, text.find(value)
    while at >= 0:
        end = at + len(value)
        before, after = text[at - 1 : at], text[end : end + 1]
        if not (before and (before.isalnum() or before in "_/.-")) and not (after and (after.isalnum() or after in "_-")):
            out += [text[pos:at], token]
            pos = end
        at = text.find(value, end if pos == end else at + 1)
    return "".join(out) + text[pos:] if out else text


def _replace_overlap(text: str, value: str, token: str, anchor_end: bool) -> str:
    """Replace the part of ``value`` the prompt holds when it was trimmed: a prefix keeps its
    end (the lines before the cursor), a suffix its start."""
    probe = value[-MIN_OVERLAP_CHARS:] if anchor_end else value[:MIN_OVERLAP_CHARS]
    if len(probe) < MIN_OVERLAP_CHARS:
        return text
    at = text.find(probe)
    if at < 0:
        return text
    if anchor_end:
        end = at + len(probe)
        start, k = at, len(value) - len(probe)
        while start > 0 and k > 0 and text[start - 1] == value[k - 1]:
            start, k = start - 1, k - 1
    else:
        start = at
        end, k = at + len(probe), len(probe)
        while end < len(text) and k < len(value) and text[end] == value[k]:
            end, k = end + 1, k + 1
    return text[:start] + token + text[end:]
