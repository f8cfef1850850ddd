"""The meaning guard of compression: what an edit of a template's instructions may never change.

The embedding fidelity (:func:`~logmine.stages.compress.fidelity.coverage`) is blind to the words that flip
an instruction: all-MiniLM-L6-v2 scores "Do not use any external libraries." against "Use any
external libraries." at about 0.9, and in a long template one such sentence moves the mean by less
than the gate allows. So before any edit is scored, this guard compares the *protected tokens* of
the original and the compressed instructions, a closed class that is listed here and nowhere else:

- negations and exclusions: ``not no never none nothing nobody nowhere neither nor without cannot
  except unless instead avoid`` and every ``-n't`` word;
- restricting and quantifying words: ``only just solely exclusively merely exactly precisely
  strictly all every each any both either whole entire full``;
- limits and comparisons: ``least most more less fewer than maximum minimum max min``;
- modality: ``must shall should ought may might required optional mandatory forbidden allowed``;
- frequency: ``always ever sometimes often usually rarely seldom once twice``;
- sequence: ``first second third fourth fifth then next finally lastly afterwards before after last``;
- number words (``zero`` .. ``twelve``, ``twenty`` .. ``fifty``, ``hundred thousand million half
  single double``) and numbers (``3``, ``2.5``, ``80%``), words with a digit in them (``utf8``);
- output formats: ``json jsonl yaml yml xml html csv tsv toml markdown latex diff patch table
  bullet(ed) list numbered heading block fenced fence inline plain prose``;
- literal text: quoted strings (``"..."``, ``'...'``, ``“...”``), code spans (`` `x` ``), Jinja
  placeholders, URLs, paths (``src/app.py``, ``./x``, ``~/x``), identifiers (``snake_case``,
  ``camelCase``, ``InnerCaps``, ``dotted.names``).

Words are compared lower-cased; literal text exactly. :func:`meaning_lost` holds a compressed
template to three rules (sentences are those of :func:`~logmine.stages.compress.fidelity.instruction_text`):

1. nothing new: every compressed sentence is a shortened form of an original sentence (its words a
   subsequence of that sentence's) with the same protected tokens: a dropped "not", a changed number
   or format, words moved between sentences all fail;
2. nothing lost: every original sentence with protected tokens is kept (rule 1's way), or it was
   dropped because a sentence that stays says the same (cosine at least ``min_similarity``) and
   carries all of its protected tokens;
3. steps in order: sentences that are steps (a list number, a sequence word, and the sentence before
   a ``then``/``next``/``finally``...) keep their relative order.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Sequence

from logmine.stages.compress.fidelity import Embedder


def _closed(words: str) -> frozenset[str]:
    return frozenset(words.split())


NEGATION = _closed("not no never none nothing nobody nowhere neither nor without cannot except unless instead avoid")
RESTRICTION = _closed("only just solely exclusively merely exactly precisely strictly all every each any both either whole entire full")
LIMIT = _closed("least most more less fewer than maximum minimum max min")
MODALITY = _closed("must shall should ought may might required optional mandatory forbidden allowed")
FREQUENCY = _closed("always ever sometimes often usually rarely seldom once twice")
SEQUENCE = _closed("first second third fourth fifth then next finally lastly afterwards before after last")
NUMBER_WORDS = _closed(
    "zero one two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty hundred thousand million "
    "half single double")
FORMAT = _closed(
    "json jsonl yaml yml xml html csv tsv toml markdown latex diff patch table bullet bullets bulleted list lists numbered "
    "heading headings block blocks fenced fence inline plain prose")
PROTECTED_WORDS = NEGATION | RESTRICTION | LIMIT | MODALITY | FREQUENCY | SEQUENCE | NUMBER_WORDS | FORMAT
"""The closed class of meaning-carrying words (the module's docstring lists them by kind)."""
CONTINUATION = _closed("then next finally lastly afterwards second third fourth fifth")
"""Sequence words that continue a sequence: the sentence before one is a step too ("Read it. Then fix it.")."""

_TOKEN = re.compile(
    r"(?P<lit>[a-z][a-z0-9+.-]*://[^\s<>\"'`]+[^\s<>\"'`.,;:!?)]"  # URLs
    r"|`[^`\n]+`|\{\{.*?\}\}|\{%.*?%\}"  # code spans, Jinja
    r"|\"[^\"\n]{1,200}\"|“[^”\n]{1,200}”|(?<![\w'’])'[^'\n]{1,200}'(?![\w'’])"  # quoted strings
    r"|(?:~|\.{1,2})?/[\w.-]+(?:/[\w.-]+)*|[\w.-]+(?:/[\w.-]+)+"  # paths
    r"|[A-Za-z_]\w*(?:\.[A-Za-z_]\w+)+|\w*[A-Za-z0-9]_\w+|_\w+|[a-z]+[A-Z]\w*|[A-Z][a-z0-9]+[A-Z]\w*)"  # identifiers
    r"|(?P<num>\d+(?:[.,:]\d+)*%?)"
    r"|(?P<word>[A-Za-z][A-Za-z0-9]*(?:['’][A-Za-z]+)?)"
)
_WORDS = re.compile(r"[a-z0-9]+")
_LIST_NUMBER = re.compile(r"^\(?\d{1,3}[.)]\s")


@functools.lru_cache(maxsize=1 << 16)
def protected_tokens(sentence: str) -> Counter[str]:
    """The multiset of meaning-carrying tokens of a sentence (see the module's docstring)."""
    out: Counter[str] = Counter()
    for m in _TOKEN.finditer(sentence):
        if (lit := m.group("lit")) is not None:
            out[lit if lit[-1] in "`\"'”}" else lit.rstrip(".,;:!?")] += 1  # a path or name ends before the full stop
        elif m.group("num") is not None:
            out[m.group("num").rstrip(".,:")] += 1
        else:
            word = m.group("word").lower().replace("’", "'")
            if word in PROTECTED_WORDS or word.endswith("n't") or any(c.isdigit() for c in word):
                out[word] += 1
    return out


def is_step(sentence: str) -> bool:
    """A numbered list item or a sentence with a sequence word."""
    return bool(_LIST_NUMBER.match(sentence)) or any(w in SEQUENCE for w in _words(sentence))


def _words(sentence: str) -> tuple[str, ...]:
    return tuple(_WORDS.findall(sentence.lower().replace("’", "'")))


def _shortens(short: tuple[str, ...], long: tuple[str, ...]) -> bool:
    """Whether ``short``'s words are a subsequence of ``long``'s."""
    it = iter(long)
    return all(w in it for w in short)


def carries(big: Counter[str], small: Counter[str]) -> bool:
    """Whether the multiset ``big`` holds every token of ``small`` (as often)."""
    return all(big[k] >= v for k, v in small.items())


def meaning_lost(original: Sequence[str], compressed: Sequence[str], embed: Embedder, min_similarity: float) -> str | None:
    """Why the ``compressed`` sentences lose or change the meaning of the ``original`` ones, or None.

    ``embed`` and ``min_similarity`` judge a dropped sentence: one that stays must say nearly the
    same (cosine at least ``min_similarity``) and carry all its protected tokens.
    """
    orig = list(dict.fromkeys(original))
    comp = list(dict.fromkeys(compressed))
    orig_set = set(orig)
    words = {s: _words(s) for s in (*orig, *comp)}
    for c in comp:  # rule 1: nothing new
        if c in orig_set:
            continue
        sources = [s for s in orig if _shortens(words[c], words[s])]
        if not any(protected_tokens(s) == protected_tokens(c) for s in sources):
            if not sources:
                return f"changed text: {c!r}"
            s = sources[0]
            diff = (protected_tokens(s) - protected_tokens(c)) + (protected_tokens(c) - protected_tokens(s))
            return f"{' '.join(sorted(diff))!r} of {s!r} changed: {c!r}"
    where = _positions(orig, comp, words, embed, min_similarity)
    for s in orig:  # rule 2: nothing lost
        if protected_tokens(s) and s not in where:
            return f"dropped {' '.join(sorted(protected_tokens(s).elements()))!r} with {s!r}"
    steps = _steps(list(original))  # rule 3: steps in order
    last: tuple[int, str] | None = None
    for s in steps:
        if s not in where:
            continue
        if last is not None and where[s] < last[0]:
            return f"steps out of order: {s!r} now before {last[1]!r}"
        last = (where[s], s)
    return None


def _positions(orig: list[str], comp: list[str], words: dict[str, tuple[str, ...]], embed: Embedder,
               min_similarity: float) -> dict[str, int]:
    """Where each original sentence is in ``comp``: the sentence itself, its shortened form with the
    same protected tokens, or (dropped) a near-equal sentence that carries its protected tokens."""
    index = {c: i for i, c in reversed(list(enumerate(comp)))}
    out: dict[str, int] = {}
    dropped = []
    for s in orig:
        if s in index:
            out[s] = index[s]
            continue
        kept = [i for i, c in enumerate(comp) if protected_tokens(c) == protected_tokens(s) and _shortens(words[c], words[s])]
        if kept:  # the closest shortened form: the one with the most words
            out[s] = max(kept, key=lambda i: (len(words[comp[i]]), -i))
        else:
            dropped.append(s)
    for s in dropped:
        carriers = [i for i, c in enumerate(comp) if carries(protected_tokens(c), protected_tokens(s))]
        if not carriers:
            continue
        vecs = embed([s, *(comp[i] for i in carriers)])
        sims = vecs[1:] @ vecs[0]
        best = int(sims.argmax())
        if float(sims[best]) >= min_similarity:
            out[s] = carriers[best]
    return out


def _steps(sentences: list[str]) -> list[str]:
    """The sentences whose order matters, in order: steps and the sentence each continuation follows."""
    out = []
    for k, s in enumerate(sentences):
        nxt = sentences[k + 1] if k + 1 < len(sentences) else ""
        if is_step(s) or (nxt and (_LIST_NUMBER.match(nxt) or any(w in CONTINUATION for w in _words(nxt)))):
            out.append(s)
    return out
