"""The ingest stage: line accounting, file-level rejects, incremental runs, pseudonymisation."""

from __future__ import annotations

import gzip
import json
import logging
import os
import shutil
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ingest_helpers import TABLES, assert_same_tables, event, request, table_contents, write_lines

import logmine
from logmine.errors import InputPathError, OptionError, WorkspaceLockedError
from logmine.records import EVENTS_SCHEMA
from logmine.stages.ingest.writer import PartitionWriter, Pseudonyms
from logmine.pseudonyms import pseudonym
from logmine.stages.ingest import IngestConfig, IngestReport
from logmine.workspace import Workspace

# Bad native lines, each with the reason prefix its reject must carry.
BAD_LINES = [
    (b"", "missing_field"),
    (b"   ", "missing_field"),
    (b'{"type":"event","ts":', "malformed_json"),
    (b"not json at all", "malformed_json"),
    (b'{"type":"event","ts":"2025-03-03T10:00:00Z","action":"caf\xe9"}', "invalid_utf8"),
    (b"[1, 2, 3]", "wrong_type"),
    (b'{"type":"event","ts":"2025-03-03T10:00:00Z","action":5}', "wrong_type"),
    (b'{"type":"event","ts":"2025-03-03T10:00:00Z"}', "missing_field"),
    (b'{"type":"event","action":"file.save"}', "missing_field"),
    (b'{"type":"event","ts":"2025-03-03T10:00:00Z","action":"x","duration_ms":-5}', "absurd_value"),
    (b'{"type":"event","ts":"1970-01-01T00:00:00Z","action":"x"}', "absurd_value"),
    (b'{"type":"event","ts":"2999-01-01T00:00:00Z","action":"x"}', "absurd_value"),
    (b'{"type":"llm_request","ts":1741000000000,"ttft_ms":-1}', "absurd_value"),
    (b'{"type":"llm_request","ts":1741000000000,"prompt_tokens":"many"}', "wrong_type"),
    (b'{"type":"llm_request","ts":1741000000000,"kind":"shout"}', "wrong_type"),
    (b'{"type":"telemetry","ts":1741000000000}', "unknown_record"),
    (b'{"type":"event","ts":"2025-03-03T10:00:00Z","action":"x","user_id":42}', "wrong_type"),
]
_good = st.integers(0, 10_000).flatmap(lambda i: st.sampled_from([event(i), request(i)]))
_line = st.one_of(_good.map(lambda b: (b, None)), st.sampled_from(BAD_LINES))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(lines=st.lists(_line, min_size=1, max_size=60))
def test_every_line_is_accounted_for_and_each_bad_line_is_one_reject(tmp_path_factory: pytest.TempPathFactory,
                                                                     lines: list[tuple[bytes, str | None]]) -> None:
    root = tmp_path_factory.mktemp("acct")
    path = write_lines(root / "logs" / "mixed.jsonl", [raw for raw, _ in lines])
    report = logmine.ingest([root / "logs"], root / "ws", IngestConfig(input_format="native"))
    assert isinstance(report, IngestReport)
    [source] = table_contents(root / "ws", "sources").to_dicts()
    bad = {n: reason for n, (_, reason) in enumerate(lines, start=1) if reason is not None}
    assert source["lines_read"] == len(lines) == source["lines_accepted"] + source["lines_rejected"]
    assert source["lines_rejected"] == len(bad)
    rejects = table_contents(root / "ws", "rejects")
    assert rejects["source_line"].to_list() == sorted(bad)
    assert set(rejects["source_file"]) <= {str(path)} and set(rejects["source_format"]) <= {"native"}
    assert rejects["reason"].to_list() == [bad[n] for n in sorted(bad)]
    rows = table_contents(root / "ws", "events").height + table_contents(root / "ws", "llm_requests").height
    assert rows == source["lines_accepted"] == report.lines_accepted


