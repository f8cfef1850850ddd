"""`logmine serve`: a FastAPI app over a template pack and the generator.

Endpoints:

- ``POST /v1/render``    ``{"template_id", "slots", "which", "context"}`` -> ``{"prompt", ...}``: the template's
  render plan applied (code-context slots trimmed, reading ``context``: ``language``, ``file_path``,
  ``recent_files``; without them the template's language and file_path slots, and no file recency)
- ``POST /v1/generate``  ``{"template_id", "slots", "max_tokens", "stream"}`` -> Server-Sent Events
  (``data: {"text": delta}`` per token, then ``event: done``) or one JSON object with ``stream: false``
- ``GET /metrics``       Prometheus text: TTFT and inter-token histograms, queue depth, batch sizes, cache hits
- ``GET /healthz``       liveness and what is loaded

A full queue answers 429 with ``Retry-After``. Every response echoes ``X-Request-ID``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from logmine.runtime import RenderContext

from logmine_serving.cache import ResponseCache, params_key
from logmine_serving.errors import RenderError, UnsafeTemplateError, require_server
from logmine_serving.generator import Generator, SequenceResult
from logmine_serving.metrics import ServerMetrics
from logmine_serving.pack_runtime import PackRuntime
from logmine_serving.scheduler import BatchConfig, BatchScheduler, GenerateJob, QueueFullError

log = logging.getLogger(__name__)


Slot = str | int | float | bool | None


class ContextBody(BaseModel):
    """The request context a template's render plan reads (all optional)."""

    model_config = ConfigDict(extra="forbid")
    language: str | None = None
    file_path: str | None = None
    recent_files: list[str] = Field(default_factory=list, max_length=64)
    session_id: str | None = None

    def render_context(self) -> RenderContext:
        return RenderContext(self.language, self.file_path, tuple(self.recent_files), self.session_id)


class RenderBody(BaseModel):
    """The body of ``POST /v1/render``."""

    model_config = ConfigDict(extra="forbid")
    template_id: str
    slots: dict[str, Slot] = Field(default_factory=dict)
    which: Literal["compressed", "lossless", "original"] = "compressed"
    context: ContextBody = Field(default_factory=ContextBody)


class GenerateBody(RenderBody):
    """The body of ``POST /v1/generate`` (``max_tokens`` defaults to the server's)."""

    max_tokens: int | None = Field(None, ge=1)
    stream: bool = True


@dataclass(frozen=True)
class ServeConfig:
    """Limits of the HTTP layer (batching settings live in :class:`BatchConfig`)."""

    default_max_tokens: int = 64
    """Tokens generated when a request does not say."""
    max_tokens_limit: int = 1024
    """The most tokens a request may ask for."""
    retry_after_s: int = 1
    """The Retry-After header of a 429."""


def create_app(runtime: PackRuntime, generator: Generator, batch: BatchConfig | None = None,
               config: ServeConfig | None = None, cache: ResponseCache | None = None) -> Any:
    """The FastAPI application serving ``runtime``'s templates with ``generator``."""
    fastapi = require_server("fastapi", "logmine serve")
    from fastapi.responses import JSONResponse, PlainTextResponse, StreamingResponse

    batch, config = batch or BatchConfig(), config or ServeConfig()
    scheduler: BatchScheduler
    metrics = ServerMetrics(queue_depth=lambda: scheduler.depth())
    scheduler = BatchScheduler(generator, batch, metrics)
    @asynccontextmanager
    async def lifespan(app: Any) -> AsyncIterator[None]:
        await scheduler.start()
        try:
            yield
        finally:
            await scheduler.stop()

    app = fastapi.FastAPI(title="logmine serve", lifespan=lifespan)
    app.state.metrics, app.state.scheduler, app.state.runtime = metrics, scheduler, runtime

    @app.middleware("http")
    async def count_and_tag(request: Any, call_next: Any) -> Any:
        response = await call_next(request)
        request_id = request.headers.get("x-request-id")
        if request_id:
            response.headers["X-Request-ID"] = request_id
        metrics.requests.inc(endpoint=request.url.path, status=str(response.status_code))
        return response

    def error(status: int, message: str, headers: dict[str, str] | None = None) -> Any:
        return JSONResponse({"error": message}, status_code=status, headers=headers)

    def render(body: RenderBody) -> tuple[Any, str] | Any:
        try:
            template = runtime.template(body.template_id)
        except Exception:  # PackError: unknown id
            return error(404, f"no template {body.template_id!r} in the pack")
        try:
            return template, runtime.render(template, body.slots, body.which, body.context.render_context())
        except (RenderError, UnsafeTemplateError) as exc:
            return error(422, str(exc))

    @app.post("/v1/render")
    async def render_endpoint(body: RenderBody) -> Any:
        rendered = render(body)
        if not isinstance(rendered, tuple):
            return rendered
        template, prompt = rendered
        return {"template_id": template.id, "which": body.which, "prompt": prompt}

    @app.post("/v1/generate")
    async def generate_endpoint(body: GenerateBody) -> Any:
        max_tokens = body.max_tokens or config.default_max_tokens
        if max_tokens > config.max_tokens_limit:
            return error(422, f"max_tokens is {max_tokens}, over the limit of {config.max_tokens_limit}")
        body = body.model_copy(update={"max_tokens": max_tokens})
        rendered = render(body)
        if not isinstance(rendered, tuple):
            return rendered
        template, prompt = rendered
        params = params_key(model=generator.model_name, max_tokens=body.max_tokens)
        if cache is not None:
            hit = await asyncio.to_thread(cache.lookup, prompt, params)
            metrics.cache_lookups.inc(result="hit" if hit else "miss")
            if hit is not None:
                done = {"text": hit.response, "cached": True, "similarity": hit.similarity, "template_id": template.id}
                if not body.stream:
                    return done
                return StreamingResponse(_sse_once(done), media_type="text/event-stream")
        shared = runtime.shared_prefix(template) if body.which == "compressed" else None
        job = GenerateJob(prompt, body.max_tokens, shared.id if shared else None, shared.text if shared else None)
        try:
            scheduler.submit(job)
        except QueueFullError:
            metrics.rejected.inc()
            return error(429, "the generate queue is full; retry later", {"Retry-After": str(config.retry_after_s)})
        if not body.stream:
            return await _collect(scheduler, job, template.id, prompt, params, cache)
        return StreamingResponse(_sse(scheduler, job, template.id, prompt, params, cache), media_type="text/event-stream")

    @app.get("/metrics")
    async def metrics_endpoint() -> Any:
        return PlainTextResponse(metrics.render(), media_type="text/plain; version=0.0.4")

    @app.get("/healthz")
    async def healthz() -> Any:
        return {"status": "ok", "model": generator.model_name, "device": generator.device,
                "templates": len(runtime.pack.templates), "queue_depth": scheduler.depth()}

    return app


