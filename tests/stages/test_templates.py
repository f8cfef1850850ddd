"""The template miner's pure core: golden template lists, behaviour on hand cases, shard merging."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from logmine.masking import MaskRule, Masker, build_rules, load_rules
from logmine.errors import InputPathError, OptionError
from logmine.stages.templates.miner import MineConfig, TemplateMiner, merge_results, mine_templates, template_id, template_regex

CASES = Path(__file__).parents[1] / "cases" / "templates"
REGEN = bool(os.environ.get("LOGMINE_REGEN_GOLDEN"))


def golden_view(lines: list[str], config: MineConfig | None = None) -> dict[str, object]:
    """The whole outcome in a reviewable form: templates with line counts, and per line its template."""
    result = mine_templates(lines, config)
    order = list(result.templates)
    return {
        "templates": [{"template": result.templates[t], "lines": result.counts[t]} for t in order],
        "assignments": [order.index(t) for t in result.assignments],
    }


def write_golden(path: Path, got: dict[str, object]) -> None:
    """Templates one per line, assignments on one line: a diff shows what changed."""
    templates = ",\n".join("  " + json.dumps(t, ensure_ascii=False) for t in got["templates"])  # type: ignore[union-attr]
    path.write_text('{"templates": [\n' + templates + '\n ],\n "assignments": ' + json.dumps(got["assignments"]) + "}\n")


@pytest.mark.parametrize("name", ["sshd", "idea"])
def test_golden_log_templates(name: str) -> None:
    lines = (CASES / f"{name}.log").read_text().splitlines()
    got = golden_view(lines)
    path = CASES / f"{name}.expected.json"
    if REGEN:
        write_golden(path, got)
    assert got == json.loads(path.read_text())


def test_values_of_several_words_do_not_split_a_template() -> None:
    names = ["demo", "ui kit", "My Cool Project", "Big Legacy Monolith Service", "api", "web front end"]
    lines = [f"Opened project {n} in {i * 7 + 3} ms" for i, n in enumerate(names * 2)]
    result = mine_templates(lines)
    assert list(result.templates.values()) == ["Opened project <*> in <*> ms"]


def test_few_distinct_words_stay_constants_many_become_variables() -> None:
    states = [f"VM {s} (Lifecycle Event)" for s in ("Started", "Paused", "Resumed", "Stopped") for _ in range(10)]
    users = [f"Failed password for {u} from 10.0.0.{i} port 22" for i, u in enumerate(["root", "a", "b", "c", "d", "e", "f"] * 3)]
    result = mine_templates(states + users)
    assert sorted(result.templates.values()) == [
        "Failed password for <*> from <*> port <*>",
        "VM Paused (Lifecycle Event)",
        "VM Resumed (Lifecycle Event)",
        "VM Started (Lifecycle Event)",
        "VM Stopped (Lifecycle Event)",
    ]


def test_first_word_names_the_event_unless_the_line_has_context() -> None:
    short = [f"{w} (command {i})" for i, w in enumerate(["boot", "wait", "halt", "reboot", "risBoot", "bootGen"])]
    long = [f"{svc}: told me to run this job; but the start time is later" for svc in ("com.a", "com.b", "com.c", "com.d", "com.e")]
    result = mine_templates(short + long)
    texts = sorted(result.templates.values())
    assert "com.<*>: told me to run this job; but the start time is later" in texts
    assert "boot (command <*>)" in texts and len(texts) == 7


def test_result_maps_every_line_to_a_content_id() -> None:
    lines = ["user 1 logged in", "user 2 logged in", "disk full"]
    result = mine_templates(lines)
    assert result.assignments[0] == result.assignments[1] == template_id("user <*> logged in")
    assert result.templates[result.assignments[2]] == "disk full"
    assert result.counts == {template_id("user <*> logged in"): 2, template_id("disk full"): 1}
    assert result.first_line == {template_id("user <*> logged in"): 0, template_id("disk full"): 2}
    assert template_id("disk full").startswith("b2:")


def test_empty_input_and_blank_lines() -> None:
    assert mine_templates([]).templates == {}
    result = mine_templates(["", "   ", "x"])
    assert result.template_of(0) == result.template_of(1) == ""


def test_whitespace_is_kept_when_not_collapsed() -> None:
    lines = [f"Task:\n  fix {name}\n\n```\n{{code}}\n```" for name in ("a1", "b22", "c333")]
    result = mine_templates(lines, MineConfig(collapse_spaces=False))
    assert list(result.templates.values()) == ["Task:\n  fix <*>\n\n```\n{code}\n```"]


def test_template_regex_reads_wildcards_as_values_of_any_length() -> None:
    rx = template_regex("Opened project <*> in <*> ms")
    assert rx.match("Opened project Big Legacy Service in 12 ms")
    assert rx.match("Opened  project x\nin 12 ms")
    assert not rx.match("Closed project x in 12 ms")


def _word(i: int) -> str:
    return "".join(chr(97 + (i // 26**k) % 26) for k in range(3))


def test_compaction_keeps_the_templates() -> None:
    lines = [f"job {i % 7} finished on host {_word(i % 5)} in {i} s" for i in range(300)]
    lines += [f"cache miss for key {_word(i)} in region {_word(i % 3)}" for i in range(300)]
    small = mine_templates(lines, MineConfig(max_units=20, line_cache_size=0))
    big = mine_templates(lines)
    assert small.state.compactions > 0 and big.state.compactions == 0
    assert small.templates == big.templates and small.assignments == big.assignments


def test_line_cache_does_not_change_the_result() -> None:
    lines = [f"request {i % 13} took {i % 5} ms" for i in range(200)]
    assert mine_templates(lines, MineConfig(line_cache_size=0)).assignments == mine_templates(lines, MineConfig(line_cache_size=3)).assignments


def test_merge_results_equals_one_run() -> None:
    lines = (CASES / "sshd.log").read_text().splitlines() + (CASES / "idea.log").read_text().splitlines()
    lines = lines[::2] + lines[1::2]
    half = len(lines) // 3
    whole = mine_templates(lines)
    merged = merge_results(mine_templates(lines[:half]), mine_templates(lines[half:]))
    assert merged.templates == whole.templates
    assert merged.assignments == whole.assignments
    assert merged.counts == whole.counts and merged.first_line == whole.first_line


def test_streaming_miner_matches_batch() -> None:
    lines = (CASES / "sshd.log").read_text().splitlines()
    miner = TemplateMiner()
    units = [miner.add(line) for line in lines]
    assert len(units) == len(lines)
    assert miner.result().assignments == mine_templates(lines).assignments


# -- masking rules as data -------------------------------------------------------------------
def test_default_masking() -> None:
    masker = Masker()
    line = 'blk_-160 10.1.2.3:50010 "GET /v2/a1/servers HTTP/1.1" 0x1F 5.2 KB true en0 ssh2 tc19060 2017-07-03 10:00:01'
    assert masker.collapse(masker.mask(line)) == 'blk_-<*> <*> "GET <*> HTTP/<*>" <*> <*> <*> en0 ssh2 <*> <*>'


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        pytest.param('title="src/acme/graphlib.py"', 'title="<PATH>"', id="quoted"),
        pytest.param("located at: src/stat/stat.py.", "located at: <PATH>.", id="end-of-sentence"),
        pytest.param("org/apache/Foo.java:123", "<PATH>:<NUM>", id="with-a-line-number"),
        pytest.param("see a/b or and/or", "see a/b or and/or", id="no-extension-no-path"),
    ],
)
def test_relative_file_paths_are_masked(text: str, masked: str) -> None:
    assert Masker(typed=True).mask(text) == masked


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        pytest.param("connection from 10.0.0.7 () at Sat Jun 18 02:08:09 2005", "connection from <IP> () at <TIMESTAMP>", id="ctime"),
        pytest.param("Jun  8 02:08:09 host cron[9]: ok", "<TIMESTAMP> host cron[<NUM>]: ok", id="syslog"),
        pytest.param("built Mon Dec  5 10:00:00 UTC 2005.", "built <TIMESTAMP>.", id="date-with-zone"),
        pytest.param("Jun 18, 2005 02:08:09 up", "<TIMESTAMP> up", id="comma-year"),
        pytest.param("May 18 and Jun 3 at noon", "May <NUM> and Jun <NUM> at noon", id="no-time-no-date"),
    ],
)
def test_dates_with_a_month_name_are_one_value(text: str, masked: str) -> None:
    masker = Masker(typed=True)
    assert masker.mask(text) == masked
    assert masker.mask_words(text) == masker.masked(text).split()


def test_a_date_inside_messages_is_no_word_of_the_event() -> None:
    days = ("Sat", "Sun", "Mon")
    lines = [f"connection from 10.0.{i}.1 () at {days[i % 3]} Jun {1 + i % 28:2d} 0{i % 10}:1{i % 6}:0{i % 7} 2005" for i in range(30)]
    result = mine_templates(lines)
    assert set(result.templates.values()) == {"connection from <*> () at <*>"}


def test_user_rules_come_first_and_can_be_typed(tmp_path: Path) -> None:
    rules = build_rules([{"pattern": r"req-[a-z]+", "mask_with": "REQ"}])
    masker = Masker(rules, typed=True)
    assert masker.mask("req-abc at /var/log/x.log took 12") == "<REQ> at <PATH> took <NUM>"
    path = tmp_path / "rules.json"
    path.write_text(json.dumps({"rules": [{"pattern": "ERR[A-Z]+", "mask_with": "CODE"}], "replace_defaults": True}))
    assert [r.mask_with for r in load_rules(path)] == ["CODE"]


def test_bad_rule_files_are_user_errors(tmp_path: Path) -> None:
    path = tmp_path / "rules.json"
    path.write_text(json.dumps([{"pattern": "x", "mask_with": "X", "colour": "red"}]))
    with pytest.raises(OptionError, match="colour"):
        load_rules(path)
    path.write_text(json.dumps([{"pattern": "(", "mask_with": "X"}]))
    with pytest.raises(OptionError, match="regular expression"):
        load_rules(path)
    with pytest.raises(InputPathError):
        load_rules(tmp_path / "missing.json")
    with pytest.raises(ValueError):
        MaskRule(pattern="a*")


def test_units_of_different_prompt_formats_are_never_one_template() -> None:
    from logmine.stages.templates.cluster import cluster

    units = [("ctx", f"<|fim_prefix|>x{i}") for i in range(10)] + [("ctx", f"y{i}") for i in range(3)]
    groups = cluster(units, [1] * len(units))
    assert sorted(len(g.members) for g in groups) == [3, 10]



def test_a_word_opening_with_a_brace_is_text_not_a_slot_name() -> None:
    """A static word such as ``{(x)`` reached a unit's regex unescaped, as if it were ``{code}``
    (a prompt log of the compress bench crashed the miner with "unbalanced parenthesis")."""
    from logmine.stages.templates.miner import _pattern_regex

    regex = _pattern_regex(["map", "{(x)", "{code}", "{items}"])
    assert regex.match("map {(x) {code:abcdefgh} {items}")
    assert regex.match("map {(x) {code:abcdefgh} {other}") is None


def test_first_word_that_is_a_field_is_a_variable() -> None:
    # a process name first (chrome.exe - ...): it varies across every event, so it is a variable,
    # and the events (six of one length: more first words than a constant takes) are told apart by their own words
    procs = ["chrome.exe", "svchost.exe", "firefox.exe", "outlook.exe", "python"]
    events = ["open through proxy {}", "close, {} bytes sent", "could not connect {}", "proxy resolved as {}",
              "handshake failed on {}", "retry after {}"]
    lines = [f"{procs[(i * 7 + k) % 5]} - {e.format(f'10.0.{i}.{k}:80')}" for i in range(6) for k, e in enumerate(events)]
    assert sorted(set(mine_templates(lines).templates.values())) == sorted(f"<*> - {e.format('<*>')}" for e in events)


def test_first_word_naming_the_event_stays_a_bucket() -> None:
    # first words that name events, a rest seen after two of them: not a field
    lines = [f"{verb} service {name}" for name in ("alpha", "beta", "gamma", "delta", "omega", "kappa") for verb in ("Starting", "Stopping")]
    assert sorted(set(mine_templates(lines).templates.values())) == ["Starting service <*>", "Stopping service <*>"]


def test_a_first_word_that_holds_a_value_is_bucketed_by_its_head() -> None:
    # one-word events whose value sits inside the word, set to a new word each time: the word up to
    # the value (``setLightsOn(``, ``mode=``) names the event, so each event is one template
    values = ["lajt", "ofog", "jsst", "ugji", "prwq", "kemb", "zoda", "hiut"]
    lines = [f"setLightsOn({v})" for v in values] + [f"mode={v},auto=on" for v in values]
    templates = sorted(set(mine_templates(lines).templates.values()))
    assert templates == ["mode=<*>,auto=on", "setLightsOn(<*>)"]
    # a word with no value in it is its own event, as before: two C++ methods of one class stay apart
    lines = [f"AppleCamIn::{m}" for m in ("wakeEventHandlerThread", "handleWakeEvent_gated") for _ in range(5)]
    assert sorted(set(mine_templates(lines).templates.values())) == ["AppleCamIn::handleWakeEvent_gated", "AppleCamIn::wakeEventHandlerThread"]


def test_leading_key_value_fields_do_not_name_the_event() -> None:
    # pid=<n> level=<LEVEL> then the message: the message's first word names the event (six events of
    # one length, each with a word-valued variable, so no position decides the others)
    levels = ["INFO", "WARNING", "ERROR"]
    words = ["alice", "bob", "carol", "dave", "erin", "frank"]
    verbs = ["Closing", "Opening", "Stopping", "Waiting", "Checking", "Retrying"]
    lines = [f"pid={100 + i} level={levels[i % 3]} {v} {words[(i + k) % 6]} {i}" for i in range(9) for k, v in enumerate(verbs)]
    assert sorted(set(mine_templates(lines).templates.values())) == sorted(f"pid=<*> level=<*> {v} <*> <*>" for v in verbs)


def test_first_word_region_with_two_long_context_words_is_a_variable() -> None:
    # two constant words, but 20 characters of them: the class name first is a value
    names = ["ActorClient", "ServerConfig", "ServerManager", "TaskHandler", "NodeWorker", "GraphError"]
    lines = [f"{n} usMaxContext updated: {i}" for i in range(3) for n in names]
    assert sorted(set(mine_templates(lines).templates.values())) == ["<*> usMaxContext updated: <*>"]
    # two short words (8 characters) stay too little context: each first word names its event
    short = [f"{w} (command {i})" for i, w in enumerate(["boot", "wait", "halt", "reboot", "risBoot", "bootGen"])]
    assert len(set(mine_templates(short).templates.values())) == 6


def test_pipe_delimited_fields_vary_on_their_own() -> None:
    # thread|logger|message: the thread varies in every line, the logger is one word for all lines,
    # and the message's first word names the event; each line keeps its exact text in its template
    # (six events of one length, each with a word-valued variable, so no position decides the others)
    threads = ["main", "worker", "io", "scheduler", "gc", "rpc"]
    names = ["alice", "bob", "carol", "dave", "erin", "frank"]
    events = ["Started replica", "Stopped server", "Draining node", "Joined cluster", "Lost actor", "Scaled deployment"]
    lines = [f"{threads[(i + k) % 6]}|ray.serve|{e} {names[(i + 2 * k) % 6]} in {i * 10 + k}" for i in range(6) for k, e in enumerate(events)]
    result = mine_templates(lines)
    assert sorted(set(result.templates.values())) == sorted(f"<*>|ray.serve|{e} <*> in <*>" for e in events)
    assert all(template_regex(result.template_of(n)).match(line) for n, line in enumerate(lines))


def test_split_fields_joins_back_to_the_words() -> None:
    from logmine.stages.templates.state import render, split_fields

    words = ["alice|pydantic|`x`", "is", "FA||Url||taskID", "end|"]
    tokens, seps = split_fields(words)
    assert tokens == ("alice|", "pydantic|", "`x`", "is", "FA|", "|", "Url|", "|", "taskID", "end|")
    assert render(tokens, seps) == " ".join(words)


def test_words_where_most_lines_hold_a_masked_value_are_values() -> None:
    # most lines hold a path the rules mask; three lines hold relative paths they do not (no extension):
    # those are values of the same variable, not three templates of their own
    masked = [f"Seeking to frame /data/run{i}/frame_{i}.png, on frame {i}" for i in range(12)]
    missed = [f"Seeking to frame {p}, on frame {i}" for i, p in enumerate(["queue/worker/image", "node/root", "heidi/request"])]
    lines = masked + missed
    assert sorted(set(mine_templates(lines).templates.values())) == ["Seeking to frame <*>, on frame <*>"]


def test_field_first_word_is_a_variable_in_a_template_of_one_line() -> None:
    # process names first (a field); one event starts with a quoted name, one line each: each line is
    # a bucket of its own, and only a field written <*> there too lets the frame join them
    procs = ["chrome.exe", "svchost.exe", "firefox.exe", "outlook.exe", "python", "nginx"]
    events = ["open through proxy {}", "close, {} bytes sent", "could not connect {}"]
    lines = [f"{procs[(i + k) % 6]} - {e.format(f'10.0.{i}.{k}:80')}" for i in range(6) for k, e in enumerate(events)]
    names = ["queue", "gamma", "build", "alpha", "delta", "omega"]
    lines += [f"{procs[(i * 5) % 6]} - '{n}' being ignored in component array." for i, n in enumerate(names)]
    templates = set(mine_templates(lines).templates.values())
    assert "<*> - '<*>' being ignored in component array." in templates and len(templates) == 4


def test_a_logger_every_line_has_is_no_context_for_a_free_text_frame() -> None:
    # thread|logger|message: six events, each with a word-valued variable, between the logger and a
    # number; the logger's 13 characters are in every line and hold no event apart, so they do not
    # frame the messages as one free-text region
    threads = ["main", "worker", "io", "scheduler", "gc", "rpc"]
    names = ["alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi"]
    events = ["Sandbox facade listening for {} on", "Requiring the token of {} from", "Created sandbox for {} at",
              "Dropped stale lease of {} after", "Pinned the runtime image of {} to", "Granted quota to {} in"]
    lines = [f"{threads[(i + k) % 6]}|experimental|{e.format(names[(i * 3 + k) % 8])} 10.0.{i}.{k}" for i in range(12) for k, e in enumerate(events)]
    assert sorted(set(mine_templates(lines).templates.values())) == sorted(f"<*>|experimental|{e.format('<*>')} <*>" for e in events)


def test_a_list_of_values_is_one_value_whatever_its_length() -> None:
    """``<*>, <*>, <*>``: a list of masked values of one to four items is one variable, as a value
    of several words is; words between the values keep lines apart."""
    hosts = ["10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"]
    lines = [f"Replicas {', '.join(hosts[: 1 + i % 4])} joined the ring" for i in range(24)]
    lines += [f"Replica {h} left, {h} took over" for h in hosts * 2]
    result = mine_templates(lines)
    assert sorted(result.templates.values()) == ["Replica <*> left, <*> took over", "Replicas <*> joined the ring"]


def test_a_region_with_words_beside_its_masks_is_a_template_not_free_text() -> None:
    """``pid=<n> level=<L> ... acknowledged.``: four events between one shared field and one shared last
    word, each a masked name among constant words. A region like ``job <*> sent out`` is a template's
    text, one value however many lines hold it, not free text: the events do not merge as one region."""
    levels = ["INFO"] * 9 + ["DEBUG"] * 4 + ["ERROR"] * 4 + ["WARNING"] * 3
    names = ["alpha_node", "beta_layer", "cache_v2", "ServerWorker", "graph_job", "model", "frank_task", "records", "queue_3", "TensorPool", "dave_image"]
    lines = [f"pid={1000 + 37 * i} level={levels[i % 20]} job {names[i % 11]} sent out acknowledged." for i in range(80)]
    lines += [f"pid={3000 + 11 * i} level=INFO job {names[i]} restarted acknowledged." for i in range(6)]
    lines += [f"pid={5000 + 13 * i} level={lv} Drain {names[i + 2]} lease renewed acknowledged." for i, lv in enumerate(["DEBUG", "DEBUG", "INFO"])]
    lines += ["pid=7707 level=INFO job east_session moved task off acknowledged.", "pid=7801 level=WARNING job mallory_node moved task off acknowledged."]
    templates = set(mine_templates(lines).templates.values())
    assert "pid=<*> <*> acknowledged." not in templates
    assert {"pid=<*> level=<*> job <*> sent out acknowledged.", "pid=<*> level=INFO job <*> restarted acknowledged.",
            "pid=<*> level=<*> Drain <*> lease renewed acknowledged."} <= templates