@pytest.mark.parametrize("fast", ["0", "1"], ids=["per-line", "fast"])
def test_a_reject_keeps_its_code_its_detail_and_the_whole_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fast: str) -> None:
    monkeypatch.setenv("LOGMINE_NATIVE_FAST", fast)
    long_bad = b'{"type":"event","ts":"2025-03-03T10:00:00Z","action":"' + "é".encode() * 1500 + b'","duration_ms":-5}'
    not_utf8 = b'{"type":"event","ts":"2025-03-03T10:00:00Z","action":"caf\xe9"}'
    write_lines(tmp_path / "logs" / "a.jsonl", [event(i) for i in range(30)] + [long_bad, not_utf8, b"{oops"])
    logmine.ingest(tmp_path / "logs", tmp_path / "ws")
    rows = table_contents(tmp_path / "ws", "rejects").to_dicts()
    assert [(r["source_line"], r["reason"], r["detail"]) for r in rows] == [
        (31, "absurd_value", "field 'duration_ms' = -5.0 is not a plausible latency in ms"),
        (32, "invalid_utf8", "invalid UTF-8 at byte 57"),
        (33, "malformed_json", "unexpected character, expected a string key"),
    ]
    assert [r["raw_full"] for r in rows] == [long_bad, not_utf8, b"{oops"]  # whole, byte for byte
    assert [r["raw_bytes"] for r in rows] == [len(long_bad), len(not_utf8), 5]
    assert rows[0]["raw"] == long_bad[:1024].decode("utf-8", "replace") and len(long_bad) > 3000
    con = Workspace.open(tmp_path / "ws").connect()
    assert con.execute("SELECT reason, count(*) FROM rejects GROUP BY 1 ORDER BY 1").fetchall() == [
        ("absurd_value", 1), ("invalid_utf8", 1), ("malformed_json", 1)]
    assert con.execute("SELECT decode(raw_full) FROM rejects WHERE reason = 'malformed_json'").fetchone() == ("{oops",)


@pytest.mark.parametrize("fast", ["0", "1"], ids=["per-line", "fast"])
def test_a_line_over_the_size_limit_keeps_its_start_and_its_length(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fast: str) -> None:
    from logmine.formats import _base
    from logmine.formats.native import fast as _native_fast

    monkeypatch.setenv("LOGMINE_NATIVE_FAST", fast)
    monkeypatch.setattr(_base, "MAX_LINE_BYTES", 5000)
    monkeypatch.setattr(_native_fast, "MAX_LINE_BYTES", 5000)
    huge = b'{"type":"event","note":"' + b"x" * 6000 + b'"}'
    write_lines(tmp_path / "logs" / "a.jsonl", [event(1), huge, b" " * 6000])
    logmine.ingest(tmp_path / "logs", tmp_path / "ws")
    rows = table_contents(tmp_path / "ws", "rejects").to_dicts()
    assert [(r["reason"], r["detail"], r["raw_bytes"], r["raw_full"]) for r in rows] == [
        ("oversized_line", f"line of {len(huge)} bytes exceeds 5000", len(huge), None),
        ("missing_field", "blank line", 6000, None),
    ]
    assert rows[0]["raw"] == huge[:1024].decode()


def test_fast_and_per_line_readers_make_the_same_workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [event(i) if i % 3 else request(i) for i in range(300)] + [raw for raw, _ in BAD_LINES] + [event(999)]
    write_lines(tmp_path / "logs" / "a.jsonl", lines)
    monkeypatch.setenv("LOGMINE_NATIVE_FAST", "0")
    logmine.ingest(tmp_path / "logs", tmp_path / "slow")
    monkeypatch.setenv("LOGMINE_NATIVE_FAST", "1")
    logmine.ingest(tmp_path / "logs", tmp_path / "fast")
    assert_same_tables(tmp_path / "slow", tmp_path / "fast")


