"""The engine: the same partition function gives the same results serially, in a process pool
and as Ray tasks; template shards merge into exactly the single-process result."""

from __future__ import annotations

import os
import random
import sys
from functools import partial
from pathlib import Path

import polars as pl
import pytest

from logmine.engine import EngineConfig, LocalEngine, from_wire, make_engine, to_wire
from logmine.errors import MissingDependencyError, OptionError
from logmine.pipeline.templates_step import merge_prompt_shards, merge_shards, mine_prompt_shard, mine_shard, mine_sharded
from logmine.stages.templates.miner import MineConfig, mine_templates


def square_frame(n: int, scale: int = 1) -> dict[str, object]:
    """A partition function: a frame and a scalar, so the wire carries both."""
    return {"n": n, "frame": pl.DataFrame({"i": list(range(n)), "sq": [scale * i * i for i in range(n)]})}


def _log_lines(n: int, seed: int) -> list[str]:
    rnd = random.Random(seed)
    shapes = [
        lambda: f"Accepted password for user{rnd.randrange(40)} from 10.0.{rnd.randrange(255)}.{rnd.randrange(255)} port {rnd.randrange(1024, 65535)} ssh2",
        lambda: f"Connection closed by 192.168.{rnd.randrange(255)}.{rnd.randrange(255)} port {rnd.randrange(1024, 65535)} [preauth]",
        lambda: f"Received disconnect from 172.16.0.{rnd.randrange(255)}: 11: Bye Bye [preauth]",
        lambda: f"session opened for user {rnd.choice(['root', 'git', 'deploy', 'alice', 'bob', 'carol'])} by (uid=0)",
        lambda: f"Invalid user {rnd.choice(['admin', 'test', 'oracle', 'ubuntu', 'pi', 'guest', 'ftp'])} from 10.1.1.{rnd.randrange(255)}",
        lambda: f"pam_unix(sshd:auth): authentication failure; logname= uid=0 euid=0 tty=ssh ruser= rhost=10.9.{rnd.randrange(255)}.{rnd.randrange(9)}",
        lambda: "Server listening on 0.0.0.0 port 22.",
    ]
    return [rnd.choice(shapes)() for _ in range(n)]


def _prompts(n: int, seed: int) -> list[str]:
    rnd = random.Random(seed)
    shapes = [
        "You are a coding assistant.\n\nComplete the code in {p}:\n```python\ndef f{i}():\n    return {i}\n```\n",
        "Explain   the function f{i} in {p}.  Answer in two sentences.",
        "Write a test for f{i} ({p}).\nUse pytest.\n",
    ]
    return [rnd.choice(shapes).format(p=f"src/m{rnd.randrange(30)}.py", i=rnd.randrange(500)) for _ in range(n)]


