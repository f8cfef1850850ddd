"""The syntax of prompts that is the model's protocol, not the template's prose: model sentinels
and structural tags, fill-in-the-middle (FIM) markers by role, chat role labels and code fences.

One home for what the template miner, the near-duplicate merge, the compressor, the fidelity
check, the instance recovery, the heatmap's context finder and serving all need to recognise.
"""

from __future__ import annotations

import re

FIM_PREFIX_SENTINELS = ("<|fim_prefix|>", "<fim_prefix>", "<PRE>", "[PREFIX]", "<｜fim▁begin｜>", "<|fim▁begin|>", "<[fim-prefix]>")
"""Sentinels after which a FIM prompt holds the code before the cursor."""
FIM_SUFFIX_SENTINELS = ("<|fim_suffix|>", "<fim_suffix>", "<SUF>", "[SUFFIX]", "<｜fim▁hole｜>", "<|fim▁hole|>", "<[fim-suffix]>")
"""Sentinels after which a FIM prompt holds the code after the cursor."""
FIM_MIDDLE_SENTINELS = ("<|fim_middle|>", "<fim_middle>", "<MID>", "[MIDDLE]", "<｜fim▁end｜>", "<[fim-middle]>")
"""Sentinels where the model writes the middle."""
FILE_SEPARATORS = ("<|file_sep|>", "<file_sep>")
"""Sentinels that open a file of a repository-level prompt (its path line, then its content)."""
SNIPPET_HEADERS = ("+++++ ",)
"""Line openings of a context snippet's header (Continue's autocomplete: ``+++++ path``, then the snippet)."""
END_SENTINELS = ("<|endoftext|>", "<EOT>")
"""End-of-text sentinels."""
HOLES = ("<HOLE>", "{{FILL_HERE}}", "<FILL_ME>")
"""Cursor marks of "complete the code at <HOLE>" prompts."""

_PIPE = r"<\|[^|<>\s]{1,64}\|>"  # <|im_start|> <|fim_prefix|>
_FULLWIDTH = r"<｜[^｜<>]{1,40}｜>"  # <｜fim▁hole｜>
_BRACKET = r"<\[[a-z-]{1,30}\]>"  # <[fim-prefix]>
_UPPER_TAG = r"</?[A-Z][A-Z0-9_]{1,30}>"  # <PRE> </CONTEXTDOCUMENT>
_SNAKE_TAG = r"<[a-z]+_[a-z_]+>"  # <fim_prefix> <start_of_turn>
_SQUARE = r"\[/?(?:PREFIX|SUFFIX|INST|BLANK)\]"  # [PREFIX] [INST] [/INST]
_LLAMA_SYS = r"<</?SYS>>"  # Llama 2's system prompt, whole: not the tag <SYS> between two brackets

SENTINEL = re.compile("|".join((_LLAMA_SYS, _PIPE, _FULLWIDTH, _BRACKET, _UPPER_TAG, _SNAKE_TAG, _SQUARE)))
"""Model sentinels and structural tags of prompts (``<|im_start|>``, ``<fim_prefix>``, ``[INST]``,
``</CONTEXTDOCUMENT>``, ``<[fim-prefix]>``)."""
MODEL_FORMAT = re.compile("|".join((_PIPE, _FULLWIDTH, _SNAKE_TAG, r"\[/?(?:PREFIX|SUFFIX|INST)\]")))
"""Tokens of a model's prompt format (``<|fim_prefix|>``, ``<fim_middle>``, ``[INST]``): the
miner keeps templates of different formats apart by them, and an anchor never spans one. Narrower
than :data:`SENTINEL`: upper-case tags (``<PRE>``, ``<CONTEXTDOCUMENT>``) are a template's own
markup, not the model's format."""
TEMPLATE_BOUNDARY = re.compile("|".join((_PIPE, _FULLWIDTH, r"</[A-Z][A-Z0-9_]{1,30}>", r"\[/?(?:PREFIX|SUFFIX|INST)\]")))
"""Model sentinels and closing tags: template structure that a variable never spans."""
TAG_OR_SENTINEL = (
    f"{_LLAMA_SYS}|{_PIPE}|{_FULLWIDTH}|{_BRACKET}"
    r"|</?[A-Z][A-Z0-9_]{1,30}/?>|</?[a-z]+_[a-z_]+>|</?s>"  # tags, closing and self-closing too: <PRE/> </fim_prefix> <s>
    f"|{_SQUARE}"
)
"""The pattern text of every sentinel and tag, closing and self-closing forms included."""

