"""Errors a person can act on: outputs logmine cannot write, option values it cannot use, inputs
that hold nothing it can read. Each is one `Error: ...` line on stderr and exit code 1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

EVENT = b'{"type":"event","ts":"2025-03-03T10:00:00Z","action":"file.save","user_id":"alice"}\n'


@pytest.fixture
def logs(tmp_path: Path) -> Path:
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "a.jsonl").write_bytes(EVENT * 3)
    (tmp_path / "a-file").write_text("not a directory\n")
    return tmp_path / "logs"


@pytest.fixture
def workspace(capsys: pytest.CaptureFixture[str], logs: Path, tmp_path: Path) -> Path:
    code, _, err = run_cli(capsys, "ingest", str(logs), "-o", str(tmp_path / "ws"), "-q")
    assert (code, err) == (0, "")
    return tmp_path / "ws"


def _unwritable(tmp: Path) -> list[tuple[str, str]]:
    """(path, the reason in brackets) for outputs that cannot be made on this machine."""
    cases = [(f"{tmp}/a-file/sub", f"{tmp}/a-file is a file, not a directory")]
    if Path("/proc/self").is_dir():  # procfs takes no new entries, even from root
        cases.append(("/proc/logmine-test", "/proc refuses new entries: No such file or directory"))
    return cases


def test_an_unwritable_workspace_is_one_error_line(capsys: pytest.CaptureFixture[str], logs: Path, tmp_path: Path) -> None:
    for out, why in _unwritable(tmp_path):
        for command in ("ingest", "compress"):
            code, stdout, err = run_cli(capsys, command, str(logs), "-o", out, "-q")
            assert (code, stdout, err) == (1, "", f"Error: {out}: cannot write the workspace here ({why})\n"), command


def test_an_unwritable_report_path_is_one_error_line(capsys: pytest.CaptureFixture[str], workspace: Path, tmp_path: Path) -> None:
    cases = [(f"{out}/report.html", why) for out, why in _unwritable(tmp_path)] + [(str(workspace), "Is a directory")]
    for out, why in cases:
        code, stdout, err = run_cli(capsys, "report", str(workspace), "-o", out)
        assert (code, stdout, err) == (1, "", f"Error: {out}: cannot write the report here ({why})\n")
    assert not list(workspace.glob(".*.tmp")), "a failed report leaves no temporary file behind"


def test_an_unwritable_sample_directory_is_one_error_line(capsys: pytest.CaptureFixture[str], tmp_path: Path, logs: Path) -> None:
    code, stdout, err = run_cli(capsys, "sample", f"{tmp_path}/a-file/demo", "--events", "10", "-q")
    assert (code, stdout) == (1, "")
    assert err == f"Error: {tmp_path}/a-file/demo: cannot write the sample logs here ({tmp_path}/a-file is a file, not a directory)\n"


def test_mask_rules_take_a_file_or_the_json_inline(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    log = tmp_path / "app.log"
    log.write_text("fetch https://a.example//x/1 took 5\nfetch https://b.example/y took 7\nuser logged in\n")
    rules = '[{"pattern": "https?://\\\\S+", "mask_with": "URL"}]'  # '//' must reach the regex unchanged
    (tmp_path / "rules.json").write_text(rules)
    results = []
    for given in (rules, str(tmp_path / "rules.json")):
        code, out, err = run_cli(capsys, "mine", str(log), "--mask-rules", given, "--typed-masks", "-f", "json")
        assert (code, err) == (0, "")
        results.append(sorted(t["template"] for t in json.loads(out)["top"]))
    assert results[0] == results[1] == ["fetch <URL> took <NUM>", "user logged in"]


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ('[{"pattern": "x", "mask_with": "X"}', "Error: invalid value for --mask-rules: '[{\"pattern\": \"x\", \"mask_with\": \"X\"}' "
         "(inline rules are not valid JSON: Expecting ',' delimiter: line 1 column 36 (char 35))\n"),
        ('[{"pattern": "x", "mask": "X"}]', "Error: invalid value for --mask-rules: '[{\"pattern\": \"x\", \"mask\": \"X\"}]' "
         "(rules.0.mask: Extra inputs are not permitted)\n"),
        ("{tmp}/missing.json", "Error: {tmp}/missing.json: does not exist (--mask-rules takes a JSON file or the rules inline as JSON)\n"),
    ],
    ids=["inline-not-json", "inline-bad-rule", "missing-file"],
)
def test_bad_mask_rules_say_what_the_option_takes(capsys: pytest.CaptureFixture[str], tmp_path: Path, given: str, message: str) -> None:
    log = tmp_path / "app.log"
    log.write_text("user logged in\n")
    code, out, err = run_cli(capsys, "mine", str(log), "--mask-rules", given.replace("{tmp}", str(tmp_path)))
    assert (code, out, err) == (1, "", message.replace("{tmp}", str(tmp_path)))


def test_an_empty_input_directory_says_it_found_no_files(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / ".hidden.jsonl").write_bytes(EVENT)
    code, out, err = run_cli(capsys, "ingest", str(tmp_path / "empty"), "-o", str(tmp_path / "ws"))
    assert (code, out) == (1, "")
    assert err == f"Error: {tmp_path}/empty: no files found to ingest (hidden files and .logmineignore patterns are skipped)\n"
    assert not (tmp_path / "ws" / "manifest.json").exists()


def test_a_forced_format_that_reads_no_line_names_the_detected_one(capsys: pytest.CaptureFixture[str], logs: Path, tmp_path: Path) -> None:
    code, out, err = run_cli(capsys, "ingest", str(logs), "-o", str(tmp_path / "ws"), "--input-format", "tabby", "-q")
    assert (code, out) == (1, "")
    assert err == (f"Error: invalid value for --input-format: 'tabby' (it rejected all 3 lines of {logs}/a.jsonl; format detection "
                   "reads that file as native: drop --input-format or pass --input-format native)\n")
    assert not (tmp_path / "ws" / "manifest.json").exists(), "nothing is committed"


def test_a_forced_format_that_reads_one_file_warns_about_the_other(capsys: pytest.CaptureFixture[str], logs: Path, tmp_path: Path) -> None:
    tabby = b'{"ts":1715677200310,"event":{"view":{"completion_id":"c1","choice_index":0}}}\n'
    (logs / "tabby.json").write_bytes(tabby * 2)
    code, out, err = run_cli(capsys, "ingest", str(logs), "-o", str(tmp_path / "ws"), "--input-format", "tabby", "-q", "-f", "json")
    assert code == 0
    assert err == f"Warning: --input-format tabby rejected all 3 lines of {logs}/a.jsonl; format detection reads it as native\n"
    report = json.loads(out)
    assert (report["lines_accepted"], report["lines_rejected"], report["warnings"]) == (2, 3, [err[len("Warning: "):-1]])


def test_a_forced_format_that_detection_agrees_with_gives_no_warning(capsys: pytest.CaptureFixture[str], logs: Path, tmp_path: Path) -> None:
    (logs / "b.jsonl").write_bytes(b'{"type":"event","ts":"2025-03-03T10:00:00Z"}\n')
    code, out, err = run_cli(capsys, "ingest", str(logs / "b.jsonl"), "-o", str(tmp_path / "ws"), "--input-format", "native", "-q", "-f", "json")
    assert (code, err) == (0, "")
    assert json.loads(out)["rejects_by_reason"] == {"missing_field": 1}
