"""Context trimming for code slots: keep the most useful top-level units within a token budget.

A code context (the prefix before the cursor, the suffix after it, or declarations) is cut
into units from a tree-sitter parse (:mod:`logmine.runtime.trim.units`: imports, classes,
functions, statements; a class enclosing the cursor is opened into its members). Each unit
off the cursor's path gets::

    score = ast_weight * importance + (1 - ast_weight) * recency      (0.7 / 0.3)

- importance: the probability that the completion references the unit, from a logistic
  regression (weights fitted once on a tuning set, kept as constants) over its kind and whether
  it defines a name the code near the cursor uses (the last ``near_lines`` lines, the cursor's
  line and the identifier being typed, then the rest of the unit enclosing the cursor;
  ``self.m(`` / ``this.m(`` count for the member ``m``), how recently and by how many units its
  names were used, whether it is a member of an enclosing class, its distance, size and names;
- recency: least-recently-used decay over the units that used the unit's names last, over the
  symbols the session edited recently (the units enclosing its earlier cursors), and over
  the files it edited or opened before the request (the ``events`` table, :func:`recent_files`).

Details in :mod:`logmine.runtime.trim.score`; units in :mod:`logmine.runtime.trim.units`; options and
results (:class:`TrimConfig`, :class:`TrimResult`, :class:`TrimmedSlots`) in :mod:`logmine.runtime.trim.model`.

The cursor's path (the unit enclosing the cursor, and the headers of the classes around it)
is always kept; other units scoring at least ``prefix_min_score`` are taken best score first while
they fit the budget (at most ``max_kept``), and of those the first k are kept, k maximizing the
expected F1 of the kept units given their importance (padding the budget with unrelated code costs
tokens and precision).
Kept units are emitted in source order; adjacent units keep the whitespace between them.

:func:`logmine.runtime.trim.evaluate.evaluate` measures F1 of the kept units against the units the
logged completion references, beside the "keep the nearest lines" baseline at the same budget.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence

from logmine.code import resolve_language
from logmine.runtime.trim.model import TrimConfig, TrimmedSlots, TrimResult
from logmine.runtime.trim.parse import UnitParser
from logmine.runtime.trim.score import (
    KIND_WEIGHT,
    Plan,
    blank_keeping_offsets,
    build_plan,
    expected_f1_cut,
    lru_factor,
    nth_line_back,
    ranked,
    references,
    score,
    split_uses,
    uses,
)
from logmine.runtime.trim.units import (
    Outline,
    Unit,
    code_only,
    count_tokens,
    emit,
    emit_ranges,
    line_units,
    open_delimiter,
    outline,
    place_cursor,
    supported,
)

__all__ = ["TrimConfig", "TrimResult", "Trimmer", "TrimmedSlots", "Unit", "count_tokens", "recent_files", "trim", "trim_slots"]


class Trimmer:
    """Trims contexts, caching parses: reuse one per stream of requests (per process).

    Consecutive requests of a file share most of their context: the outline of the complete
    lines is cached by content, lexing continues from the stream's previous context, and each
    segment's tree is re-parsed incrementally. ``cache=False`` parses every request from
    scratch and remembers nothing (the same results, slower). ``count`` replaces the default
    token count (words and punctuation) with, e.g., a model tokenizer's.
    """

    def __init__(self, config: TrimConfig | None = None, count: Callable[[str], int] | None = None,
                 max_outlines: int = 64, cache: bool = True) -> None:
        self.config = config or TrimConfig()
        self.count = count or count_tokens
        self.parser = UnitParser(max_segments=4096 if cache else 0, count=self.count)
        self.parser.incremental = cache
        self.cache = cache
        self.outlines: OrderedDict[tuple, tuple[Outline, dict]] = OrderedDict()
        self.max_outlines = max_outlines
        self.symbols: OrderedDict[tuple, list[str]] = OrderedDict()
        self.region_counts: dict[tuple, tuple[bytes, int]] = {}
        self.last_body: dict[str, tuple[bytes, str, tuple[Outline, dict]]] = {}
        self.far_uses: dict[str, tuple[str | None, str, set[str], set[str]]] = {}

    # -- the three slots ------------------------------------------------------------------------
    def prefix(self, code: str, language: str | None, file_path: str | None = None,
               recent_files: Sequence[str] = (), recent_symbols: Sequence[str] = (),
               budget: int | None = None, stream: str | None = None) -> TrimResult:
        """Trim a prefix (cursor at its end). ``stream`` names the request stream the context
        continues (default: ``file_path``), for the incremental caches only."""
        budget = self.config.budget_tokens if budget is None else budget
        data = code.encode("utf-8")
        units, path, memo = self.layout(data, language, stream if stream is not None else file_path)
        if not units:
            return TrimResult(code, [], [], set(), 0, 0)
        if not supported(language):  # no grammar: the lines nearest the cursor
            return self._lines(data, units, budget, from_end=True)
        plan = self._plan(data, units, path, memo, language, stream if stream is not None else file_path)
        file_factor = lru_factor(recent_files, file_path, self.config.lru_decay)
        line = data[data.rfind(b"\n") + 1 :].decode("utf-8", "replace")
        probs: dict[int, float] = {}
        order = ranked(plan, line, language, file_factor, recent_symbols, self.config, probs)  # lazy: unread when over budget
        if self.config.fill:
            return self._fill(data, units, set(path), order, budget, memo)
        return self._select(data, units, set(path), order, budget, memo, (plan, probs))

    def layout(self, data: bytes, language: str | None, file_path: str | None = None) -> tuple[list[Unit], list[int], dict]:
        """Units of a prefix context and its cursor path (see :mod:`logmine.runtime.trim.units`);
        ``file_path`` keys the incremental caches."""
        cursor_line = data.rfind(b"\n") + 1
        if not supported(language):
            units = line_units(data, self.count)
            return units, [len(units) - 1] if units else [], {}
        last = self.last_body.get(file_path) if file_path is not None and self.cache else None
        if last is not None and len(last[0]) == cursor_line and last[1] == language and data.startswith(last[0]):
            hit = last[2]  # same lines as the file's last request
        else:
            body = data[:cursor_line]
            hit = self._outline(body, language, file_path)
            if file_path is not None and self.cache:
                self.last_body[file_path] = (body, language, hit)
                if len(self.last_body) > 1024:
                    self.last_body.pop(next(iter(self.last_body)))
        ol, memo = hit
        counter = None
        if self.count is count_tokens and file_path is not None and self.parser.incremental:
            def counter(region: bytes) -> int:
                return self._count_region((language, file_path), region)
        units, path = place_cursor(ol, data, cursor_line, self.count, counter)
        return units, path, memo

    def _outline(self, body: bytes, language: str, file_path: str | None) -> tuple[Outline, dict]:
        """The outline of ``body`` and its memo, cached by content."""
        okey = (language, body)
        hit = self.outlines.get(okey)
        if hit is None:
            hit = (outline(body, language, self.parser, file_path), {})
            self.outlines[okey] = hit
            if len(self.outlines) > self.max_outlines or not self.parser.max_segments:
                self.outlines.popitem(last=False)
        else:
            self.outlines.move_to_end(okey)
        return hit

    def _count_region(self, key: tuple, region: bytes) -> int:
        """Tokens of the cursor's unit up to its line, counting only what a file's last such region lacks
        (word/punctuation tokens never span a newline, so counts add up)."""
        prev = self.region_counts.get(key)
        if prev is not None and len(region) > len(prev[0]) and region.startswith(prev[0]):
            n = prev[1] + count_tokens(region[len(prev[0]) :].decode("utf-8", "replace"))
        elif prev is not None and region == prev[0]:
            n = prev[1]
        else:
            n = count_tokens(region.decode("utf-8", "replace"))
        self.region_counts[key] = (region, n)
        if len(self.region_counts) > 1024:
            self.region_counts.pop(next(iter(self.region_counts)))
        return n

    def suffix(self, code: str, language: str | None, used: tuple[set[str], set[str]], recent_symbols: Sequence[str] = (),
               budget: int | None = None) -> TrimResult:
        """Trim a suffix (cursor at its start): the rest of the cursor's unit is kept, later units by score."""
        budget = self.config.suffix_budget_tokens if budget is None else budget
        return self._free(code, language, used, recent_symbols, budget, head_is_path=True)

    def declarations(self, code: str, language: str | None, used: tuple[set[str], set[str]], recent_symbols: Sequence[str] = (),
                     budget: int | None = None) -> TrimResult:
        """Trim declarations (snippets of other files): units defining names used near the cursor first."""
        budget = self.config.declarations_budget_tokens if budget is None else budget
        return self._free(code, language, used, recent_symbols, budget, head_is_path=False)

    def slots(self, values: Mapping[str, str | None], language: str | None, file_path: str | None = None,
              recent_files: Sequence[str] = (), session: str | None = None, remember: bool = True) -> TrimmedSlots:
        """Trim the code slots of one request (``prefix``, ``suffix``, ``declarations``); others pass through.

        ``remember=False`` neither reads nor records the session's recently edited symbols, so the
        result depends on this request alone (the pack runtime's trimming: serving keeps no session)."""
        language = _language(language, file_path)
        out, before, after = dict(values), {}, {}
        prefix = values.get("prefix") or ""
        skey = (session, file_path)
        symbols = self.symbols.get(skey, []) if remember else []
        stream = f"{session}\x00{file_path}" if session is not None else file_path
        res = self.prefix(prefix, language, file_path, recent_files, symbols, stream=stream) if prefix else None
        used: tuple[set[str], set[str]] = (set(), set())
        if res is not None and res.units and res.path:
            cursor = res.units[max(res.path)]
            used = uses(prefix.encode("utf-8")[cursor.start:].decode("utf-8", "replace"), language)
            if remember:
                self._remember(skey, res)
        for slot in ("prefix", "suffix", "declarations"):
            text = values.get(slot)
            if not text:
                continue
            if slot == "prefix":
                r = res
            elif slot == "suffix":
                r = self.suffix(text, language, used, symbols)
            else:
                r = self.declarations(text, language, used, symbols)
            out[slot], before[slot], after[slot] = r.text, r.original_tokens, r.tokens
        return TrimmedSlots(out, before, after)

    # -- scoring and selection ------------------------------------------------------------------
    def _plan(self, data: bytes, units: list[Unit], path: list[int], memo: dict, language: str | None,
              stream: str | None = None) -> Plan:
        """What scoring needs that does not change while the cursor stays on its line (cached)."""
        key = ("plan", len(units), tuple(path))
        plan = memo.get(key)
        if plan is None:
            plan = memo[key] = build_plan(units, path, *self._body_uses(data, units, path, language, stream), self.config)
        return plan

    def scores(self, plan: Plan, data: bytes, language: str | None, file_factor: float,
               recent_symbols: Sequence[str]) -> dict[int, float]:
        """The score of each candidate unit (see :mod:`logmine.runtime.trim.score`)."""
        line = data[data.rfind(b"\n") + 1 :].decode("utf-8", "replace")
        return score(plan, line, language, file_factor, recent_symbols, self.config)

    def _select(self, data: bytes, units: list[Unit], path: set[int], order: Iterable[tuple[float, int]], budget: int,
                memo: dict | None = None, cut: tuple[Plan, dict[int, float]] | None = None) -> TrimResult:
        """Keep the path, then ``(score, unit)`` pairs in ``order`` (best first) while they fit; with ``cut``
        (a prefix's plan and the importance the cursor's line changed), those scoring ``prefix_min_score``,
        then the first of them that maximize the expected F1 (:func:`~logmine.runtime.trim.score.expected_f1_cut`);
        else those scoring ``min_score``."""
        kept = set(path)
        used = path_tokens = sum(units[i].tokens for i in path)
        cut_start = None
        if used > budget:  # the cursor's unit alone is over budget: keep its last lines
            cursor = max(path)
            kept = {cursor}
            cut_start, used = self._tail(data, units[cursor], budget, {} if memo is None else memo)
        else:
            cap = self.config.max_kept or len(units)
            floor = self.config.min_score if cut is None else self.config.prefix_min_score
            smallest = cut[0].smallest if cut is not None else 0  # no candidate fits in less room
            picks: list[int] = []
            for s, i in order:
                if s < floor or len(picks) >= cap or budget - used < smallest:
                    break
                t = units[i].tokens
                if used + t <= budget:
                    picks.append(i)
                    used += t
            if cut is not None and len(picks) > 1:
                k = expected_f1_cut(picks, cut[0], cut[1], self.config.unseen_mass)
                for i in picks[k:]:
                    used -= units[i].tokens
                del picks[k:]
            kept.update(picks)
        ordered = sorted(kept)
        text = emit(data, units, ordered, cut_start)
        tkey = ("total", len(units), tuple(sorted(path)))
        other = memo.get(tkey) if memo is not None else None
        if other is None:
            other = sum(u.tokens for i, u in enumerate(units) if i not in path)
            if memo is not None:
                memo[tkey] = other
        return TrimResult(text, units, ordered, path, used, other + path_tokens)

    def _fill(self, data: bytes, units: list[Unit], path: set[int], order: Iterable[tuple[float, int]], budget: int,
              memo: dict) -> TrimResult:
        """``fill``: the path, the whole lines nearest the cursor within ``near_share`` of the budget (verbatim,
        a unit they start inside of cut there), then the best-scoring units while they fit."""
        path_tokens = sum(units[i].tokens for i in path)
        if path_tokens > budget:  # the cursor's unit alone is over budget: its last lines, as without fill
            return self._select(data, units, path, (), budget, memo)
        spans = [(units[i].start, units[i].end) for i in path]
        room = min(budget - path_tokens, int(self.config.near_share * budget))
        near_start = pos = data.rfind(b"\n") + 1
        used = path_tokens
        while pos > 0:
            start = data.rfind(b"\n", 0, pos - 1) + 1
            if not any(a <= start and pos <= b for a, b in spans):  # lines of the path cost nothing more
                t = self.count(data[start:pos].decode("utf-8", "replace"))
                if used - path_tokens + t > room:
                    break
                used += t
            near_start = pos = start
        kept = set(path) | {i for i, u in enumerate(units) if u.start >= near_start}
        for _, i in order:
            if i in kept:
                continue
            u = units[i]
            t = u.tokens if u.end <= near_start else self.count(data[u.start : near_start].decode("utf-8", "replace"))
            if used + t <= budget:
                kept.add(i)
                used += t
        ranges = sorted([(units[i].start, min(units[i].end, near_start)) for i in kept if units[i].start < near_start]
                        + [(near_start, len(data))])
        text = emit_ranges(data, ranges)
        ordered = sorted(kept)
        other = sum(u.tokens for i, u in enumerate(units) if i not in path)
        return TrimResult(text, units, ordered, path, used, other + path_tokens, near_start)

    def _lines(self, data: bytes, units: list[Unit], budget: int, from_end: bool) -> TrimResult:
        """The fallback without a grammar: whole lines nearest the cursor (the end, or the start) within budget."""
        order = range(len(units) - 1, -1, -1) if from_end else range(len(units))
        kept, used = [], 0
        for i in order:
            if used + units[i].tokens > budget:
                break
            kept.append(i)
            used += units[i].tokens
        kept.sort()
        path = {len(units) - 1} if from_end else set()
        if from_end and not kept:  # the cursor's line alone is over budget: its end
            return self._select(data, units, path, (), budget)
        text = data[units[kept[0]].start : units[kept[-1]].end].decode("utf-8", "replace") if kept else ""
        return TrimResult(text, units, kept, path & set(kept), used, sum(u.tokens for u in units))

    def _tail(self, data: bytes, u: Unit, budget: int, memo: dict) -> tuple[int, int]:
        """Start and tokens of the longest tail of whole lines of ``u`` (its last line at least) within budget."""
        cursor_line = max(u.start, data.rfind(b"\n", u.start, u.end) + 1)
        key = ("tail", u.start, cursor_line, budget)
        lines = memo.get(key)
        if lines is None:  # (line start, tokens from it to the cursor's line), nearest first
            lines, used, pos = [], 0, cursor_line
            while pos > u.start and used <= budget:  # lines past the budget are never kept
                start = max(u.start, data.rfind(b"\n", u.start, pos - 1) + 1)
                used += self.count(data[start:pos].decode("utf-8", "replace"))
                lines.append((start, used))
                pos = start
            memo[key] = lines
        last = self.count(data[cursor_line : u.end].decode("utf-8", "replace"))
        if last > budget:  # the cursor's line alone: its end
            return self._line_tail(data, cursor_line, u.end, budget)
        out = (cursor_line, last)
        for start, used in lines:
            if used + last > budget:
                break
            out = (start, used + last)
        return out

    def _head(self, data: bytes, units: list[Unit], path: set[int], budget: int) -> TrimResult:
        """The first whole lines of the suffix that fit (a cut first line when even it does not)."""
        pos, used = 0, 0
        while pos < len(data):
            nl = data.find(b"\n", pos)
            end = len(data) if nl < 0 else nl + 1
            t = self.count(data[pos:end].decode("utf-8", "replace"))
            if used + t > budget:
                break
            pos, used = end, used + t
        if pos == 0:  # the first line alone is over budget: its start
            lo, hi = 0, data.find(b"\n") if b"\n" in data else len(data)
            while lo < hi:
                mid = (lo + hi + 1) // 2
                if self.count(data[:mid].decode("utf-8", "ignore")) <= budget:
                    lo = mid
                else:
                    hi = mid - 1
            pos, used = lo, self.count(data[:lo].decode("utf-8", "ignore"))
        text = data[:pos].decode("utf-8", "ignore")
        return TrimResult(text, units, sorted(path), path, used, sum(u.tokens for u in units))

    def _line_tail(self, data: bytes, start: int, end: int, budget: int) -> tuple[int, int]:
        """The shortest start in ``[start, end)`` whose text up to ``end`` fits ``budget`` (binary search)."""
        lo, hi = start, end
        while lo < hi:
            mid = (lo + hi) // 2
            if self.count(data[mid:end].decode("utf-8", "replace")) <= budget:
                hi = mid
            else:
                lo = mid + 1
        while lo < end and data[lo] & 0xC0 == 0x80:  # not inside a UTF-8 sequence
            lo += 1
        return lo, self.count(data[lo:end].decode("utf-8", "replace"))

    def _body_uses(self, data: bytes, units: list[Unit], path: list[int], language: str | None,
                   stream: str | None = None) -> tuple[tuple, tuple, str]:
        """Identifiers of the complete lines among the last ``near_lines`` up to the cursor, of the rest of
        the cursor's unit and the headers around it, and the string/comment opener left open at its line.
        ``stream`` keys the uses of the rest of the cursor's unit, which mostly grows by a line per request."""
        cursor_line = data.rfind(b"\n") + 1
        cursor = units[path[-1]]
        start = nth_line_back(data, cursor_line, self.config.near_lines - 1)
        region = min(start, cursor.start)
        far, close = data[region:start].decode("utf-8", "replace"), data[start:cursor_line].decode("utf-8", "replace")
        text = far + close
        parts = code_only(far + "\x00" + close, language).split("\x00")
        if len(parts) != 2:  # the near lines start inside a string or comment: blank keeping offsets
            blank = blank_keeping_offsets(text, language)
            parts = [blank[: len(far)], blank[len(far) :]]
        near, whole = split_uses(parts[1]), self._far_uses(stream, language, parts[0])
        for i in path[:-1]:  # the headers around the cursor, less the names they define themselves
            head = uses(data[units[i].start : units[i].end].decode("utf-8", "replace"), language)
            whole = (whole[0] | (head[0] - units[i].defines), whole[1] | head[1])
        return near, whole, open_delimiter(text, language)

    def _far_uses(self, stream: str | None, language: str | None, code: str) -> tuple[set[str], set[str]]:
        """:func:`split_uses` of ``code``, reusing the uses of the stream's last such text up to its last
        newline when ``code`` starts with it (names and members never span a newline, so uses add up)."""
        if stream is None or not self.cache:
            return split_uses(code)
        prev = self.far_uses.pop(stream, None)
        if prev is not None and prev[0] == language and code.startswith(prev[1]):
            done, bare, attrs = prev[1], prev[2], prev[3]
        else:
            done, bare, attrs = "", set(), set()
        cut = code.rfind("\n", len(done)) + 1
        if cut > len(done):
            more = split_uses(code[len(done) : cut])
            done, bare, attrs = code[:cut], bare | more[0], attrs | more[1]
        self.far_uses[stream] = (language, done, bare, attrs)
        if len(self.far_uses) > 1024:
            self.far_uses.pop(next(iter(self.far_uses)))
        tail = split_uses(code[len(done) :])
        return bare | tail[0], attrs | tail[1]

    def _free(self, code: str, language: str | None, used: tuple[set[str], set[str]], recent_symbols: Sequence[str], budget: int,
              head_is_path: bool) -> TrimResult:
        data = code.encode("utf-8")
        if supported(language):
            body = data if data.endswith(b"\n") else data + b"\n"
            ol = outline(body, language, self.parser, None)
            units, _ = place_cursor(ol, body, len(body), self.count)
            units = [u for u in units if u.node_type != "cursor" and u.start < len(data)]
            units = [Unit(u.start, min(u.end, len(data)), u.kind, u.node_type, u.defines, u.tokens, u.members, u.idents)
                     for u in units]
            first_end = ol.first_end
        else:
            units = line_units(data, self.count)
            if units:
                return self._lines(data, units, budget, from_end=False)
        if not units:
            return TrimResult(code, [], [], set(), 0, 0)
        path: set[int] = set()
        if head_is_path:  # the rest of the block the cursor is in, else of its statement
            line_end = data.find(b"\n") if data.find(b"\n") >= 0 else len(data)
            path = {i for i, u in enumerate(units) if u.start < first_end} if first_end > 0 else (
                {0} if units[0].start < max(line_end, 1) else set())
            if sum(units[i].tokens for i in path) > budget:
                return self._head(data, units, path, budget)
        plan = Plan(opener="")
        c = self.config
        for i, u in enumerate(units):
            if i in path or not (u.defines or u.members):
                continue
            hit = references(u, *used)
            imp = KIND_WEIGHT.get(u.kind, 0.0) + (c.near_weight if hit else 0.0)
            plan.cand.append(i)
            plan.base[i] = (imp, 1.0 if hit else 0.0, 0.0)
            plan.near.add(i)
        plan.units = units
        scores = self.scores(plan, b"", language, 1.0, recent_symbols)
        return self._select(data, units, path, sorted(((s, i) for i, s in scores.items()), reverse=True), budget)

    def _remember(self, skey: tuple, res: TrimResult) -> None:
        """The symbols of the unit enclosing the cursor join the session's recently edited symbols."""
        names = sorted(res.units[max(res.path)].defines)
        if not names:
            return
        lst = [s for s in self.symbols.pop(skey, []) if s not in names] + names
        self.symbols[skey] = lst[-32:]
        if len(self.symbols) > 4096:
            self.symbols.popitem(last=False)


