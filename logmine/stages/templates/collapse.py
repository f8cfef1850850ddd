"""Wildcard runs and lists of wildcards read as one variable-length wildcard (the clustering's
patterns, :mod:`logmine.stages.templates.cluster`)."""

from __future__ import annotations

from collections.abc import Sequence

from logmine.masking import WILDCARD


def collapse_with_seps(pattern: Sequence[str], seps: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """:func:`collapse_lists` of ``pattern``, with the separators (``seps``: one before each token and
    one after the last) of the tokens it keeps."""
    kept = _collapsed(pattern)
    toks = tuple(tok for _, tok in kept)
    if not seps:
        return toks, ()
    return toks, (seps[0], *(seps[i] for i, _ in kept[1:]), seps[-1])


def collapse_wildcards(pattern: Sequence[str]) -> tuple[str, ...]:
    """Runs of adjacent wildcards read as one (variable-length) wildcard."""
    out: list[str] = []
    for tok in pattern:
        if tok == WILDCARD and out and out[-1] == WILDCARD:
            continue
        out.append(tok)
    return tuple(out)


_LIST_ITEMS = frozenset({WILDCARD + ",", WILDCARD + ";"})
"""A wildcard with a list's separator after it (``<*>,``): an item of a list of values."""


def collapse_lists(pattern: Sequence[str]) -> tuple[str, ...]:
    """Runs of adjacent wildcards, and lists of wildcards (``<*>, <*>, <*>``), read as one
    variable-length wildcard: a list of values is one value whatever its number of items."""
    return tuple(tok for _, tok in _collapsed(pattern))


def _collapsed(pattern: Sequence[str]) -> list[tuple[int, str]]:
    """The tokens :func:`collapse_lists` keeps, each with the position of the first token it stands for."""
    out: list[tuple[int, str]] = []
    for i, tok in enumerate(pattern):
        if tok == WILDCARD and out and (out[-1][1] == WILDCARD or out[-1][1] in _LIST_ITEMS):
            first = i
            while out and out[-1][1] in _LIST_ITEMS:
                first = out.pop()[0]
            if out and out[-1][1] == WILDCARD:
                continue
            tok, i = WILDCARD, first
        out.append((i, tok))
    return out
