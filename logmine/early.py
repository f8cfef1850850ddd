"""What ``logmine ingest`` starts before the CLI's imports: one-thread pools, and its worker process.

Polars and OpenBLAS (NumPy's) size their pools when they are imported, so a setting must be in
the environment before the first import of either; later it does nothing. The ingest worker
process (:mod:`logmine.stages.ingest.worker`) takes ~0.45 s to import what it runs: started here,
while this process imports the same, it is ready when the first file is. Only the process's own
command line can do either: by the time a command runs, the CLI has imported Polars.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO

INGEST_POOLS = {"POLARS_MAX_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
"""Ingest gets its parallelism from its own threads and its worker process: Polars' pool beside
them only spins (on the 5M-line bench file the threaded path took ~1 CPU s less with one Polars
thread at the same wall time), and ingest makes no BLAS call, while OpenBLAS's idle threads took
2-4 % of a prompt-heavy run's CPU samples."""
INGEST_MALLOC = {"MALLOC_MMAP_THRESHOLD_": str(32 << 20), "MALLOC_TRIM_THRESHOLD_": str(1 << 30)}
"""glibc's allocator keeps the memory ingest frees for the next chunk: by default a block of 8 MiB
or more (a chunk's bytes, a NumPy mask over them) was mapped afresh and every page faulted in
again, and the heap's free top given back. On a prompt-heavy file: system CPU 0.44 -> 0.29 s,
minor faults 108k -> 66k, all CPU -8 %; the memory stays with the process until it ends."""
_MALLOPT = {"MALLOC_MMAP_THRESHOLD_": -3, "MALLOC_TRIM_THRESHOLD_": -1}
"""``mallopt`` parameters (M_MMAP_THRESHOLD, M_TRIM_THRESHOLD) of the environment variables."""
WORKER_MODULE = "logmine.stages.ingest.worker"
PRESTART_BYTES = 16 << 20
"""A run reading at least this many bytes starts its worker before its first file (before the
CLI's imports when the command line names them)."""
_SCAN_ENTRIES = 10_000
"""At most this many directory entries are looked at to size the inputs early."""

_early: list[tuple[subprocess.Popen[bytes], IO[bytes]]] = []


def for_ingest(argv: list[str]) -> None:
    """When the command is ``ingest``: one-thread pools unless the user set them, and the worker
    started when two cores or more are there and the files named that it may take (native JSONL by
    name, no other ``--input-format``) come to :data:`PRESTART_BYTES`."""
    if argv[:1] != ["ingest"]:
        return
    for name, value in INGEST_POOLS.items():
        os.environ.setdefault(name, value)
    keep_freed_memory()
    if cores() >= 2 and _input_format(argv[1:]) in (None, "native") and _named_bytes(argv[1:]) >= PRESTART_BYTES:
        _early.append(spawn_worker())


def keep_freed_memory() -> None:
    """:data:`INGEST_MALLOC` for this process (glibc read its environment at start: ``mallopt``);
    nothing where the C library is not glibc, or the user set these variables."""
    if any(name in os.environ for name in INGEST_MALLOC):
        return
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (AttributeError, OSError):  # pragma: no cover - not glibc
        return
    for name, param in _MALLOPT.items():
        mallopt(param, int(INGEST_MALLOC[name]))


def spawn_worker() -> tuple[subprocess.Popen[bytes], IO[bytes]]:
    """A new worker process and the file its stderr goes to (a pipe could fill while this process is busy)."""
    stderr = tempfile.TemporaryFile()
    proc = subprocess.Popen([sys.executable, "-m", WORKER_MODULE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
                            env={**INGEST_POOLS, **INGEST_MALLOC, **os.environ})
    return proc, stderr


def take_worker() -> tuple[subprocess.Popen[bytes], IO[bytes]] | None:
    """The worker started early, when there is one still alive (each is taken once)."""
    while _early:
        proc, stderr = _early.pop()
        if proc.poll() is None:
            return proc, stderr
        stderr.close()
    return None


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


_VALUED_OPTIONS = frozenset({"-o", "--out", "--input-format", "--format", "-f"})
"""``logmine ingest``'s options that take a value: the value (the workspace, above all) is no input."""


NATIVE_SUFFIXES = frozenset({".jsonl", ".json", ".ndjson"})
"""The names of the files a run's worker may take (plain native JSONL, told by name: detection
comes later). The one rule of the early start and of the run's (``schedule._worth_a_worker``)."""


def _input_format(args: list[str]) -> str | None:
    """The ``--input-format`` the arguments give (None when they give none)."""
    for i, arg in enumerate(args):
        if arg == "--input-format" and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith("--input-format="):
            return arg.split("=", 1)[1]
    return None


def _named_bytes(args: list[str]) -> int:
    """Bytes of the files the arguments name that the worker may take (:data:`NATIVE_SUFFIXES`;
    directories walked, up to :data:`_SCAN_ENTRIES` entries)."""
    total, seen = 0, 0
    inputs = [a for i, a in enumerate(args) if not a.startswith("-") and (i == 0 or args[i - 1] not in _VALUED_OPTIONS)]
    for arg in inputs:
        with contextlib.suppress(OSError):
            path = Path(arg)
            if path.is_file():
                total += path.stat().st_size if path.suffix.lower() in NATIVE_SUFFIXES else 0
            elif path.is_dir():
                for root, dirs, files in os.walk(path):
                    dirs[:] = [d for d in dirs if not d.startswith(".")]
                    for name in files:
                        seen += 1
                        if os.path.splitext(name)[1].lower() in NATIVE_SUFFIXES:
                            with contextlib.suppress(OSError):
                                total += os.stat(os.path.join(root, name)).st_size
                        if seen >= _SCAN_ENTRIES or total >= PRESTART_BYTES:
                            return total
        if total >= PRESTART_BYTES:
            break
    return total


@atexit.register
def _stop_unused() -> None:
    while (early := take_worker()) is not None:
        proc, stderr = early
        with contextlib.suppress(OSError):
            proc.stdin.close()  # type: ignore[union-attr] - idle: it exits at once
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)
        stderr.close()
