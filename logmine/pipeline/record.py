"""Run records (OUT/runs/<run_id>.json and the ``runs`` table) and Prometheus textfile metrics.

A record is written as ``running`` when a run starts (file only), and completed when it ends:
``ok`` (exit 0), ``partial`` (exit 2: the run finished but some input lines or files were
rejected; see ``rejects``), or ``failed`` (exit 1, with the error). A run killed outright leaves
its ``running`` file; the next run marks it ``interrupted`` and says so in its own record.
"""

from __future__ import annotations

import json
import logging
import os
import platform
import secrets
import time
import uuid
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

log = logging.getLogger(__name__)

EXIT_OK, EXIT_FAILED, EXIT_PARTIAL = 0, 1, 2
RUNS_TABLE = "runs"
RUNS_DIR = "runs"
RUNS_SCHEMA: dict[str, pl.DataType] = {
    "run_id": pl.String(), "pipeline": pl.String(), "status": pl.String(), "exit_code": pl.Int64(),
    "started_at": pl.Datetime("us", "UTC"), "finished_at": pl.Datetime("us", "UTC"), "seconds": pl.Float64(),
    "date": pl.String(), "engine": pl.String(), "lines_read": pl.Int64(), "lines_accepted": pl.Int64(),
    "lines_rejected": pl.Int64(), "record": pl.String(),
}


def new_run_id() -> str:
    return datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ") + "-" + secrets.token_hex(3)


