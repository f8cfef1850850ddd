"""Masking rules: the values of a log line (numbers, ids, addresses, paths, ...) as data.

A rule is ``{"pattern": <regex>, "mask_with": <NAME>}``; it matches only where a word starts
(not right after a letter, digit or underscore), so ``abc123`` is one value, never ``abc<*>``. :class:`Masker` compiles an ordered list
of rules into one alternation (earlier rules win where two match at the same place) and
replaces every match by ``<*>`` (or ``<NAME>`` with ``typed=True``). The default rules work
across systems; a user adds rules in front of them from a JSON file (:func:`load_rules`).

Masking is idempotent: a masked text has nothing left that a rule would mask again.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from functools import cached_property
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from logmine.errors import InputPathError, OptionError

WILDCARD = "<*>"


class MaskRule(BaseModel):
    """One masking rule, as read from a user file."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    pattern: str = Field(description="a Python regular expression; its whole match is masked")
    mask_with: str = Field("*", pattern=r"^[A-Za-z_*][A-Za-z0-9_]*$", description="the value's kind, shown as <NAME> with typed masks")

    @field_validator("pattern")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            rx = re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a valid regular expression: {exc}") from exc
        if rx.match(""):
            raise ValueError("the pattern matches the empty string")
        return value


class MaskRuleFile(BaseModel):
    """A user's masking file: ``{"rules": [...], "replace_defaults": false}``."""

    model_config = ConfigDict(extra="forbid")
    rules: list[MaskRule]
    replace_defaults: bool = Field(False, description="use only these rules, not logmine's defaults")


_NOT_WORD_BEFORE = r"(?<![A-Za-z0-9_])"
_WORD_START = _NOT_WORD_BEFORE
_NOT_WORD_AFTER = r"(?![A-Za-z0-9_])"
MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
WEEKDAY = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"

