"""Compress templates: lossless rewrites first, then lossy ones behind a fidelity gate.

Pure core: templates (Jinja2 text with ``{{ name }}`` slots) in, compressed templates out.
Slots are never altered, reordered relative to each other, or dropped. Only *free lines* are
edited: whole lines of static text that are not structure (fences, tags, role labels such as
``user:``, sentinel tokens, punctuation) and do not share a line with a slot. Templates with
fill-in-the-middle sentinels are never changed at all (their bytes are the model's protocol).

Lossless steps (fidelity stays ~1):
  1. whitespace normalised in static text;
  2. verbose formatting normalised on instruction lines: Markdown bold (``**Be brief:**``) unwrapped;
  3. instructions repeated within a template (equal, or near-equal by embedding) kept once, the
     first statement kept (in a chat template usually the shared system prompt, so the shared
     prefix stays whole);
  4. prefix-cache-aware layout: trailing instructions of a chat/edit template (static text
     after the last slot) move before the first slot, so requests share a longer prefix. They
     never cross a role label (they go right after the label of their own turn) nor a slot
     whose values hold turn boundaries (``barriers``, found by the caller on real instances),
     and a tail that points back at what precedes it ("the code above") stays.
Lossy steps, each kept only while the template passes the gate (:meth:`Compressor.rejects`):
  5. filler wording removed per sentence (never a word that carries meaning, see below);
  6. whole sentences dropped, the most redundant first and, among equally redundant ones, the
     later restatement before the earlier statement.
Shared prefixes across templates are factored by :func:`logmine.stages.compress.prefixes.shared_prefixes`.

The gate is the meaning guard of :mod:`logmine.stages.compress.meaning` (no negation, restricting word,
number, format word, literal or identifier lost or changed; steps kept in order), then the
instruction coverage against ``min_fidelity``. Every step, lossless ones too, is kept only when the
template passes it, and the finished template is held to it once more (:meth:`Compressor.hold`):
when it fails (a shared head compressed on its own can make it fail), the lossless form ships
instead, or the original when that fails too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

from logmine.prompt_syntax import FENCE, ROLE_LABEL, has_fim
from logmine.stages.compress.fidelity import (
    STRUCTURAL_LINE,
    CachedEmbedder,
    Embedder,
    Line,
    Segment,
    TokenCounter,
    coverage,
    has_turns,
    instruction_text,
    join,
    segments,
    sentence_spans,
    sentences,
    template_lines,
)
from logmine.stages.compress.meaning import carries, meaning_lost, protected_tokens


@dataclass(frozen=True)
class CompressConfig:
    """Options of the compression stage."""

    min_fidelity: float = 0.94
    """The gate: every edit and the finished template keep instruction coverage at or above this."""
    lossy: bool = True
    """Run the lossy stage (filler pruning, sentence dropping) after the lossless one."""
    coverage_floor: float = 0.5
    """A sentence whose best cosine is below this counts as not covered at all."""
    near_duplicate: float = 0.92
    """Cosine at or above which two sentences of one template are the same instruction."""
    drop_min_similarity: float = 0.7
    """The lossy stage drops a sentence only when another sentence that stays says nearly the same
    (cosine at least this): a unique instruction, however short, is never dropped."""
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
    lossless_source: str = ""
    """The template after the lossless steps alone."""
    fallback: str | None = None
    """Why the finished-template gate shipped a less compressed form (``lossless: ...`` or
    ``original: ...``); None when the template ships as compressed."""


FILLER = [  # never a word of the meaning guard's closed class (just, must, should...): pruning it would flip the instruction
    (re.compile(r"\b(?:please|kindly|really|very|simply|basically|actually|certainly|carefully)\s+", re.I), ""),
    (re.compile(r"\b(?:make sure (?:to|that you)|be sure to|remember to|it is important (?:to|that you))\s+", re.I), ""),
    (re.compile(r"\b(?:note that|keep in mind that|bear in mind that)\s+", re.I), ""),
    (re.compile(r"\bin order to\b", re.I), "to"),
    (re.compile(r"\b(?:you need to)\s+", re.I), ""),
]
LOSSY_STEPS = ("prune", "drop")
EMPHASIS = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
"""Markdown bold (``**x**``; ``__x__`` is left alone: it is also how Python spells dunder names)."""
Edit = Callable[[str], "str | None"]


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
    """Whether a template holds a fill-in-the-middle sentinel (then compression leaves every byte)."""
    return has_fim(source)


class Compressor:
    """Compresses templates with one embedder and token counter (the embedder is cached)."""

    def __init__(self, embedder: Embedder, count_tokens: TokenCounter, config: CompressConfig | None = None) -> None:
        self.embed = embedder if isinstance(embedder, CachedEmbedder) else CachedEmbedder(embedder)
        self.count = count_tokens
        self.config = config or CompressConfig()
        self._memo: dict[str, list[str]] = {}

    def fidelity(self, original: str, compressed: str) -> float:
        return coverage(self._sentences(original), self._sentences(compressed), self.embed, self.count, self.config.coverage_floor)

    def rejects(self, original: str, compressed: str) -> str | None:
        """Why ``compressed`` may not stand for ``original`` (None: it may): other slots, a code or
        structure line lost or changed (compression edits neither), the meaning guard
        (:func:`~logmine.stages.compress.meaning.meaning_lost`), then fidelity below ``min_fidelity``."""
        if [p.slot for p in segments(original) if p.slot] != [p.slot for p in segments(compressed) if p.slot]:
            return "slots changed"
        kept = iter(_fixed_lines(compressed))
        if lost := next((line for line in _fixed_lines(original) if not any(line == k for k in kept)), None):
            return f"code or structure changed: {lost!r}"
        a, b = self._sentences(original), self._sentences(compressed)
        why = meaning_lost(a, b, self.embed, self.config.drop_min_similarity)
        if why is not None:
            return why
        fid = coverage(a, b, self.embed, self.count, self.config.coverage_floor)
        return f"fidelity {fid:.4f} < {self.config.min_fidelity}" if fid < self.config.min_fidelity else None

    def hold(self, c: CompressedTemplate) -> CompressedTemplate:
        """The finished-template gate: ``c`` when its source passes :meth:`rejects`, else its lossless
        form when that passes, else the original; ``fallback`` says why a form was refused."""
        if c.source == c.original_source:
            return c
        why = self.rejects(c.original_source, c.source)
        if why is None:
            return c
        if c.lossless_source not in (c.source, c.original_source) and self.rejects(c.original_source, c.lossless_source) is None:
            fid = round(self.fidelity(c.original_source, c.lossless_source), 6)
            return CompressedTemplate(c.lossless_source, c.original_source, fid, False, [s for s in c.steps if s not in LOSSY_STEPS],
                                      c.lossless_source, f"lossless: {why}")
        return CompressedTemplate(c.original_source, c.original_source, 1.0, False, [], c.original_source, f"original: {why}")

    def _sentences(self, source: str) -> list[str]:
        if source not in self._memo:
            if len(self._memo) > 4096:
                self._memo.clear()
            self._memo[source] = sentences(instruction_text(source))
        return self._memo[source]

    def warm(self, sources: Sequence[str]) -> None:
        """Embed every sentence the compression of ``sources`` will look at, in one batch."""
        texts: list[str] = []
        for src in sources:
            for sent in sentences(instruction_text(src)):
                texts += [sent, _prune(sent)]
        self.embed([t for t in dict.fromkeys(texts) if t])

    def compress(self, source: str, barriers: Collection[str] = (), prefix: CompressedTemplate | None = None) -> CompressedTemplate:
        """Compress one template; ``barriers`` names slots whose values hold chat turn boundaries.

        With ``prefix`` (a static head that several templates share, compressed once on its own),
        ``source`` is the rest of the template: only the rest is edited, the compressed head is put
        in front as it is (so every template that shares it still shares it), and the rest's
        instructions are deduplicated, dropped and scored against the head's.
        """
        head_l, head = (prefix.lossless_source, prefix.source) if prefix else ("", "")
        original = (prefix.original_source if prefix else "") + source
        if is_fim(original):  # sentinel templates: every byte is protocol
            return CompressedTemplate(original, original, 1.0, False, [], original)
        steps: list[str] = []
        current = source
        for name, step in (("whitespace", self._whitespace), ("format", _unbold), ("dedupe", lambda s: self._dedupe(s, head_l)),
                           ("layout", lambda s: self._layout(s, set(barriers)))):
            new = step(current)
            if new != current and self.rejects(original, head_l + new) is None:  # a lossless step may swap steps (layout)
                steps.append(name)
                current = new
        lossless = current
        if self.config.lossy:
            current = self._lossy(original, current, steps, head)
        fid = self.fidelity(original, head + current)
        if prefix:
            steps = [*dict.fromkeys([*prefix.steps, *steps, "shared-prefix"])]
        lossy = current != lossless or bool(prefix and prefix.lossy)
        return self.hold(CompressedTemplate(head + current, original, round(fid, 6), lossy, steps, head_l + lossless))

    # -- lossless ---------------------------------------------------------------------------
    def _whitespace(self, source: str) -> str:
        """Prose lines: trailing and repeated spaces; text beside slots: repeated spaces; runs of blank
        lines between non-code lines: one. Code and structure keep every byte."""
        parts = segments(source)
        lines = template_lines(parts)
        edits: dict[tuple[int, int], str | None] = {}
        for k, line in enumerate(lines):
            if line.kind == "prose":
                edits[(line.seg, line.index)] = re.sub(r"(?<=\S)[ \t]{2,}", " ", line.text.rstrip())
            elif line.kind == "partial" and not _CODE_LIKE.search(line.text):
                edits[(line.seg, line.index)] = re.sub(r"[ \t]{2,}", " ", line.text)
            elif line.kind == "blank" and not _near_code(lines, k):
                after_blank = k > 0 and lines[k - 1].kind == "blank" and lines[k - 1].seg == line.seg
                edits[(line.seg, line.index)] = None if after_blank else ""
        return _apply(parts, edits)

    def _dedupe(self, source: str, context: str = "") -> str:
        """Drop a sentence of a free line equal or near-equal to an earlier one of the same template
        (or of ``context``, the compressed shared head in front of it)."""
        seen: list[str] = [s for s in free_sentences(context) if _is_instruction(s)] if context else []

        def edit(line: str) -> str | None:
            drop = []
            for a, b in sentence_spans(line):
                sent = line[a:b]
                if _is_instruction(sent) and seen and self._near(sent, seen):
                    drop.append((a, b))
                else:
                    seen.append(sent)
            return _without_spans(line, drop) if drop else line

        return _edit_free_lines(source, edit)

    def _near(self, sentence: str, seen: list[str]) -> bool:
        """Whether a sentence says what one of ``seen`` says, and that one carries its protected tokens."""
        need = protected_tokens(sentence)
        seen = [s for s in seen if carries(protected_tokens(s), need)]
        if not seen:
            return False
        norm = _norm(sentence)
        if any(_norm(s) == norm for s in seen):
            return True
        vecs = self.embed([sentence, *seen])
        return float((vecs[1:] @ vecs[0]).max()) >= self.config.near_duplicate

    def _layout(self, source: str, barriers: set[str]) -> str:
        """Move a purely static, instruction-only tail before the first slot of its turn."""
        if not self.config.reorder:
            return source
        parts = segments(source)
        slots = [i for i, s in enumerate(parts) if s.slot]
        if not slots or slots[-1] == len(parts) - 1:
            return source
        keep, movable = _split_structural(parts[-1].text)
        if not sentences(movable) or has_turns(parts[-1].text) or "{%" in parts[-1].text or _REFERS_BACK.search(movable):
            return source
        lines = template_lines(parts)
        first = keep.count("\n") + 1  # the tail's first movable line
        if any(x.kind not in ("prose", "blank") for x in lines if x.seg == len(parts) - 1 and x.index >= first):
            return source  # only instructions move: never code (fenced or not), structure or markup
        fences = [(x.seg, x.index) for x in lines if x.kind == "structure" and FENCE.match(x.text)]
        barriers = {p.slot for k, p in enumerate(parts) if p.slot in barriers and not _fenced(fences, k, 0)}
        at = _insertion_point(parts, slots, barriers)
        if at is None or _fenced(fences, at[0], parts[at[0]].text[: at[1]].count("\n") if at[0] >= 0 else 0):
            return source
        seg, offset = at
        block = movable.strip() + "\n\n"
        if seg == -1:
            out = [Segment(block), *parts[:-1], Segment(keep)]
        else:
            text = parts[seg].text
            out = [*parts[:seg], Segment(text[:offset] + block + text[offset:]), *parts[seg + 1 : -1], Segment(keep)]
        return join(out).rstrip() + ("\n" if source.endswith("\n") else "")

    # -- lossy ------------------------------------------------------------------------------
    def _lossy(self, original: str, current: str, steps: list[str], head: str = "") -> str:
        """Prune, then drop sentences of ``current`` (the template after ``head``) while ``head`` + it
        passes the gate against ``original`` (:meth:`rejects`)."""
        for line_no, (_, _, line) in enumerate(_free_lines(segments(current))):
            for index, (a, b) in enumerate(sentence_spans(line)):
                if not _prune(line[a:b]):  # pruning never deletes a sentence (dropping does, below)
                    continue
                candidate = _edit_free_lines(current, _on_sentence(line_no, index, _prune))
                if candidate != current and self.rejects(original, head + candidate) is None:
                    current = candidate
                    _note(steps, "prune")
        for sent in self._drop_order(current, head):
            where = _locate(current, sent)
            if where is None or sent.rstrip().endswith("?"):  # a question is the user's, not an instruction
                continue
            candidate = _edit_free_lines(current, _on_sentence(*where, lambda s: ""))
            if candidate == current or not self._said_elsewhere(sent, head + candidate):
                continue
            if self.rejects(original, head + candidate) is None:
                current = candidate
                _note(steps, "drop")
        return current

    def _said_elsewhere(self, sentence: str, source: str) -> bool:
        """Whether a sentence of ``source``'s instructions is at least ``drop_min_similarity`` close to ``sentence``."""
        rest = sentences(instruction_text(source))
        if not rest:
            return False
        vecs = self.embed([sentence, *rest])
        return float((vecs[1:] @ vecs[0]).max()) >= self.config.drop_min_similarity

    def _drop_order(self, source: str, head: str = "") -> list[str]:
        """Instruction sentences of free lines, most redundant first (highest similarity to another
        sentence of ``source`` or of ``head``, which is not itself edited)."""
        sents = list(dict.fromkeys(s for s in free_sentences(source) if _is_instruction(s)))
        context = [s for s in dict.fromkeys(free_sentences(head)) if _is_instruction(s) and s not in sents] if head else []
        if len(sents) + len(context) < 2 or not sents:
            return []
        vecs = self.embed([*sents, *context])
        sims = vecs[: len(sents)] @ vecs.T
        for i in range(len(sents)):
            sims[i, i] = -1.0
        order = sorted(range(len(sents)), key=lambda i: (-round(float(sims[i].max()), 4), -i))
        return [sents[i] for i in order]


