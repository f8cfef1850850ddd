"""One exception tree for everything logmine reports to a user.

The CLI catches :class:`LogmineError` once, prints ``Error: <message>`` and exits 1.
Anything else escaping is a bug and keeps its traceback.
"""

from __future__ import annotations

from pathlib import Path


class LogmineError(Exception):
    """Base of every error logmine raises on purpose; the message is shown to the user."""


class InputPathError(LogmineError):
    """A path given on the command line or to the API does not exist or cannot be read."""

    def __init__(self, path: Path | str, problem: str = "does not exist") -> None:
        self.path = Path(path)
        super().__init__(f"{path}: {problem}")


class OptionError(LogmineError):
    """An option has a value logmine cannot use."""

    def __init__(self, option: str, value: object, expected: str) -> None:
        self.option, self.value = option, value
        super().__init__(f"invalid value for {option}: {value!r} ({expected})")


class WorkspaceError(LogmineError):
    """The workspace is missing, corrupt, locked, or lacks a table a stage needs."""


class WorkspaceLockedError(WorkspaceError):
    """Another logmine run holds the workspace lock."""

    def __init__(self, root: Path) -> None:
        self.root = root
        super().__init__(f"workspace {root} is locked by another logmine run; wait for it or use --wait")


class MissingTableError(WorkspaceError):
    """A stage needs a table that an earlier stage has not written yet."""

    def __init__(self, root: Path, table: str, hint: str) -> None:
        self.root, self.table = root, table
        super().__init__(f"workspace {root} has no table {table!r}; {hint}")


class FormatVersionError(LogmineError):
    """A stored artefact was written by a newer logmine than this one."""

    def __init__(self, what: str, path: Path | str, found: int, supported: int) -> None:
        self.path, self.found, self.supported = Path(path), found, supported
        super().__init__(f"{path}: {what} format {found} is newer than supported {supported}; upgrade logmine")


class PackError(LogmineError):
    """A template pack is invalid: schema, hashes or content."""


class UnsafeTemplateError(LogmineError):
    """A pack template uses syntax that packs may not use, or cannot be parsed safely."""

    def __init__(self, template: str, problem: str) -> None:
        self.template, self.problem = template, problem
        super().__init__(f"template {template!r} refused: {problem}")


class RenderError(LogmineError):
    """A template could not be rendered with the given slot values."""

    def __init__(self, template: str, problem: str) -> None:
        self.template, self.problem = template, problem
        super().__init__(f"template {template!r} could not be rendered: {problem}")


class MissingDependencyError(LogmineError):
    """An optional dependency is needed for this command and is not installed."""

    def __init__(self, package: str, extra: str, purpose: str) -> None:
        self.package, self.extra = package, extra
        super().__init__(f"{purpose} needs {package}; install it with: pip install 'logmine[{extra}]'")


class NoPromptsError(LogmineError):
    """``compress`` found no request with a prompt: the pack would be empty, so none is written."""

    def __init__(self, workspace: Path | str, requests: int, by_format: dict[str, int]) -> None:
        self.workspace, self.requests, self.by_format = Path(workspace), requests, dict(by_format)
        if requests:
            formats = ", ".join(f"{name}: {n}" for name, n in sorted(by_format.items()))
            message = (f"{requests} requests ingested but none carries a prompt ({formats}), so there is no template to pack; "
                       "give compress the logs that hold the prompt text (OpenTelemetry GenAI in its default mode writes it "
                       "as log records: pass the .logs.jsonl file beside the spans, with message content capture on)")
        else:
            message = ("no LLM request was ingested, so there is no template to pack; compress needs an assistant's logs "
                       "(editor events alone go to `logmine flows`)")
        super().__init__(message)


class OutputPathError(LogmineError):
    """logmine cannot create or write an output the user named (a workspace, a report, a directory)."""

    def __init__(self, path: Path | str, what: str, exc: OSError) -> None:
        self.path = Path(path)
        super().__init__(f"{path}: cannot write the {what} here ({_why(self.path, exc)})")


def _why(path: Path, exc: OSError) -> str:
    """The OS's reason, naming the nearest existing ancestor when ``path`` could not be made in it."""
    reason = exc.strerror or str(exc)
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                return f"{parent} is a file, not a directory"
            return reason if path.exists() else f"{parent} refuses new entries: {reason}"
    return reason