_FIM_NAMED = r"<\|[a-z_]*(?:prefix|suffix)\|>|<[a-z]+_(?:prefix|suffix)>"  # <|code_suffix|> <repo_prefix>
FIM_START = re.compile("|".join(map(re.escape, (*FIM_PREFIX_SENTINELS, *FIM_SUFFIX_SENTINELS, *FILE_SEPARATORS))) + "|" + _FIM_NAMED)
"""Sentinels after which the text up to the next sentinel is code: a fill-in-the-middle region, or a
file of a repository-level prompt. Besides the listed ones, any model sentinel named for a prefix
or a suffix (``<|code_suffix|>``, ``<|code_prefix|>``): a model's FIM format found by its shape."""
FIM_MARKER = re.compile(r"<\|?fim|<PRE>|<SUF>|<MID>|\[SUFFIX\]|\[PREFIX\]|<\|fim_|<fim_|FILL_HERE|<｜fim", re.I)
"""Loose FIM marks (any spelling of a fim sentinel, ``FILL_HERE``)."""


def has_fim(text: str) -> bool:
    """Whether ``text`` holds a fill-in-the-middle sentinel: a :data:`FIM_MARKER`, or a model
    sentinel that names fim (``<[fim-prefix]>``, ``<｜fim▁hole｜>``). A template holding one is the
    model's protocol, byte for byte."""
    return bool(FIM_MARKER.search(text)) or any("fim" in m.group(0).lower() for m in SENTINEL.finditer(text))


ROLE_LABEL = re.compile(
    r"(?im)^[ \t]*(?:(?:system|user|assistant|human|developer|model|ai)[ \t]*:|"
    r"<\|?(?:system|user|assistant|im_start|start_header_id|start_of_turn)\|?>(?:[ \t]*\w+\b)?|"
    r"</?(?:system|user|assistant|human|s)>|\[/?INST\]|<<SYS>>|<start_of_turn>\w*|"
    r"#{2,}[ \t]*(?:instruction|response|input|system|user|assistant)[ \t]*:?)[ \t]*"
)
"""A turn boundary: a role label at the start of a line (``user:``, ``<|im_start|>user``, ``[INST]``...)."""
TURN_MARKER = re.compile(
    r"\[/?INST\]|<</?SYS>>|<\|(?:im_start|im_end|eot_id|end|user|assistant|system|start_header_id|end_header_id)\|>|"
    r"</?(?:s|system|user|assistant|human)>|<(?:start|end)_of_turn>", re.I)
"""A chat turn's tag anywhere in a line (``... [/INST]``, ``<|im_end|>``): a line holding one is structure."""

CHAT_ROLES = ("system", "user", "assistant", "tool", "developer", "thinking")
"""The roles of a chat's turns as logmine's ingest renders a chat: ``role: text`` blocks
(:func:`logmine.formats._base.render_messages`)."""
CHAT_TURN = re.compile(rf"(?m)^(?:{'|'.join(CHAT_ROLES)}): ")
"""A turn's role label as ingest renders a chat, at the start of a line."""


ROLE_TAG_LINE = re.compile(r"</?[a-z]{2,20}>[ \t]*")
"""A line that is one lower-case tag (``<system>``, ``</user>``): a chat turn's marker."""

FENCE = re.compile(r"^[ \t]*(?:```|~~~)")
"""The start of a code fence line."""
FENCE_LINE = r"(?m:^[ \t]*(?:```|~~~)[^\n`]*$)"
"""The pattern text of a whole fence line (with its info string)."""

__all__ = [
    "CHAT_ROLES", "CHAT_TURN", "END_SENTINELS", "FENCE", "FENCE_LINE", "FILE_SEPARATORS", "FIM_MARKER", "FIM_MIDDLE_SENTINELS", "FIM_PREFIX_SENTINELS",
    "FIM_START", "FIM_SUFFIX_SENTINELS", "HOLES", "MODEL_FORMAT", "ROLE_LABEL", "ROLE_TAG_LINE", "SENTINEL", "TAG_OR_SENTINEL", "TEMPLATE_BOUNDARY", "TURN_MARKER", "has_fim",
]
