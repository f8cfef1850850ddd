"""Shared test setup: deterministic, single-threaded heavy libraries; helpers to run the CLI."""

from __future__ import annotations

import os

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("LOGMINE_USER_KEY", "test-key")
