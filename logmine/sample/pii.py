"""Fake secrets and personal data planted in prompts, for later redaction tests.

Every value is made up from the seed (random characters in the shape of the real thing; e-mail
domains are the reserved ``example.*`` ones, IPs private or documentation ranges). All planted
values are listed in ``truth.json``.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass

from logmine.sample.draw import Draw

UPPER_DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
B64 = ALNUM + "+/"

FIRST_NAMES = ("alice", "bob", "carol", "dmitri", "erin", "farid", "grace", "hiro", "ines", "jonas", "kemi", "lena",
               "mateo", "nora", "oskar", "priya", "quentin", "rosa", "sven", "tomoko", "uma", "viktor", "wen", "yusuf")
LAST_NAMES = ("smith", "garcia", "muller", "rossi", "kowalski", "tanaka", "okafor", "nguyen", "silva", "berg", "haddad", "novak")
EMAIL_DOMAINS = ("example.com", "example.org", "example.net", "corp.example.com")

SECRET_KINDS = ("aws_access_key", "github_token", "openai_key", "jwt", "private_key", "postgres_url", "email", "ip_address")


@dataclass(frozen=True, slots=True)
class Secret:
    kind: str
    value: str


def make_secret(kind: str, draw: Draw) -> Secret:
    """One fake value of ``kind``."""
    return Secret(kind, _MAKERS[kind](draw))


def _aws(draw: Draw) -> str:
    return "AKIA" + draw.text(UPPER_DIGITS, 16)


def _github(draw: Draw) -> str:
    return "ghp_" + draw.text(ALNUM, 36)


def _openai(draw: Draw) -> str:
    return "sk-proj-" + draw.text(ALNUM, 48) if draw.chance(0.5) else "sk-" + draw.text(ALNUM, 48)


def _b64url(obj: dict[str, object]) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj, separators=(",", ":")).encode()).rstrip(b"=").decode()


def _jwt(draw: Draw) -> str:
    header = _b64url({"alg": "HS256", "typ": "JWT"})
    payload = _b64url({"sub": draw.hex(12), "name": draw.pick(FIRST_NAMES).title(), "iat": 1735000000 + draw.below(10**7)})
    return f"{header}.{payload}.{draw.text(ALNUM + '-_', 43)}"


def _private_key(draw: Draw) -> str:
    body = "\n".join(draw.text(B64, 64) for _ in range(6))
    return f"-----BEGIN RSA PRIVATE KEY-----\n{body}\n-----END RSA PRIVATE KEY-----"


def _postgres(draw: Draw) -> str:
    password = draw.text(ALNUM, 14)
    return f"postgresql://app_{draw.pick(LAST_NAMES)}:{password}@db-{draw.between(1, 9)}.internal.example.com:5432/orders"


def _email(draw: Draw) -> str:
    return f"{draw.pick(FIRST_NAMES)}.{draw.pick(LAST_NAMES)}@{draw.pick(EMAIL_DOMAINS)}"


def _ip(draw: Draw) -> str:
    if draw.chance(0.5):
        return f"10.{draw.between(0, 255)}.{draw.between(0, 255)}.{draw.between(1, 254)}"
    return f"203.0.113.{draw.between(1, 254)}"


_MAKERS = {
    "aws_access_key": _aws, "github_token": _github, "openai_key": _openai, "jwt": _jwt, "private_key": _private_key,
    "postgres_url": _postgres, "email": _email, "ip_address": _ip,
}

_CODE_NAMES = {
    "aws_access_key": "AWS_ACCESS_KEY_ID", "github_token": "GITHUB_TOKEN", "openai_key": "OPENAI_API_KEY", "jwt": "AUTH_TOKEN",
    "postgres_url": "DATABASE_URL", "email": "ADMIN_EMAIL", "ip_address": "UPSTREAM_HOST",
}

_SENTENCES = {
    "aws_access_key": "the upload fails with AccessDenied even though I use key {v}",
    "github_token": "the CI step clones with {v} and gets a 403",
    "openai_key": "calls with {v} return 429 after a few requests",
    "jwt": "the server rejects this token: {v}",
    "private_key": "the deploy script loads this key and fails to parse it:\n{v}",
    "postgres_url": "it cannot connect to {v}, why?",
    "email": "{v} reported that this breaks on empty input",
    "ip_address": "requests to {v} time out after 30 s",
}


def code_line(secret: Secret, language: str) -> str:
    """A source line (or comment block) that holds ``secret``, as it would sit in a file."""
    if secret.kind == "private_key":
        mark = "# " if language in ("python", "shell", "ruby") else "// "
        return "\n".join(mark + line for line in secret.value.splitlines()) + "\n"
    name = _CODE_NAMES[secret.kind]
    if language == "python":
        return f'{name} = "{secret.value}"\n'
    if language == "go":
        return f'const {name} = "{secret.value}"\n'
    if language == "rust":
        return f'const {name}: &str = "{secret.value}";\n'
    if language == "java":
        return f'    private static final String {name} = "{secret.value}";\n'
    return f'const {name} = "{secret.value}";\n'


def sentence(secret: Secret) -> str:
    """A sentence of a user's question that holds ``secret``."""
    return _SENTENCES[secret.kind].format(v=secret.value)


@dataclass(frozen=True, slots=True)
class Person:
    """A developer: login name, e-mail, home directory."""

    login: str
    name: str
    email: str
    home: str


def make_person(draw: Draw, index: int) -> Person:
    first, last = draw.pick(FIRST_NAMES), draw.pick(LAST_NAMES)
    login = f"{first}{index}" if draw.chance(0.5) else f"{first[0]}{last}{index}"
    home = f"/home/{login}" if draw.chance(0.6) else f"/Users/{login}"
    return Person(login, f"{first.title()} {last.title()}", f"{first}.{last}{index}@{draw.pick(EMAIL_DOMAINS)}", home)
