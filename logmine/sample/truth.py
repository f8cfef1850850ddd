"""The ground truth of a generated sample, written as ``truth.json`` next to the logs.

Writers report what they actually wrote (a prompt of a template, a planted secret) so the
counts match the files, not the simulation: a format that logs no prompts counts none.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from logmine.sample.model import Request
from logmine.sample.pii import Secret
from logmine.sample.templates import TEMPLATES

FORMAT_VERSION = 1


class Truth:
    """Counters that writers fill while they write."""

    def __init__(self) -> None:
        self.templates: dict[str, Counter[str]] = {}
        self.secrets: Counter[tuple[str, str, str]] = Counter()
        self.people: dict[str, dict[str, str]] = {}

    def prompt(self, fmt: str, request: Request) -> None:
        """``fmt`` wrote the rendered prompt of ``request`` (with any secrets planted in it)."""
        counts = self.templates.get(fmt)
        if counts is None:
            counts = self.templates[fmt] = Counter()
        counts[request.template.name] += 1
        for secret in request.secrets:
            self.secrets[(fmt, secret.kind, secret.value)] += 1

    def secrets_only(self, fmt: str, request: Request) -> None:
        """``fmt`` wrote the code of ``request`` (and its secrets) but not its rendered prompt."""
        for secret in request.secrets:
            self.secrets[(fmt, secret.kind, secret.value)] += 1

    def person(self, fmt: str, login: str, email: str, home: str, written: str) -> None:
        """``fmt`` wrote personal data of a user (``written`` says which fields)."""
        self.people.setdefault(f"{fmt}:{login}", {"format": fmt, "login": login, "email": email, "home": home, "written": written})

    def to_json(self, simulated: dict[str, Any]) -> dict[str, Any]:
        used: Counter[str] = Counter()
        for counts in self.templates.values():
            used.update(counts)
        templates = []
        for t in TEMPLATES:
            entry = t.describe()
            entry["count"] = used[t.name]
            entry["count_by_format"] = {fmt: c[t.name] for fmt, c in sorted(self.templates.items()) if c[t.name]}
            templates.append(entry)
        secrets: dict[tuple[str, str], dict[str, Any]] = {}
        for (fmt, kind, value), n in sorted(self.secrets.items()):
            entry = secrets.setdefault((kind, value), {"kind": kind, "value": value, "count": 0, "count_by_format": {}})
            entry["count"] += n
            entry["count_by_format"][fmt] = n
        return {
            **simulated,
            "templates": templates,
            "secrets": list(secrets.values()),
            "people": [self.people[k] for k in sorted(self.people)],
        }


def secret_list(secrets: dict[str, list[Secret]]) -> list[dict[str, str]]:
    return [{"kind": s.kind, "value": s.value} for kind in sorted(secrets) for s in secrets[kind]]
