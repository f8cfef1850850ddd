"""Ingest on the engine: serial, a process pool and Ray tasks give the same four tables."""

from __future__ import annotations

from pathlib import Path

import pytest

from logmine.engine import EngineConfig, make_engine
from logmine.sample import SampleConfig, generate
from logmine.stages.ingest.core import FileTask, IngestConfig, ingest, read_file, source_key
from ingest_helpers import assert_same_tables, table_contents, write_lines


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Mixed-format sample logs plus an empty file and an unrecognised one (file-level rejects)."""
    root = tmp_path_factory.mktemp("logs")
    generate(root, SampleConfig(events=600, seed=3))
    (root / "empty.jsonl").write_bytes(b"")
    write_lines(root / "junk.txt", [b"not a log line", b"nor this"])
    return root


@pytest.fixture(scope="module")
def serial_run(logs: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    out = tmp_path_factory.mktemp("serial") / "ws"
    summary = ingest(logs, out).summary()
    assert summary["files_ingested"] >= 5 and summary["files_rejected"] == 2
    assert summary["lines_read"] == summary["lines_accepted"] + summary["lines_rejected"] > 0  # type: ignore[operator]
    return out, summary


@pytest.fixture(scope="module")
def serial(serial_run: tuple[Path, dict[str, object]]) -> Path:
    return serial_run[0]


def _ingest_on(logs: Path, out: Path, config: EngineConfig) -> dict[str, object]:
    with make_engine(config) as engine:
        report = ingest(logs, out, engine=engine)
        assert engine.stats and engine.stats[-1].label == "ingest"
        assert len(engine.stats[-1].task_seconds) == len(report.files)
    return report.summary()


def _same_summary(a: dict[str, object], b: dict[str, object]) -> None:
    assert {k: v for k, v in a.items() if k not in ("seconds", "workspace")} == {
        k: v for k, v in b.items() if k not in ("seconds", "workspace")}


def test_pool_equals_serial(logs: Path, serial_run: tuple[Path, dict[str, object]], tmp_path: Path) -> None:
    serial, serial_summary = serial_run
    summary = _ingest_on(logs, tmp_path / "ws", EngineConfig(kind="local", workers=2))
    assert_same_tables(serial, tmp_path / "ws")
    _same_summary(summary, serial_summary)
    # a second pool run skips every file it read, the two no reader recognises too, and leaves the tables as they were
    again = _ingest_on(logs, tmp_path / "ws", EngineConfig(kind="local", workers=2))
    assert again["files_ingested"] == 0 and again["files_skipped"] == summary["files_ingested"] + 2
    assert_same_tables(serial, tmp_path / "ws")


def test_ray_equals_serial(logs: Path, serial: Path, tmp_path: Path) -> None:
    ray = pytest.importorskip("ray")
    if not ray.is_initialized():
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        _ingest_on(logs, tmp_path / "ws", EngineConfig(kind="ray"))
    finally:
        ray.shutdown()
    assert_same_tables(serial, tmp_path / "ws")


def test_read_file_writes_only_its_files(logs: Path, tmp_path: Path) -> None:
    """The per-file task: its report accounts for every line and it writes nowhere but ``files``."""
    path = str(logs / "native" / "2025-03-03.jsonl")
    files = {t: str(tmp_path / f"{t}.parquet") for t in ("events", "llm_requests", "rejects")}
    result = read_file(FileTask(path, None, source_key(path), b"k" * 32, files))
    r = result.report
    assert r.status == "ingested" and r.lines_read == r.lines_accepted + r.lines_rejected > 0
    assert set(result.files) <= set(files) and result.files
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(Path(f).name for f in result.files.values())
    assert result.source is not None and result.source["path"] == path and result.source["lines_read"] == r.lines_read


def test_forced_format_pool(tmp_path: Path) -> None:
    """A forced format reaches the workers."""
    logs = tmp_path / "logs"
    generate(logs, SampleConfig(events=200, seed=1, formats=("native",)))
    native = sorted(p for p in logs.rglob("*") if p.is_file())
    config = IngestConfig(input_format="native")
    ingest(native, tmp_path / "a", config)
    with make_engine(EngineConfig(workers=2)) as engine:
        ingest(native, tmp_path / "b", config, engine=engine)
    assert_same_tables(tmp_path / "a", tmp_path / "b")
    sources = table_contents(tmp_path / "b", "sources")
    assert sources.height == len(native) and (sources["source_format"] == "native").all()


def test_pipeline_ingest_step_uses_the_run_engine(logs: Path, serial_run: tuple[Path, dict[str, object]], tmp_path: Path) -> None:
    """The pipeline's ingest step hands the run's engine to ingest: one task per file, same tables."""
    from types import SimpleNamespace

    from logmine.pipeline import steps
    from logmine.pipeline.inputs import InputFile
    from logmine.pipeline.spec import IngestStage
    from logmine.stages.ingest import collect_files

    files = [InputFile("2025-03-03", str(p), "logs", None) for p in collect_files([logs])]
    with make_engine(EngineConfig(workers=2)) as engine:
        ctx = SimpleNamespace(root=tmp_path / "ws", progress=lambda d, a, b: None, engine=engine)
        counts = steps.ingest(ctx, IngestStage(), files)  # type: ignore[arg-type]
        assert [s.label for s in engine.stats] == ["ingest"] and len(engine.stats[0].task_seconds) == len(files)
    serial, summary = serial_run
    assert counts["lines_read"] == summary["lines_read"] and counts["files_rejected"] == 2
    assert_same_tables(serial, tmp_path / "ws")
