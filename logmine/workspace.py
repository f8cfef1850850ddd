"""The embedded workspace: Parquet tables, a manifest, and a DuckDB file of views over them.

Layout of a workspace directory ``OUT``::

    OUT/manifest.json        the commit point: which Parquet files make up each table
    OUT/logmine.duckdb       views over the current files (``duckdb OUT/logmine.duckdb``)
    OUT/data/<table>/*.parquet   immutable files, named by partition key and generation
    OUT/config.json          workspace settings (the pseudonymisation key lives here, never in tables)

Every table is a set of *partitions* (one Parquet file each, keyed by a string such as a
source file's id or a date). A :class:`Transaction` writes new files, then replaces
``manifest.json`` atomically; the DuckDB file is rebuilt into a temporary file and renamed
over the old one. A run killed at any moment leaves the previous manifest, its files and a
DuckDB file that still points at them; files no manifest references are removed by the next
commit. A lock file keeps two writers apart.

The data files of a commit are fsynced before the manifest names them, so the manifest never
points at files a power cut could lose. For tests, ``LOGMINE_TEST_CRASH_AT`` set to
``before-manifest``, ``after-manifest`` or ``after-duckdb`` makes :meth:`Workspace._commit` end the
process (``os._exit(70)``) at that point, as a SIGKILL would.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
import re
import secrets
import shutil
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
import pyarrow as pa

from logmine.errors import FormatVersionError, MissingTableError, OutputPathError, WorkspaceError, WorkspaceLockedError

log = logging.getLogger(__name__)

FORMAT_VERSION = 1
DUCKDB_NAME = "logmine.duckdb"
MANIFEST_NAME = "manifest.json"
CONFIG_NAME = "config.json"
LOCK_NAME = ".lock"
PARQUET_OPTIONS = {"compression": "zstd", "compression_level": 3, "statistics": True}
CRASH_ENV = "LOGMINE_TEST_CRASH_AT"
CRASH_POINTS = ("before-manifest", "after-manifest", "after-duckdb")


def _crash_point(name: str) -> None:
    """End the process here when ``LOGMINE_TEST_CRASH_AT`` names this point (a test hook)."""
    if os.environ.get(CRASH_ENV) == name:
        os._exit(70)


@dataclass
class TableEntry:
    """One table of the manifest: its partitions, an optional empty-schema file, and view SQL."""

    partitions: dict[str, str] = field(default_factory=dict)
    """Partition key -> file path relative to the workspace root."""
    schema_file: str | None = None
    """A zero-row Parquet file that gives the table its schema when it has no partitions."""
    view_sql: str | None = None
    """Optional SQL for the DuckDB view; ``{files}`` is replaced by the file list."""

    def to_json(self) -> dict[str, object]:
        return {"partitions": dict(sorted(self.partitions.items())), "schema_file": self.schema_file, "view_sql": self.view_sql}

    @classmethod
    def from_json(cls, obj: Mapping[str, object]) -> TableEntry:
        return cls(dict(obj.get("partitions") or {}), obj.get("schema_file"), obj.get("view_sql"))  # type: ignore[arg-type]


def _fsync_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


def _leftover(name: str) -> bool:
    """A file a run killed before its first commit may leave in a new workspace directory."""
    return name in {LOCK_NAME, CONFIG_NAME, "data"} or (name.startswith(".") and name.endswith(".tmp"))


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


FSYNC_THREADS = 16
"""fsyncs issued at once by a commit: a run that read many small files has a few data files per
file, and one fsync after another waited on the disk for each (1.6-4 ms apiece on the dev box)."""


def _fsync_all(sync: Callable[[Path], None], paths: list[Path]) -> None:
    """``sync`` every path, several at once (an fsync waits on the disk, not on the CPU)."""
    if len(paths) < 2:
        for path in paths:
            sync(path)
        return
    with ThreadPoolExecutor(min(FSYNC_THREADS, len(paths)), thread_name_prefix="logmine-fsync") as pool:
        for _ in pool.map(sync, paths):  # re-raises the first failure
            pass


class Workspace:
    """A workspace directory. Open it with :meth:`open` (must exist) or :meth:`create`."""

    def __init__(self, root: Path, manifest: dict[str, object]) -> None:
        self.root = root
        self._manifest = manifest
        self.tables: dict[str, TableEntry] = {
            name: TableEntry.from_json(entry) for name, entry in dict(manifest.get("tables") or {}).items()  # type: ignore[union-attr]
        }

    # -- opening ---------------------------------------------------------------------------
    @classmethod
    def open(cls, root: Path | str) -> Workspace:
        root = Path(root)
        path = root / MANIFEST_NAME
        if not path.is_file():
            raise WorkspaceError(f"{root} is not a logmine workspace (no {MANIFEST_NAME}); run `logmine ingest LOGS -o {root}` first")
        try:
            manifest = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise WorkspaceError(f"{path}: unreadable manifest ({exc})") from exc
        found = int(manifest.get("format_version", 0))
        if found > FORMAT_VERSION:
            raise FormatVersionError("workspace", path, found, FORMAT_VERSION)
        ws = cls(root, manifest)
        ws._ensure_duckdb()
        return ws

    @classmethod
    def create(cls, root: Path | str) -> Workspace:
        """Open ``root`` if it is a workspace, else make an empty one there."""
        root = Path(root)
        if (root / MANIFEST_NAME).is_file():
            return cls.open(root)
        if root.exists() and not root.is_dir():
            raise WorkspaceError(f"{root} exists and is not a directory")
        if root.is_dir() and any(not _leftover(p.name) for p in root.iterdir()):
            raise WorkspaceError(f"{root} is a non-empty directory that is not a logmine workspace; choose another -o")
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputPathError(root, "workspace", exc) from exc
        return cls(root, {"format_version": FORMAT_VERSION, "generation": 0, "tables": {}})

    def reload(self) -> Workspace:
        """The workspace as currently committed on disk (self when nothing is committed yet)."""
        return Workspace.open(self.root) if (self.root / MANIFEST_NAME).is_file() else self

    # -- reading ---------------------------------------------------------------------------
    @property
    def generation(self) -> int:
        return int(self._manifest.get("generation", 0))  # type: ignore[arg-type]

    @property
    def duckdb_path(self) -> Path:
        return self.root / DUCKDB_NAME

    def has_table(self, name: str) -> bool:
        return name in self.tables

    def files(self, name: str) -> list[Path]:
        entry = self._entry(name)
        return [self.root / rel for _, rel in sorted(entry.partitions.items())]

    def partitions(self, name: str) -> dict[str, Path]:
        return {key: self.root / rel for key, rel in self._entry(name).partitions.items()}

    def scan(self, name: str) -> pl.LazyFrame:
        """A LazyFrame over the table's current files (the stored columns, without view joins)."""
        entry = self._entry(name)
        files = [self.root / rel for _, rel in sorted(entry.partitions.items())]
        if not files:
            if entry.schema_file is None:
                raise WorkspaceError(f"table {name!r} has no files and no schema")
            files = [self.root / entry.schema_file]
        return pl.scan_parquet(files)

    def read(self, name: str) -> pl.DataFrame:
        return self.scan(name).collect()

    def _entry(self, name: str) -> TableEntry:
        if name not in self.tables:
            raise MissingTableError(self.root, name, _hint_for(name))
        return self.tables[name]

    def config(self) -> dict[str, object]:
        path = self.root / CONFIG_NAME
        return json.loads(path.read_text()) if path.is_file() else {}

    def secret_key(self) -> bytes:
        """The workspace's pseudonymisation key: ``LOGMINE_USER_KEY`` if set, else one made once."""
        env = os.environ.get("LOGMINE_USER_KEY")
        if env:
            return env.encode()
        cfg = self.config()
        if "user_key" not in cfg:
            cfg["user_key"] = secrets.token_hex(32)
            self.root.mkdir(parents=True, exist_ok=True)
            _fsync_write(self.root / CONFIG_NAME, json.dumps(cfg, indent=2).encode())
            os.chmod(self.root / CONFIG_NAME, 0o600)
        return str(cfg["user_key"]).encode()

    def connect(self, read_only: bool = True):  # noqa: ANN201 - duckdb is imported lazily
        """A DuckDB connection to the workspace's views."""
        import duckdb

        return duckdb.connect(str(self.duckdb_path), read_only=read_only)

    # -- writing ---------------------------------------------------------------------------
    @contextlib.contextmanager
    def lock(self, wait: bool = False) -> Iterator[None]:
        """Hold the workspace's writer lock; raise :class:`WorkspaceLockedError` if taken."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            fh = open(self.root / LOCK_NAME, "a+")
        except OSError as exc:
            raise OutputPathError(self.root, "workspace", exc) from exc
        try:
            flags = fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB
            try:
                fcntl.flock(fh, flags)
            except BlockingIOError as exc:
                raise WorkspaceLockedError(self.root) from exc
            yield
        finally:
            fh.close()

    def transaction(self) -> Transaction:
        return Transaction(self)

    def _commit(self, tables: dict[str, TableEntry]) -> None:
        old = {rel for e in self.tables.values() for rel in [*e.partitions.values(), e.schema_file] if rel}
        new = {rel for e in tables.values() for rel in [*e.partitions.values(), e.schema_file] if rel} - old
        _fsync_all(_fsync_file, [self.root / rel for rel in sorted(new)])
        _fsync_all(_fsync_dir, sorted({(self.root / rel).parent for rel in new}))
        _crash_point("before-manifest")
        manifest = {
            "format_version": FORMAT_VERSION,
            "generation": self.generation + 1,
            "committed_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "tables": {name: entry.to_json() for name, entry in sorted(tables.items())},
        }
        _fsync_write(self.root / MANIFEST_NAME, json.dumps(manifest, indent=1).encode())
        _crash_point("after-manifest")
        self._manifest, self.tables = manifest, tables
        self._build_duckdb()
        _crash_point("after-duckdb")
        self._collect_garbage()

    # -- DuckDB views ----------------------------------------------------------------------
    def _ensure_duckdb(self) -> None:
        """Rebuild the DuckDB file if a run died between the manifest and the DuckDB rename."""
        if _duckdb_state(self.duckdb_path) != (self.generation, str(self.root.resolve())):
            with contextlib.suppress(WorkspaceLockedError, OSError), self.lock():
                self._build_duckdb()

    def _build_duckdb(self) -> None:
        import duckdb

        tmp = self.root / f".{DUCKDB_NAME}.{uuid.uuid4().hex}.tmp"
        con = duckdb.connect(str(tmp))
        try:
            for name, entry in sorted(self.tables.items()):
                con.execute(self.view_sql(name, entry))
            con.execute("CREATE TABLE _logmine_meta AS SELECT ? AS generation, ? AS root", [self.generation, str(self.root.resolve())])
            con.execute("CHECKPOINT")
        finally:
            con.close()
        os.replace(tmp, self.duckdb_path)
        _fsync_dir(self.root)

    def view_sql(self, name: str, entry: TableEntry | None = None) -> str:
        entry = entry or self._entry(name)
        files = [str((self.root / rel).resolve()) for _, rel in sorted(entry.partitions.items())]
        if not files and entry.schema_file:
            files = [str((self.root / entry.schema_file).resolve())]
        file_list = "[" + ", ".join("'" + f.replace("'", "''") + "'" for f in files) + "]"
        body = f"SELECT * FROM read_parquet({file_list}, union_by_name = true)"
        if entry.view_sql:
            body = entry.view_sql.replace("{files}", file_list)
        return f'CREATE OR REPLACE VIEW "{name}" AS {body}'

    def _collect_garbage(self) -> None:
        live = {rel for e in self.tables.values() for rel in e.partitions.values()}
        live |= {e.schema_file for e in self.tables.values() if e.schema_file}
        data = self.root / "data"
        if not data.is_dir():
            return
        for path in data.rglob("*"):
            if path.is_file() and str(path.relative_to(self.root)) not in live:
                path.unlink(missing_ok=True)
        for tmp in self.root.glob(".*.tmp"):  # leftovers of killed runs: files, or a half-written pack directory
            if tmp.is_dir() and not tmp.is_symlink():
                shutil.rmtree(tmp, ignore_errors=True)
            else:
                tmp.unlink(missing_ok=True)


def _duckdb_state(path: Path) -> tuple[int, str] | None:
    """The generation and root the DuckDB file's views were built for (None: missing or unreadable)."""
    import duckdb

    if not path.is_file():
        return None
    try:
        con = duckdb.connect(str(path), read_only=True)
    except duckdb.Error:
        return None
    try:
        generation, root = con.execute("SELECT generation, root FROM _logmine_meta").fetchone()
        return int(generation), str(root)
    except (duckdb.Error, TypeError):
        return None
    finally:
        con.close()


