"""Token classes the clustering core reads by their shape: masks, slots, ``key=value`` fields."""

from __future__ import annotations

import functools
import re

KEYED = re.compile(r"^([^=:\s]+[=:])(?=.)")
"""A ``key=value`` (or ``key:value``) word; group 1 is its key with the sign."""


SLOT = re.compile(r"\{([a-z_]+):([a-z]{6,})\}")
"""A slot token ``{name:id}``: a value of a named kind (``{code:qhdkwmzt}``) with a content id.
It is a value like a mask; where its values differ it becomes the named slot ``{name}``, and
where it never changes it stays, so the caller can restore the text it stands for."""


NAMED = re.compile(r"\{[a-z_]+\d*(?::[a-z]{6,})?\}")
"""A named slot (``{code}``, ``{prefix}``) or a slot token."""


@functools.lru_cache(maxsize=1 << 16)
def has_mask(token: str, wildcards: frozenset[str]) -> bool:
    """Whether ``token`` holds a mask, a named slot or a slot token (memoised: tokens recur)."""
    return any(w in token for w in wildcards) or ("{" in token and NAMED.search(token) is not None)


def slot_names(token: str) -> str:
    """A token with its slot tokens read as their named slots: a code block seen once is still a value."""
    return SLOT.sub(r"{\1}", token) if "{" in token else token
