"""logmine_serving: load template packs safely, render prompts and run the generator.

- :class:`SafeRenderer` / :class:`PackRuntime`: checked, sandboxed, cached template rendering;
- :class:`Generator`: greedy batched decoding with shared-prefix KV-cache reuse;
- :func:`validate`: original vs compressed templates on logged requests (`logmine validate`);
- :func:`create_app`: the HTTP server (`logmine serve`).
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_API = {
    "SafeRenderer": ("logmine_serving.render", "SafeRenderer"),
    "RenderLimits": ("logmine_serving.render", "RenderLimits"),
    "PackRuntime": ("logmine_serving.pack_runtime", "PackRuntime"),
    "Generator": ("logmine_serving.generator", "Generator"),
    "GenerationConfig": ("logmine_serving.generator", "GenerationConfig"),
    "validate": ("logmine_serving.validate", "validate"),
    "ValidateConfig": ("logmine_serving.validate", "ValidateConfig"),
    "load_cases": ("logmine_serving.validate", "load_cases"),
    "create_app": ("logmine_serving.server", "create_app"),
    "BatchConfig": ("logmine_serving.scheduler", "BatchConfig"),
    "MemoryCache": ("logmine_serving.cache", "MemoryCache"),
    "RedisCache": ("logmine_serving.cache", "RedisCache"),
}

__all__ = sorted(_API)


def __getattr__(name: str) -> Any:
    if name not in _API:
        raise AttributeError(f"module 'logmine_serving' has no attribute {name!r}")
    module, attr = _API[name]
    return getattr(importlib.import_module(module), attr)
