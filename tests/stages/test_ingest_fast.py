"""The vectorised native reader yields exactly what the per-line reader yields, on any mix of
good and bad lines, at any chunk size; and every line is accounted for."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from logmine.formats import _base, native
from logmine.formats.native import fast as _native_fast
from logmine.formats.native.fast import EVENT_COLUMNS, REQUEST_COLUMNS
from logmine.formats.native.lines import _Lines

# -- values that probe every check: right and wrong types, edge numbers, odd strings -------------
_texts = st.one_of(
    st.sampled_from(["s-1", "alice", "5", "-3", "true", "false", "{x", "[1]", "", " ", "Python", " TS ", "golang",
                     "é", "\u2028", "a\\u0041", "null", "\x1f", "日本"]),
    st.text(max_size=6),
)
_numbers = st.one_of(
    st.integers(-10, 10**6), st.sampled_from([0.0, -0.0, 1.0, 1e20, 0.1, -5.5, 86_400_000.0, 86_400_001.0, 2**63, -(2**63)]),
    st.floats(allow_nan=False, allow_infinity=False, width=64),
)
_any_scalar = st.one_of(st.none(), st.booleans(), _numbers, _texts)
_attrs = st.one_of(
    st.none(), st.just({}), _any_scalar,
    st.dictionaries(st.sampled_from(["b", "a", "ts", "user_id", "k\u00e9"]),
                    st.one_of(_any_scalar, st.lists(_any_scalar, max_size=2), st.dictionaries(st.sampled_from(["z", "y"]), _any_scalar, max_size=2)),
                    max_size=3),
)
_ts = st.one_of(
    st.sampled_from([
        "2025-01-01T10:00:00Z", "2025-01-01T10:00:00.1Z", "2025-01-01T10:00:00.123456+05:30", "2025-01-01T10:00:00",
        "2025-01-01T10:00:00.1234567Z", "2025-02-30T00:00:00Z", "2025-01-01T24:00:00Z", "2025-01-01T10:00:60Z",
        "2025-01-01", "2025-01-01 10:00:00", "1999-12-31T23:59:59Z", "2099-12-31T23:30:00-01:00", "1735689600000",
        "20250101T100000", "garbage", "",
    ]),
    st.sampled_from([1735689600000, 1735689600123, 946684800000, 946684799999, 4102444799999, 4102444800000,
                     1735689600, 1735689600.5, 1735689600123456, 1735689600123456789, -1, 0, True]),
    st.integers(0, 5 * 10**12),
    _any_scalar,
)


@st.composite
def _record(draw: st.DrawFn) -> dict[str, object]:
    kind = draw(st.sampled_from(["event", "event", "llm_request", "llm_request", "other", None, 5]))
    obj: dict[str, object] = {}
    if kind is not None:
        obj["type"] = kind
    obj["ts"] = draw(_ts)
    keys = ["session_id", "user_id", "ide", "file_path", "language", "attrs"]
    keys += ["action", "event_id", "duration_ms"] if kind == "event" else [
        "kind", "request_id", "model", "prompt", "prefix", "suffix", "completion", "accepted", "ttft_ms", "total_ms",
        "prompt_tokens", "completion_tokens", "token_times_ms", "token_texts"]
    for key in draw(st.lists(st.sampled_from(keys), unique=True)):
        if key == "attrs":
            obj[key] = draw(_attrs)
        elif key == "kind":
            obj[key] = draw(st.one_of(st.sampled_from(["completion", "chat", "edit", "other", "", "bogus"]), _any_scalar))
        elif key in {"duration_ms", "ttft_ms", "total_ms"}:
            obj[key] = draw(st.one_of(_numbers, _any_scalar))
        elif key in {"prompt_tokens", "completion_tokens"}:
            obj[key] = draw(st.one_of(st.integers(-5, 10**9), _any_scalar))
        elif key == "accepted":
            obj[key] = draw(_any_scalar)
        elif key == "token_times_ms":
            obj[key] = draw(st.one_of(_any_scalar, st.lists(st.one_of(st.none(), _numbers), max_size=3)))
        elif key == "token_texts":
            obj[key] = draw(st.one_of(_any_scalar, st.lists(st.one_of(st.none(), _texts, _numbers), max_size=3)))
        else:
            obj[key] = draw(st.one_of(_texts, _texts, _any_scalar))
    if kind == "event" and "action" not in obj and draw(st.booleans()):
        obj["action"] = "file.save"
    return obj


_valid_texts = st.one_of(st.none(), _texts)
_valid_latency = st.one_of(st.none(), st.integers(0, 86_400_000), st.floats(0, 86_400_000), st.just(-0.0))


@st.composite
def _valid_record(draw: st.DrawFn) -> dict[str, object]:
    """Records the reader accepts, with values that look like other types (the fast path's traps)."""
    obj: dict[str, object] = {"ts": draw(st.one_of(st.integers(946684800000, 4102444799999), st.sampled_from([
        "2025-01-01T10:00:00Z", "2025-06-01T10:00:00.5+02:00", "2001-01-01T00:00:00", "2030-12-31T23:59:59.999999-11:30"])))}
    names = ["session_id", "user_id", "ide", "file_path", "language"]
    if draw(st.booleans()):
        obj.update(type="event", action=draw(_texts), event_id=draw(_valid_texts), duration_ms=draw(_valid_latency))
    else:
        obj.update(type="llm_request", kind=draw(st.sampled_from([None, "", "completion", "chat", "edit", "other"])),
                   accepted=draw(st.one_of(st.none(), st.booleans())), ttft_ms=draw(_valid_latency),
                   prompt_tokens=draw(st.one_of(st.none(), st.integers(0, 2**40))),
                   token_times_ms=draw(st.one_of(st.none(), st.lists(st.one_of(st.none(), st.floats(0, 1e7)), max_size=3))),
                   token_texts=draw(st.one_of(st.none(), st.lists(_texts, max_size=3))))
        names += ["request_id", "model", "prompt", "prefix", "suffix", "completion"]
    for name in draw(st.lists(st.sampled_from(names), unique=True)):
        obj[name] = draw(_valid_texts)
    if draw(st.booleans()):
        obj["attrs"] = draw(st.dictionaries(st.sampled_from(["b", "a", "n\u00e9"]),
                                            st.one_of(st.none(), st.booleans(), _numbers, _texts), max_size=3))
    return obj


def _serialise(obj: dict[str, object], style: str) -> bytes:
    if style == "orjson":
        return orjson.dumps(obj)
    if style == "json":  # spaces after separators, non-ASCII escaped as \\uXXXX
        return json.dumps(obj).encode()
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


_bad_lines = st.sampled_from([
    b"", b"   ", b"\t", b"{", b"not json", b"[1, 2]", b"5", b"null", b'"text"', b'{"type": "event"} trailing',
    b'{"type":"event","ts":"2025-01-01T00:00:00Z","action":"a\xff"}', b"\xef\xbb\xbf{}", b'{"a":1}{"b":2}',
    b'{"type":"event","ts":"2025-01-01T00:00:00Z","action":"\\ud800"}', b'{"type":"event","ts":1735689600000,"action":"x\x01"}',
    b'{"type":"event","ts":"2025-01-01T00:00:00Z","action":"ok"}\r', b'{"type":"event","ts":1.5e400,"action":"a"}',
    b'{"type":"event","ts":"2025-01-01T00:00:00Z","action":"x","zz":[1,{"q":"\\ud83d\\ude00"}]}',
    b'  {"type" : "event", "ts" : 1735689600000 , "action" : "spaced"}  ',
    b'{"type":"llm_request","ts":"2025-01-01T00:00:00Z","prompt_tokens":1e2}',
    b'{"type":"event","ts":"2025-01-01T00:00:00Z","action":"nested","attrs":{"ts":"x","user_id":5}}',
    b'{"type":"event","ts":"2025-01-01T00:00:00Z","act\\u0069on":"escaped key"}',
    b'{"type":"event","ts":"2025-01-01T00:00:00Z","action":"x","user_id":5}',
    b'{"type":"event","t\\u0073":1735689600000,"action":"escaped ts"}',
])
_styles = st.sampled_from(["orjson", "json", "utf8"])
_line = st.one_of(
    st.tuples(_record(), _styles).map(lambda t: _serialise(*t)),
    st.tuples(_valid_record(), _styles).map(lambda t: _serialise(*t)),
    _bad_lines,
)


def _collect(batches) -> tuple[pl.DataFrame, pl.DataFrame, list[object], int, int]:  # noqa: ANN001
    events, requests = [pl.DataFrame(schema=EVENT_COLUMNS)], [pl.DataFrame(schema=REQUEST_COLUMNS)]
    rejects, read, accepted = [], 0, 0
    for b in batches:
        events.append(b.events if isinstance(b.events, pl.DataFrame) else pl.DataFrame(b.events, schema=EVENT_COLUMNS, strict=False))
        requests.append(b.requests if isinstance(b.requests, pl.DataFrame) else pl.DataFrame(b.requests, schema=REQUEST_COLUMNS, strict=False))
        rejects += b.rejects
        read += b.lines_read
        accepted += b.lines_accepted
    ev = pl.concat(events).select(list(EVENT_COLUMNS))
    rq = pl.concat(requests).select(list(REQUEST_COLUMNS))
    return ev, rq, rejects, read, accepted


def _compare(path: Path, chunk_bytes: int) -> tuple[pl.DataFrame, pl.DataFrame, list[object], int, int]:
    slow = _collect(native.read_per_line(path))
    fast = _collect(_native_fast.read(path, chunk_bytes))
    assert_frame_equal(fast[0], slow[0])
    assert_frame_equal(fast[1], slow[1])
    assert fast[2] == slow[2]
    assert fast[3:] == slow[3:]
    return fast


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(lines=st.lists(_line, max_size=40), chunk_bytes=st.sampled_from([64, 700, 1 << 20]),
       newline=st.sampled_from([b"\n", b"\r\n"]), final_newline=st.booleans())
def test_fast_path_equals_per_line_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, lines: list[bytes],
                                        chunk_bytes: int, newline: bytes, final_newline: bool) -> None:
    monkeypatch.setattr(_native_fast, "MIN_FAST_LINES", 2)
    path = tmp_path / "mixed.jsonl"
    data = newline.join(lines) + (newline if final_newline and lines else b"")
    path.write_bytes(data)
    ev, rq, rejects, read, accepted = _compare(path, chunk_bytes)
    assert read == data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    assert read == accepted + len(rejects)
    assert ev.height + rq.height == accepted
    assert len({r.source_line for r in rejects}) == len(rejects)


