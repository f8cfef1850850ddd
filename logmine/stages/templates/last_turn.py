"""The user's words that end a chat: a region from a label in the chat's last turn to the prompt's
end (``user: USER QUERY: <*>``), framed on one side by the label and on the other by the turn's end
(:func:`logmine.stages.templates.cluster._merge_gaps` merges such regions as one free-text variable).
A prompt of one text (no turn labels) is one turn: a label of a few words that opens it frames the
words to its end the same way (``I want a: <*>``). The mirror, :func:`opening_request`: the user's words that open a
prompt of one text before the template's own (``<*>. I'm using bash terminal on linux``)."""

from __future__ import annotations

from logmine.masking import WILDCARD
from logmine.prompt_syntax import CHAT_ROLES, TEMPLATE_BOUNDARY
from logmine.stages.templates.tokens import NAMED

TURN_LABELS = frozenset(f"{role}:" for role in CHAT_ROLES)
"""A chat's turn labels as ingest renders a chat (``user:``), as tokens."""


MAX_REQUEST_WORDS = 24
"""A region that ends a chat's last turn is its user's words (:func:`last_turns_request`) when each
of its values has at most this many words..."""


LABEL_WORDS = 4
"""Words after a chat's last turn label tried as the label before its user's words (:func:`last_turn_heads`)."""


def last_turn_heads(pats: list[tuple[str, ...]]) -> set[tuple[tuple[str, ...], tuple[str, ...]]]:
    """Frames open at the end for the user's words of a chat's last turn: each pattern up to its last
    turn label (or, with none, its start) and one to ``LABEL_WORDS`` words after it (``user: USER QUERY:``,
    ``I want a:``). Pairs of patterns
    find them too, but only among the first patterns of a large bucket (a log of many chats opens
    most with ``user:``), so they are also proposed from each pattern itself."""
    out = set()
    for p in pats:
        # a prompt of one text (no turn labels) is one turn: its start is the label's place
        last = max((i for i, tok in enumerate(p) if tok in TURN_LABELS), default=-1)
        for j in range(last + 2, min(last + 2 + LABEL_WORDS, len(p))):
            if WILDCARD in p[j - 1] or NAMED.search(p[j - 1]):
                break
            out.add((p[:j], ()))
    return out


def last_turns_request(members: list[int], pats: list[tuple[str, ...]], head: tuple[str, ...]) -> bool:
    """Whether the regions after ``head`` to the end of the prompt are a user's request: inside the
    chat's last turn (its label in ``head``: the turn's end frames the region as the label before it
    does, ``user: USER QUERY: <*>``), or, in prompts of one text, after a head of at most ``LABEL_WORDS``
    words; a sentence or so of words each, no slot or sentinel among them."""
    if not any(tok in TURN_LABELS for tok in head) and (
            len(head) > LABEL_WORDS or any(tok in TURN_LABELS for k in members for tok in pats[k])):
        return False  # a prompt of one text: a label of a few words opens it, the user's words end it
    return all(_a_request(pats[k][len(head) :]) for k in members)


def opening_request(members: list[int], pats: list[tuple[str, ...]], tail: tuple[str, ...]) -> bool:
    """Whether the regions before ``tail`` from the start of prompts of one text (no turn labels) are a
    user's words that open them before the template's words (``<request>. I'm using bash terminal on
    linux``): the mirror of a label's request (:func:`last_turns_request`), a sentence or so of words each,
    no slot or sentinel among them, and no value in the words after them."""
    if not tail or any(WILDCARD in tok or NAMED.search(tok) for tok in tail):
        return False  # the template's own words end the prompt, no value among them
    # a chat opens with its first turn's label, which the request may not hold (the tail's ``system:`` may be a
    # word: ``operating system: linux``)
    return all(_a_request(pats[k][: len(pats[k]) - len(tail)]) for k in members)


def _a_request(words: tuple[str, ...]) -> bool:
    """Whether ``words`` read as a user's request: ``MAX_REQUEST_WORDS`` words at most, no slot, sentinel or turn label."""
    return len(words) <= MAX_REQUEST_WORDS and not any(
        NAMED.search(tok) or TEMPLATE_BOUNDARY.search(tok) or tok in TURN_LABELS for tok in words)
