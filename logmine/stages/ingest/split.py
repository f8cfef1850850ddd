"""A big plain native file read in two processes: the first part here, the rest in a worker.

Each process reads its part one chunk at a time, in step with its writer, into its own Parquet
files: the rest becomes a second partition of the file (key :data:`REST_SUFFIX`), which sorts
right after the first, so the tables hold the same rows in the same order as one partition would.
Threads in one process share the GIL and cost CPU; two processes each read as cheaply as one
thread, so on a machine with two free cores the file takes about half the time.

The worker is ``python -m logmine.stages.ingest.split``: each part as a JSON line on stdin, its
report and files as a JSON line on stdout; one worker serves a run's big files one after another.
It counts the lines before its part itself, to number its lines.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import queue
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from logmine.formats import native
from logmine.stages.ingest.writer import FileReport, PartitionWriter

log = logging.getLogger(__name__)

REST_SUFFIX = "~2"
"""Appended to a file's partition key for the part the worker reads."""
FIRST_SHARE = 0.52
"""The share of the file read here: the worker also starts Python and counts the lines before its
part (this process hashes the file); at 0.5 the worker finished ~0.5 s after this process (5M bench file)."""
COUNT_BLOCK = 8 << 20


@dataclass(frozen=True)
class Part:
    """Bytes ``[start, stop)`` of a plain native file and the Parquet files to write them to."""

    path: str
    start: int
    stop: int | None
    key: str
    """The file's partition key (row ids are built from it, as for the whole file)."""
    user_key: bytes
    files: dict[str, str]


def split_point(path: Path, size: int, share: float = FIRST_SHARE) -> int | None:
    """The offset of the first line starting at or after ``share`` of the file; None when none does."""
    with open(path, "rb") as fh:
        fh.seek(int(size * share))
        while block := fh.read(1 << 16):
            nl = block.find(b"\n")
            if nl >= 0:
                offset = fh.tell() - len(block) + nl + 1
                return offset if offset < size else None
    return None


def plan_split(path: Path, fmt: str, size: int, wanted: bool, key: str, user_key: bytes, files: dict[str, str]) -> Part | None:
    """The part a worker process should read when a file is split; None when it is read whole.

    Only a plain native file (not compressed, the vectorised reader on) is split, and only when
    ``wanted`` and ``files`` names the rest's Parquet files.
    """
    plain = path.suffix.lower() not in {".gz", ".zst", ".zstd"} and os.environ.get("LOGMINE_NATIVE_FAST") != "0"
    if not (wanted and fmt == "native" and plain and files):
        return None
    start = split_point(path, size)
    return None if start is None else Part(str(path), start, None, key, user_key, files)


def rest_result(worker: Worker, part: Part, on_bytes: Callable[[int], None]) -> tuple[FileReport, dict[str, Path]]:
    """The worker's part; read here should the worker process fail (a bug, or it was killed)."""
    try:
        done = worker.result()
    except WorkerError as exc:
        log.warning("%s: %s; reading that part here", part.path, exc)
        return write_part(part, on_bytes)
    on_bytes(Path(part.path).stat().st_size - part.start if part.stop is None else part.stop - part.start)
    return done


def lines_before(path: Path, offset: int) -> int:
    """Newlines in the first ``offset`` bytes of ``path`` (read into one reused buffer: a fresh
    block each time costs a page fault per 4 KiB)."""
    count, left, buffer = 0, offset, bytearray(COUNT_BLOCK)
    data, newline = np.frombuffer(buffer, np.uint8), np.empty(COUNT_BLOCK, bool)  # numpy: 3x faster than bytes.count
    with open(path, "rb", buffering=0) as fh:
        while left > 0 and (n := fh.readinto(memoryview(buffer)[:min(COUNT_BLOCK, left)])):
            count += int(np.count_nonzero(np.equal(data[:n], 10, out=newline[:n])))
            left -= n
    return count


def write_part(part: Part, on_bytes: Callable[[int], None] | None = None) -> tuple[FileReport, dict[str, Path]]:
    """Read ``part`` one chunk at a time and write its Parquet files; the report and the files written."""
    path = Path(part.path)
    first = 1 + (lines_before(path, part.start) if part.start else 0)
    writer = PartitionWriter({t: Path(f) for t, f in part.files.items()}, part.key, part.path, "native", part.user_key)
    try:
        for batch in native.read_span(path, part.start, part.stop, first):
            writer.add(batch)
            if on_bytes is not None:
                on_bytes(batch.bytes_read)
    except BaseException:
        writer.abort()
        raise
    return writer.finish()


