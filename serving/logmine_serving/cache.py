"""The semantic response cache: a prompt close enough to one answered before gets that answer.

A lookup first tries the exact prompt (a sha256 key, no embedding), then the nearest
neighbour among stored prompt embeddings (cosine on L2-normalised vectors) above a
similarity threshold. Entries are keyed by the generation parameters too (model, max tokens),
so a cached answer is only reused for the same request shape. Two stores:

- :class:`MemoryCache` (default): in-process, bounded, oldest entries evicted first;
- :class:`RedisCache` (``--cache redis://host:port/db``): shared by several servers.

The embedder is injected (``texts -> float32 array, one L2-normalised row per text``), so
tests run without loading a model; the server's default is logmine's bundled MiniLM.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from logmine.errors import OptionError
from logmine.models import embed as logmine_embed

Embedder = Callable[[Sequence[str]], Any]


@dataclass(frozen=True)
class CacheHit:
    response: str
    similarity: float
    exact: bool


class ResponseCache(Protocol):
    def lookup(self, prompt: str, params: str) -> CacheHit | None: ...

    def store(self, prompt: str, params: str, response: str) -> None: ...


def default_embedder() -> Embedder:
    """logmine's bundled sentence embedder (loaded on first use)."""

    def embed(texts: Sequence[str]) -> Any:
        return logmine_embed(list(texts))

    return embed


def _key(prompt: str, params: str) -> str:
    return hashlib.sha256(f"{params}\x00{prompt}".encode("utf-8", "surrogatepass")).hexdigest()


def _vector(embedder: Embedder, text: str) -> np.ndarray:
    vec = np.asarray(embedder([text]), dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(vec))
    return vec / norm if norm > 0 else vec


class MemoryCache:
    """An in-process semantic cache of at most ``max_entries`` answers."""

    def __init__(self, embedder: Embedder, threshold: float = 0.97, max_entries: int = 10_000) -> None:
        self.embedder, self.threshold, self.max_entries = embedder, threshold, max_entries
        self._entries: OrderedDict[str, tuple[str, np.ndarray, str]] = OrderedDict()  # key -> (params, vec, response)
        self._lock = threading.Lock()
        self._matrix: np.ndarray | None = None
        self._keys: list[str] = []

    def __len__(self) -> int:
        return len(self._entries)

    def lookup(self, prompt: str, params: str) -> CacheHit | None:
        key = _key(prompt, params)
        with self._lock:
            found = self._entries.get(key)
        if found is not None:
            return CacheHit(found[2], 1.0, True)
        if not self._entries:
            return None
        vec = _vector(self.embedder, prompt)
        with self._lock:
            if self._matrix is None:
                self._keys = list(self._entries)
                self._matrix = np.stack([self._entries[k][1] for k in self._keys]) if self._keys else None
            if self._matrix is None:
                return None
            sims = self._matrix @ vec
            for i in np.argsort(-sims)[:8]:
                if sims[i] < self.threshold:
                    break
                entry = self._entries.get(self._keys[i])
                if entry is not None and entry[0] == params:
                    return CacheHit(entry[2], float(sims[i]), False)
        return None

    def store(self, prompt: str, params: str, response: str) -> None:
        vec = _vector(self.embedder, prompt)
        key = _key(prompt, params)
        with self._lock:
            self._entries[key] = (params, vec, response)
            self._entries.move_to_end(key)
            while len(self._entries) > self.max_entries:
                self._entries.popitem(last=False)
            self._matrix = None


class RedisCache:
    """A semantic cache in Redis: exact keys plus a bounded list of embeddings scanned client-side."""

    def __init__(self, url: str, embedder: Embedder, threshold: float = 0.97, max_entries: int = 10_000,
                 namespace: str = "logmine:cache", client: Any = None) -> None:
        if client is None:
            from logmine_serving.errors import require_server

            redis = require_server("redis", "the Redis response cache")
            try:
                client = redis.Redis.from_url(url)
                client.ping()
            except (redis.RedisError, ValueError) as exc:
                raise OptionError("--cache", url, f"cannot reach Redis there: {exc}") from exc
        self.client, self.embedder, self.threshold = client, embedder, threshold
        self.max_entries, self.ns = max_entries, namespace

    def lookup(self, prompt: str, params: str) -> CacheHit | None:
        key = _key(prompt, params)
        exact = self.client.hget(f"{self.ns}:e:{key}", "response")
        if exact is not None:
            return CacheHit(exact.decode(), 1.0, True)
        ids = self.client.lrange(f"{self.ns}:ids", 0, self.max_entries - 1)
        if not ids:
            return None
        pipe = self.client.pipeline()
        for entry_id in ids:
            pipe.hmget(f"{self.ns}:e:{entry_id.decode()}", "vec", "params", "response")
        vec = _vector(self.embedder, prompt)
        best: tuple[float, str] | None = None
        for raw_vec, raw_params, response in pipe.execute():
            if raw_vec is None or raw_params is None or raw_params.decode() != params:
                continue
            stored = np.frombuffer(raw_vec, dtype=np.float32)
            if stored.shape != vec.shape:
                continue
            sim = float(stored @ vec)
            if sim >= self.threshold and (best is None or sim > best[0]):
                best = (sim, response.decode())
        return CacheHit(best[1], best[0], False) if best else None

    def store(self, prompt: str, params: str, response: str) -> None:
        key = _key(prompt, params)
        vec = _vector(self.embedder, prompt)
        pipe = self.client.pipeline()
        pipe.hset(f"{self.ns}:e:{key}", mapping={"vec": vec.astype(np.float32).tobytes(), "params": params, "response": response})
        pipe.lrem(f"{self.ns}:ids", 0, key)
        pipe.lpush(f"{self.ns}:ids", key)
        pipe.execute()
        self._evict()

    def _evict(self) -> None:
        overflow = self.client.lrange(f"{self.ns}:ids", self.max_entries, -1)
        if overflow:
            pipe = self.client.pipeline()
            pipe.ltrim(f"{self.ns}:ids", 0, self.max_entries - 1)
            for entry_id in overflow:
                pipe.delete(f"{self.ns}:e:{entry_id.decode()}")
            pipe.execute()


def params_key(**params: Any) -> str:
    """Canonical JSON of the generation parameters a cached answer depends on."""
    return json.dumps(params, sort_keys=True, separators=(",", ":"))


def make_cache(spec: str | None, embedder: Embedder | None = None, threshold: float = 0.97,
               max_entries: int = 10_000) -> ResponseCache | None:
    """``none`` -> no cache; ``memory`` (default) -> :class:`MemoryCache`; ``redis://...`` -> :class:`RedisCache`."""
    spec = spec or "memory"
    if spec == "none":
        return None
    embedder = embedder or default_embedder()
    if spec == "memory":
        return MemoryCache(embedder, threshold, max_entries)
    if spec.startswith(("redis://", "rediss://", "unix://")):
        return RedisCache(spec, embedder, threshold, max_entries, namespace="logmine:cache:v1")
    raise OptionError("--cache", spec, "none, memory or redis://host:port/db")