DEFAULT_RULES: tuple[MaskRule, ...] = tuple(
    MaskRule(pattern=p, mask_with=n)
    for n, p in (
        ("URL", r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*+://[^\s\"'<>`]+"),
        ("EMAIL", r"(?<![\w.+-])[\w.+-]++@[\w-]+(?:\.[\w-]+)+"),
        ("UUID", r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"),
        ("TIMESTAMP", r"(?<!\d)\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?"),
        # a date written with its month's name, and its time: ctime (Sat Jun 18 02:08:09 2005), syslog
        # (Jun 18 02:08:09), `date` (Sat Jun 18 02:08:09 UTC 2005); its weekday and month are no words of an event
        ("TIMESTAMP", rf"(?:{WEEKDAY},? )?{MONTH} +\d{{1,2}}(?:,? \d{{4}})? \d{{2}}:\d{{2}}:\d{{2}}(?:[.,]\d+)?"
                      rf"(?: [A-Z]{{3,4}}(?= \d{{4}}))?(?: \d{{4}})?" + _NOT_WORD_AFTER),
        ("IP", r"(?<![\d.])\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?(?![\d.])"),
        ("MAC", r"(?<![\w:])(?:[0-9a-fA-F]{2}:){5}[0-9a-fA-F]{2}(?![\w:])"),
        ("HEX", r"\b0[xX][0-9a-fA-F]++\b"),
        ("HEX", r"\b(?=[a-fA-F]*+\d)(?=[0-9]*+[a-fA-F])[0-9a-fA-F]{8,}+\b"),
        ("PATH", r"(?<![\w/.~<>*-])(?:/[\w.@+~-]+){2,}/?"),
        # a relative path to a file: two or more parts and an extension (src/app/main.py)
        ("PATH", r"(?<![\w/.~<>*-])[\w.-]++(?:/[\w.@+~-]+)+\.[A-Za-z][A-Za-z0-9]{0,7}(?![\w/])"),
        ("BOOL", r"(?<![\w-])(?:true|false|null)(?![\w-])"),
        # a number, with a byte unit when it has one ("5.2 KB")
        ("NUM", _NOT_WORD_BEFORE + r"[-+]?\d+(?:\.\d+)*(?: ?(?:[KMGTP]i?B|B|bytes)\b)?" + _NOT_WORD_AFTER),
        # any other word holding a digit, except a name with a short version number (en0, ssh2, IPv6)
        ("ID", _NOT_WORD_BEFORE + r"(?![A-Za-z]+\d{1,2}" + _NOT_WORD_AFTER + r")[A-Za-z0-9_]*\d[A-Za-z0-9_]*"),
    )
)
"""logmine's rules, most specific first; one set for every system (no per-dataset tuning)."""
_DEFAULT_SET = frozenset(DEFAULT_RULES)


_CROSS_SPACE = re.compile(r"\d (?:\d{2}:|[KMGTP]i?B\b|B\b|bytes\b)")
"""Where a default rule may match across a space: a date and its time, a number and its unit."""
_CLASS = re.compile(r"\[(?!\^)(?:\\.|[^\]\\])*\]")
_SPACEY = re.compile(r"\\[sWDuUNx0-7ntrfv]|\[\^| |\(\?[a-zA-Z]*[sx]|(?<!\\)\.")
_SPACEY_IN_CLASS = re.compile(r"\\[sWDuUNx0-7ntrfv]| ")


def matches_no_whitespace(rule: MaskRule) -> bool:
    """Whether ``rule`` can never match whitespace (read conservatively: no ``\\s``, ``.``,
    negated class, space or escape that might be one). The default rules are known: two of them
    cross a space, which :class:`Masker` checks for itself."""
    if rule in _DEFAULT_SET:
        return True
    plain = _CLASS.sub(lambda m: " " if _SPACEY_IN_CLASS.search(m.group(0)[1:-1]) else "", rule.pattern)
    return _SPACEY.search(plain) is None


DIGIT_SHAPE = bytes.maketrans(b"23456789", b"11111111")
"""The digit shape of a text (every ASCII digit 1-9 written 1; 0 stays, since the HEX rule's ``0x``
prefix tells 0 from the other digits) is its UTF-8 bytes translated by this
table (:func:`digit_shape`): 20x faster than ``str.translate``, and UTF-8 writes no other
character with a digit's byte."""
ANY_DIGIT_SHAPE = bytes.maketrans(b"023456789", b"111111111")
"""Every ASCII digit written 1, 0 included: the shape table of untyped masks (:attr:`Masker.shape_table`).
Only the HEX rule tells 0 apart (``0x1f``), and what it masks the ID rule masks too, over the same
extent (a word holding a digit): both write ``<*>``; typed masks (``<HEX>``, ``<ID>``) keep 0 apart."""
_QUANTIFIER = re.compile(r"\{\d+(?:,\d*)?\}")
_ANY_DIGIT = re.compile(r"\d")
_ASCII_DIGIT = re.compile(r"[0-9]")


def digit_shape(text: str) -> bytes:
    """``text`` with every ASCII digit 1-9 written 1, as UTF-8 bytes (lone surrogates kept)."""
    return text.encode("utf-8", "surrogatepass").translate(DIGIT_SHAPE)


def digit_blind(rule: MaskRule) -> bool:
    """Whether ``rule`` treats the digits 1-9 alike and 0 apart at most (the defaults' HEX ``0x``;
    read conservatively for a user's rule: no digit in its pattern
    but in ``\\d``-like escapes, ``0-9`` ranges and ``{m,n}`` counts), so it matches a text and
    the text's digit shape at the same places."""
    if rule in _DEFAULT_SET:
        return True
    plain = _QUANTIFIER.sub("", rule.pattern.replace("0-9", ""))
    return _ANY_DIGIT.search(plain) is None


class Masker:
    """Replaces every match of the rules by a wildcard (``<*>``, or ``<NAME>`` when ``typed``).

    :meth:`mask_words` and :meth:`mask_lines` mask a text piece by piece (its words, or its
    lines) with the masked pieces remembered (``cache_size`` of them): a piece no rule can match
    across is masked the same alone, and pieces recur far more than whole texts."""

    def __init__(self, rules: Sequence[MaskRule] = DEFAULT_RULES, typed: bool = False, cache_size: int = 200_000) -> None:
        self.rules = tuple(rules)
        self.typed = typed
        self.cache_size = cache_size
        self._pieces: dict[str, str] = {}

    @cached_property
    def _regex(self) -> re.Pattern[str] | None:
        if not self.rules:
            return None
        # One guard in front of the alternation: positions inside a word fail at once instead of
        # trying every rule (about 2x faster on log lines).
        return re.compile(_WORD_START + "(?:" + "|".join(f"(?P<m{i}>{r.pattern})" for i, r in enumerate(self.rules)) + ")")

    def _typed(self, match: re.Match[str]) -> str:
        name = self.rules[int(match.lastgroup[1:])].mask_with  # type: ignore[index]
        return WILDCARD if name == "*" else f"<{name}>"

    def mask(self, text: str) -> str:
        """``text`` with every value masked."""
        rx = self._regex
        if rx is None:
            return text
        return rx.sub(self._typed if self.typed else WILDCARD, text)

    @cached_property
    def wildcards(self) -> frozenset[str]:
        """The whole-token masks this masker writes: ``<*>``, and ``<NAME>`` per rule when typed."""
        names = {WILDCARD}
        if self.typed:
            names |= {f"<{r.mask_with}>" for r in self.rules if r.mask_with != "*"}
        return frozenset(names)

    @cached_property
    def _mask_token(self) -> re.Pattern[str]:
        masks = "|".join(re.escape(w) for w in sorted(self.wildcards))
        return re.compile(rf"(?:{masks})(?:[,;:./_|=+-]+(?:{masks}))+")

    def collapse(self, text: str) -> str:
        """Turn masks joined by separators (``<*>,<*>``, ``<*>:<*>:<*>``) into one mask, so a list
        of values and a single value fill the same slot."""
        if text.count("<") < 2:  # a join needs two masks
            return text
        if not self.typed:
            return self._mask_token.sub(WILDCARD, text)

        def one(match: re.Match[str]) -> str:
            found = {w for w in self.wildcards if w in match.group(0)}
            return found.pop() if len(found) == 1 else WILDCARD

        return self._mask_token.sub(one, text)

    @cached_property
    def digit_blind(self) -> bool:
        """Whether every rule treats the digits alike, 0 apart at most (:func:`digit_blind`): a text whose
        digit shape masks to a text with no digit left then masks to that same text."""
        return all(digit_blind(r) for r in self.rules)

    @cached_property
    def shape_table(self) -> bytes:
        """The table a text's digit shape is made with, when :attr:`digit_blind`: every digit alike for
        untyped masks (:data:`ANY_DIGIT_SHAPE`), 0 apart for typed ones (:data:`DIGIT_SHAPE`)."""
        return DIGIT_SHAPE if self.typed else ANY_DIGIT_SHAPE

    @cached_property
    def piecewise(self) -> bool:
        """Whether texts may be masked piece by piece (no rule matches whitespace, except the
        default rules' date-time and number-unit pairs, which send their text to :meth:`mask`)."""
        return self.cache_size > 0 and all(matches_no_whitespace(r) for r in self.rules)

    def masked(self, text: str) -> str:
        """``text`` masked and collapsed (:meth:`mask` then :meth:`collapse`)."""
        return self.collapse(self.mask(text))

    def _piece(self, piece: str) -> str:
        out = self._pieces.get(piece)
        if out is None:
            out = self.collapse(self.mask(piece))
            if len(self._pieces) >= self.cache_size:
                self._pieces.clear()
            self._pieces[piece] = out
        return out

    def _word(self, word: str) -> str:
        """A word not remembered: masked by way of its digit shape when the rules allow (a new
        number of a known shape costs no regex), else by itself."""
        if not self.digit_blind:
            return self._piece(word)
        shape = word.encode("utf-8", "surrogatepass").translate(self.shape_table).decode("utf-8", "surrogatepass")
        out = self._piece(shape)
        return self._piece(word) if _ASCII_DIGIT.search(out) else out

    def mask_words(self, text: str) -> list[str]:
        """The masked words of ``text`` (split at whitespace runs), as ``masked(text).split()``."""
        if not self.piecewise or _CROSS_SPACE.search(text):
            return self.masked(text).split()
        get, word = self._pieces.get, self._word
        return [get(w) or word(w) for w in text.split()]

    def mask_words_by_shape(self, text: str, shape_words: list[str]) -> list[str]:
        """``mask_words(text)``, given ``shape_words``: the masked words of ``text``'s digit shape
        (:attr:`shape_table`). A word whose shape masks with no digit left masks to that (the rules
        treat digits alike, :attr:`digit_blind`); only the others are masked again, as they are."""
        if not self.digit_blind or not self.piecewise or _CROSS_SPACE.search(text):
            return self.mask_words(text)
        piece = self._piece
        return [s if _ASCII_DIGIT.search(s) is None else piece(w) for s, w in zip(shape_words, text.split())]

    def mask_lines(self, text: str) -> str:
        """``masked(text)``, worked out line by line."""
        if not self.piecewise or "\n" not in text:
            return self.masked(text)
        piece = self._piece
        return "\n".join(piece(line) for line in text.split("\n"))

    def __getstate__(self) -> dict[str, object]:  # compiled patterns are rebuilt, not copied
        return {"rules": self.rules, "typed": self.typed, "cache_size": self.cache_size}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__init__(state["rules"], state["typed"], state.get("cache_size", 200_000))  # type: ignore[misc, arg-type]


def build_rules(extra: Iterable[MaskRule | dict[str, str]] = (), use_defaults: bool = True) -> tuple[MaskRule, ...]:
    """The user's rules (first, so they win) followed by the defaults."""
    rules = tuple(r if isinstance(r, MaskRule) else MaskRule.model_validate(r) for r in extra)
    return rules + (DEFAULT_RULES if use_defaults else ())


def load_rules(source: Path | str) -> tuple[MaskRule, ...]:
    """The rules to use, the defaults included unless replaced, from a masking file or from the
    same JSON given inline (a list of rules, or ``{"rules": [...], "replace_defaults": bool}``).

    A text that opens with ``[`` or ``{`` and names no file is read as the JSON itself, so
    ``--mask-rules '[{"pattern": "req-[0-9]+", "mask_with": "REQ"}]'`` works as a file would.
    """
    text = str(source)
    if isinstance(source, str) and text.lstrip()[:1] in ("[", "{") and not Path(text).exists():
        try:
            raw = json.loads(text)
        except ValueError as exc:
            raise OptionError("--mask-rules", _clip(text), f"inline rules are not valid JSON: {exc}") from exc
        shown = _clip(text)
    else:
        path = Path(source)
        try:
            raw = json.loads(path.read_text())
        except FileNotFoundError as exc:
            raise InputPathError(path, "does not exist (--mask-rules takes a JSON file or the rules inline as JSON)") from exc
        except (OSError, ValueError) as exc:
            raise InputPathError(path, f"not a readable JSON file ({exc})") from exc
        shown = str(path)
    if isinstance(raw, list):
        raw = {"rules": raw}
    try:
        spec = MaskRuleFile.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise OptionError("--mask-rules", shown, f"{where}: {first['msg']}") from exc
    return build_rules(spec.rules, use_defaults=not spec.replace_defaults)


def _clip(text: str, width: int = 60) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