_REFERS_BACK = re.compile(r"\b(?:above|preceding|previous|aforementioned)\b|\bthe (?:code|text|snippet|diff|file|question)s? (?:shown|given)\b", re.I)
"""Words by which an instruction points back at what comes before it ("the code above"): moved ahead
of that text it would point at nothing, so such a tail stays where it is."""


# -- free lines: the only static text compression edits -------------------------------------------
_CODE_LIKE = re.compile(r"[{};=<>`|\\]|\w\(|::|->")


def _free_lines(parts: list[Segment]) -> list[tuple[int, int, str]]:
    """``(segment, line, prose)`` of every prose line (:func:`~logmine.stages.compress.fidelity.template_lines`),
    without the role label a line may start with (it is never edited)."""
    return [(line.seg, line.index, line.text[line.head :]) for line in template_lines(parts) if line.kind == "prose"]


def _fixed_lines(source: str) -> list[str]:
    """The code and structure lines of a template, in order: compression never edits them."""
    return [line.text for line in template_lines(segments(source)) if line.kind in ("code", "structure")]


def _near_code(lines: list[Line], k: int) -> bool:
    """Whether the blank line ``k`` touches code (the nearest non-blank line before or after it)."""
    for step in (-1, 1):
        j = k + step
        while 0 <= j < len(lines) and lines[j].kind == "blank":
            j += step
        if 0 <= j < len(lines) and lines[j].kind == "code":
            return True
    return False


