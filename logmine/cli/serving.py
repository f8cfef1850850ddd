"""`logmine validate` and `logmine serve`: thin wrappers over the serving layer.

The serving layer is its own distribution (``serving/``, package ``logmine_serving``), deployed
on GPU hosts; it is imported only when one of these commands runs, and its absence is a clear
error with the install hint.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from logmine.cli._options import FormatOption, QuietOption
from logmine.cli._output import OutputFormat, emit_json, emit_table, progress_bar
from logmine.serving_layer import serving_module

PackArg = Annotated[Path, typer.Argument(help="The template pack directory (made by `logmine compress`).", show_default=False)]
ModelOption = Annotated[str | None, typer.Option("--model", help="A local Hugging Face causal LM directory (default: the bundled SmolLM2).")]
DeviceOption = Annotated[str | None, typer.Option("--device", help="cpu or cuda (default: cuda when present).")]


def validate(
    pack: PackArg,
    workspace: Annotated[Path, typer.Option("--workspace", "-w", help="The workspace whose logged requests to replay; results go to WORKSPACE/validation.json and its `validation` table.", show_default=False)],
    per_template: Annotated[int, typer.Option("--per-template", "-n", help="Logged requests per template, at most.")] = 5,
    max_tokens: Annotated[int, typer.Option("--max-tokens", help="Tokens generated per prompt (the same for the logged and the served prompt).")] = 32,
    model: ModelOption = None,
    device: DeviceOption = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed set before every generation (decoding is greedy).")] = 0,
    prefix_cache: Annotated[bool, typer.Option("--prefix-cache/--no-prefix-cache", help="Serve the pack's prompts from the shared-prefix KV cache.")] = True,
    update_pack: Annotated[bool, typer.Option("--update-pack", help="Also rewrite the pack (atomically, re-hashed) with each template's validation filled.")] = False,
    fmt: FormatOption = OutputFormat.table,
    quiet: QuietOption = False,
) -> None:
    """Replay logged requests through what a pack serves and against their logged prompts: same output, faster?

    Each request is rendered through its template's whole render plan (code-context trimming and the
    lossless steps: what `logmine serve` sends) and the generator runs on it and on the logged prompt.
    Per template and traffic-weighted in total: exact match, edit similarity, whether code outputs
    parse, prompt and uncached tokens, TTFT, inter-token latency p50/p90/p99 and tokens/s for both
    prompts and their ratio. --format json prints {"templates": [one record per template], "total",
    "config", "written"}.

    Example: logmine validate out/pack --workspace out/ -n 5 --format json
    """
    cli = serving_module("cli", "validate")
    with progress_bar(quiet) as progress:
        doc = cli.run_validate(pack, workspace, per_template, max_tokens, model, device, seed, prefix_cache, update_pack, progress)
    if fmt is OutputFormat.json:
        emit_json(doc)
        return
    cfg = doc["config"]
    for title, rows in cli.tables(doc):
        emit_table(f"validate {title}: {cfg['model']} on {cfg['device']}, {cfg['max_new_tokens']} tokens", rows)


def serve(
    pack: PackArg,
    model: ModelOption = None,
    device: DeviceOption = None,
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = 8000,
    max_batch_size: Annotated[int, typer.Option("--max-batch-size", help="Sequences per generation batch, at most.")] = 64,
    max_delay_ms: Annotated[float, typer.Option("--max-delay-ms", help="How long a request waits for a batch to fill.")] = 5.0,
    max_queue: Annotated[int, typer.Option("--max-queue", help="Requests waiting at most; more get 429 with Retry-After.")] = 256,
    cache: Annotated[str, typer.Option("--cache", help="Response cache: memory, none, or redis://host:port/db.")] = "memory",
    cache_threshold: Annotated[float, typer.Option("--cache-threshold", help="Cosine similarity for a semantic cache hit.")] = 0.97,
    max_tokens: Annotated[int, typer.Option("--max-tokens", help="Default tokens per generate request.")] = 64,
) -> None:
    """Serve a template pack over HTTP: /v1/render, /v1/generate (SSE), /metrics, /healthz.

    Example: logmine serve out/pack --port 8000 --cache redis://127.0.0.1:6379/0
    """
    cli = serving_module("cli", "serve")
    cli.run_serve(pack, model, device, host, port, max_batch_size, max_delay_ms, max_queue, cache, cache_threshold, max_tokens)


def register(app: typer.Typer) -> None:
    app.command("validate")(validate)
    app.command("serve")(serve)