@pytest.fixture(scope="module")
def ray_engine():
    ray = pytest.importorskip("ray")
    if not ray.is_initialized():  # workers import this module's partition functions from tests/
        path = os.pathsep.join([str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")])
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False,
                 runtime_env={"env_vars": {"PYTHONPATH": path}})
    engine = make_engine(EngineConfig(kind="ray"))
    yield engine
    engine.close()
    ray.shutdown()


def test_wire_round_trip_keeps_frames_and_values() -> None:
    obj = {"a": pl.DataFrame({"x": [1, 2]}), "b": [pl.DataFrame({"y": ["z"]}), 3], "c": ("t", None)}
    wire = to_wire(obj)
    assert type(wire["a"]).__name__ == "_PolarsFrame"
    back = from_wire(wire)
    assert back["a"].equals(obj["a"]) and back["b"][0].equals(obj["b"][0]) and back["b"][1] == 3 and back["c"] == ("t", None)


def test_local_serial_keeps_order_and_records_timings() -> None:
    with LocalEngine(1) as engine:
        out = engine.map(square_frame, [3, 0, 5], label="squares")
    assert [o["n"] for o in out] == [3, 0, 5]
    assert out[2]["frame"]["sq"].to_list() == [0, 1, 4, 9, 16]
    assert engine.stats[0].label == "squares" and len(engine.stats[0].task_seconds) == 3


def test_process_pool_equals_serial() -> None:
    parts = [4, 1, 7, 2]
    fn = partial(square_frame, scale=3)
    serial = LocalEngine(1).map(fn, parts)
    with make_engine(EngineConfig(kind="local", workers=2)) as pool:
        pooled = pool.map(fn, parts)
    assert [p["n"] for p in pooled] == parts
    assert all(a["frame"].equals(b["frame"]) for a, b in zip(serial, pooled, strict=True))


def test_ray_equals_local(ray_engine) -> None:
    parts = [6, 0, 3]
    local = LocalEngine(1).map(square_frame, parts)
    remote = ray_engine.map(square_frame, parts, label="squares")
    assert [r["n"] for r in remote] == parts
    assert all(a["frame"].equals(b["frame"]) for a, b in zip(local, remote, strict=True))
    assert ray_engine.describe()["engine"] == "ray" and ray_engine.stats[-1].label == "squares"


def test_bad_engine_options_are_user_errors() -> None:
    with pytest.raises(OptionError, match="--workers"):
        make_engine(EngineConfig(workers=0))
    with pytest.raises(OptionError, match="only with --engine ray"):
        make_engine(EngineConfig(kind="local", ray_address="auto"))
    with pytest.raises(OptionError, match="--engine"):
        make_engine(EngineConfig(kind="spark"))  # type: ignore[arg-type]


def test_missing_ray_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'logmine\[ray\]'"):
        make_engine(EngineConfig(kind="ray"))


def _same(a, b) -> None:  # noqa: ANN001
    assert a.templates == b.templates
    assert a.counts == b.counts
    assert a.assignments == b.assignments
    assert a.first_line == b.first_line


@pytest.mark.parametrize("shards", [1, 3, 7], ids=lambda n: f"{n}-shards")
def test_sharded_log_mining_equals_one_run(shards: int) -> None:
    lines = _log_lines(1500, seed=shards)
    whole = mine_templates(lines)
    cut = [lines[i * len(lines) // shards : (i + 1) * len(lines) // shards] for i in range(shards)]
    _same(mine_sharded(LocalEngine(1), cut), whole)
    assert 5 <= len(whole.templates) <= 12


def test_sharded_prompt_mining_keeps_whitespace_and_equals_one_run() -> None:
    config = MineConfig(collapse_spaces=False)
    lines = _prompts(600, seed=1)
    whole = mine_templates(lines, config)
    merged = merge_shards([mine_shard((lines[:100], config)), mine_shard((lines[100:], config))], config)
    _same(merged, whole)
    assert any("\n\n" in t for t in merged.templates.values())


def _prompt_records(n: int, seed: int) -> list[dict[str, object]]:
    rnd = random.Random(seed)
    out = []
    for i in range(n):
        prefix = f"def f{i}(x):\n    return x + {rnd.randrange(100)}\n"
        kind = rnd.randrange(3)
        if kind == 0:
            prompt = f"<|fim_prefix|>{prefix}<|fim_suffix|>\n<|fim_middle|>"
        elif kind == 1:
            prompt = f"You are a helpful assistant.\n\nExplain this code from src/m{i % 7}.py:\n```python\n{prefix}```\nBe brief."
        else:
            prompt = f"Rewrite the selection in src/m{i % 5}.py to be faster.\nSelection:\n{prefix}\nAnswer with code only."
        out.append({"prompt": prompt, "prefix": prefix if kind == 0 else None, "file_path": f"src/m{i % 7}.py", "language": "python"})
    return out


def test_sharded_prompt_miner_equals_mine_prompts() -> None:
    from logmine.stages.templates.prompts import PROMPT_CONFIG, mine_prompts

    records = _prompt_records(240, seed=3)
    whole = mine_prompts(records)
    cuts = [records[:50], records[50:170], records[170:]]
    shards = [mine_prompt_shard((cut, PROMPT_CONFIG, True)) for cut in cuts]
    merged = merge_prompt_shards(shards, PROMPT_CONFIG)
    _same(merged, whole)
    assert 3 <= len(whole.templates) <= 10 and any("{prefix}" in t for t in whole.templates.values())


def test_sharded_prompt_miner_reads_slot_texts_as_one_run_does() -> None:
    """A rare prompt joins its template by its logged text (the slot texts of every shard): sharded, too."""
    sys.path.insert(0, str(Path(__file__).parent / "stages"))
    from test_templates_anchors import _review_prompts

    from logmine.stages.templates.prompts import PROMPT_CONFIG, mine_prompts

    records = [{"prompt": p} for p in _review_prompts()]
    whole = mine_prompts(records)
    shards = [mine_prompt_shard((cut, PROMPT_CONFIG, True)) for cut in (records[:20], records[20:])]
    merged = merge_prompt_shards(shards, PROMPT_CONFIG)
    _same(merged, whole)
    assert len(whole.templates) == 1


def test_sharded_mining_on_ray_equals_local(ray_engine) -> None:
    lines = _log_lines(900, seed=11)
    cut = [lines[:300], lines[300:650], lines[650:]]
    _same(mine_sharded(ray_engine, cut), mine_sharded(LocalEngine(1), cut))
    _same(mine_sharded(ray_engine, cut), mine_templates(lines))


def test_pipeline_on_ray_and_a_process_pool_equals_serial(ray_engine, tmp_path: Path) -> None:
    from pipeline_data import assert_same_tables, write_day, write_pipeline

    from logmine.pipeline import run_pipeline

    for i, day in enumerate(["2026-11-27", "2026-11-28"]):
        write_day(tmp_path / "logs", day, seed=i)
    local = run_pipeline(write_pipeline(tmp_path, "local", "ws_local"))
    remote = run_pipeline(write_pipeline(tmp_path, "ray", "ws_ray"), engine=EngineConfig(kind="ray"))
    assert remote.engine["engine"] == "ray" and local.engine["engine"] == "local"
    assert remote.stages["flows"]["engine"][0]["tasks"] == 2
    assert_same_tables(tmp_path / "ws_local", tmp_path / "ws_ray")
    pool = run_pipeline(write_pipeline(tmp_path, "pool", "ws_pool"), engine=EngineConfig(kind="local", workers=2))
    assert pool.engine == {"engine": "local", "workers": 2}
    assert_same_tables(tmp_path / "ws_local", tmp_path / "ws_pool")
