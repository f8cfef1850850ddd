"""Language names: the one vocabulary of programming languages logmine's tables, readers,
parsers and stages share (``python``, ``typescript``, ``go``, ...), from a file path or a
logged language id."""

from __future__ import annotations

def language_from_path(path: str | None) -> str | None:
    """The language name logmine uses, from a file extension (None when unknown)."""
    if not path:
        return None
    ext = path.rsplit(".", 1)[-1].lower() if "." in path.rsplit("/", 1)[-1] else ""
    return EXTENSION_LANGUAGE.get(ext)


EXTENSION_LANGUAGE = {
    "py": "python", "pyi": "python", "java": "java", "js": "javascript", "mjs": "javascript", "cjs": "javascript",
    "jsx": "javascript", "ts": "typescript", "tsx": "typescript", "go": "go", "rs": "rust", "kt": "kotlin",
    "c": "c", "h": "c", "cc": "cpp", "cpp": "cpp", "hpp": "cpp", "cs": "csharp", "rb": "ruby", "php": "php",
    "swift": "swift", "scala": "scala", "sql": "sql", "sh": "shell", "md": "markdown", "json": "json",
    "yaml": "yaml", "yml": "yaml", "toml": "toml", "html": "html", "css": "css",
}


def normalise_language(value: str | None) -> str | None:
    """Lower-case language ids and fold common aliases (``ts`` -> typescript, ``golang`` -> go)."""
    if not value:
        return None
    value = value.strip().lower()
    return LANGUAGE_ALIASES.get(value, value)


LANGUAGE_ALIASES = {
    "py": "python", "python3": "python", "js": "javascript", "javascriptreact": "javascript", "ts": "typescript",
    "typescriptreact": "typescript", "golang": "go", "rs": "rust", "c#": "csharp", "c++": "cpp",
}


__all__ = ["EXTENSION_LANGUAGE", "LANGUAGE_ALIASES", "language_from_path", "normalise_language"]