_TABLE_HINTS = {
    "events": "run `logmine ingest LOGS -o OUT` first",
    "llm_requests": "run `logmine ingest LOGS -o OUT` first",
    "templates": "run `logmine templates OUT` first",
}


def _hint_for(name: str) -> str:
    if name in _TABLE_HINTS:
        return _TABLE_HINTS[name]
    stage = name.split("_", 1)[0]
    return f"run `logmine {stage} OUT` first"


def _has_columns(path: Path, schema: Mapping[str, pl.DataType]) -> bool:
    """True when the schema file at ``path`` exists and has every column of ``schema`` (a table
    that gained columns gets a new one, so its view shows them even before any row has them)."""
    if not path.is_file():
        return False
    return set(schema) <= set(pl.read_parquet_schema(path))


_UNSAFE = re.compile(r"[^0-9A-Za-z_-]")
"""What a partition key may not hold in a file name (``isalnum`` also passes non-ASCII letters: kept out too)."""


class Transaction:
    """Stage table changes, then :meth:`commit` them atomically. Use under ``Workspace.lock()``."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.tables = {name: TableEntry(dict(e.partitions), e.schema_file, e.view_sql) for name, e in ws.tables.items()}
        self.token = f"g{ws.generation + 1}-{uuid.uuid4().hex[:8]}"
        self._dirs: dict[str, Path] = {}

    def _path(self, table: str, key: str) -> str:
        return f"data/{table}/{self._name(key)}"

    def _name(self, key: str) -> str:
        safe = _UNSAFE.sub("_", key)
        if safe != key or len(safe) > 80:  # keep distinct keys apart after sanitising
            safe = safe[:60] + "-" + hashlib.blake2b(key.encode(), digest_size=6).hexdigest()
        return f"{safe}.{self.token}.parquet"

    def _write(self, rel: str, data: pl.DataFrame | pa.Table) -> None:
        path = self.ws.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        if isinstance(data, pa.Table):
            data = pl.from_arrow(data)  # type: ignore[assignment]
        data.write_parquet(tmp, **PARQUET_OPTIONS)  # type: ignore[union-attr]
        os.replace(tmp, path)

    def ensure_table(self, table: str, schema: Mapping[str, pl.DataType], view_sql: str | None = None) -> None:
        """Declare ``table`` with ``schema`` so it exists (and is queryable) even with no rows."""
        entry = self.tables.setdefault(table, TableEntry())
        if entry.schema_file is None or not _has_columns(self.ws.root / entry.schema_file, schema):
            rel = f"data/{table}/_schema.{self.token}.parquet"
            self._write(rel, pl.DataFrame(schema=dict(schema)))
            entry.schema_file = rel
        if view_sql is not None:
            entry.view_sql = view_sql

    def put_partition(self, table: str, key: str, data: pl.DataFrame | pa.Table) -> None:
        """Write ``data`` as partition ``key`` of ``table``, replacing any earlier one."""
        rel = self._path(table, key)
        self._write(rel, data)
        self.tables.setdefault(table, TableEntry()).partitions[key] = rel

    def put_file(self, table: str, key: str, path: Path) -> None:
        """Adopt an already written Parquet file (inside the workspace's data dir) as a partition."""
        rel = str(path.relative_to(self.ws.root))
        self.tables.setdefault(table, TableEntry()).partitions[key] = rel

    def new_file(self, table: str, key: str) -> Path:
        """A fresh path for a Parquet file the caller writes itself (then :meth:`put_file`)."""
        folder = self._dirs.get(table)
        if folder is None:  # an ingest asks for a dozen files per input file: each table's folder made once
            folder = self.ws.root / "data" / table
            folder.mkdir(parents=True, exist_ok=True)
            self._dirs[table] = folder
        return folder / self._name(key)

    def drop_partition(self, table: str, key: str) -> None:
        if table in self.tables:
            self.tables[table].partitions.pop(key, None)

    def replace_table(self, table: str, data: pl.DataFrame | pa.Table, view_sql: str | None = None) -> None:
        """Replace the whole table by one partition holding ``data``."""
        entry = self.tables.setdefault(table, TableEntry())
        entry.partitions.clear()
        self.put_partition(table, "all", data)
        schema = data.schema if isinstance(data, pl.DataFrame) else pl.from_arrow(data.slice(0, 0)).schema  # type: ignore[union-attr]
        self.ensure_table(table, dict(schema), view_sql)
        if view_sql is not None:
            entry.view_sql = view_sql

    def commit(self) -> None:
        self.ws._commit(self.tables)