class Worker:
    """A worker process writing parts, one at a time; :meth:`result` waits for the current one.

    One worker serves every big file of a run (:func:`worker_for`, :func:`keep`,
    :func:`close_idle`): starting Python and importing Polars took ~0.4 CPU s a file.
    """

    def __init__(self, part: Part) -> None:
        env = {**os.environ, "POLARS_MAX_THREADS": os.environ.get("POLARS_MAX_THREADS", "1")}
        self.stderr = tempfile.TemporaryFile()  # a pipe could fill while this process is busy reading
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "logmine.stages.ingest.split"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=self.stderr, env=env,
        )
        self.submit(part)

    def submit(self, part: Part) -> None:
        """Send the next part (the worker is idle: its last result was read)."""
        message = {**asdict(part), "user_key": part.user_key.hex()}
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")  # small: fits the pipe
        self.proc.stdin.flush()  # stdin stays open: the worker stops when it closes (this process died)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def result(self) -> tuple[FileReport, dict[str, Path]]:
        line = self.proc.stdout.readline()  # type: ignore[union-attr] - the part's answer, or EOF when the worker died
        if not line:
            self.proc.wait()
            self.stderr.seek(0)
            raise WorkerError(self.proc.returncode, self.stderr.read().decode(errors="replace")[-2000:])
        answer = json.loads(line)
        return FileReport(**answer["report"]), {t: Path(f) for t, f in answer["files"].items()}

    def close(self) -> None:
        """Let an idle worker stop (stdin closed) and wait for it."""
        if self.alive():
            self.proc.stdin.close()  # type: ignore[union-attr]
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:  # pragma: no cover - it stops at once
                pass
        self.kill()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                pipe.close()
        self.stderr.close()


_idle: list[Worker] = []
"""The run's worker between two big files."""


def worker_for(part: Part) -> Worker:
    """A worker writing ``part``: the idle one when it is still alive, else a new one."""
    while _idle:
        worker = _idle.pop()
        if worker.alive():
            worker.submit(part)
            return worker
        worker.kill()
    return Worker(part)


def keep(worker: Worker) -> None:
    """Keep ``worker`` (its part's result read) for the next big file."""
    if worker.alive():
        _idle.append(worker)
    else:
        worker.kill()


def close_idle() -> None:
    """Stop the idle worker, if any (at the end of a run)."""
    while _idle:
        _idle.pop().close()


@contextlib.contextmanager
def run_workers() -> Iterator[None]:
    """A run: its idle worker is stopped when it ends."""
    try:
        yield
    finally:
        close_idle()


atexit.register(close_idle)


class WorkerError(RuntimeError):
    """The worker process failed (a bug or a killed process, not bad input: bad lines are rejects)."""

    def __init__(self, code: int, stderr: str) -> None:
        super().__init__(f"ingest worker exited with {code}: {stderr}")


def main() -> None:
    parts: queue.Queue[Part] = queue.Queue()
    busy = threading.Event()
    threading.Thread(target=_read_parts, args=(parts, busy), daemon=True).start()
    while True:
        report, files = write_part(parts.get())
        busy.clear()
        sys.stdout.write(json.dumps({"report": asdict(report), "files": {t: str(p) for t, p in files.items()}}) + "\n")
        sys.stdout.flush()


def _read_parts(parts: queue.Queue[Part], busy: threading.Event) -> None:
    """Hand each part (a JSON line on stdin) to the main thread; stop at once when stdin closes:
    exit status 0 when idle (the run is over), 3 when a part was in hand: the reading process died
    (or was killed), so nobody will adopt the files; they are left for the workspace to collect.
    (Reads the file descriptor, not ``sys.stdin``: a thread blocked in its buffer's lock aborts the
    interpreter's shutdown.)"""
    pending = b""
    while block := os.read(0, 1 << 16):
        pending += block
        while b"\n" in pending:
            line, pending = pending.split(b"\n", 1)
            message = json.loads(line)
            busy.set()
            parts.put(Part(**{**message, "user_key": bytes.fromhex(message["user_key"])}))
    os._exit(3 if busy.is_set() else 0)


if __name__ == "__main__":
    main()
