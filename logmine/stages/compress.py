"""Compress templates: lossless rewrites first, then lossy ones behind a fidelity gate.

Pure core: templates (Jinja2 text with ``{{ name }}`` slots) in, compressed templates out.
Slots are never altered, reordered relative to each other, or dropped.

Lossless steps (fidelity stays ~1):
  1. whitespace and formatting normalised in static text;
  2. instructions repeated within a template (equal, or near-equal by embedding) kept once;
  3. prefix-cache-aware layout: trailing instructions of a chat/edit template (static text
     after the last slot) move before the first slot, so requests share a longer prefix.
     Fill-in-the-middle templates (sentinel tokens) are never reordered.
Lossy steps, each kept only while the template's fidelity stays >= ``min_fidelity``:
  4. markdown emphasis and filler wording removed per sentence;
  5. whole sentences dropped, the most redundant first.
Shared prefixes across templates are factored by :func:`shared_prefixes`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from logmine.stages.fidelity import (
    CachedEmbedder,
    Embedder,
    Segment,
    TokenCounter,
    coverage,
    join,
    segments,
    sentences,
    static_text,
)


@dataclass(frozen=True)
class CompressConfig:
    """Options of the compression stage."""

    min_fidelity: float = 0.94
    """The lossy stage's gate: a template's instruction coverage must stay at or above this."""
    lossy: bool = True
    """Run the lossy stage (filler pruning, sentence dropping) after the lossless one."""
    coverage_floor: float = 0.5
    """A sentence whose best cosine is below this counts as not covered at all."""
    near_duplicate: float = 0.92
    """Cosine at or above which two sentences of one template are the same instruction."""
    reorder: bool = True
    """Move trailing instructions before the first slot (prefix-cache-aware layout)."""
    min_shared_prefix_tokens: int = 16
    """A shared prefix must be at least this many tokens (vLLM's KV block) to be factored."""


@dataclass
class CompressedTemplate:
    """The outcome for one template."""

    source: str
    original_source: str
    fidelity: float
    lossy: bool
    steps: list[str] = field(default_factory=list)


FIM_MARKERS = re.compile(r"<\|?fim|<PRE>|<SUF>|<MID>|\[SUFFIX\]|\[PREFIX\]|<\|fim_|<fim_|FILL_HERE|<｜fim", re.I)
FILLER = [
    (re.compile(r"\b(?:please|kindly|just|really|very|simply|basically|actually|certainly|carefully)\s+", re.I), ""),
    (re.compile(r"\b(?:make sure (?:to|that you)|be sure to|remember to|it is important (?:to|that you))\s+", re.I), ""),
    (re.compile(r"\b(?:note that|keep in mind that|bear in mind that)\s+", re.I), ""),
    (re.compile(r"\bin order to\b", re.I), "to"),
    (re.compile(r"\b(?:you should|you must|you need to)\s+", re.I), ""),
    (re.compile(r"\b(?:the following|as follows)\b", re.I), "below"),
]
EMPHASIS = re.compile(r"(\*\*|__)(.+?)\1")


def normalise_whitespace(text: str, last: bool = True) -> str:
    """Trailing spaces off each line, runs of spaces inside a line collapsed, blank lines at most one.

    With ``last=False`` (text followed by a slot) the final line keeps one trailing space.
    """
    lines = text.split("\n")
    out = [re.sub(r"(?<=\S)[ \t]{2,}", " ", line.rstrip()) for line in lines[:-1]]
    final = re.sub(r"[ \t]{2,}", " ", lines[-1])
    out.append(final.rstrip() if last else final)
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out))


def is_fim(source: str) -> bool:
    return bool(FIM_MARKERS.search(source))


