"""Prompt skeletons worked out in a second process while this one mines.

Turning a prompt into its skeleton (record values and code spans to placeholders and slot
tokens, :func:`logmine.stages.templates.prompts.skeleton`) costs more than mining it. With
``workers=1`` :func:`skeletons` hands batches of prompts to one worker process, which keeps the
slot store, and yields the skeletons in input order while the caller mines them: the same
skeletons, in the same order, as in one process (one worker sees every prompt, in order), so
the templates are the same too.
"""

from __future__ import annotations

import multiprocessing
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

from logmine.stages.templates.bodies import SlotStore
from logmine.stages.templates.skeleton import record_values, skeleton

BATCH = 256
"""Prompts per batch sent to the worker."""
IN_FLIGHT = 8
"""Batches handed to the worker ahead of the one being mined (bounds memory)."""

_STORE: Any = None


def _init() -> None:
    global _STORE
    _STORE = SlotStore()


def _batch(items: list[tuple[str, dict[str, str]]]) -> list[str]:
    return [skeleton(prompt, values, _STORE) for prompt, values in items]


def _texts() -> dict[str, str]:
    return _STORE.texts


class SkeletonWorker:
    """One worker process making skeletons; :meth:`texts` gives its slot store's texts at the end."""

    def __init__(self) -> None:
        self.pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"), initializer=_init)

    def skeletons(self, records: Iterable[Mapping[str, Any]], present: list[bool]) -> Iterator[str]:
        """The skeleton of every record with a prompt, in order; ``present`` gets one flag per record."""
        pending: deque[Future[list[str]]] = deque()
        batch: list[tuple[str, dict[str, str]]] = []
        for record in records:
            prompt = record.get("prompt")
            present.append(isinstance(prompt, str))
            if isinstance(prompt, str):
                batch.append((prompt, record_values(record)))
            if len(batch) >= BATCH:
                pending.append(self.pool.submit(_batch, batch))
                batch = []
                while len(pending) > IN_FLIGHT:
                    yield from pending.popleft().result()
        if batch:
            pending.append(self.pool.submit(_batch, batch))
        while pending:
            yield from pending.popleft().result()

    def texts(self) -> dict[str, str]:
        return self.pool.submit(_texts).result()

    def close(self) -> None:
        self.pool.shutdown(cancel_futures=True)
