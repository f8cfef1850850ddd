"""`logmine serve` on loopback: endpoints, SSE, batching, backpressure, metrics, response caches."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from serving_helpers import make_pack, parse_metrics, trigram_embedder

from logmine_serving.cache import MemoryCache, RedisCache, make_cache
from logmine_serving.generator import GenerationConfig, Generator
from logmine_serving.pack_runtime import PackRuntime
from logmine_serving.scheduler import BatchConfig
from logmine_serving.server import ServeConfig, create_app, parse_sse, serve_in_thread

SLOTS = {"file_path": "a.py", "prefix": "def add(a, b):\n    return ", "suffix": "\n"}


@pytest.fixture(scope="module")
def runtime() -> PackRuntime:
    return PackRuntime.from_pack(make_pack())


@pytest.fixture(scope="module")
def server(runtime: PackRuntime, tiny_generator: Generator) -> Iterator[str]:
    app = create_app(runtime, tiny_generator, BatchConfig(max_batch_size=8, max_delay_ms=5, max_queue=64),
                     ServeConfig(default_max_tokens=6), MemoryCache(trigram_embedder, threshold=0.99))
    with serve_in_thread(app) as url:
        yield url


def fim_id(runtime: PackRuntime) -> str:
    return runtime.pack.template("fim").id


def test_render_endpoint(server: str, runtime: PackRuntime) -> None:
    r = httpx.post(f"{server}/v1/render", json={"template_id": fim_id(runtime), "slots": {**SLOTS, "prefix": "{{ 7*7 }}"}})
    assert r.status_code == 200
    assert r.json()["prompt"] == runtime.render(runtime.pack.template("fim"), {**SLOTS, "prefix": "{{ 7*7 }}"})
    assert "<prefix>{{ 7*7 }}</prefix>" in r.json()["prompt"]
    original = httpx.post(f"{server}/v1/render", json={"template_id": "fim", "slots": SLOTS, "which": "original"})
    assert "File: a.py" in original.json()["prompt"]


@pytest.mark.parametrize(("body", "status", "message"), [
    ({"template_id": "nope", "slots": {}}, 404, "no template 'nope' in the pack"),
    ({"template_id": "fim", "slots": {"prefix": "x"}}, 422, "missing slot value(s): suffix"),
], ids=["unknown-template", "missing-slot"])
def test_render_errors(server: str, body: dict[str, Any], status: int, message: str) -> None:
    r = httpx.post(f"{server}/v1/render", json=body)
    assert r.status_code == status and message in r.json()["error"]


def test_request_schema_is_strict(server: str) -> None:
    r = httpx.post(f"{server}/v1/generate", json={"template_id": "fim", "slots": {"prefix": {"a": 1}}})
    assert r.status_code == 422
    r = httpx.post(f"{server}/v1/generate", json={"template_id": "fim", "slots": SLOTS, "max_tokens": 10**9})
    assert r.status_code == 422


def test_generate_streams_the_same_text_as_the_generator(server: str, runtime: PackRuntime, tiny_generator: Generator) -> None:
    slots = {**SLOTS, "prefix": "def mul(a, b):\n    return "}
    r = httpx.post(f"{server}/v1/generate", json={"template_id": "fim", "slots": slots, "max_tokens": 5},
                   headers={"X-Request-ID": "abc"})
    assert r.status_code == 200 and r.headers["x-request-id"] == "abc"
    assert r.headers["content-type"].startswith("text/event-stream")
    events = parse_sse(r.text)
    assert events[-1][0] == "done" and events[-1][1]["cached"] is False
    streamed = "".join(e[1]["text"] for e in events[:-1])
    assert streamed == events[-1][1]["text"]
    prompt = runtime.render(runtime.pack.template("fim"), slots)
    direct = tiny_generator.generate([prompt], GenerationConfig(max_new_tokens=5))[0]
    assert streamed == direct.text
    assert events[-1][1]["cached_prompt_tokens"] > 0  # the shared system prefix came from the KV cache


def test_generate_json_and_response_cache(server: str) -> None:
    slots = {**SLOTS, "prefix": "import os\nprint(os.getcwd())\n"}
    first = httpx.post(f"{server}/v1/generate", json={"template_id": "fim", "slots": slots, "stream": False})
    second = httpx.post(f"{server}/v1/generate", json={"template_id": "fim", "slots": slots, "stream": False})
    assert first.status_code == second.status_code == 200
    assert first.json()["cached"] is False and second.json()["cached"] is True
    assert second.json()["text"] == first.json()["text"]
    other = httpx.post(f"{server}/v1/generate", json={"template_id": "fim", "stream": False,
                                                       "slots": {**slots, "prefix": "completely different text"}})
    assert other.json()["cached"] is False


def test_metrics_and_healthz(server: str) -> None:
    httpx.post(f"{server}/v1/generate", json={"template_id": "fim", "slots": {**SLOTS, "prefix": "x = 1\n"}, "stream": False})
    m = parse_metrics(httpx.get(f"{server}/metrics").text)
    assert m["logmine_serving_ttft_seconds_count"] >= 1
    assert m["logmine_serving_inter_token_seconds_count"] >= 1
    assert m["logmine_serving_batch_size_count"] >= 1
    assert m["logmine_serving_queue_depth"] == 0
    assert m['logmine_serving_response_cache_lookups_total{result="miss"}'] >= 1
    assert m['logmine_serving_prefix_cache_total{result="hit"}'] >= 1
    assert 0 <= m["logmine_serving_response_cache_hit_ratio"] <= 1
    health = httpx.get(f"{server}/healthz").json()
    assert health["status"] == "ok" and health["templates"] == 2


class GatedGenerator:
    """Delegates to a generator, but each batch waits for ``gate`` (to hold the worker busy)."""

    def __init__(self, inner: Generator) -> None:
        self.inner, self.gate, self.started = inner, threading.Event(), threading.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def stream(self, *args: Any, **kwargs: Any) -> Any:
        self.started.set()
        self.gate.wait(30)
        return self.inner.stream(*args, **kwargs)


def test_full_queue_answers_429_with_retry_after(runtime: PackRuntime, tiny_generator: Generator) -> None:
    gated = GatedGenerator(tiny_generator)
    app = create_app(runtime, gated, BatchConfig(max_batch_size=1, max_delay_ms=0, max_queue=1), ServeConfig(default_max_tokens=2))
    body = {"template_id": "same", "slots": {"prefix": "x"}, "stream": False}
    with serve_in_thread(app) as url:
        statuses: list[int] = []
        workers = [threading.Thread(target=lambda: statuses.append(httpx.post(f"{url}/v1/generate", json=body, timeout=60).status_code))
                   for _ in range(2)]
        workers[0].start()
        assert gated.started.wait(30)  # the first request is in the running batch
        workers[1].start()
        deadline = time.monotonic() + 30
        while httpx.get(f"{url}/healthz").json()["queue_depth"] < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        refused = httpx.post(f"{url}/v1/generate", json=body)
        assert refused.status_code == 429 and refused.headers["retry-after"] == "1"
        gated.gate.set()
        for w in workers:
            w.join(60)
        assert sorted(statuses) == [200, 200]
        m = parse_metrics(httpx.get(f"{url}/metrics").text)
        assert m["logmine_serving_rejected_total"] == 1


def _rss_bytes() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _load(url: str, clients: int, seconds: float, max_requests: int) -> list[tuple[str, int, str | None, bool]]:
    """``clients`` threads post generate requests for ``seconds`` (at most ``max_requests`` each)."""
    results: list[tuple[str, int, str | None, bool]] = []
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def client(n: int) -> None:
        with httpx.Client(timeout=60) as http:
            for i in range(max_requests):
                if time.monotonic() > stop:
                    return
                rid = uuid.uuid4().hex
                stream = (n + i) % 2 == 0
                body = {"template_id": "fim", "slots": {**SLOTS, "prefix": f"x{n}_{i} = "}, "max_tokens": 4, "stream": stream}
                r = http.post(f"{url}/v1/generate", json=body, headers={"X-Request-ID": rid})
                complete = r.status_code != 200 or (parse_sse(r.text)[-1][0] == "done" if stream else "text" in r.json())
                with lock:
                    results.append((rid, r.status_code, r.headers.get("x-request-id"), complete))

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def test_load_on_loopback_answers_every_request_once(runtime: PackRuntime, tiny_generator: Generator) -> None:
    app = create_app(runtime, tiny_generator, BatchConfig(max_batch_size=4, max_delay_ms=5, max_queue=4), ServeConfig())
    with serve_in_thread(app) as url:
        assert url.startswith("http://127.0.0.1:")
        first = _load(url, clients=12, seconds=1.5, max_requests=40)
        rss_after_first = _rss_bytes()
        second = _load(url, clients=12, seconds=1.5, max_requests=40)
        rss_after_second = _rss_bytes()
        metrics = parse_metrics(httpx.get(f"{url}/metrics").text)
    results = first + second
    ids = [r[0] for r in results]
    assert len(set(ids)) == len(ids)
    assert all(status in (200, 429) for _, status, _, _ in results)
    assert all(echo == rid for rid, _, echo, _ in results)  # each answer is for its own request
    assert all(complete for *_, complete in results)  # every 200 carried a complete answer
    answered = sum(v for k, v in metrics.items() if k.startswith("logmine_serving_requests_total") and 'endpoint="/v1/generate"' in k)
    assert answered == len(results)  # the server answered each request exactly once: none lost, none twice
    assert metrics["logmine_serving_rejected_total"] == sum(1 for r in results if r[1] == 429)
    assert metrics["logmine_serving_queue_depth"] == 0
    assert rss_after_second - rss_after_first < 64 * 2**20  # memory flat across the second round


# -- response caches ---------------------------------------------------------------------------
def test_memory_cache_exact_semantic_and_bounded() -> None:
    cache = MemoryCache(trigram_embedder, threshold=0.9, max_entries=2)
    cache.store("def add(a, b): return a + b", "p", "A")
    assert cache.lookup("def add(a, b): return a + b", "p").exact is True
    near = cache.lookup("def add(a, b): return a + b ", "p")
    assert near is not None and not near.exact and near.response == "A" and near.similarity >= 0.9
    assert cache.lookup("def add(a, b): return a + b", "other-params") is None
    assert cache.lookup("SELECT * FROM users", "p") is None
    cache.store("two", "p", "B")
    cache.store("three", "p", "C")
    assert len(cache) == 2 and cache.lookup("def add(a, b): return a + b", "p") is None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _redis_server_binary() -> str | None:
    found = shutil.which("redis-server")
    if found or os.geteuid() != 0 or not shutil.which("apt-get"):
        return found
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    try:
        subprocess.run(["apt-get", "install", "-y", "-q", "redis-server"], env=env, capture_output=True, timeout=120, check=False)
        if not shutil.which("redis-server"):
            subprocess.run(["apt-get", "update", "-q"], env=env, capture_output=True, timeout=120, check=False)
            subprocess.run(["apt-get", "install", "-y", "-q", "redis-server"], env=env, capture_output=True, timeout=120, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return shutil.which("redis-server")


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    binary = _redis_server_binary()
    if binary is None:
        pytest.skip("redis-server is not installed and could not be installed with apt-get")
    redis = pytest.importorskip("redis")
    port = _free_port()
    proc = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                             "--dir", str(tmp_path_factory.mktemp("redis"))], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"redis://127.0.0.1:{port}/0"
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                redis.Redis.from_url(url).ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    pytest.skip("redis-server did not start")
                time.sleep(0.05)
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


def test_redis_cache_exact_semantic_and_bounded(redis_url: str) -> None:
    cache = make_cache(redis_url, trigram_embedder, threshold=0.9, max_entries=2)
    assert isinstance(cache, RedisCache)
    cache.client.flushdb()
    cache.store("def add(a, b): return a + b", "p", "A")
    assert cache.lookup("def add(a, b): return a + b", "p").exact is True
    near = cache.lookup("def add(a, b): return a + b ", "p")
    assert near is not None and near.response == "A" and not near.exact
    assert cache.lookup("def add(a, b): return a + b ", "q") is None
    cache.store("two", "p", "B")
    cache.store("three", "p", "C")
    assert cache.client.llen(f"{cache.ns}:ids") == 2
    assert cache.lookup("def add(a, b): return a + b", "p") is None


def test_server_with_redis_cache(redis_url: str, runtime: PackRuntime, tiny_generator: Generator) -> None:
    cache = make_cache(redis_url, trigram_embedder, threshold=0.99)
    cache.client.flushdb()
    app = create_app(runtime, tiny_generator, BatchConfig(), ServeConfig(default_max_tokens=3), cache)
    body = {"template_id": "same", "slots": {"prefix": "redis test"}, "stream": False}
    with serve_in_thread(app) as url:
        first, second = (httpx.post(f"{url}/v1/generate", json=body).json() for _ in range(2))
        m = parse_metrics(httpx.get(f"{url}/metrics").text)
    assert (first["cached"], second["cached"]) == (False, True) and first["text"] == second["text"]
    assert m["logmine_serving_response_cache_hit_ratio"] == 0.5


def test_unknown_cache_spec_is_an_option_error() -> None:
    from logmine.errors import OptionError

    with pytest.raises(OptionError, match="--cache"):
        make_cache("memcached://x", trigram_embedder)
    assert make_cache("none") is None


def test_unreachable_redis_is_an_option_error() -> None:
    pytest.importorskip("redis")
    from logmine.errors import OptionError

    with pytest.raises(OptionError, match="cannot reach Redis"):
        make_cache(f"redis://127.0.0.1:{_free_port()}/0", trigram_embedder)
