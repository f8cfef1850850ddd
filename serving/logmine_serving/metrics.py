"""Prometheus text-format metrics without a client library: counters, gauges, histograms."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256)


def _labels(labels: dict[str, str]) -> str:
    if not labels:
        return ""
    inner = ",".join(f'{k}="{_escape(v)}"' for k, v in sorted(labels.items()))
    return "{" + inner + "}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _num(value: float) -> str:
    return repr(float(value)) if value != int(value) else str(int(value))


class Counter:
    def __init__(self, name: str, help_text: str) -> None:
        self.name, self.help = name, help_text
        self._values: dict[tuple[tuple[str, str], ...], float] = {}
        self._lock = threading.Lock()

    def inc(self, amount: float = 1.0, **labels: str) -> None:
        key = tuple(sorted(labels.items()))
        with self._lock:
            self._values[key] = self._values.get(key, 0.0) + amount

    def value(self, **labels: str) -> float:
        return self._values.get(tuple(sorted(labels.items())), 0.0)

    def render(self) -> list[str]:
        lines = [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} counter"]
        with self._lock:
            items = sorted(self._values.items()) or [((), 0.0)]
        lines += [f"{self.name}{_labels(dict(k))} {_num(v)}" for k, v in items]
        return lines


class Gauge:
    def __init__(self, name: str, help_text: str, read: Callable[[], float] | None = None) -> None:
        self.name, self.help, self._read = name, help_text, read
        self._value = 0.0

    def set(self, value: float) -> None:
        self._value = value

    def value(self) -> float:
        return float(self._read()) if self._read else self._value

    def render(self) -> list[str]:
        return [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} gauge", f"{self.name} {_num(self.value())}"]


class Histogram:
    def __init__(self, name: str, help_text: str, buckets: Sequence[float]) -> None:
        self.name, self.help = name, help_text
        self.buckets = tuple(sorted(buckets))
        self._counts = [0] * (len(self.buckets) + 1)
        self._sum = 0.0
        self._lock = threading.Lock()

    def observe(self, value: float) -> None:
        i = 0
        while i < len(self.buckets) and value > self.buckets[i]:
            i += 1
        with self._lock:
            self._counts[i] += 1
            self._sum += value

    @property
    def count(self) -> int:
        return sum(self._counts)

    def render(self) -> list[str]:
        lines = [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} histogram"]
        with self._lock:
            counts, total = list(self._counts), self._sum
        running = 0
        for bound, n in zip(self.buckets, counts):
            running += n
            lines.append(f'{self.name}_bucket{{le="{_num(bound)}"}} {running}')
        running += counts[-1]
        lines += [f'{self.name}_bucket{{le="+Inf"}} {running}', f"{self.name}_sum {_num(total)}", f"{self.name}_count {running}"]
        return lines


class ServerMetrics:
    """Every metric `logmine serve` exports on ``GET /metrics``."""

    def __init__(self, queue_depth: Callable[[], float] = lambda: 0.0) -> None:
        p = "logmine_serving_"
        self.requests = Counter(p + "requests_total", "HTTP requests answered, by endpoint and status")
        self.ttft = Histogram(p + "ttft_seconds", "time from a generate request's arrival to its first token", LATENCY_BUCKETS)
        self.inter_token = Histogram(p + "inter_token_seconds", "time between consecutive tokens of a sequence", LATENCY_BUCKETS)
        self.batch_size = Histogram(p + "batch_size", "sequences per generation batch", BATCH_BUCKETS)
        self.queue_depth = Gauge(p + "queue_depth", "generate requests waiting for a batch", queue_depth)
        self.tokens = Counter(p + "generated_tokens_total", "tokens generated")
        self.cache_lookups = Counter(p + "response_cache_lookups_total", "semantic response cache lookups, by result (hit, miss)")
        self.prefix_cache = Counter(p + "prefix_cache_total", "shared-prefix KV cache uses, by result (hit, miss)")
        self.rejected = Counter(p + "rejected_total", "generate requests refused with 429 because the queue was full")

    def cache_hit_rate(self) -> float:
        hits, misses = self.cache_lookups.value(result="hit"), self.cache_lookups.value(result="miss")
        return hits / (hits + misses) if hits + misses else 0.0

    def render(self) -> str:
        lines: list[str] = []
        for metric in (self.requests, self.ttft, self.inter_token, self.batch_size, self.queue_depth, self.tokens,
                       self.cache_lookups, self.prefix_cache, self.rejected):
            lines += metric.render()
        name = "logmine_serving_response_cache_hit_ratio"
        lines += [f"# HELP {name} hits / lookups of the semantic response cache", f"# TYPE {name} gauge",
                  f"{name} {_num(self.cache_hit_rate())}"]
        return "\n".join(lines) + "\n"
