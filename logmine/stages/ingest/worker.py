"""The run's second process: it reads what this process hands it while this one reads the rest.

On a machine with two cores or more, ingest reads in two processes (threads in one share the GIL
and cost CPU): the worker takes the rest of each big file (:mod:`logmine.stages.ingest.split`) and
every other group of small files, and writes their Parquet files itself; this process adopts the
files into its transaction, so the run stays one commit.

A job is a picklable call (``functools.partial`` of a module-level function) sent to
``python -m logmine.stages.ingest.worker`` as a length-prefixed pickle on stdin; its value (or
its error, as text) comes back the same way on stdout, in the order the jobs were sent. Only this
process's own child reads the pickles. One worker serves a whole run (starting Python and Polars
costs ~0.4 CPU s); it is started before the first file (:func:`start`), so its start overlaps this
process's reading, and it stops when its stdin closes: exit status 0 when idle, 3 when a job was
in hand (the reading process died or was killed, so nobody adopts the files; the workspace
collects them).
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import logging
import os
import pickle
import queue
import struct
import subprocess
import sys
import threading
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO, Generic, TypeVar

from logmine import early

log = logging.getLogger(__name__)

T = TypeVar("T")
_HEADER = struct.Struct("<Q")
_READY = "ready"
START_BYTES = 24 << 20
"""What a worker that has not started yet is counted as owing: Python and Polars take ~0.4 s to
start, about what this process reads of a prompt-heavy log in that time."""


class WorkerError(RuntimeError):
    """The worker failed a job (a bug or a killed process, not bad input: bad lines are rejects)."""

    def __init__(self, code: int | None, detail: str) -> None:
        super().__init__(f"ingest worker exited with {code}: {detail}" if code is not None else f"ingest worker failed: {detail}")


class Pace:
    """Input bytes read per second of work, over the jobs so far."""

    def __init__(self) -> None:
        self.nbytes = 0
        self.seconds = 0.0

    def add(self, nbytes: int, seconds: float) -> None:
        self.nbytes += nbytes
        self.seconds += max(seconds, 0.0)

    def rate(self) -> float | None:
        """Bytes a second; None until a tenth of a second of work was seen."""
        return self.nbytes / self.seconds if self.seconds >= 0.1 else None


class Handle(Generic[T]):
    """A job sent to the worker: its value once the worker sends it back."""

    def __init__(self, nbytes: int) -> None:
        self.nbytes = nbytes
        self.sent = time.perf_counter()
        self._done = threading.Event()
        self._value: Any = None
        self._error: WorkerError | None = None

    def done(self) -> bool:
        return self._done.is_set()

    def result(self) -> T:
        """The job's value (waits for it); :class:`WorkerError` when the worker failed it or died."""
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[no-any-return]

    def _settle(self, value: Any = None, error: WorkerError | None = None) -> None:
        self._value, self._error = value, error
        self._done.set()


