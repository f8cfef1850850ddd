"""Shared prefixes: the static head that two or more templates start with, cut at a line boundary,
so the serving layer computes its KV cache once; and a template split into that head and the rest."""

from __future__ import annotations

from collections.abc import Sequence

from logmine.stages.compress.fidelity import Segment, TokenCounter, join, segments


def split_prefix(source: str, prefix: str) -> tuple[str, str]:
    """``(head, rest)`` as Jinja2 sources: the literal ``prefix`` the template's first static
    segment starts with (see :func:`shared_prefixes`), and the rest of the template."""
    parts = segments(source)
    if not parts or parts[0].slot is not None or not parts[0].text.startswith(prefix):
        raise ValueError("the template does not start with the prefix")
    rest = [Segment(parts[0].text[len(prefix) :]), *parts[1:]]
    return join([Segment(prefix)]), join([p for p in rest if p.slot or p.text])


def shared_prefixes(sources: Sequence[str], count_tokens: TokenCounter, min_tokens: int = 16) -> dict[int, str]:
    """Static prefixes shared by two or more templates, cut at a line boundary.

    Returns ``{template_index: prefix_text}`` for templates that start with a shared prefix
    of at least ``min_tokens`` tokens (the longest one each template shares with another).
    """
    heads = [_static_head(s) for s in sources]
    out: dict[int, str] = {}
    order = sorted(range(len(heads)), key=lambda i: (heads[i], i))
    for a, b in zip(order, order[1:], strict=False):  # sorted neighbours share the longest prefixes
        common = _common_prefix_at_line(heads[a], heads[b])
        if common and count_tokens([common])[0] >= min_tokens:
            for i in (a, b):
                if len(common) > len(out.get(i, "")):
                    out[i] = common
    return out


def _static_head(source: str) -> str:
    parts = segments(source)
    return parts[0].text if parts and parts[0].slot is None else ""


def _common_prefix_at_line(a: str, b: str) -> str:
    n = 0
    limit = min(len(a), len(b))
    while n < limit and a[n] == b[n]:
        n += 1
    cut = a.rfind("\n", 0, n) if n < len(a) or n < len(b) else n - 1  # the last newline both share
    return a[: cut + 1] if cut >= 0 else ""


__all__ = ["shared_prefixes", "split_prefix"]
