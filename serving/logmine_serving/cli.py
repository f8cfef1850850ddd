"""The bodies of `logmine validate` and `logmine serve` (the typer signatures live in
``logmine/cli/serving.py``, which imports this module only when a command runs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from logmine.errors import InputPathError, OptionError

from logmine_serving.generator import Generator
from logmine_serving.pack_runtime import PackRuntime

# (title, [(column header, flat record key)]): two narrow tables read better than one wide one
TABLES = (
    ("agreement with the logged prompt", [("template", "name"), ("requests", "requests"), ("skipped", "skipped"), ("exact", "exact_match"),
                  ("edit sim", "edit_similarity"), ("parses logged", "parses_original"), ("parses served", "parses_compressed")]),
    ("speed (served / logged)", [("template", "name"), ("tokens orig", "prompt_tokens_original"),
                  ("tokens comp", "prompt_tokens_compressed"), ("uncached comp", "uncached_prompt_tokens_compressed"),
                  ("ttft ms orig", "ttft_ms_original"),
                  ("ttft ms comp", "ttft_ms_compressed"), ("ttft ratio", "ttft_ms_ratio"), ("itl p50 ratio", "itl_p50_ms_ratio"),
                  ("tok/s ratio", "tokens_per_s_ratio")]),
)


def run_validate(pack: Path, workspace: Path, per_template: int, max_tokens: int, model: str | None, device: str | None,
                 seed: int, prefix_cache: bool, update: bool, progress: Any) -> dict[str, Any]:
    """Validate ``pack`` against ``workspace``'s logged requests; write the results; return the report JSON."""
    from logmine_serving.validate import ValidateConfig, load_cases, update_pack, validate, write_results

    if per_template < 1:
        raise OptionError("--per-template", per_template, "at least 1")
    if max_tokens < 1:
        raise OptionError("--max-tokens", max_tokens, "at least 1")
    if not workspace.exists():
        raise InputPathError(workspace)
    runtime = PackRuntime.load(pack)
    cases = load_cases(workspace, runtime, per_template)
    generator = Generator.load(model, device)
    config = ValidateConfig(per_template=per_template, max_new_tokens=max_tokens, seed=seed, prefix_cache=prefix_cache)
    report = validate(runtime, cases, generator, config, progress)
    out = write_results(report, workspace, pack)
    doc = report.to_json()
    doc["written"] = {"validation_json": str(out), "table": "validation"}
    if update:
        doc["written"]["pack"] = str(update_pack(pack, report))
    return doc


def tables(doc: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    """The report as ``[(title, rows)]`` for ``emit_table``."""
    from logmine_serving.validate import flat_record

    flat = [flat_record(r) for r in [*doc["templates"], doc["total"]]]
    return [(title, [{head: r.get(key) for head, key in columns} for r in flat]) for title, columns in TABLES]


def run_serve(pack: Path, model: str | None, device: str | None, host: str, port: int, max_batch_size: int,
              max_delay_ms: float, max_queue: int, cache: str, cache_threshold: float, max_tokens: int) -> None:
    """Load the pack and the model, then serve until interrupted."""
    from logmine_serving.cache import default_embedder, make_cache
    from logmine_serving.scheduler import BatchConfig
    from logmine_serving.server import ServeConfig, create_app, run_server

    for option, value in (("--max-batch-size", max_batch_size), ("--max-queue", max_queue), ("--max-tokens", max_tokens)):
        if value < 1:
            raise OptionError(option, value, "at least 1")
    if max_delay_ms < 0:
        raise OptionError("--max-delay-ms", max_delay_ms, "0 or more")
    runtime = PackRuntime.load(pack)
    embedder = default_embedder()
    response_cache = make_cache(cache, embedder, threshold=cache_threshold)
    if response_cache is not None:
        embedder(["warm-up"])  # load the embedding model now, not on the first request
    generator = Generator.load(model, device)
    app = create_app(runtime, generator, BatchConfig(max_batch_size, max_delay_ms, max_queue),
                     ServeConfig(default_max_tokens=max_tokens), response_cache)
    run_server(app, host, port)
