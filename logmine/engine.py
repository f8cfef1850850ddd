"""Map over partitions, then merge: the one scale-out interface every stage uses.

A stage splits its work into *partitions* (a day, a source file, a shard of lines), gives the
engine a pure, module-level partition function and the partitions, and merges the partial
results itself (counts sum, sketches sum, templates merge by content hash)::

    with make_engine(EngineConfig(kind="ray", workers=2)) as engine:
        partials = engine.map(flows_partial, day_files)   # one result per partition, in order
        merged = merge(partials)

Engines:

* ``local`` (default): ``workers=1`` runs the partitions one after another in this process;
  ``workers>1`` runs them in a process pool (``spawn``, so Polars' threads are safe).
* ``ray``: each partition is one plain Ray task (``ray.remote``), on a local Ray started with
  ``workers`` CPUs or on the cluster at ``ray_address``. Polars frames travel as Arrow tables
  (Ray's object store holds Arrow buffers without copying); inputs are usually Parquet paths,
  which cluster nodes must be able to read (shared storage). Ray is optional: install it with
  ``pip install 'logmine[ray]'``.

Ingest runs on it too (:func:`logmine.stages.ingest.core.ingest` with ``engine=``): one task per input
file, which writes that file's Parquet files straight into the workspace's ``data/`` folder; the
driver adopts them and commits one transaction. On a Ray cluster the inputs and the workspace must
therefore be on storage every node mounts at the same paths.

Every engine gives the same results for the same partition function and partitions; the
partition function must therefore be deterministic and must not rely on global state.
"""

from __future__ import annotations

import logging
import os
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

import polars as pl
import pyarrow as pa

from logmine.errors import OptionError
from logmine.models import require

log = logging.getLogger(__name__)

P = TypeVar("P")
R = TypeVar("R")
M = TypeVar("M")
EngineKind = Literal["local", "ray"]
ENGINES = ("local", "ray")


@dataclass(frozen=True)
class EngineConfig:
    """Where partition functions run."""

    kind: EngineKind = "local"
    """``local`` (this machine: serial or a process pool) or ``ray`` (Ray tasks)."""
    workers: int | None = None
    """Local: processes (None or 1 = serial, in this process). Ray: CPUs of a Ray started here
    (None: every CPU of this machine; ignored with an address)."""
    ray_address: str | None = None
    """Address of a running Ray cluster (``ray://host:10001`` or ``auto``); None starts a local Ray."""


@dataclass
class MapStats:
    """Timings of one :meth:`Engine.map` call: each task's own seconds and the wall time."""

    label: str
    task_seconds: list[float] = field(default_factory=list)
    wall_seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        n = len(self.task_seconds)
        return {"label": self.label, "tasks": n, "task_seconds_sum": round(sum(self.task_seconds), 4),
                "task_seconds_max": round(max(self.task_seconds, default=0.0), 4), "wall_seconds": round(self.wall_seconds, 4)}


class Engine(ABC):
    """Runs a partition function over partitions; results come back in partition order."""

    kind: str = "local"

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.stats: list[MapStats] = []

    def map(self, fn: Callable[[P], R], parts: Sequence[P], label: str | None = None) -> list[R]:
        """``[fn(p) for p in parts]``, possibly in parallel; the order of ``parts`` is kept."""
        stats = MapStats(label or getattr(fn, "__name__", type(fn).__name__))
        started = time.perf_counter()
        timed = self._map(fn, list(parts)) if parts else []
        stats.wall_seconds = time.perf_counter() - started
        stats.task_seconds = [seconds for _, seconds in timed]
        self.stats.append(stats)
        log.debug("engine %s: %s over %d partitions in %.3f s", self.kind, stats.label, len(timed), stats.wall_seconds)
        return [result for result, _ in timed]

    def map_merge(self, fn: Callable[[P], R], parts: Sequence[P], merge: Callable[[list[R]], M], label: str | None = None) -> M:
        """Map ``fn`` over ``parts``, then ``merge`` the partial results (in this process)."""
        return merge(self.map(fn, parts, label))

    @abstractmethod
    def _map(self, fn: Callable[[Any], Any], parts: list[Any]) -> list[tuple[Any, float]]: ...

    def close(self) -> None:  # noqa: B027 - engines without resources keep this no-op
        """Release workers (a process pool, a Ray started here)."""

    def describe(self) -> dict[str, Any]:
        return {"engine": self.kind, "workers": self.workers}

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- the wire: Polars frames travel as Arrow tables ---------------------------------------------------
class _PolarsFrame:
    """A Polars DataFrame in transit, held as an Arrow table (restored on arrival)."""

    __slots__ = ("table",)

    def __init__(self, table: pa.Table) -> None:
        self.table = table


