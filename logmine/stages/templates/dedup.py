"""Near-duplicate templates merged into families, on two thresholds at once.

Two templates that say the same thing with small differences (a changed word, an added
sentence, another placeholder syntax) merge when both

- the normalised edit similarity (rapidfuzz Levenshtein) is at least ``edit_threshold``, and
- the cosine of their embeddings is at least ``semantic_threshold``

(the semantic check is skipped when no embedder is given). Wildcards and placeholders are read
as one symbol first, so ``{prefix}``, ``{{{prefix}}}`` and ``<*>`` do not count as edits.
Model sentinels (``<fim_prefix>``, ``<|im_start|>``, ``[INST]``) are the prompt's format: two
templates merge only when their sentinels and the slots between them come in the same order
(``{code}<fim_prefix>{prefix}...`` and ``<fim_prefix>{prefix}...`` feed the model differently).
A chat's turns are its format too: two chats merge only when their turn labels (``system:``,
``user:``, ... opening a line, as ingest renders a chat) come in the same order (a system prompt
followed by one pasted file or by two is two templates, however long the prompt they share); a
prompt of one text (no turn labels: another logger's record of the same request) may merge with either.
Static text rewritten (a word or a phrase swapped for another, not a slot filled nor a sentence added)
is a new version of one template when the two were used in turn, one after the other; two templates used
side by side that differ so are two (``prepend ... before`` and ``append ... after``), unless the word
swapped takes ``MIN_SWAPPED_WORDS`` words or more at the same place among the candidates (``for
windows``, ``for mac``, ``for linux``: a value the miner read as static text), or it is quoted with a
wildcard (``'Linux <*> <*>'``, ``'Darwin <*> <*>'``: a quoted value whose other words the miner found variable). Without times
(``spans``), rewritten text merges as any other difference does.

Candidate pairs come from blocking, never from all pairs: MinHash LSH over character
shingles, plus the nearest neighbours of each template's embedding. Families are the connected
components of the accepted pairs, joined closest pair first, less the joins that would put two chat
formats in one family; each keeps its members and the evidence of every merge.

Last, a rare family joins an established one whose template generates its own: the established
pattern's static pieces in order, its wildcards and placeholders read as values (any text holding one
slot at most), where the miner kept a rendering apart because a value looked like static text (a diff
that ends in prose, the language's name inside a project description). The established family must
carry ``STRAY_RATIO`` times the rare one's requests (``FILLERS_RATIO`` times where its pattern generates
``MIN_FILLERS`` templates or more: a gap seen with many values), its pattern a word of its own besides turn
labels and fences (``user: <*>`` generates anything), and frames and turns must agree.

The embedder is injectable (:class:`Embedder`): :class:`SentenceEmbedder` wraps the bundled
all-MiniLM-L6-v2 (or any local sentence-transformers directory), and
:class:`logmine.embedding.HashingEmbedder` is a deterministic bag-of-words one for tests.
An :class:`EmbeddingCache` keeps vectors by text hash, so a nightly run embeds only new templates.
"""

from __future__ import annotations

import bisect
import hashlib
import logging
import re
import zlib
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from logmine.hashing import content_id
from logmine.models import DEFAULT_EMBEDDING_MODEL, embed
from logmine.prompt_syntax import CHAT_ROLES, SENTINEL
from logmine.stages.templates.cluster import find_root

log = logging.getLogger(__name__)

_SLOTS = re.compile(r"<\*>|<[A-Z_][A-Z0-9_]*>|\{\{\{?\s*[\w.]+\s*\}?\}\}|\$\{[^}]*\}|\{[a-z_]+\d*(?::[a-z]+)?\}")
"""Wildcards and placeholders of any syntax: ``<*>``, ``<NUM>``, ``{x}``, ``{{x}}``, ``{{{x}}}``, ``${x}``."""
_FRAME = re.compile(f"({_SLOTS.pattern})|({SENTINEL.pattern})")
_TURN = re.compile(rf"^({'|'.join(CHAT_ROLES)}):(?=\s|$)", re.MULTILINE)
"""A chat's turn label as ingest renders a chat: the role and a colon opening a line."""


