"""A memo of a string function over Polars columns (the native reader's ``attrs`` cache, the ingest
writer's user-id pseudonyms)."""

from __future__ import annotations

from collections.abc import Callable

import polars as pl


class FrameMemo:
    """``fn`` of each text of a column, each distinct text computed once and remembered.

    A column is looked up by its distinct texts: those are found in (or added to) a dict, and the
    column gets their values by one join with a frame of just those texts. (The earlier join with a
    frame of every text remembered cost its whole hash table at each call: with ``attrs`` of
    request ids, mostly seen once, two thirds of the lookup's time.) ``fn`` never returns None (a
    null reads as not known). Threads may share one memo (a dict's reads and writes are atomic).
    Past ``limit`` texts the memo starts over.
    """

    def __init__(self, fn: Callable[[str], str], limit: int) -> None:
        self.fn, self.limit = fn, limit
        self.memo: dict[str, str] = {}

    def __call__(self, keys: pl.Series) -> pl.Series:
        """``keys`` (a String column) with each text replaced by ``fn`` of it; nulls stay null."""
        distinct = keys.drop_nulls().unique()
        memo, fn = self.memo, self.fn
        values = []
        for text in distinct.to_list():
            value = memo.get(text)
            if value is None:
                value = memo[text] = fn(text)
            values.append(value)
        if len(memo) > self.limit:
            self.memo = {}
        frame = pl.DataFrame({"key": distinct, "value": pl.Series(values, dtype=pl.String())})
        found = keys.to_frame("key").join(frame, on="key", how="left", validate="m:1", maintain_order="left")["value"]
        return found.alias(keys.name)