def to_wire(obj: Any) -> Any:
    """Replace every Polars DataFrame inside ``obj`` (dicts, lists, tuples) by its Arrow table."""
    if isinstance(obj, pl.DataFrame):
        return _PolarsFrame(obj.to_arrow())
    if isinstance(obj, dict):
        return {k: to_wire(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
        return type(obj)(to_wire(v) for v in obj)
    return obj


def from_wire(obj: Any) -> Any:
    """Undo :func:`to_wire`."""
    if isinstance(obj, _PolarsFrame):
        return pl.from_arrow(obj.table)
    if isinstance(obj, dict):
        return {k: from_wire(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
        return type(obj)(from_wire(v) for v in obj)
    return obj


def run_task(fn: Callable[[Any], Any], part: Any) -> tuple[Any, float]:
    """Run one partition in a worker: wire in, wire out, with the task's own seconds."""
    started = time.perf_counter()
    result = fn(from_wire(part))
    return to_wire(result), time.perf_counter() - started


# -- local -------------------------------------------------------------------------------------------
class LocalEngine(Engine):
    """Serial in this process (``workers=1``) or a ``spawn`` process pool."""

    kind = "local"

    def __init__(self, workers: int = 1) -> None:
        super().__init__(max(1, workers))
        self._pool: Any = None

    def _map(self, fn: Callable[[Any], Any], parts: list[Any]) -> list[tuple[Any, float]]:
        if self.workers == 1 or len(parts) == 1:
            out = []
            for part in parts:
                started = time.perf_counter()
                out.append((fn(part), time.perf_counter() - started))
            return out
        if self._pool is None:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            self._pool = ProcessPoolExecutor(max_workers=self.workers, mp_context=multiprocessing.get_context("spawn"))
        futures = [self._pool.submit(run_task, fn, to_wire(part)) for part in parts]
        return [(from_wire(result), seconds) for result, seconds in (f.result() for f in futures)]

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


# -- Ray ---------------------------------------------------------------------------------------------
def require_ray() -> Any:
    """Import Ray or raise :class:`~logmine.errors.MissingDependencyError` with the install hint."""
    return require("ray", "ray", "the ray engine (--engine ray)")


class RayEngine(Engine):
    """Each partition is one Ray task; uses the running Ray if this process already started one."""

    kind = "ray"

    def __init__(self, workers: int | None = None, address: str | None = None) -> None:
        super().__init__(max(1, workers or os.cpu_count() or 1))
        self.address = address
        ray = require_ray()
        self._ray = ray
        self._owned = False
        if not ray.is_initialized():
            os.environ.setdefault("RAY_DEDUP_LOGS", "0")
            kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "configure_logging": False}
            if address:
                ray.init(address=address, **kwargs)
            else:
                ray.init(num_cpus=self.workers, **kwargs)
            self._owned = True
        self.workers = int(ray.cluster_resources().get("CPU", self.workers))
        self._task = ray.remote(num_cpus=1, max_retries=2)(run_task)

    def _map(self, fn: Callable[[Any], Any], parts: list[Any]) -> list[tuple[Any, float]]:
        ray = self._ray
        fn_ref = ray.put(fn)
        refs = [self._task.remote(fn_ref, to_wire(part)) for part in parts]
        return [(from_wire(result), seconds) for result, seconds in ray.get(refs)]

    def describe(self) -> dict[str, Any]:
        return {"engine": self.kind, "workers": self.workers, "ray_address": self.address, "ray_version": self._ray.__version__}

    def close(self) -> None:
        if self._owned and self._ray.is_initialized():
            self._ray.shutdown()
            self._owned = False


def make_engine(config: EngineConfig | None = None) -> Engine:
    """The engine ``config`` names (local by default)."""
    config = config or EngineConfig()
    if config.workers is not None and config.workers < 1:
        raise OptionError("--workers", config.workers, "at least 1")
    if config.kind == "local":
        if config.ray_address:
            raise OptionError("--ray-address", config.ray_address, "only with --engine ray")
        return LocalEngine(config.workers or 1)
    if config.kind == "ray":
        return RayEngine(config.workers, config.ray_address)
    raise OptionError("--engine", config.kind, "one of " + ", ".join(ENGINES))


__all__ = ["ENGINES", "Engine", "EngineConfig", "LocalEngine", "MapStats", "RayEngine", "from_wire", "make_engine", "require_ray", "to_wire"]