@runtime_checkable
class Embedder(Protocol):
    """Texts in, one L2-normalised float32 row per text out."""

    name: str

    def __call__(self, texts: list[str]) -> np.ndarray: ...


class SentenceEmbedder:
    """A sentence-transformers model through :mod:`logmine.models` (bundled all-MiniLM-L6-v2
    by default, or a local model directory). Loaded on first use."""

    def __init__(self, model: str | None = None, batch_size: int = 64) -> None:
        self.model = model
        self.batch_size = batch_size
        self.name = model or DEFAULT_EMBEDDING_MODEL

    def __call__(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return np.asarray(embed(texts, self.model, batch_size=self.batch_size), dtype=np.float32)


class EmbeddingCache(Protocol):
    """Vectors by key (see :func:`embedding_key`)."""

    def get(self, keys: list[str]) -> dict[str, np.ndarray]: ...

    def put(self, vectors: Mapping[str, np.ndarray]) -> None: ...


class MemoryCache:
    """An in-process :class:`EmbeddingCache`."""

    def __init__(self) -> None:
        self.vectors: dict[str, np.ndarray] = {}

    def get(self, keys: list[str]) -> dict[str, np.ndarray]:
        return {k: self.vectors[k] for k in keys if k in self.vectors}

    def put(self, vectors: Mapping[str, np.ndarray]) -> None:
        self.vectors.update(vectors)


def embedding_key(model: str, text: str) -> str:
    """The cache key of ``text`` embedded by ``model``: a hash of both."""
    return hashlib.blake2b(f"{model}\x00{text}".encode(), digest_size=16).hexdigest()


@dataclass(frozen=True)
class DedupConfig:
    """Options of the near-duplicate merge."""

    edit_threshold: float = 0.9
    """Least normalised edit similarity (0..1) for a merge."""
    semantic_threshold: float = 0.9
    """Least embedding cosine for a merge (ignored without an embedder)."""
    shingle: int = 5
    """Character shingle length for MinHash."""
    num_perm: int = 64
    """MinHash permutations; split into ``bands`` bands for LSH."""
    bands: int = 16
    """LSH bands: more bands find pairs of lower similarity."""
    neighbours: int = 8
    """Nearest neighbours per template taken as candidates when embeddings are on."""
    max_bucket: int = 200
    """An LSH bucket larger than this contributes only its first ``max_bucket`` members' pairs."""


@dataclass(frozen=True)
class MergeEdge:
    """One accepted merge and its evidence."""

    a: str
    b: str
    edit_similarity: float
    semantic_similarity: float | None


@dataclass
class DedupResult:
    """Families of templates: ``family_of[template_id]``, the members and evidence per family."""

    family_of: dict[str, str]
    members: dict[str, list[str]]
    representative: dict[str, str]
    edges: list[MergeEdge] = field(default_factory=list)
    candidate_pairs: int = 0
    embeddings_computed: int = 0
    embeddings_cached: int = 0
    embedding_model: str | None = None

    @property
    def families(self) -> int:
        return len(self.members)


def normalise(text: str) -> str:
    """The text compared: every wildcard or placeholder one symbol, whitespace runs one space."""
    return " ".join(_SLOTS.sub("\x00", text).split())


def sentinel_frame(text: str) -> tuple[str, ...]:
    """The model sentinels of ``text`` in order, with one ``\x00`` wherever slots sit between
    them; empty when it has no sentinel (prose templates have no frame to keep)."""
    out: list[str] = []
    for m in _FRAME.finditer(text):
        token = "\x00" if m.group(1) is not None else m.group(0)
        if token != "\x00" or not out or out[-1] != "\x00":
            out.append(token)
    return tuple(out) if any(t != "\x00" for t in out) else ()


def turn_frame(text: str) -> tuple[str, ...]:
    """The roles of ``text``'s chat turns in order (empty for a prompt of one text)."""
    return tuple(m.group(1) for m in _TURN.finditer(text))


MIN_SWAPPED_WORDS = 3
"""A word of two templates used side by side, swapped for another, is a value (and they merge) where
the candidate pairs swap this many words or more at the same place."""


def static_swap(a: str, b: str) -> tuple[str, frozenset[str]] | bool | None:
    """How the normalised texts ``a`` and ``b`` differ in static text: ``None`` when they differ
    only where one has a slot or where one has text the other has not (a sentence added); the place
    (``a`` with the word cut out) and the two words when one word is swapped for another, at one place or
    at each place it stands (a value said twice: ``(df)`` and ``[`df`]``); ``False`` when more is rewritten."""
    from rapidfuzz.distance import Levenshtein

    blocks: list[list[int]] = []
    for op in Levenshtein.opcodes(a, b):
        if op.tag == "equal":
            continue
        if blocks and op.src_start - blocks[-1][1] <= 3 and op.dest_start - blocks[-1][3] <= 3:
            blocks[-1][1], blocks[-1][3] = op.src_end, op.dest_end  # edits a few characters apart: one change
        else:
            blocks.append([op.src_start, op.src_end, op.dest_start, op.dest_end])
    swaps = []
    for s1, s2, d1, d2 in blocks:
        x, y = a[s1:s2], b[d1:d2]
        if not (x.strip() and y.strip()) or "\x00" in x + y or not any(c.isalpha() for c in x + y):
            continue
        while s1 > 0 and d1 > 0 and _in_word(a[s1 - 1]) and a[s1 - 1] == b[d1 - 1]:
            s1, d1 = s1 - 1, d1 - 1  # out to the whole word
        while s2 < len(a) and d2 < len(b) and _in_word(a[s2]) and a[s2] == b[d2]:
            s2, d2 = s2 + 1, d2 + 1
        if _quoted_with_a_slot(a, s1, s2) and _quoted_with_a_slot(b, d1, d2):
            continue  # part of a quoted value whose rest the miner found variable: 'Linux <*> <*>'
        swaps.append((s1, s2, a[s1:s2], b[d1:d2]))
    if not swaps:
        return None
    x, y = swaps[0][2:]
    if any(swap[2:] != (x, y) for swap in swaps) or not (_a_word(x) and _a_word(y)):
        return False  # more rewritten than one word (the same word swapped at each place is one value: a name said twice)
    cuts = [0] + [k for s1, s2, _, _ in swaps for k in (s1, s2)] + [len(a)]
    return "\x01".join(a[cuts[k]:cuts[k + 1]] for k in range(0, len(cuts), 2)), frozenset((x, y))


def _in_word(c: str) -> bool:
    """Whether ``c`` is part of a word (a name's underscore too: ``customers_df``)."""
    return c.isalnum() or c == "_"


def _a_word(text: str) -> bool:
    """Whether ``text`` is one word: letters, digits and underscores (``customers_df``)."""
    return text.replace("_", "").isalnum()


MAX_QUOTED = 80
"""The longest quoted span (characters) read as one value by :func:`_quoted_with_a_slot`."""


def _quoted_with_a_slot(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` (a normalised text) lies inside quotes, up to ``MAX_QUOTED`` characters,
    that also hold a slot or wildcard: the quoted text is a value (``'{sysinfo}'``), of which the miner kept a
    word static because it took few values (``'Linux <*> <*>'``, ``'Darwin <*> <*>'``)."""
    for quote in "'\"`":
        left = text.rfind(quote, max(0, start - MAX_QUOTED), start)
        right = text.find(quote, end, left + MAX_QUOTED + 1) if left >= 0 else -1
        if right > 0 and "\x00" in text[left:right]:  # the nearest quotes on each side: none between them and the word
            return True
    return False


def _side_by_side(a: tuple[Any, Any] | None, b: tuple[Any, Any] | None) -> bool:
    """Whether two templates were in use at the same time (unknown: not known to be)."""
    if a is None or b is None or None in a or None in b:
        return False
    return bool(a[0] <= b[1] and b[0] <= a[1])


def edit_similarity(a: str, b: str) -> float:
    """Normalised Levenshtein similarity (1 = equal) of the normalised texts."""
    from rapidfuzz.distance import Levenshtein

    return float(Levenshtein.normalized_similarity(normalise(a), normalise(b)))


# -- blocking --------------------------------------------------------------------------------
_PRIME = (1 << 31) - 1  # a*x stays below 2**62 for a, x < 2**31: no uint64 overflow


def minhash_signatures(texts: list[str], config: DedupConfig) -> np.ndarray:
    """One MinHash signature (``num_perm`` values) per text over its character shingles."""
    rng = np.random.default_rng(1)
    a = rng.integers(1, _PRIME, size=config.num_perm, dtype=np.uint64)
    b = rng.integers(0, _PRIME, size=config.num_perm, dtype=np.uint64)
    out = np.empty((len(texts), config.num_perm), dtype=np.uint64)
    k = config.shingle
    for row, text in enumerate(texts):
        shingles = {text[i : i + k] for i in range(max(1, len(text) - k + 1))}
        x = np.fromiter((zlib.crc32(s.encode()) % _PRIME for s in shingles), dtype=np.uint64, count=len(shingles))
        out[row] = ((x[:, None] * a + b) % np.uint64(_PRIME)).min(axis=0)
    return out


def lsh_pairs(signatures: np.ndarray, config: DedupConfig) -> set[tuple[int, int]]:
    """Pairs of rows that share a band of their MinHash signatures."""
    pairs: set[tuple[int, int]] = set()
    rows = config.num_perm // config.bands
    for band in range(config.bands):
        buckets: dict[bytes, list[int]] = {}
        chunk = np.ascontiguousarray(signatures[:, band * rows : (band + 1) * rows])
        for i in range(len(chunk)):
            buckets.setdefault(chunk[i].tobytes(), []).append(i)
        for members in buckets.values():
            members = members[: config.max_bucket]
            pairs.update((x, y) for n, x in enumerate(members) for y in members[n + 1 :])
    return pairs


def neighbour_pairs(vectors: np.ndarray, k: int, chunk: int = 2048) -> set[tuple[int, int]]:
    """Each row's ``k`` nearest rows by cosine (the rows are L2-normalised)."""
    pairs: set[tuple[int, int]] = set()
    n = len(vectors)
    if n < 2 or k <= 0:
        return pairs
    k = min(k, n - 1)
    for start in range(0, n, chunk):
        sims = vectors[start : start + chunk] @ vectors.T
        for offset, row in enumerate(sims):
            i = start + offset
            row[i] = -np.inf
            for j in np.argpartition(-row, k - 1)[:k]:
                pairs.add((min(i, int(j)), max(i, int(j))))
    return pairs


# -- the merge -------------------------------------------------------------------------------
def embed_with_cache(texts: list[str], embedder: Embedder, cache: EmbeddingCache | None) -> tuple[np.ndarray, int, int]:
    """``(vectors, computed, cached)``: cached vectors reused, the rest embedded and stored."""
    keys = [embedding_key(embedder.name, t) for t in texts]
    known = cache.get(keys) if cache is not None else {}
    missing = sorted({k: t for k, t in zip(keys, texts) if k not in known}.items())
    if missing:
        fresh = embedder([t for _, t in missing])
        new = {k: np.asarray(v, dtype=np.float32) for (k, _), v in zip(missing, fresh)}
        if cache is not None:
            cache.put(new)
        known = {**known, **new}
    return np.stack([known[k] for k in keys]) if keys else np.zeros((0, 0), np.float32), len(missing), len(set(keys)) - len(missing)


def merge_near_duplicates(
    templates: Mapping[str, str],
    embedder: Embedder | None = None,
    config: DedupConfig | None = None,
    weights: Mapping[str, int] | None = None,
    cache: EmbeddingCache | None = None,
    spans: Mapping[str, tuple[Any, Any]] | None = None,
) -> DedupResult:
    """Families of ``templates`` (id -> text). The representative of a family is its member with
    the most traffic (``weights``), then the smallest id; a family id is a content hash of its
    sorted member ids, so it is stable across runs. ``spans``: each template's first and last use
    (comparable values, times), which tell a new version of a template from a template used beside it."""
    config = config or DedupConfig()
    weights = weights or {}
    ids = sorted(templates)
    texts = [normalise(templates[t]) for t in ids]
    frames = [sentinel_frame(templates[t]) for t in ids]
    turns = [turn_frame(templates[t]) for t in ids]
    pairs = lsh_pairs(minhash_signatures(texts, config), config)
    vectors = None
    result = DedupResult({}, {}, {})
    if embedder is not None and ids:
        vectors, result.embeddings_computed, result.embeddings_cached = embed_with_cache(texts, embedder, cache)
        result.embedding_model = embedder.name
        pairs |= neighbour_pairs(vectors, config.neighbours)
    result.candidate_pairs = len(pairs)
    spans = spans or {}
    accepted: list[tuple[MergeEdge, int, int]] = []
    swaps: dict[int, str] = {}  # accepted edge -> where its one word is swapped
    words_at: dict[str, set[str]] = defaultdict(set)
    for i, j in sorted(pairs):
        if frames[i] != frames[j] or turns[i] and turns[j] and turns[i] != turns[j]:
            continue
        edge = _judge(ids, texts, vectors, i, j, config)
        if edge is None:
            continue
        if edge.edit_similarity < 1.0 and _side_by_side(spans.get(ids[i]), spans.get(ids[j])):
            swap = static_swap(texts[i], texts[j])
            if swap is False:
                continue
            if swap is not None:
                words_at[swap[0]] |= swap[1]
                swaps[len(accepted)] = swap[0]
        accepted.append((edge, i, j))
    accepted = [e for k, e in enumerate(accepted) if k not in swaps or len(words_at[swaps[k]]) >= MIN_SWAPPED_WORDS]
    # closest pairs first; a family holds one chat format at most (a one-text member cannot bridge two)
    accepted.sort(key=lambda e: (-e[0].edit_similarity, -(e[0].semantic_similarity or 0.0), e[1], e[2]))
    parent = list(range(len(ids)))
    family_turns = {i: t for i, t in enumerate(turns) if t}
    for edge, i, j in accepted:
        ri, rj = find_root(parent, i), find_root(parent, j)
        ti, tj = family_turns.get(ri), family_turns.get(rj)
        if ri != rj and ti and tj and ti != tj:
            continue
        result.edges.append(edge)
        parent[ri] = rj
        if ti and not tj:
            family_turns[rj] = ti
    result.edges += _absorb_strays(ids, texts, [templates[t] for t in ids], frames, turns, weights, parent, family_turns, vectors)
    groups: dict[int, list[str]] = {}
    for i, tid in enumerate(ids):
        groups.setdefault(find_root(parent, i), []).append(tid)
    for members in groups.values():
        fid = content_id({"family": sorted(members)})
        result.members[fid] = sorted(members, key=lambda t: (-weights.get(t, 0), t))
        result.representative[fid] = result.members[fid][0]
        for tid in members:
            result.family_of[tid] = fid
    log.info("dedup: %d templates, %d candidate pairs, %d merges, %d families", len(ids), len(pairs), len(result.edges), result.families)
    return result


STRAY_RATIO = 5
"""A family this many times rarer than another whose template's pattern generates one of its own is a stray of it."""
MIN_FILLERS = 3
"""A pattern that generates this many other templates has a gap that takes many values: a family it generates joins
it when the pattern's family is ``FILLERS_RATIO`` times as used (not ``STRAY_RATIO`` times)."""
FILLERS_RATIO = 2
_FENCE = re.compile(r"(?:```|~~~)[\w+#.-]*")
_CONTENT_WORD = re.compile(r"[^\W\d_]{2,}")


def _absorb_strays(
    ids: list[str], texts: list[str], raw: list[str], frames: list[tuple[str, ...]], turns: list[tuple[str, ...]],
    weights: Mapping[str, int], parent: list[int], family_turns: dict[int, tuple[str, ...]], vectors: np.ndarray | None,
) -> list[MergeEdge]:
    """Join each rare family to the established family whose template's pattern, its wildcards and
    placeholders read as any text, generates one of the rare family's templates (the miner kept a
    rendering apart where a value looked like static text: a diff that ends in prose, a role text
    not read as a block). The pattern must hold a word of its own besides chat turn labels and
    fences (``{code}`` or ``user: <*>`` generates anything), frames and turns must agree, and the
    established family must carry ``STRAY_RATIO`` times the rare one's requests, or ``FILLERS_RATIO``
    times where its pattern generates ``MIN_FILLERS`` templates or more (the gap took many values: the
    last line of a file's text, a sentence of a project's description); the one whose pattern has the
    most static text wins. Family sizes are read once, before any join; candidates come from the
    templates sorted by their first (or, reversed, their last) static piece, never from all pairs."""
    from rapidfuzz.distance import Levenshtein

    roots = [find_root(parent, i) for i in range(len(ids))]
    size: dict[int, int] = defaultdict(int)
    for i, r in enumerate(roots):
        size[r] += weights.get(ids[i], 0)
    patterns = []
    for i, text in enumerate(texts):
        pieces = text.split("\x00")
        if len(pieces) > 1 and any(_CONTENT_WORD.search(_FENCE.sub(" ", p)) for p in _SLOTS.split(_TURN.sub(" ", raw[i]))):
            patterns.append((sum(map(len, pieces)), i, pieces))
    patterns.sort(key=lambda p: (-p[0], p[1]))
    by_start = _Affixes(texts)
    by_end = _Affixes([t[::-1] for t in texts])
    makers: dict[int, list[tuple[int, int]]] = defaultdict(list)  # template -> the patterns that generate it, most static text first
    for _, j, pieces in patterns:
        near = by_start.having(pieces[0]) if len(pieces[0]) >= len(pieces[-1]) else by_end.having(pieces[-1][::-1])
        made = [i for i in near if i != j and frames[i] == frames[j] and turns[i] == turns[j] and _generates(pieces, texts[i])]
        for i in made:
            makers[i].append((j, FILLERS_RATIO if len(made) >= MIN_FILLERS else STRAY_RATIO))
    edges = []
    for i in sorted(makers, key=lambda i: (size[roots[i]], i)):
        for j, ratio in makers[i]:
            ri, rj = find_root(parent, i), find_root(parent, j)
            if size[roots[j]] < ratio * size[roots[i]] or ri == rj:
                continue
            if family_turns.get(ri) and family_turns.get(rj) and family_turns[ri] != family_turns[rj]:
                continue
            semantic = None if vectors is None else round(float(np.dot(vectors[i], vectors[j])), 6)
            edges.append(MergeEdge(ids[i], ids[j], round(float(Levenshtein.normalized_similarity(texts[i], texts[j])), 6), semantic))
            parent[ri] = rj
            break
    return edges


class _Affixes:
    """Texts sorted, to list those that open with a given prefix without reading the others."""

    def __init__(self, texts: list[str]) -> None:
        self.order = sorted(range(len(texts)), key=texts.__getitem__)
        self.keys = [texts[i] for i in self.order]

    def having(self, prefix: str) -> list[int]:
        start = bisect.bisect_left(self.keys, prefix)
        end = bisect.bisect_right(self.keys, prefix + "\U0010ffff", start) if prefix else len(self.keys)
        return self.order[start:end]


def _generates(pieces: list[str], text: str) -> bool:
    """Whether ``text`` is the static ``pieces`` in order (each found at its first place after the
    one before), the first a prefix and the last a suffix, with a value (:func:`_a_value`) in each gap."""
    first, last = pieces[0], pieces[-1]
    if not text.startswith(first) or not text.endswith(last) or len(text) < len(first) + len(last):
        return False
    pos, end = len(first), len(text) - len(last)
    for piece in pieces[1:-1]:
        found = text.find(piece, pos, end)
        if found < 0 or not _a_value(text[pos:found]):
            return False
        pos = found + len(piece)
    return _a_value(text[pos:end])


def _a_value(text: str) -> bool:
    """Whether a gap the pattern's wildcard would take reads as one value: several slots in it are
    structure of the rarer template's own (a block with placeholders), not a value that held another."""
    return text.count("\x00") <= 1


def _judge(ids: list[str], texts: list[str], vectors: np.ndarray | None, i: int, j: int, config: DedupConfig) -> MergeEdge | None:
    from rapidfuzz.distance import Levenshtein

    if texts[i] == texts[j]:
        edit = 1.0
    else:
        edit = float(Levenshtein.normalized_similarity(texts[i], texts[j], score_cutoff=config.edit_threshold))
        if edit < config.edit_threshold:
            return None
    semantic = None
    if vectors is not None:
        semantic = float(np.dot(vectors[i], vectors[j]))
        if semantic < config.semantic_threshold:
            return None
    return MergeEdge(ids[i], ids[j], round(edit, 6), None if semantic is None else round(semantic, 6))