class Compressor:
    """Compresses templates with one embedder and token counter (both cached)."""

    def __init__(self, embedder: Embedder, count_tokens: TokenCounter, config: CompressConfig | None = None) -> None:
        self.embed = CachedEmbedder(embedder)
        self.count = count_tokens
        self.config = config or CompressConfig()

    def fidelity(self, original: str, compressed: str) -> float:
        return coverage(sentences(static_text(original)), sentences(static_text(compressed)), self.embed, self.count,
                        self.config.coverage_floor)

    def compress(self, source: str) -> CompressedTemplate:
        steps: list[str] = []
        current = source
        for name, step in (("whitespace", self._whitespace), ("dedupe", self._dedupe), ("layout", self._layout)):
            new = step(current)
            if new != current:
                steps.append(name)
                current = new
        lossless = current
        if self.config.lossy and not is_fim(source):
            current = self._lossy(source, current, steps)
        fid = self.fidelity(source, current)
        return CompressedTemplate(current, source, round(fid, 6), current != lossless, steps)

    # -- lossless ---------------------------------------------------------------------------
    def _whitespace(self, source: str) -> str:
        if is_fim(source):  # sentinel templates: whitespace may be significant to the model
            return source
        parts = segments(source)
        return join([s if s.slot else Segment(normalise_whitespace(s.text, i == len(parts) - 1)) for i, s in enumerate(parts)])

    def _dedupe(self, source: str) -> str:
        """Drop a sentence equal or near-equal to an earlier sentence of the same template."""
        parts = segments(source)
        seen: list[str] = []
        out: list[Segment] = []
        for seg in parts:
            if seg.slot:
                out.append(seg)
                continue
            text = seg.text
            for sent in sentences(seg.text):
                if seen and self._near(sent, seen):
                    text = _remove_sentence(text, sent)
                else:
                    seen.append(sent)
            out.append(Segment(text))
        return join(out)

    def _near(self, sentence: str, seen: list[str]) -> bool:
        norm = _norm(sentence)
        if any(_norm(s) == norm for s in seen):
            return True
        vecs = self.embed([sentence, *seen])
        return float((vecs[1:] @ vecs[0]).max()) >= self.config.near_duplicate

    def _layout(self, source: str) -> str:
        """Move a purely static, instruction-only tail before the first slot (chat/edit only)."""
        if not self.config.reorder or is_fim(source):
            return source
        parts = segments(source)
        slots = [i for i, s in enumerate(parts) if s.slot]
        if not slots or slots[-1] == len(parts) - 1:
            return source
        tail = parts[-1].text
        keep, movable = _split_structural(tail)
        if not sentences(movable) or "{%" in tail:
            return source
        head = parts[: slots[0]]
        middle = parts[slots[0] : -1]
        moved = movable.strip() + "\n\n"
        new_head = Segment(moved + join(head)) if head else Segment(moved)
        return join([new_head, *middle, Segment(keep)]).rstrip() + ("\n" if source.endswith("\n") else "")

    # -- lossy ------------------------------------------------------------------------------
    def _lossy(self, original: str, current: str, steps: list[str]) -> str:
        gate = self.config.min_fidelity
        for sent in free_sentences(current):
            shorter = _prune(sent)
            if shorter != sent and shorter:
                candidate = _replace_sentence(current, sent, shorter)
                if self.fidelity(original, candidate) >= gate:
                    current = candidate
                    _note(steps, "prune")
        for sent in self._drop_order(current):
            candidate = _remove_sentence_everywhere(current, sent)
            if candidate != current and self.fidelity(original, candidate) >= gate:
                current = candidate
                _note(steps, "drop")
        return current

    def _drop_order(self, source: str) -> list[str]:
        """Sentences of ``source`` ordered most-redundant first (highest similarity to another)."""
        sents = list(dict.fromkeys(free_sentences(source)))
        if len(sents) < 2:
            return []
        vecs = self.embed(sents)
        sims = vecs @ vecs.T
        for i in range(len(sents)):
            sims[i, i] = -1.0
        order = sorted(range(len(sents)), key=lambda i: -float(sims[i].max()))
        return [sents[i] for i in order]


STRUCTURAL_LINE = re.compile(r"^\s*(?:```[\w+-]*|~~~[\w+-]*|</?[\w|:-]+>|<\|[^|]+\|>\w*|\[/?[A-Z_]+\]|[^\w\s]*|\w+:)\s*$")
"""Lines that are structure, not instructions: fences, tags, sentinels, role labels, punctuation."""


def _split_structural(tail: str) -> tuple[str, str]:
    """Split a tail into its leading structural lines (fences, tags, the rest of the slot's line) and the rest."""
    lines = tail.split("\n")
    n = 1  # the first line continues the slot's line: it stays
    while n < len(lines) and STRUCTURAL_LINE.match(lines[n]):
        n += 1
    return "\n".join(lines[:n]), "\n".join(lines[n:])


def free_sentences(source: str) -> list[str]:
    """Sentences on whole lines of static text (not connective text on a slot's line)."""
    parts = segments(source)
    out: list[str] = []
    for index, seg in enumerate(parts):
        if seg.slot:
            continue
        lines = seg.text.split("\n")
        for i, line in enumerate(lines):
            starts_free = i > 0 or index == 0
            ends_free = i < len(lines) - 1 or index == len(parts) - 1
            if starts_free and ends_free and not STRUCTURAL_LINE.match(line) and not FIM_MARKERS.search(line):
                out.extend(sentences(line))
    return out


def _note(steps: list[str], name: str) -> None:
    if name not in steps:
        steps.append(name)


def _norm(text: str) -> str:
    return re.sub(r"\W+", " ", text.lower()).strip()


def _prune(sentence: str) -> str:
    out = EMPHASIS.sub(r"\2", sentence)
    for rx, repl in FILLER:
        out = rx.sub(repl, out)
    out = re.sub(r"\s{2,}", " ", out).strip()
    return out[:1].upper() + out[1:] if out and sentence[:1].isupper() else out


def _remove_sentence(text: str, sentence: str) -> str:
    """Remove the LAST occurrence of ``sentence`` from ``text`` with its trailing whitespace."""
    idx = text.rfind(sentence)
    if idx < 0:
        return text
    end = idx + len(sentence)
    while end < len(text) and text[end] in " \t":
        end += 1
    if end < len(text) and text[end] == "\n" and (idx == 0 or text[idx - 1] == "\n"):
        end += 1
    return text[:idx] + text[end:]


def _remove_sentence_everywhere(source: str, sentence: str) -> str:
    return join([s if s.slot else Segment(_remove_sentence(s.text, sentence)) for s in segments(source)])


def _replace_sentence(source: str, old: str, new: str) -> str:
    return join([s if s.slot else Segment(s.text.replace(old, new, 1)) for s in segments(source)])


def shared_prefixes(sources: Sequence[str], count_tokens: TokenCounter, min_tokens: int = 16) -> dict[int, str]:
    """Static prefixes shared by two or more templates, cut at a line boundary.

    Returns ``{template_index: prefix_text}`` for templates that start with a shared prefix
    of at least ``min_tokens`` tokens (the longest one each template shares with another).
    """
    heads = [_static_head(s) for s in sources]
    out: dict[int, str] = {}
    order = sorted(range(len(heads)), key=lambda i: heads[i])
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
    cut = a.rfind("\n", 0, n + 1) if n < len(a) or n < len(b) else n - 1
    return a[: cut + 1] if cut >= 0 else ""
