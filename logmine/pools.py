"""Thread pools of the native libraries, sized before they load.

Polars and OpenBLAS (NumPy's) size their pools when they are imported, so a setting must be in
the environment before the first import of either; later it does nothing.
"""

from __future__ import annotations

import os

INGEST_POOLS = {"POLARS_MAX_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
"""Ingest gets its parallelism from its own threads and its worker process: Polars' pool beside
them only spins (on the 5M-line bench file the threaded path took ~1 CPU s less with one Polars
thread at the same wall time), and ingest makes no BLAS call, while OpenBLAS's idle threads took
2-4 % of a prompt-heavy run's CPU samples."""


def limit_for_ingest(argv: list[str]) -> None:
    """Before Polars or NumPy loads: one-thread pools when the command is ``ingest``, unless the
    user set them. (Only the process's own command line can do this: by the time a command
    runs, the CLI has imported Polars.)"""
    if argv[:1] == ["ingest"]:
        for name, value in INGEST_POOLS.items():
            os.environ.setdefault(name, value)
