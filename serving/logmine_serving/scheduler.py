"""Dynamic batching: generate requests wait at most ``max_delay_ms`` for a batch of at most
``max_batch_size``; the queue is bounded, and a full queue is the caller's signal to answer 429.

The model runs in one worker thread (one batch at a time); tokens travel back to each
request's asyncio queue with ``loop.call_soon_threadsafe``, so responses stream while the
batch decodes.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from logmine_serving.generator import GenerationConfig, Generator, SequenceResult
from logmine_serving.metrics import ServerMetrics

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BatchConfig:
    """Batching and backpressure settings of `logmine serve`."""

    max_batch_size: int = 64
    """Sequences per batch, at most."""
    max_delay_ms: float = 5.0
    """How long the first request of a batch waits for others."""
    max_queue: int = 256
    """Requests waiting for a batch, at most; more are refused with 429."""
    prefix_cache: bool = True
    """Reuse the KV cache of the pack's shared prefixes."""


@dataclass
class GenerateJob:
    """One generate request on its way through the queue."""

    prompt: str
    max_new_tokens: int
    prefix_id: str | None = None
    prefix_text: str | None = None
    arrival: float = field(default_factory=time.perf_counter)
    events: asyncio.Queue[tuple[str, Any]] = field(default_factory=asyncio.Queue)
    loop: asyncio.AbstractEventLoop | None = None


class QueueFullError(Exception):
    """The queue is full: the request should be retried later."""


class BatchScheduler:
    """Collect jobs into batches and run them on the generator in a worker thread."""

    def __init__(self, generator: Generator, config: BatchConfig, metrics: ServerMetrics, seed: int = 0) -> None:
        self.generator, self.config, self.metrics, self.seed = generator, config, metrics, seed
        self.queue: asyncio.Queue[GenerateJob] | None = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="logmine-generate")
        self._task: asyncio.Task[None] | None = None

    def depth(self) -> int:
        return self.queue.qsize() if self.queue is not None else 0

    async def start(self) -> None:
        self.queue = asyncio.Queue(maxsize=self.config.max_queue)
        self._task = asyncio.create_task(self._run(), name="logmine-batcher")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
        self._executor.shutdown(wait=True, cancel_futures=True)

    def submit(self, job: GenerateJob) -> None:
        """Enqueue ``job`` or raise :class:`QueueFullError`."""
        assert self.queue is not None, "scheduler not started"
        job.loop = asyncio.get_running_loop()
        try:
            self.queue.put_nowait(job)
        except asyncio.QueueFull as exc:
            raise QueueFullError from exc

    async def events(self, job: GenerateJob) -> AsyncIterator[tuple[str, Any]]:
        """The job's events: ``("token", text)`` ..., then ``("done", SequenceResult)`` or ``("error", msg)``."""
        while True:
            kind, payload = await job.events.get()
            yield kind, payload
            if kind in ("done", "error"):
                return

    async def _run(self) -> None:
        assert self.queue is not None
        loop = asyncio.get_running_loop()
        while True:
            batch = [await self.queue.get()]
            deadline = loop.time() + self.config.max_delay_ms / 1000
            while len(batch) < self.config.max_batch_size:
                remaining = deadline - loop.time()
                if remaining <= 0:
                    break
                try:
                    batch.append(await asyncio.wait_for(self.queue.get(), remaining))
                except TimeoutError:
                    break
            while len(batch) < self.config.max_batch_size and not self.queue.empty():
                batch.append(self.queue.get_nowait())
            self.metrics.batch_size.observe(len(batch))
            await loop.run_in_executor(self._executor, self._run_batch, batch)

    def _run_batch(self, batch: list[GenerateJob]) -> None:
        groups: dict[str | None, list[GenerateJob]] = {}
        for job in batch:
            groups.setdefault(job.prefix_id if self.config.prefix_cache else None, []).append(job)
        for prefix_id, jobs in groups.items():
            try:
                self._run_group(prefix_id, jobs)
            except Exception as exc:  # a failed batch answers every job with an error, never hangs one
                log.exception("generation failed for a batch of %d", len(jobs))
                for job in jobs:
                    self._send(job, "error", f"generation failed: {type(exc).__name__}")

    def _run_group(self, prefix_id: str | None, jobs: list[GenerateJob]) -> None:
        prefix = None
        if prefix_id is not None and jobs[0].prefix_text:
            prefix = self.generator.prefix(prefix_id, jobs[0].prefix_text)
        results: list[SequenceResult] = []
        config = GenerationConfig(max_new_tokens=max(j.max_new_tokens for j in jobs), seed=self.seed)
        last: dict[int, float] = {}
        hits_before = self.generator.prefix_hits
        for event in self.generator.stream([j.prompt for j in jobs], config, prefix, [j.max_new_tokens for j in jobs], results):
            for i, _token, delta in event.tokens:
                job = jobs[i]
                if i in last:
                    self.metrics.inter_token.observe(event.time - last[i])
                else:
                    self.metrics.ttft.observe(event.time - job.arrival)
                last[i] = event.time
                self.metrics.tokens.inc()
                if delta:
                    self._send(job, "token", delta)
        if prefix is not None:
            self.metrics.prefix_cache.inc(result="hit" if self.generator.prefix_hits > hits_before else "miss")
        for job, result in zip(jobs, results):
            self._send(job, "done", result)

    @staticmethod
    def _send(job: GenerateJob, kind: str, payload: Any) -> None:
        assert job.loop is not None
        try:
            job.loop.call_soon_threadsafe(job.events.put_nowait, (kind, payload))
        except RuntimeError:  # the event loop is closed: the server is shutting down
            pass
