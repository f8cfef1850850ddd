"""Whether ingest should spread a file over threads: only when cores are free for them.

Reading, checking and writing a big file in parallel threads (and Polars' own thread pool) makes
it faster on an idle machine, but where other processes hold the cores the threads only time-share
one core and cost CPU: on the 5M-line bench file, 23.2-23.8 CPU s in parallel against 20.3-21.3 s
one after another, with no faster wall time. (Polars' own pool is sized by :mod:`logmine.pools`.)
"""

from __future__ import annotations

import time

from logmine import early

SPARE_CORES_FOR_THREADS = 1.5
"""Spread a file over threads only when at least this many cores are spare."""
SAMPLES = 5
"""Samples of the runnable threads, :data:`INTERVAL` seconds apart."""
INTERVAL = 0.01


def cores() -> int:
    """The cores this process may run on (:func:`logmine.early.cores`)."""
    return early.cores()


def runnable_others(samples: int = SAMPLES, interval: float = INTERVAL) -> float | None:
    """Threads of other work runnable right now (mean of a few samples of ``procs_running`` in
    /proc/stat, less the sampling thread); None where the kernel does not say."""
    counts = []
    for i in range(samples):
        if i:
            time.sleep(interval)
        try:
            with open("/proc/stat", "rb") as fh:
                line = next((x for x in fh if x.startswith(b"procs_running ")), None)
        except OSError:
            return None
        if line is None:
            return None
        counts.append(int(line.split()[1]) - 1)
    return max(0.0, sum(counts) / len(counts))


def spare_cores() -> float:
    """Cores that no other runnable thread wants now (all of them where that is unknown)."""
    others = runnable_others()
    return float(cores()) if others is None else max(0.0, cores() - others)


def use_threads(spare: float | None = None) -> bool:
    """Whether a big file should be spread over threads (``spare``: measured now when None)."""
    return (spare_cores() if spare is None else spare) >= SPARE_CORES_FOR_THREADS