def _apply(parts: list[Segment], edits: dict[tuple[int, int], str | None]) -> str:
    """Rebuild the template with line edits (a new text, or None to delete the line and its newline)."""
    out = []
    for n, seg in enumerate(parts):
        if seg.slot:
            out.append(seg)
            continue
        lines = seg.text.split("\n")
        kept = [edits[(n, i)] if (n, i) in edits else line for i, line in enumerate(lines)]
        out.append(Segment("\n".join(x for x in kept if x is not None)))
    return join([p for p in out if p.slot or p.text])


def _edit_free_lines(source: str, edit: Edit) -> str:
    """Apply ``edit`` to each free line in order: a new text, or None to delete the line.

    A line left with no word (only a bullet or punctuation) is deleted; deleting a line between
    two blank lines deletes one of them too.
    """
    parts = segments(source)
    edits: dict[tuple[int, int], str | None] = {}
    for seg, line, text in _free_lines(parts):
        new = edit(text)
        if new is not None and not re.search(r"[A-Za-z0-9]", new):
            new = None
        if new == text:
            continue
        whole = parts[seg].text.split("\n")[line]
        label = whole[: len(whole) - len(text)]
        if label:  # a role label stays, alone on its line when its text went
            edits[(seg, line)] = label + new if new is not None else label.rstrip()
            continue
        edits[(seg, line)] = new
        if new is None:
            lines = parts[seg].text.split("\n")
            if 0 < line < len(lines) - 1 and not lines[line - 1].strip() and not lines[line + 1].strip():
                edits[(seg, line + 1)] = None
            elif line == len(lines) - 1 and line > 0 and not lines[line - 1].strip():
                edits[(seg, line - 1)] = None
    return _apply(parts, edits) if edits else source