class Worker:
    """A worker process running jobs one after another; :meth:`owed` says how far behind it is."""

    def __init__(self) -> None:
        self.proc, self.stderr = early.take_worker() or early.spawn_worker()  # started before the CLI's imports, if it was
        self.ready = threading.Event()
        self.pace = Pace()
        """How fast the worker reads (its jobs' bytes over the time each took once begun)."""
        self.here = Pace()
        """How fast the reading process reads its own parts (kept here by the caller, :func:`share_here`)."""
        self._last_done = 0.0
        self._lock = threading.Lock()
        self._sent: deque[Handle[Any]] = deque()
        self._reader = threading.Thread(target=self._read_answers, name="logmine-worker-answers", daemon=True)
        self._reader.start()

    def submit(self, job: Callable[[], T], nbytes: int = 0) -> Handle[T]:
        """Send ``job`` (a picklable call); ``nbytes``: the input bytes it reads, for :meth:`owed`."""
        handle: Handle[T] = Handle(nbytes)
        data = pickle.dumps(job, protocol=pickle.HIGHEST_PROTOCOL)
        with self._lock:
            if not self.alive():
                handle._settle(error=self._died())
                return handle
            self._sent.append(handle)
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(_HEADER.pack(len(data)) + data)  # stdin stays open: the worker stops when it closes
            self.proc.stdin.flush()
        except OSError:
            pass  # it died: the answer reader settles the handle
        return handle

    def owed(self) -> int:
        """Input bytes of the jobs sent and not yet done, less what the job under way has read by
        the worker's pace (a split file's part counted whole gave the next file nearly all to this
        process while the worker was about to be idle); a worker still starting counts :data:`START_BYTES`."""
        rate = self.pace.rate()
        with self._lock:
            owed = sum(h.nbytes for h in self._sent)
            head = self._sent[0] if self._sent else None
            begun = max(head.sent, self._last_done) if head is not None else 0.0
        if head is not None and rate and self.ready.is_set():
            owed -= min(int(rate * (time.perf_counter() - begun)), head.nbytes * 9 // 10)  # never all of it: it has not answered
        return owed + (0 if self.ready.is_set() else START_BYTES)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def _read_answers(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while (answer := _read_frame(out)) is not None:
            kind, value = pickle.loads(answer)
            if kind == _READY:
                self._last_done = time.perf_counter()  # work begins now, not when a job was sent
                self.ready.set()
                continue
            with self._lock:
                handle = self._sent.popleft()
            now = time.perf_counter()
            if handle.nbytes:
                self.pace.add(handle.nbytes, now - max(handle.sent, self._last_done))
            self._last_done = now
            handle._settle(value if kind == "ok" else None, None if kind == "ok" else WorkerError(None, value))
        self.proc.wait()
        with self._lock:
            left, self._sent = list(self._sent), deque()
        for handle in left:
            handle._settle(error=self._died())

    def _died(self) -> WorkerError:
        self.stderr.seek(0)
        return WorkerError(self.proc.poll(), self.stderr.read().decode(errors="replace")[-2000:])

    def close(self) -> None:
        """Let the worker stop (stdin closed) once its jobs are done, and wait for it."""
        if self.alive():
            with contextlib.suppress(OSError):
                self.proc.stdin.close()  # type: ignore[union-attr]
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:  # pragma: no cover - it stops at once when idle
                pass
        self.kill()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._reader.join(timeout=10)
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        self.stderr.close()


_current: list[Worker] = []
"""The run's worker, once started."""


def start() -> Worker:
    """The run's worker: the one started, when it is still alive, else a new one."""
    while _current:
        worker = _current[-1]
        if worker.alive():
            return worker
        _current.pop().kill()
    worker = Worker()
    _current.append(worker)
    return worker


def current() -> Worker | None:
    """The run's worker when one was started and is alive."""
    return _current[-1] if _current and _current[-1].alive() else None


def stop() -> None:
    """Stop the run's worker, if any (at the end of a run)."""
    while _current:
        _current.pop().close()


@contextlib.contextmanager
def run() -> Iterator[None]:
    """A run: its worker, if one was started, is stopped when it ends."""
    try:
        yield
    finally:
        stop()


atexit.register(stop)


def _read_frame(stream: BinaryIO) -> bytes | None:
    """The next frame's bytes; None at the end of the stream (or a frame cut short by it)."""
    header = _read_exactly(stream, _HEADER.size)
    return None if header is None else _read_exactly(stream, _HEADER.unpack(header)[0])


def _write_frame(stream: BinaryIO, value: object) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def main() -> None:
    # ``-m`` imported this package's face first, and with it everything the jobs call
    gc.disable()  # as in the reading process: parsing makes millions of short-lived objects, none in cycles
    jobs: queue.Queue[bytes] = queue.Queue()
    in_hand = _InHand()
    threading.Thread(target=_read_jobs, args=(jobs, in_hand), daemon=True).start()
    out = sys.stdout.buffer
    _write_frame(out, (_READY, None))
    while True:
        job = pickle.loads(jobs.get())
        try:
            answer: tuple[str, object] = ("ok", job())
        except Exception:  # noqa: BLE001 - handed back: the reading process does the job itself
            answer = ("error", traceback.format_exc(limit=8))
        _write_frame(out, answer)
        in_hand.add(-1)


class _InHand:
    """Jobs received and not yet answered."""

    def __init__(self) -> None:
        self.count = 0
        self.lock = threading.Lock()

    def add(self, n: int) -> None:
        with self.lock:
            self.count += n


def _read_jobs(jobs: queue.Queue[bytes], in_hand: _InHand) -> None:
    """Hand each job (a frame on stdin) to the main thread; stop at once when stdin closes: exit
    status 0 when idle (the run is over), 3 when a job was in hand. (Reads the file descriptor,
    not ``sys.stdin``: a thread blocked in its buffer's lock aborts the interpreter's shutdown.)"""
    stdin = os.fdopen(0, "rb", buffering=0)
    while (data := _read_frame(stdin)) is not None:
        in_hand.add(1)
        jobs.put(data)
    with in_hand.lock:
        os._exit(3 if in_hand.count else 0)


def _read_exactly(stream: BinaryIO, size: int) -> bytes | None:
    parts, left = [], size
    while left:
        block = stream.read(left)
        if not block:
            return None
        parts.append(block)
        left -= len(block)
    return b"".join(parts)


if __name__ == "__main__":
    main()
