"""Format sniffing reads the first lines of a file: the same lines whatever the block they end in."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from logmine.formats import _base


def _first_lines(data: bytes, n: int, max_bytes: int) -> list[bytes]:
    """The definition: the first ``n`` non-empty stripped lines of the first ``max_bytes`` bytes."""
    return [line.strip() for line in data[:max_bytes].splitlines() if line.strip()][:n]


_line = st.binary(max_size=40).map(lambda b: b.replace(b"\n", b" ").replace(b"\r", b" "))
_ending = st.sampled_from([b"\n", b"\r\n", b"\r", b"\n\n", b" \n"])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(st.tuples(_line, _ending), max_size=12), head=st.integers(1, 64), max_bytes=st.integers(1, 400),
       n=st.integers(1, 6))
def test_head_lines_are_the_first_lines_of_the_first_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          lines: list[tuple[bytes, bytes]], head: int, max_bytes: int, n: int) -> None:
    monkeypatch.setattr(_base, "HEAD_BYTES", head)  # blocks end anywhere: inside a line, inside a CR LF
    data = b"".join(text + end for text, end in lines)
    path = tmp_path / "a.log"
    path.write_bytes(data)
    assert _base.head_lines(path, n, max_bytes) == _first_lines(data, n, max_bytes)