def _language(language: str | None, file_path: str | None) -> str | None:
    return resolve_language(language, file_path)


# -- module-level entry points ---------------------------------------------------------------------
_TRIMMERS: dict[TrimConfig, Trimmer] = {}


def _trimmer(config: TrimConfig | None) -> Trimmer:
    config = config or TrimConfig()
    t = _TRIMMERS.get(config)
    if t is None:
        t = _TRIMMERS[config] = Trimmer(config)
    return t


def trim(code: str, language: str | None, config: TrimConfig | None = None, recent_files: Sequence[str] = (),
         file_path: str | None = None, trimmer: Trimmer | None = None) -> TrimResult:
    """Keep the best units of a prefix context (cursor at the end) within ``config.budget_tokens``."""
    return (trimmer or _trimmer(config)).prefix(code, language, file_path, recent_files)


def trim_slots(requests: Iterable[Mapping[str, object]], config: TrimConfig | None = None,
               trimmer: Trimmer | None = None) -> list[TrimmedSlots]:
    """Trim the code slots of many requests, in order (sort by file and time for the best cache reuse).

    Each request maps ``slots`` (slot name -> value; ``prefix`` / ``suffix`` / ``declarations`` are
    trimmed, others pass through) or those three keys directly, and ``language``, ``file_path``,
    ``recent_files`` (from :func:`recent_files`) and ``session_id``.
    """
    t = trimmer or _trimmer(config)
    out = []
    for r in requests:
        slots = r.get("slots")
        values = dict(slots) if isinstance(slots, Mapping) else {
            k: r.get(k) for k in ("prefix", "suffix", "declarations") if r.get(k) is not None}
        out.append(t.slots(values, r.get("language"), r.get("file_path"), tuple(r.get("recent_files") or ()),
                           r.get("session_id")))
    return out


