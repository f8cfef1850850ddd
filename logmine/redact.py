"""Secrets and personal data out of anything logmine writes for others (packs, reports).

Rules are data: each has a kind (the typed placeholder it leaves, e.g. ``<SECRET:aws_key>``)
and a pattern. :func:`redact` replaces every match and counts the replacements per kind, so
the compress summary can say what was removed. Redaction is idempotent: placeholders never
match a rule.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict


class RedactionRule(BaseModel):
    """One rule: a regex whose match (or its ``group``) is replaced by ``<kind>``."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: str
    pattern: str
    group: int = 0


# Ordered: longer, more specific shapes first (a private key block before a base64 token).
DEFAULT_RULES: tuple[RedactionRule, ...] = (
    RedactionRule(kind="private_key", pattern=r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)"),
    RedactionRule(kind="connection_string", pattern=r"\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@'\"<>]+:([^\s@/'\"<>]+)@[^\s'\"]+", group=1),
    RedactionRule(kind="jwt", pattern=r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    RedactionRule(kind="aws_key", pattern=r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[A-Z0-9]{16}\b"),
    RedactionRule(kind="aws_secret", pattern=r"(?i)aws_?secret_?access_?key\W{0,5}([A-Za-z0-9/+=]{40})", group=1),
    RedactionRule(kind="github_token", pattern=r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})\b"),
    RedactionRule(kind="openai_key", pattern=r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}\b"),
    RedactionRule(kind="slack_token", pattern=r"\bxox[abprs]-[A-Za-z0-9-]{10,}\b"),
    RedactionRule(kind="google_api_key", pattern=r"\bAIza[0-9A-Za-z_-]{35}\b"),
    RedactionRule(kind="stripe_key", pattern=r"\b[sr]k_(?:live|test)_[0-9a-zA-Z]{20,}\b"),
    RedactionRule(
        kind="generic_secret",
        pattern=r"(?i)\b(?:api[_-]?key|secret|token|password|passwd|pwd)\b\s*(?:=|:(?!:))\s*['\"]?([^\s'\"<>:=][^\s'\"<>]{7,})",
        group=1,
    ),
    RedactionRule(kind="email", pattern=r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b"),
    RedactionRule(kind="ip_address", pattern=r"\b(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\b"),
    RedactionRule(kind="home_user", pattern=r"(?:/home/|/Users/|[A-Za-z]:\\Users\\)([A-Za-z0-9._-]+)", group=1),
)


@dataclass
class Redactor:
    """Applies rules in order; keeps a running count of replacements per kind."""

    rules: tuple[RedactionRule, ...] = DEFAULT_RULES
    counts: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        self._compiled = [(r, re.compile(r.pattern)) for r in self.rules]

    def __call__(self, text: str) -> str:
        if not text:
            return text
        for rule, rx in self._compiled:
            text = rx.sub(lambda m, rule=rule: self._replace(m, rule), text)
        return text

    def _replace(self, match: re.Match[str], rule: RedactionRule) -> str:
        self.counts[rule.kind] += 1
        placeholder = f"<{rule.kind.upper()}>"
        if rule.group == 0:
            return placeholder
        start, end = match.span(rule.group)
        whole_start = match.start()
        text = match.group(0)
        return text[: start - whole_start] + placeholder + text[end - whole_start :]

    def many(self, texts: Iterable[str]) -> list[str]:
        return [self(t) for t in texts]


def redact(text: str, rules: tuple[RedactionRule, ...] = DEFAULT_RULES) -> tuple[str, dict[str, int]]:
    """``(redacted_text, counts_by_kind)`` for one text."""
    r = Redactor(rules)
    return r(text), dict(r.counts)