def _done_payload(result: SequenceResult, template_id: str) -> dict[str, Any]:
    return {"text": result.text, "cached": False, "template_id": template_id, "prompt_tokens": result.prompt_tokens,
            "cached_prompt_tokens": result.cached_tokens, "output_tokens": len(result.token_ids)}


async def _finish(cache: ResponseCache | None, prompt: str, params: str, result: SequenceResult) -> None:
    if cache is not None:
        try:
            await asyncio.to_thread(cache.store, prompt, params, result.text)
        except Exception:  # a cache outage must not fail the answer
            log.exception("could not store a response in the cache")


async def _collect(scheduler: BatchScheduler, job: GenerateJob, template_id: str, prompt: str, params: str,
                   cache: ResponseCache | None) -> Any:
    from fastapi.responses import JSONResponse

    async for kind, payload in scheduler.events(job):
        if kind == "error":
            return JSONResponse({"error": payload}, status_code=500)
        if kind == "done":
            await _finish(cache, prompt, params, payload)
            return _done_payload(payload, template_id)
    return JSONResponse({"error": "no result"}, status_code=500)  # pragma: no cover


async def _sse(scheduler: BatchScheduler, job: GenerateJob, template_id: str, prompt: str, params: str,
               cache: ResponseCache | None) -> AsyncIterator[bytes]:
    async for kind, payload in scheduler.events(job):
        if kind == "token":
            yield _event(None, {"text": payload})
        elif kind == "error":
            yield _event("error", {"error": payload})
        else:
            await _finish(cache, prompt, params, payload)
            yield _event("done", _done_payload(payload, template_id))


async def _sse_once(done: dict[str, Any]) -> AsyncIterator[bytes]:
    yield _event(None, {"text": done["text"]})
    yield _event("done", done)


def _event(name: str | None, data: dict[str, Any]) -> bytes:
    head = f"event: {name}\n" if name else ""
    return f"{head}data: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


def parse_sse(body: str) -> list[tuple[str, dict[str, Any]]]:
    """``[(event name, data)]`` of an SSE body (``message`` for unnamed events); for clients and tests."""
    events = []
    for block in body.split("\n\n"):
        if not block.strip():
            continue
        name, data = "message", ""
        for line in block.split("\n"):
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data += line[6:]
        events.append((name, json.loads(data)))
    return events


@contextlib.contextmanager
def serve_in_thread(app: Any, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """Run ``app`` under uvicorn in a background thread; yield its base URL (for tests and benches)."""
    uvicorn = require_server("uvicorn", "logmine serve")
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, name="logmine-serve", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the server did not start")
        time.sleep(0.01)
    bound = server.servers[0].sockets[0].getsockname()
    try:
        yield f"http://{bound[0]}:{bound[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def run_server(app: Any, host: str, port: int) -> None:
    """Serve ``app`` in the foreground until interrupted."""
    uvicorn = require_server("uvicorn", "logmine serve")
    uvicorn.run(app, host=host, port=port, log_level="info")
