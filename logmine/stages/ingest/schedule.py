"""The order of a run's reading in this process: files one after another, big ones shared with the
run's worker process, small native ones in groups; results in task order (see
:mod:`logmine.stages.ingest.core`)."""

from __future__ import annotations

import collections
import functools
import logging
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from logmine import early
from logmine.formats import native
from logmine.stages.ingest import worker as workers
from logmine.stages.ingest.reading import (
    _groupable,
    _read_small,
    _read_small_now,
    _read_started,
    _start,
    _Started,
)
from logmine.stages.ingest.report import Meter, file_size
from logmine.stages.ingest.tasks import FileResult, FileTask
from logmine.stages.ingest.threads import cores

log = logging.getLogger(__name__)


def _read_here(tasks: list[FileTask], meter: Meter) -> Iterator[FileResult]:
    """Each task's result in order, read in this process and, on two cores or more, in the run's
    worker process (:mod:`logmine.stages.ingest.worker`), started before the first file.

    A big plain native file is read in two parts, the worker's share set so that both finish
    about together (:func:`logmine.stages.ingest.split.share_here`); runs of small native files
    are read together, up to :data:`native.GROUP_BYTES` at a time (:func:`_read_small`), a group
    going to the worker when it has less than that left to do, else read here, its Parquet files
    written in a thread while the next group is parsed (both release the GIL). Nothing waits for
    the worker until a result is due: results come out in task order as they are ready."""
    if _worth_a_worker(tasks):
        workers.start()
    done = _InOrder(meter)
    group: list[FileResult | _Started] = []
    size = 0
    with ThreadPoolExecutor(1, thread_name_prefix="logmine-parquet") as pool:
        writes = _Writes(pool)
        for task in tasks:
            started = _start(task)
            if isinstance(started, _Started) and _groupable(started):
                if size + started.before.st_size > native.GROUP_BYTES:
                    done.add(*_group_slot(group, writes))
                    group, size = [], 0
                group.append(started)
                size += started.before.st_size
            elif isinstance(started, FileResult) and group:  # settled: it waits for the group, to keep the order
                group.append(started)
            else:
                if group:
                    done.add(*_group_slot(group, writes))
                    group, size = [], 0
                if isinstance(started, FileResult):
                    done.add(lambda r=started: [r], lambda: True)  # type: ignore[misc]
                else:
                    meter.start(started.path)
                    counter = _Counter(meter.add)
                    finish, ready = _read_started(started, counter)
                    done.add(lambda f=finish: [f()], ready, counter)  # type: ignore[misc]
            yield from done.ready()
        if group:
            done.add(*_group_slot(group, writes))
        yield from done.rest()


def _worth_a_worker(tasks: list[FileTask]) -> bool:
    """Whether the run's worker should be started now: two cores or more, and enough bytes of
    files it could take (plain native ones, by name: detection comes later), or a split asked for."""
    if any(t.split is True for t in tasks):
        return True
    if cores() < 2:
        return False
    names = [Path(t.path) for t in tasks if t.split is None and t.threads is None and t.fmt in (None, native.NAME)]
    return sum(file_size(p) for p in names if p.suffix.lower() in early.NATIVE_SUFFIXES) >= early.PRESTART_BYTES


class _InOrder:
    """Results due in task order, some still being made (here or in the worker)."""

    def __init__(self, meter: Meter) -> None:
        self.meter = meter
        self.slots: collections.deque[tuple[Callable[[], list[FileResult]], Callable[[], bool], _Counter | None]] = collections.deque()

    def add(self, get: Callable[[], list[FileResult]], ready: Callable[[], bool], counter: _Counter | None = None) -> None:
        """``get`` gives the results (waiting if need be), ``ready`` says whether it would wait;
        ``counter``: what added the bytes to the meter as they were read, when something did."""
        self.slots.append((get, ready, counter))

    def ready(self) -> Iterator[FileResult]:
        while self.slots and self.slots[0][1]():
            yield from self._next()

    def rest(self) -> Iterator[FileResult]:
        while self.slots:
            yield from self._next()

    def _next(self) -> Iterator[FileResult]:
        get, _, counter = self.slots.popleft()
        for result in get():
            if counter is None:
                self.meter.start(Path(result.report.path))
            self.meter.end(result.size - (counter.total if counter is not None else 0))
            yield result


class _Counter:
    """Passes byte counts on to ``add`` and keeps their total."""

    def __init__(self, add: Callable[[int], None]) -> None:
        self.add, self.total = add, 0

    def __call__(self, nbytes: int) -> None:
        self.total += nbytes
        self.add(nbytes)


def _group_slot(group: list[FileResult | _Started], writes: _Writes) -> tuple[Callable[[], list[FileResult]], Callable[[], bool]]:
    """A group of small files read by the worker when it has less than the group left to do
    (and is alive), else here: the call giving its results and the one saying they are ready."""
    nbytes = sum(item.before.st_size for item in group if isinstance(item, _Started))
    worker = workers.current()
    if worker is not None and worker.owed() < nbytes:
        handle = worker.submit(functools.partial(_read_small_now, group), nbytes)
        return lambda: _worker_group(handle, group), handle.done
    future = writes.submit(_read_small(group))
    return future.result, future.done


def _worker_group(handle: workers.Handle[list[FileResult]], group: list[FileResult | _Started]) -> list[FileResult]:
    try:
        return handle.result()
    except workers.WorkerError as exc:
        log.warning("%d small files: %s; reading them here", len(group), exc)
        return _read_small_now(group)


class _Writes:
    """One group's writing at a time, in a thread (:func:`_read_here`)."""

    def __init__(self, pool: ThreadPoolExecutor) -> None:
        self.pool = pool
        self.pending: Future[list[FileResult]] | None = None

    def submit(self, write: Callable[[], list[FileResult]]) -> Future[list[FileResult]]:
        """Start ``write`` once the group before it is written (its tables are in memory till then)."""
        if self.pending is not None:
            self.pending.result()
        self.pending = self.pool.submit(write)
        return self.pending
