"""Prompt skeletons worked out in worker processes while this one mines.

Turning a prompt into its skeleton (record values and code spans to placeholders and slot
tokens, :func:`logmine.stages.templates.prompts.skeleton`) costs more than mining it. With
``workers=N`` :class:`SkeletonWorker` hands batches of prompts to N worker processes and yields
each skeleton, in input order, with the ``(slot id, text)`` of its slot tokens while the caller
mines them. Making a skeleton is pure (:meth:`~logmine.stages.templates.bodies.SlotStore.make`);
the caller counts the slot texts into its own store in input order, so the store and the
templates are the same as in one process, whatever N.
"""

from __future__ import annotations

import multiprocessing
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any

from logmine.stages.templates.bodies import SlotStore, SlotTexts
from logmine.stages.templates.skeleton import record_values, skeleton

BATCH = 256
"""Prompts per batch sent to a worker."""
IN_FLIGHT = 8
"""Batches handed to each worker ahead of the one being mined (bounds memory)."""

_STORE: Any = None


def _init() -> None:
    global _STORE
    _STORE = SlotStore()


def _batch(items: list[tuple[str, dict[str, str]]]) -> list[tuple[str, SlotTexts]]:
    out = []
    for prompt, values in items:
        _STORE.made = made = []
        out.append((skeleton(prompt, values, _STORE), made))
    return out


class SkeletonWorker:
    """``workers`` processes making skeletons, each with its own cache of the skeletons it made."""

    def __init__(self, workers: int = 1) -> None:
        self.workers = max(1, workers)
        self.pool = ProcessPoolExecutor(self.workers, mp_context=multiprocessing.get_context("spawn"), initializer=_init)

    def skeletons(self, records: Iterable[Mapping[str, Any]], present: list[bool]) -> Iterator[tuple[str, SlotTexts]]:
        """The skeleton and slot texts of every record with a prompt, in order; ``present`` gets one flag per record."""
        pending: deque[Future[list[tuple[str, SlotTexts]]]] = deque()
        batch: list[tuple[str, dict[str, str]]] = []
        for record in records:
            prompt = record.get("prompt")
            present.append(isinstance(prompt, str))
            if isinstance(prompt, str):
                batch.append((prompt, record_values(record)))
            if len(batch) >= BATCH:
                pending.append(self.pool.submit(_batch, batch))
                batch = []
                while len(pending) > IN_FLIGHT * self.workers:
                    yield from pending.popleft().result()
        if batch:
            pending.append(self.pool.submit(_batch, batch))
        while pending:
            yield from pending.popleft().result()

    def close(self) -> None:
        self.pool.shutdown(cancel_futures=True)