def versions() -> dict[str, str]:
    """Versions of logmine and the libraries whose behaviour shapes the results."""
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": platform.python_version()}
    for pkg in ("logmine", "polars", "duckdb", "pyarrow", "ray"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            continue
    return out


@dataclass
class RunRecord:
    """Everything a scheduler or a person needs to know about one run."""

    run_id: str
    pipeline: str
    pipeline_file: str
    pipeline_digest: str
    workspace: str
    date: str | None
    engine: dict[str, Any]
    started_at: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="microseconds"))
    """To the microsecond: two runs started within one second still sort in the order they ran (the
    report and `runs` readers take the latest by it)."""
    finished_at: str | None = None
    status: str = "running"
    exit_code: int | None = None
    error: str | None = None
    resumed_after: list[str] = field(default_factory=list)
    """Run ids of earlier runs found interrupted (killed) when this one started."""
    inputs: dict[str, Any] = field(default_factory=dict)
    counts: dict[str, Any] = field(default_factory=dict)
    rejects: dict[str, int] = field(default_factory=dict)
    stages: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Stage -> its summary plus ``seconds`` (and engine map timings)."""
    versions: dict[str, str] = field(default_factory=versions)
    seconds: float = 0.0
    _t0: float = field(default_factory=time.perf_counter, repr=False)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("_t0")
        return d

    def finish(self, status: str, exit_code: int, error: str | None = None) -> None:
        self.status, self.exit_code, self.error = status, exit_code, error
        self.finished_at = datetime.now(UTC).isoformat(timespec="microseconds")
        self.seconds = round(time.perf_counter() - self._t0, 3)

    def row(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id, "pipeline": self.pipeline, "status": self.status, "exit_code": self.exit_code,
            "started_at": datetime.fromisoformat(self.started_at),
            "finished_at": datetime.fromisoformat(self.finished_at) if self.finished_at else None,
            "seconds": self.seconds, "date": self.date, "engine": self.engine.get("engine"),
            "lines_read": self.counts.get("lines_read"), "lines_accepted": self.counts.get("lines_accepted"),
            "lines_rejected": self.counts.get("lines_rejected"), "record": json.dumps(self.to_json(), default=str),
        }


def atomic_write(path: Path, data: str) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename (readers never see half)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def record_path(root: Path, run_id: str) -> Path:
    return root / RUNS_DIR / f"{run_id}.json"


def save_file(root: Path, record: RunRecord) -> Path:
    path = record_path(root, record.run_id)
    atomic_write(path, json.dumps(record.to_json(), indent=2, default=str) + "\n")
    return path


def mark_interrupted(root: Path) -> list[str]:
    """Records still ``running`` (their run was killed: we hold the run lock now) become ``interrupted``."""
    found = []
    for path in sorted((root / RUNS_DIR).glob("*.json")):
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if doc.get("status") == "running":
            doc.update(status="interrupted", exit_code=None, error="the run ended without finishing (killed?)")
            atomic_write(path, json.dumps(doc, indent=2, default=str) + "\n")
            found.append(doc.get("run_id", path.stem))
    return found


def save_table(ws: Any, record: RunRecord, keep: int) -> None:
    """Add the record to the ``runs`` table (one partition per run), keeping the newest ``keep``."""
    with ws.lock():
        ws = ws.reload()
        txn = ws.transaction()
        txn.ensure_table(RUNS_TABLE, RUNS_SCHEMA)
        txn.put_partition(RUNS_TABLE, record.run_id, pl.DataFrame([record.row()], schema=RUNS_SCHEMA))
        existing = set(ws.partitions(RUNS_TABLE)) if ws.has_table(RUNS_TABLE) else set()
        for run_id in sorted(existing | {record.run_id})[:-keep]:
            txn.drop_partition(RUNS_TABLE, run_id)
        txn.commit()
    files = sorted((ws.root / RUNS_DIR).glob("*.json"))
    for path in [p for p in files if p.stem != record.run_id][: max(0, len(files) - keep)]:
        path.unlink(missing_ok=True)


# -- Prometheus textfile -------------------------------------------------------------------------------
def _label(value: object) -> str:
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def metrics_text(record: RunRecord, last_success: float | None) -> str:
    """The run as Prometheus text exposition (for node-exporter's textfile collector)."""
    pl_ = f'pipeline="{_label(record.pipeline)}"'
    lines: list[str] = []

    def metric(name: str, kind: str, help_: str, samples: list[tuple[str, float]]) -> None:
        lines.append(f"# HELP {name} {help_}")
        lines.append(f"# TYPE {name} {kind}")
        for labels, value in samples:
            text = str(int(value)) if float(value).is_integer() else repr(float(value))
            lines.append(f"{name}{{{labels}}} {text}" if labels else f"{name} {text}")

    finished = datetime.fromisoformat(record.finished_at).timestamp() if record.finished_at else time.time()
    metric("logmine_run_exit_code", "gauge", "Exit code of the last run (0 ok, 2 partial, 1 failed).", [(pl_, record.exit_code or 0)])
    metric("logmine_run_success", "gauge", "1 if the last run finished (ok or partial), else 0.", [(pl_, 1 if record.status in ("ok", "partial") else 0)])
    metric("logmine_run_finished_timestamp_seconds", "gauge", "When the last run ended.", [(pl_, finished)])
    if last_success is not None:
        metric("logmine_run_last_success_timestamp_seconds", "gauge", "When a run last finished ok or partial.", [(pl_, last_success)])
    metric("logmine_run_duration_seconds", "gauge", "Wall time of the last run.", [(pl_, record.seconds)])
    metric("logmine_stage_duration_seconds", "gauge", "Wall time of each stage in the last run.",
           [(f'{pl_},stage="{_label(s)}"', float(v.get("seconds", 0.0))) for s, v in record.stages.items()])
    lines_ = [(f'{pl_},outcome="{k}"', float(record.counts.get(f"lines_{k}", 0) or 0)) for k in ("read", "accepted", "rejected")]
    metric("logmine_ingest_lines", "gauge", "Input lines read, accepted and rejected by the last run.", lines_)
    metric("logmine_ingest_rejected_lines", "gauge", "Rejected lines of the last run by reason.",
           [(f'{pl_},reason="{_label(r)}"', float(n)) for r, n in sorted(record.rejects.items())])
    parts = []
    for stage, v in record.stages.items():
        pinfo = v.get("partitions") if isinstance(v, dict) else None
        if isinstance(pinfo, dict):
            parts.append((f'{pl_},stage="{_label(stage)}",state="computed"', float(len(pinfo.get("computed", [])))))
            parts.append((f'{pl_},stage="{_label(stage)}",state="reused"', float(pinfo.get("reused", 0))))
    metric("logmine_stage_partitions", "gauge", "Partitions computed and reused per stage in the last run.", parts)
    return "\n".join(lines) + "\n"


def write_metrics(path: Path, record: RunRecord, last_success: float | None) -> None:
    atomic_write(path, metrics_text(record, last_success))


def last_success(ws: Any, record: RunRecord) -> float | None:
    """When a run of this workspace last finished ok or partial (this one included)."""
    if record.status in ("ok", "partial") and record.finished_at:
        return datetime.fromisoformat(record.finished_at).timestamp()
    if ws is None or not ws.has_table(RUNS_TABLE):
        return None
    df = ws.read(RUNS_TABLE).filter(pl.col("status").is_in(["ok", "partial"]))
    return df["finished_at"].max().timestamp() if df.height else None  # type: ignore[union-attr]