def test_after_a_chunk_with_bad_lines_the_next_is_sifted_before_its_parse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A chunk that had lines Polars cannot parse makes the next one set its suspects aside first;
    a clean chunk read that way turns it off again. Rows, rejects and counts stay those per line."""
    good = b'{"type":"event","ts":"2025-01-01T00:00:00Z","action":"file.save"}'
    bad = {"cut": b'{"type":"event","ts":"2025-01-01T00:0', "wrong type": b'{"type":"llm_request","ts":1735689600000,"ttft_ms":"x"}',
           "not utf-8": b'{"type":"event","ts":"2025-01-01T00:00:00Z","action":"\xff"}'}
    chunks = [[good] * 5 + [bad["cut"]], [good] * 6, [good] * 5 + [bad["wrong type"]], [bad["not utf-8"]] + [good] * 5, [good] * 6]
    path = tmp_path / "dirty.jsonl"
    path.write_bytes(b"".join(line + b"\n" for chunk in chunks for line in chunk))
    first_parse = []
    sift = _native_fast._Chunk._sift
    monkeypatch.setattr(_native_fast._Chunk, "_sift", lambda self, lines, numbers, parsed=True: (first_parse.append(parsed), sift(self, lines, numbers, parsed))[1])
    chunk_bytes = len(good) * 6 + 30  # about one list a chunk
    ev, _, rejects, read, accepted = _compare(path, chunk_bytes)
    assert read == 30 and accepted == 27 and len(rejects) == 3
    assert False in first_parse  # some chunk was sifted before any parse of it


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sizes=st.lists(st.sampled_from([0, 5, 99, 100, 101, 250]), min_size=1, max_size=6),
       fill=st.sampled_from([b"x", b" ", b"\r"]), tail=st.sampled_from([b"", b"\r", b"\r\r"]))
def test_long_lines_are_streamed_like_per_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sizes: list[int],
                                               fill: bytes, tail: bytes) -> None:
    monkeypatch.setattr(_base, "MAX_LINE_BYTES", 100)
    monkeypatch.setattr(_native_fast, "MAX_LINE_BYTES", 100)
    good = b'{"type":"event","ts":1735689600000,"action":"a"}'
    path = tmp_path / "long.jsonl"
    path.write_bytes(b"\n".join(good + b"\n" + fill * n + tail for n in sizes))
    _compare(path, 16)


_ATTRS_TRAPS = {
    "multibyte before the key": '{"p":"ééééé","attrs":{"k":{}}}',
    "braces inside a string": '{"p":"é","attrs":{"k":"x: {}"}}',
    "closing brace in a value": '{"attrs":{"a":"}"}}',
    "opening brace in a value": '{"attrs":{"a":"{"}}',
    "brace before the key": '{"p":"{","attrs":{"a":1}}',
    "nested, not top level": '{"x":{"attrs":{"a":1}}}',
    "escaped quote before": '{"\\"attrs":{"a":1}}',
    "key text inside a string": '{"a":"\\"attrs\\":{}","attrs":{"b":2}}',
    "attrs as a value": '{"ide":"attrs","attrs":{"c":3}}',
    "repeated key": '{"attrs":{"a":1},"attrs":{"b":2}}',
    "key spelt with an escape": '{"attr\\u0073":{"z":1},"attrs":{"a":1}}',
    "leading space": ' {"attrs":{"a":1}}',
    "spaces and a list": '{"attrs" : { "b" : [1, 2] , "a" : null } }',
    "empty": '{"attrs":{}}',
    "not an object": '{"attrs":"{}"}',
    "unicode escape elsewhere": '{"t":"\\u00e9","attrs":{"b":1,"a":1.50}}',
}


@pytest.mark.parametrize("chunk_bytes", [64, 1 << 20], ids=["a chunk a line", "one chunk"])
@pytest.mark.parametrize("attrs_line", list(_ATTRS_TRAPS.values()), ids=list(_ATTRS_TRAPS))
def test_attrs_cut_out_of_the_line_equal_per_line(tmp_path: Path, attrs_line: str, chunk_bytes: int) -> None:
    """The fast path cuts a flat top-level ``attrs`` object out of the line (and caches its canonical
    text across chunks); any line where that is not surely the top-level value is parsed whole, like
    per line."""
    head = '{"type":"event","ts":"2025-01-01T00:00:00Z","action":"a",'
    line = head + attrs_line.lstrip()[1:] if attrs_line.lstrip().startswith("{") else attrs_line
    path = tmp_path / "attrs.jsonl"
    path.write_text("\n".join([line, line.replace('"a",', '"b",', 1)] * 3) + "\n", encoding="utf-8")
    ev, _, rejects, read, accepted = _compare(path, chunk_bytes)
    assert read == 6
    assert accepted + len(rejects) == 6
    expected = orjson.loads(line).get("attrs")
    if isinstance(expected, dict):
        assert ev["attrs"].to_list() == [orjson.dumps(expected, option=orjson.OPT_SORT_KEYS).decode() if expected else None] * 6


_Z_TIMES = [
    "2025-03-03T08:00:00.123Z", "2025-03-03T08:00:00Z", "2024-02-29T23:59:59.999999Z", "2000-02-29T00:00:00.5Z",
    "2023-02-29T00:00:00Z", "2100-02-29T00:00:00Z", "2025-04-31T00:00:00Z", "2025-01-01T24:00:00Z", "2025-01-01T10:60:00Z",
    "2025-01-01T10:00:60Z", "2025-00-10T00:00:00Z", "2025-13-01T00:00:00Z", "2025-01-00T00:00:00Z", "2025-01-01T10:00:00.Z",
    "2025-01-01T10:00:00.1234567Z", "2025-01-01T10:00:00.12a4Z", "1999-12-31T23:59:59.999999Z", "2099-12-31T23:59:59.9Z",
    "2100-01-01T00:00:00Z", "2025-01-01T10:00:00z", "2025-01-01t10:00:00Z", "2025-1-01T10:00:00.00Z", "+025-01-01T10:00:00Z",
    "2025-01-01T10:00:00\\u005a", "2025-01-01T10:00:00.5+00:00", "0000-01-01T00:00:00Z",
]


def test_z_times_parsed_with_numpy_equal_per_line(tmp_path: Path) -> None:
    """The numpy parser of ``...Z`` times accepts exactly the real dates and times, to the microsecond."""
    path = tmp_path / "times.jsonl"
    lines = [f'{{"type":"event","ts":"{ts}","action":"a"}}' for ts in _Z_TIMES]
    path.write_text("\n".join(lines * 2) + "\n", encoding="utf-8")
    ev, _, rejects, read, _ = _compare(path, 1 << 20)
    assert read == 2 * len(_Z_TIMES)
    accepted = [ts for ts in _Z_TIMES if _parses(orjson.loads(f'"{ts}"'))]
    assert len(accepted) > len(_Z_TIMES) // 3
    assert ev.height == 2 * len(accepted)
    assert len(rejects) == 2 * (len(_Z_TIMES) - len(accepted))


def _parses(ts: str) -> bool:
    try:
        _base.parse_ts(ts)
    except _base.RecordError:
        return False
    return True


@settings(max_examples=120, deadline=None)
@given(values=st.lists(st.one_of(st.none(), _texts, st.text(max_size=30), st.text("0123456789.eE+-abf", max_size=16), st.sampled_from(
    ["-1e5x", "tru", "{}", "[", "12345678901234", "3fa2c0de-1b2c-4d5e-8f90-123456789abc", "12e4", "1-2", "-", "9", "1234567890123x", "0.5e+"])),
                       max_size=40), offset=st.integers(0, 3))
def test_suspect_rows_match_the_regex(values: list[str | None], offset: int) -> None:
    """The prefilter on the Arrow string views' first bytes (short texts inline, long ones by prefix,
    sliced series included) finds exactly the rows the regex finds."""
    series = pl.Series(values, dtype=pl.String()).slice(offset)
    expected = series.str.contains(_native_fast._SUSPECT).fill_null(False).arg_true().to_list()
    assert _native_fast._suspect_rows(series).tolist() == expected


_UTF8_EDGES = [b"\xed\xa0\x80", b"\xc0\xaf", b"\xf4\x90\x80\x80", b"\xe2\x82", b"\xf0\x9f\x98\x80", b"\xc3\xa9", b"\xef\xbb\xbf"]
"""A surrogate, an overlong slash, a code point past U+10FFFF, a cut sequence, then valid ones."""


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(st.one_of(st.binary(max_size=12), st.sampled_from(_UTF8_EDGES), st.just(b"x\n")), max_size=12),
       arrow_names_lines=st.booleans())
def test_invalid_utf8_lines_are_the_lines_python_cannot_decode(parts: list[bytes], arrow_names_lines: bool) -> None:
    """Found from the lines Arrow's error names, or, should its message change, by decoding each line."""
    data = b"".join(parts)
    lines = _Lines(data)
    if not arrow_names_lines:
        lines._invalid_named = lambda: lines._invalid_decoded(0, [])  # type: ignore[method-assign]
    expected = []
    for i in range(lines.count):
        try:
            data[int(lines.starts[i]):int(lines.ends[i])].decode()
        except UnicodeDecodeError:
            expected.append(i)
    assert lines.invalid_utf8().tolist() == expected


def test_suspect_rows_of_many_number_like_ids_match_the_regex() -> None:
    """Past a few thousand texts that open with a digit (hex ids), the regex reads them all at once: same rows."""
    import random

    rng = random.Random(5)
    values = [rng.choice([f"{rng.getrandbits(64):016x}", str(rng.randrange(10**6)), "1e5", "true", "[x", "9abc", None])
              for _ in range(5_000)]
    series = pl.Series(values, dtype=pl.String())
    expected = series.str.contains(_native_fast._SUSPECT).fill_null(False).arg_true().to_list()
    assert len(expected) > 1_000
    assert _native_fast._suspect_rows(series).tolist() == expected