def recent_files(requests, events, k: int = 8, window_s: float = 1800.0):  # noqa: ANN001, ANN201 - Polars frames
    """Per request, the files its session edited or opened before it (most recent last, at most ``k``).

    ``requests`` needs ``request_id, session_id, ts``; ``events`` is the events table (actions
    ``file.open``, ``editor.*``, ``file.save``). Returns a LazyFrame ``request_id, recent_files``.
    """
    import polars as pl

    ev = (events.lazy().filter(pl.col("file_path").is_not_null()
                               & (pl.col("action").str.starts_with("editor.") | pl.col("action").is_in(["file.open", "file.save"])))
          .select("session_id", pl.col("ts").alias("ev_ts"), "file_path"))
    req = requests.lazy().select("request_id", "session_id", "ts")
    joined = (req.join(ev, on="session_id")
              .filter((pl.col("ev_ts") < pl.col("ts")) & (pl.col("ev_ts") >= pl.col("ts") - pl.duration(seconds=window_s)))
              .group_by("request_id", "file_path").agg(pl.col("ev_ts").max())
              .sort("ev_ts")
              .group_by("request_id", maintain_order=True).agg(pl.col("file_path").tail(k).alias("recent_files")))
    return req.select("request_id").join(joined, on="request_id", how="left").with_columns(
        pl.col("recent_files").fill_null(pl.lit([], dtype=pl.List(pl.String()))))
