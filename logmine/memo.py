"""A memo of a string function over Polars columns, looked up by a join (the native reader's
``attrs`` cache, the ingest writer's user-id pseudonyms)."""

from __future__ import annotations

from collections.abc import Callable

import polars as pl


class FrameMemo:
    """``fn`` of each text of a column, each distinct text computed once and remembered.

    The remembered pairs are a frame rather than a dict, so a column is looked up by one join
    instead of a Python loop over its rows. ``fn`` never returns None (a null reads as not known).
    Threads may share one memo: a call that adds texts joins against its own extended frame, so a
    concurrent addition lost costs only time. Past ``limit`` texts the memo starts over.
    """

    def __init__(self, fn: Callable[[str], str], limit: int) -> None:
        self.fn, self.limit = fn, limit
        self.frame = pl.DataFrame(schema={"key": pl.String(), "value": pl.String()})

    def __call__(self, keys: pl.Series) -> pl.Series:
        """``keys`` (a String column) with each text replaced by ``fn`` of it; nulls stay null."""
        frame = self.frame
        found = _join_lookup(keys, frame)
        new = keys.filter(found.is_null() & keys.is_not_null()).unique()
        if new.len():
            added = pl.DataFrame({"key": new, "value": pl.Series([self.fn(k) for k in new.to_list()], dtype=pl.String())})
            frame = pl.concat([frame, added])
            found = _join_lookup(keys, frame)
            self.frame = added if frame.height > self.limit else frame
        return found.alias(keys.name)


def _join_lookup(keys: pl.Series, frame: pl.DataFrame) -> pl.Series:
    return keys.to_frame("key").join(frame, on="key", how="left", validate="m:1", maintain_order="left")["value"]