def _on_sentence(line_no: int, index: int, fn: Callable[[str], str]) -> Edit:
    """An edit of the ``index``-th sentence of the ``line_no``-th free line."""
    counter = iter(range(1 << 30))

    def edit(line: str) -> str | None:
        if next(counter) != line_no:
            return line
        spans = sentence_spans(line)
        if index >= len(spans):
            return line
        a, b = spans[index]
        new = fn(line[a:b])
        return _without_spans(line, [(a, b)]) if not new else line[:a] + new + line[b:]

    return edit


def _locate(source: str, sentence: str) -> tuple[int, int] | None:
    """``(free line number, sentence index)`` of the last occurrence of ``sentence``."""
    found = None
    for n, (_, _, line) in enumerate(_free_lines(segments(source))):
        for k, (a, b) in enumerate(sentence_spans(line)):
            if line[a:b] == sentence:
                found = (n, k)
    return found


def _without_spans(line: str, spans: list[tuple[int, int]]) -> str:
    """``line`` without the given sentence spans (and the spaces after each)."""
    out, pos = [], 0
    for a, b in sorted(spans):
        out.append(line[pos:a])
        pos = b
        while pos < len(line) and line[pos] in " \t":
            pos += 1
    out.append(line[pos:])
    return "".join(out).rstrip()


