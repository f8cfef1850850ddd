"""User-id pseudonyms: the keyed hash that stands for a user in every table (the key stays in the
workspace config or ``LOGMINE_USER_KEY``, never in a table), for whole columns and for the raw
text of rejected lines."""

from __future__ import annotations

import functools
import hashlib
import json
import re

import polars as pl

from logmine.memo import FrameMemo


def pseudonym(user: str, key: bytes) -> str:
    """The keyed hash that stands for ``user`` in every table (a lone surrogate, as in a rejected
    line's invalid UTF-8, is hashed as its code point's bytes)."""
    return "u_" + hashlib.blake2b(user.encode("utf-8", "surrogatepass"), key=key[:64], digest_size=8).hexdigest()


def pseudonymise(values: pl.Series, key: bytes) -> pl.Series:
    """Replace user ids by a keyed hash: the same user maps to the same id, the key never leaves."""
    if values.null_count() == len(values):
        return values
    return Pseudonyms(key)(values)


class Pseudonyms(FrameMemo):
    """A file's user-id pseudonyms (:func:`pseudonym`): each distinct id is hashed once, and a
    batch's ids are replaced by a join with its distinct ids (a per-row lookup cost more than the
    whole join); nulls stay null."""

    LIMIT = 1_000_000
    """Distinct ids remembered (bounds the memo on pathological inputs)."""

    def __init__(self, key: bytes) -> None:
        super().__init__(functools.partial(pseudonym, key=key), self.LIMIT)


_USER_FIELD = re.compile(r'"(?:user_id|userId|user|username|user_name|login|enduser\.id|user\.id)"\s*:\s*"((?:[^"\\]|\\.)*)("|$)')


def scrub_users(raw: str, key: bytes) -> str:
    """A rejected line's text with the values of user-id fields replaced by their pseudonyms.

    Rejected lines are kept verbatim for diagnosis, but a user id must not reach any table.
    """
    def replace(match: re.Match[str]) -> str:
        value = match.group(1)
        try:
            user = json.loads(f'"{value}"')
        except ValueError:
            user = value
        start, end = match.span(1)
        return match.group(0)[: start - match.start()] + pseudonym(user, key) + match.group(0)[end - match.start():]

    return _USER_FIELD.sub(replace, raw) if "user" in raw or "login" in raw else raw


def scrub_user_bytes(raw: bytes, key: bytes) -> bytes:
    """:func:`scrub_users` of a line's bytes; bytes that are not UTF-8 stay as they were."""
    if b"user" not in raw and b"login" not in raw:
        return raw
    return scrub_users(raw.decode("utf-8", "surrogateescape"), key).encode("utf-8", "surrogateescape")


__all__ = ["Pseudonyms", "pseudonym", "pseudonymise", "scrub_user_bytes", "scrub_users"]
