"""Generate the JSON Schemas in schemas/ from the code's types: `python -m logmine.schemas`.

A test regenerates them in memory and fails when the checked-in files have drifted.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from logmine.formats.native import NativeEvent, NativeRequest
from logmine.pack import pack_json_schema

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schemas"


def _native() -> dict[str, Any]:
    from pydantic import TypeAdapter

    schema = TypeAdapter(NativeEvent | NativeRequest).json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://logmine.dev/schemas/native_record.schema.json"
    schema["title"] = "logmine native JSONL record (one per line)"
    return schema


def _pack() -> dict[str, Any]:
    return pack_json_schema()


GENERATORS: dict[str, Callable[[], dict[str, Any]]] = {
    "native_record.schema.json": _native,
    "template_pack.schema.json": _pack,
}


def render(name: str) -> str:
    return json.dumps(GENERATORS[name](), indent=2, sort_keys=True) + "\n"


def main(out: Path = SCHEMA_DIR) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name in GENERATORS:
        (out / name).write_text(render(name))
        print(f"wrote {out / name}", file=sys.stderr)


if __name__ == "__main__":
    main()