def free_sentences(source: str) -> list[str]:
    """Sentences on free lines of static text (not structure, not connective text on a slot's line)."""
    return [line[a:b] for _, _, line in _free_lines(segments(source)) for a, b in sentence_spans(line)]


def _is_instruction(sentence: str) -> bool:
    """A sentence with at least two words (a list number or a lone word is not an instruction)."""
    return len(re.findall(r"[A-Za-z]{2,}", sentence)) >= 2


def _split_structural(tail: str) -> tuple[str, str]:
    """Split a tail into its leading structural lines (fences, tags, the rest of the slot's line) and the rest."""
    lines = tail.split("\n")
    n = 1  # the first line continues the slot's line: it stays
    while n < len(lines) and STRUCTURAL_LINE.match(lines[n]):
        n += 1
    return "\n".join(lines[:n]), "\n".join(lines[n:])


def _insertion_point(parts: list[Segment], slots: list[int], barriers: set[str]) -> tuple[int, int] | None:
    """Where a moved tail goes: right after the last turn boundary before it (a role label in static
    text, or a slot whose values hold one), else the template's start; None when no slot lies between
    that point and the tail (nothing to gain) or the point is inside a line."""
    point: tuple[int, int] = (-1, 0)  # before everything
    for index, seg in enumerate(parts[:-1]):
        if seg.slot:
            if seg.slot in barriers:
                point = (index, -1)
            continue
        for m in ROLE_LABEL.finditer(seg.text):
            point = (index, m.end())
    seg, offset = point
    if not any(i > seg for i in slots):
        return None
    if seg == -1:  # no turn boundary: the template's start (a new first segment before a leading slot)
        return (-1, 0) if parts[0].slot else (0, 0)
    if offset == -1:  # after a barrier slot: the static text that follows it, from its next line
        nxt = seg + 1
        if parts[nxt].slot or "\n" not in parts[nxt].text:
            return None
        return nxt, parts[nxt].text.index("\n") + 1
    if parts[seg].text[offset : offset + 1] == "\n":  # a label on its own line: the next line
        offset += 1
    return seg, offset


def _fenced(fences: list[tuple[int, int]], seg: int, line: int) -> bool:
    """Whether the start of line ``line`` of segment ``seg`` is inside a code fence."""
    return sum(1 for f in fences if f < (seg, line)) % 2 == 1


def _note(steps: list[str], name: str) -> None:
    if name not in steps:
        steps.append(name)


def _norm(text: str) -> str:
    return re.sub(r"\W+", " ", text.lower()).strip()


def _unbold(source: str) -> str:
    """Markdown bold unwrapped on prose lines (``- **Be brief:** give...`` -> ``- Be brief: give...``)."""
    return _edit_free_lines(source, lambda line: EMPHASIS.sub(r"\1", line))


def _prune(sentence: str) -> str:
    out = EMPHASIS.sub(r"\1", sentence)
    for rx, repl in FILLER:
        out = rx.sub(repl, out)
    out = re.sub(r"\s{2,}", " ", out).strip()
    return out[:1].upper() + out[1:] if out and sentence[:1].isupper() else out
