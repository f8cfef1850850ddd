"""Errors the serving layer reports to a user; all are :class:`logmine.errors.LogmineError`."""

from __future__ import annotations

import importlib
from typing import Any

from logmine.errors import LogmineError, MissingDependencyError, RenderError, UnsafeTemplateError

__all__ = ["RenderError", "ServingDependencyError", "UnsafeTemplateError", "ValidationInputError", "require_server"]


class ValidationInputError(LogmineError):
    """The workspace lacks what `logmine validate` needs (template ids, requests)."""


INSTALL_HINT = "pip install -e './serving[server]'  (or: pip install 'logmine-serving[server]')"


class ServingDependencyError(MissingDependencyError):
    """A package of the serving layer's ``server`` extra is missing."""

    def __init__(self, package: str, purpose: str) -> None:
        self.package, self.extra = package, "server"
        LogmineError.__init__(self, f"{purpose} needs {package}; install it with: {INSTALL_HINT}")


def require_server(module: str, purpose: str) -> Any:
    """Import ``module`` (fastapi, uvicorn, redis) or raise :class:`ServingDependencyError`."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ServingDependencyError(module, purpose) from exc
