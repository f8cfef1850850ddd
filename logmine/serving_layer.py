"""The serving layer (``logmine_serving``, its own distribution for the GPU hosts), imported on
demand by the commands and pipeline stages that run it; its absence is a clear error with the
install hint."""

from __future__ import annotations

import importlib
from typing import Any

from logmine.errors import LogmineError, MissingDependencyError

INSTALL_HINT = "pip install -e './serving[server]'  (or: pip install 'logmine-serving[server]')"


class ServingNotInstalledError(MissingDependencyError):
    """The serving layer (``logmine_serving``) is not installed."""

    def __init__(self, command: str) -> None:
        self.package, self.extra = "logmine-serving", "server"
        LogmineError.__init__(self, f"`logmine {command}` needs the serving layer (logmine-serving); install it with: {INSTALL_HINT}")


def serving_module(module: str, command: str) -> Any:
    try:
        return importlib.import_module(f"logmine_serving.{module}")
    except ImportError as exc:
        if exc.name is not None and not exc.name.startswith("logmine_serving"):
            raise
        raise ServingNotInstalledError(command) from exc


__all__ = ["INSTALL_HINT", "ServingNotInstalledError", "serving_module"]