def test_unreadable_and_unrecognised_files_are_one_reject_each_and_the_run_goes_on(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    logs = tmp_path / "logs"
    write_lines(logs / "good.jsonl", [event(1), request(2)])
    (logs / "dangling.jsonl").symlink_to(logs / "missing-target.jsonl")
    (logs / "truncated.jsonl.gz").write_bytes(gzip.compress(event(3) + b"\n" + event(4) + b"\n")[:-12])
    (logs / "garbage.bin").write_bytes(bytes(range(256)) * 4)
    (logs / "empty.log").write_bytes(b"")
    with caplog.at_level(logging.WARNING, logger="logmine.stages.ingest.core"):
        report = logmine.ingest(logs, tmp_path / "ws")
    status = {Path(f.path).name: f.status for f in report.files}
    assert status == {"good.jsonl": "ingested", "dangling.jsonl": "rejected", "truncated.jsonl.gz": "rejected",
                      "garbage.bin": "rejected", "empty.log": "rejected"}
    rejects = {Path(r["source_file"]).name: r for r in table_contents(tmp_path / "ws", "rejects").to_dicts()}
    assert {name: r["source_line"] for name, r in rejects.items()} == dict.fromkeys(
        ["dangling.jsonl", "truncated.jsonl.gz", "garbage.bin", "empty.log"], 0)
    assert {name: (r["reason"], r["detail"]) for name, r in rejects.items() if name != "truncated.jsonl.gz"} == {
        "dangling.jsonl": ("unreadable_file", "No such file or directory"),
        "garbage.bin": ("unrecognised_format", "no reader recognises this file; use --input-format"),
        "empty.log": ("unrecognised_format", "the file is empty"),
    }
    assert rejects["truncated.jsonl.gz"]["reason"] == "unreadable_file"
    assert {r.getMessage().split(": ")[0] for r in caplog.records} == {str(logs / n) for n in rejects}
    sources = {Path(r["path"]).name: r for r in table_contents(tmp_path / "ws", "sources").to_dicts()}
    assert {name: (r["source_format"], r["lines_read"], r["lines_accepted"], r["lines_rejected"]) for name, r in sources.items()} == {
        "good.jsonl": ("native", 2, 2, 0), "garbage.bin": ("unknown", 5, 0, 5), "empty.log": ("unknown", 0, 0, 0)}
    summary = report.summary()
    assert (summary["files_rejected"], summary["lines_read"], summary["lines_accepted"], summary["lines_rejected"]) == (4, 7, 2, 5)  # garbage.bin: 4 newlines and a last line


def test_an_unrecognised_file_is_skipped_when_unchanged_and_read_again_with_a_format(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    write_lines(logs / "events.txt", [b"10:00 opened a file", b"10:01 saved it"])
    first = logmine.ingest(logs, tmp_path / "ws")
    again = logmine.ingest(logs, tmp_path / "ws")
    assert [(f.status, f.lines_read, f.lines_rejected) for f in first.files] == [("rejected", 2, 2)]
    assert [f.status for f in again.files] == ["skipped"]
    write_lines(logs / "events.txt", [event(1), event(2)])  # same name, now a format logmine reads
    third = logmine.ingest(logs, tmp_path / "ws")
    assert [(f.status, f.source_format, f.lines_accepted) for f in third.files] == [("ingested", "native", 2)]
    assert table_contents(tmp_path / "ws", "rejects").height == 0


def test_corrupt_compressed_files_are_rejected_not_fatal(tmp_path: Path) -> None:
    import zstandard

    logs = tmp_path / "logs"
    good = b"".join(event(i) + b"\n" for i in range(200))
    packed = bytearray(gzip.compress(good))
    packed[len(packed) // 2: len(packed) // 2 + 8] = b"\xff" * 8  # damage the deflate stream, not its end
    (logs / "damaged.jsonl.gz").parent.mkdir(parents=True)
    (logs / "damaged.jsonl.gz").write_bytes(bytes(packed))
    zst = bytearray(zstandard.ZstdCompressor().compress(good))
    zst[len(zst) // 2: len(zst) // 2 + 8] = b"\x00" * 8
    (logs / "damaged.jsonl.zst").write_bytes(bytes(zst))
    write_lines(logs / "ok.jsonl", [event(1)])
    report = logmine.ingest(logs, tmp_path / "ws", IngestConfig(input_format="native"))
    assert {Path(f.path).name: f.status for f in report.files} == {
        "damaged.jsonl.gz": "rejected", "damaged.jsonl.zst": "rejected", "ok.jsonl": "ingested"}
    rejects = table_contents(tmp_path / "ws", "rejects")
    assert rejects["source_line"].to_list() == [0, 0]
    assert rejects["reason"].to_list() == ["unreadable_file", "unreadable_file"] and rejects["detail"].null_count() == 0
    assert table_contents(tmp_path / "ws", "events").height == 1


def test_unchanged_files_are_skipped_and_two_runs_leave_identical_tables(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    write_lines(logs / "a.jsonl", [event(i) for i in range(50)] + [b"{bad"])
    write_lines(logs / "b.jsonl", [request(i) for i in range(20)])
    first = logmine.ingest(logs, tmp_path / "ws")
    snapshot = tmp_path / "snapshot"
    shutil.copytree(tmp_path / "ws", snapshot)
    second = logmine.ingest(logs, tmp_path / "ws")
    assert [f.status for f in first.files] == ["ingested", "ingested"]
    assert [f.status for f in second.files] == ["skipped", "skipped"]
    for table in TABLES:
        assert table_contents(tmp_path / "ws", table).equals(table_contents(snapshot, table))
    assert Workspace.open(tmp_path / "ws").read("sources").equals(Workspace.open(snapshot).read("sources"))


def test_a_changed_file_is_read_again_and_replaces_its_rows(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    write_lines(logs / "a.jsonl", [event(i) for i in range(30)] + [b"{bad"])
    write_lines(logs / "b.jsonl", [request(i) for i in range(10)])
    logmine.ingest(logs, tmp_path / "ws")
    write_lines(logs / "a.jsonl", [event(i) for i in range(5)] + [event(100, action="vcs.commit")])
    report = logmine.ingest(logs, tmp_path / "ws")
    assert [f.status for f in report.files] == ["ingested", "skipped"]
    events = table_contents(tmp_path / "ws", "events")
    assert events["source_line"].to_list() == [1, 2, 3, 4, 5, 6]
    assert events["action"].to_list()[-1] == "vcs.commit"
    assert table_contents(tmp_path / "ws", "rejects").height == 0
    assert table_contents(tmp_path / "ws", "llm_requests").height == 10
    fresh = logmine.ingest(logs, tmp_path / "fresh")
    assert fresh.lines_read == 16
    assert_same_tables(tmp_path / "ws", tmp_path / "fresh")


def test_force_reads_unchanged_files_again(tmp_path: Path) -> None:
    write_lines(tmp_path / "logs" / "a.jsonl", [event(1)])
    logmine.ingest(tmp_path / "logs", tmp_path / "ws")
    report = logmine.ingest(tmp_path / "logs", tmp_path / "ws", IngestConfig(force=True))
    assert [f.status for f in report.files] == ["ingested"]
    assert table_contents(tmp_path / "ws", "events").height == 1


def test_ids_are_positional_and_stable_when_a_file_grows(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "logs" / "a.jsonl", [event(i) for i in range(3)])
    logmine.ingest(path, tmp_path / "ws")
    before = table_contents(tmp_path / "ws", "events")["event_id"].to_list()
    write_lines(path, [event(i) for i in range(4)])
    logmine.ingest(path, tmp_path / "ws")
    after = table_contents(tmp_path / "ws", "events")["event_id"].to_list()
    assert after[:3] == before and len(set(after)) == 4
    assert all(i.endswith(f":{n}:0") for n, i in enumerate(after, start=1))


def test_pseudonyms_hash_each_id_as_pseudonym_does_across_batches() -> None:
    key = b"k" * 32
    users = Pseudonyms(key)
    first = users(pl.Series("user_id", ["a", None, "b", "a"], dtype=pl.String))
    second = users(pl.Series("user_id", ["c", "b", None, "c", "a"], dtype=pl.String))  # "c" is new
    assert first.name == second.name == "user_id"
    assert first.to_list() == [pseudonym("a", key), None, pseudonym("b", key), pseudonym("a", key)]
    assert second.to_list() == [pseudonym(u, key) if u else None for u in ["c", "b", None, "c", "a"]]
    assert sorted(users.memo) == ["a", "b", "c"]  # each id hashed once and remembered


@pytest.mark.parametrize("lines", [[3, 5, 9], [3, 3, 4, 7, 7, 7]], ids=["one-row-per-line", "repeated-lines"])
def test_positional_ids_count_the_rows_of_a_line(lines: list[int]) -> None:
    writer = PartitionWriter({}, "key", "a.jsonl", "native", b"k" * 32)
    df = pl.DataFrame({"event_id": [None, "given", *[None] * (len(lines) - 2)], "source_line": lines},
                      schema={"event_id": pl.String(), "source_line": pl.Int64()})
    ids = writer._frame(df, EVENTS_SCHEMA, "event_id")["event_id"].to_list()
    seen: dict[int, int] = {}
    expected = []
    for line in lines:
        n = seen[line] = seen.get(line, -1) + 1
        expected.append(f"key:{line}:{n}")
    expected[1] = "given"
    assert ids == expected


def _all_text(root: Path) -> str:
    """Every value of every table as text, for leak checks."""
    ws = Workspace.open(root)
    parts = []
    for table in ws.tables:
        df = ws.read(table)
        binary = [c for c, t in df.schema.items() if t == pl.Binary]
        parts.append(df.drop(binary).write_ndjson())
        parts += [b.decode("utf-8", "replace") for c in binary for b in df[c].drop_nulls().to_list()]
    return "\n".join(parts)


@pytest.mark.parametrize("key_from", ["env", "config"])
def test_user_ids_are_pseudonymised_everywhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key_from: str) -> None:
    if key_from == "config":
        monkeypatch.delenv("LOGMINE_USER_KEY", raising=False)
    else:
        monkeypatch.setenv("LOGMINE_USER_KEY", "k-from-env")
    lines = [event(1, user="alice.secret@corp"), request(2, user="alice.secret@corp"),
             b'{"type":"event","user_id":"alice.secret@corp","ts":"yesterday","action":"x"}',
             b'{"type":"event","user_id":"alice.secret@corp","ts":']
    write_lines(tmp_path / "logs" / "a.jsonl", lines)
    logmine.ingest(tmp_path / "logs", tmp_path / "ws")
    text = _all_text(tmp_path / "ws")
    assert "alice.secret" not in text
    config = json.loads((tmp_path / "ws" / "config.json").read_text()) if (tmp_path / "ws" / "config.json").exists() else {}
    key = os.environ.get("LOGMINE_USER_KEY") or config["user_key"]
    assert key not in text
    expected = pseudonym("alice.secret@corp", key.encode())
    assert set(table_contents(tmp_path / "ws", "events")["user_id"]) == {expected}
    assert set(table_contents(tmp_path / "ws", "llm_requests")["user_id"]) == {expected}
    rejects = table_contents(tmp_path / "ws", "rejects")
    assert all(expected in raw for raw in rejects["raw"])
    assert all(expected.encode() in raw for raw in rejects["raw_full"])
    if key_from == "config":
        assert oct((tmp_path / "ws" / "config.json").stat().st_mode & 0o777) == "0o600"


def test_progress_is_reported_in_bytes(tmp_path: Path) -> None:
    write_lines(tmp_path / "logs" / "a.jsonl", [event(i) for i in range(100)])
    write_lines(tmp_path / "logs" / "b.jsonl", [request(i) for i in range(10)])
    total = sum(p.stat().st_size for p in (tmp_path / "logs").iterdir())
    calls: list[tuple[str, int, int]] = []
    logmine.ingest(tmp_path / "logs", tmp_path / "ws", progress=lambda d, done, t: calls.append((d, done, t)))
    assert {t for _, _, t in calls} == {total}
    assert [done for _, done, _ in calls] == sorted(done for _, done, _ in calls)
    assert calls[-1] == ("ingest", total, total)
    assert ("ingest a.jsonl", (tmp_path / "logs" / "a.jsonl").stat().st_size, total) in calls


def test_the_workspace_inside_an_input_directory_is_not_read(tmp_path: Path) -> None:
    write_lines(tmp_path / "a.jsonl", [event(1)])
    logmine.ingest(tmp_path, tmp_path / "ws")
    report = logmine.ingest(tmp_path, tmp_path / "ws")
    assert [Path(f.path).name for f in report.files] == ["a.jsonl"]


def test_bad_arguments_raise_logmine_errors(tmp_path: Path) -> None:
    with pytest.raises(InputPathError, match="does not exist"):
        logmine.ingest(tmp_path / "nope", tmp_path / "ws")
    write_lines(tmp_path / "a.jsonl", [event(1)])
    with pytest.raises(OptionError, match="--input-format"):
        logmine.ingest(tmp_path / "a.jsonl", tmp_path / "ws", IngestConfig(input_format="yaml"))


def test_a_second_writer_is_refused_while_the_lock_is_held(tmp_path: Path) -> None:
    write_lines(tmp_path / "a.jsonl", [event(1)])
    logmine.ingest(tmp_path / "a.jsonl", tmp_path / "ws")
    with Workspace.open(tmp_path / "ws").lock(), pytest.raises(WorkspaceLockedError):
        logmine.ingest(tmp_path / "a.jsonl", tmp_path / "ws")
