"""The report's data: named DuckDB queries over the workspace views, each kept for citation.

Every number on the page comes from one :class:`Query` (an id, the table it reads and its SQL);
the page links each number to the query's entry in its *Data sources* list, and shows the table
and SQL on hover. Run any of them yourself with ``duckdb OUT/logmine.duckdb``.
"""

from __future__ import annotations

import logging
import textwrap
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Query:
    """One query the page took numbers from."""

    id: str
    table: str
    sql: str

    @property
    def tip(self) -> str:
        return f"table {self.table} · {' '.join(self.sql.split())}"


@dataclass
class Result:
    """A query's rows (dicts), with the query itself."""

    query: Query
    rows: list[dict[str, Any]]

    @property
    def first(self) -> dict[str, Any]:
        return self.rows[0] if self.rows else {}

    def __bool__(self) -> bool:
        return bool(self.rows)


@dataclass
class Source:
    """Runs queries on one DuckDB connection and remembers them, in page order."""

    con: Any
    tables: set[str]
    queries: list[Query] = field(default_factory=list)

    def has(self, *tables: str) -> bool:
        return all(t in self.tables for t in tables)

    def run(self, qid: str, table: str, sql: str) -> Result:
        sql = textwrap.dedent(sql).strip()
        query = Query(qid, table, sql)
        self.queries.append(query)
        cur = self.con.execute(sql)
        names = [d[0] for d in cur.description]
        return Result(query, [dict(zip(names, row, strict=True)) for row in cur.fetchall()])

    def frame(self, qid: str, table: str, sql: str) -> tuple[Query, Any]:
        """A query's result as a Polars DataFrame (types kept, via Arrow)."""
        import polars as pl

        sql = textwrap.dedent(sql).strip()
        query = Query(qid, table, sql)
        self.queries.append(query)
        return query, pl.from_arrow(self.con.sql(sql).to_arrow_table())

    def columns(self, table: str) -> list[str]:
        return [r[0] for r in self.con.execute(f'DESCRIBE "{table}"').fetchall()]


def open_source(ws: Any) -> Source:
    """A source over the workspace's DuckDB views (read-only)."""
    con = ws.connect(read_only=True)
    tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    return Source(con, tables)
