"""`logmine compress`: logs in, a compressed template pack out."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from logmine.cli._options import FormatOption, OutOption, QuietOption, WorkersOption, check_workers
from logmine.cli._output import OutputFormat, emit_json, emit_table, progress_bar
from logmine.errors import InputPathError, OptionError


def compress(
    logs: Annotated[list[Path], typer.Argument(help="Log files or directories (any supported format).", show_default=False)],
    out: OutOption,
    min_fidelity: Annotated[float, typer.Option("--min-fidelity", help="Fidelity gate (instruction coverage): a template ships lossy only at or above it, its meaning kept.")] = 0.94,
    no_lossy: Annotated[bool, typer.Option("--no-lossy", help="Lossless compression only.")] = False,
    edit_threshold: Annotated[float, typer.Option("--edit-threshold", help="Template merge: least edit similarity.")] = 0.9,
    semantic_threshold: Annotated[float, typer.Option("--semantic-threshold", help="Template merge: least embedding cosine.")] = 0.9,
    tokenizer: Annotated[Path | None, typer.Option("--tokenizer", help="A local Hugging Face tokenizer directory (default: the bundled SmolLM2's).", show_default=False)] = None,
    embedding_model: Annotated[Path | None, typer.Option("--embedding-model", help="A local sentence-transformers directory (default: bundled all-MiniLM-L6-v2).", show_default=False)] = None,
    trim_budget: Annotated[int, typer.Option("--trim-budget", help="Token budget of a trimmed prefix slot (suffix: half).")] = 256,
    no_trim: Annotated[bool, typer.Option("--no-trim", help="Do not trim code-context slots.")] = False,
    no_embeddings: Annotated[bool, typer.Option("--no-embeddings", help="No embedding model: edit similarity for merging, bag-of-words fidelity (not the real gate).")] = False,
    pack_dir: Annotated[Path | None, typer.Option("--pack", help="Where to write the pack (default: OUT/pack).", show_default=False)] = None,
    validate: Annotated[int | None, typer.Option("--validate", help="Replay N logged requests per template through the generator and ship, per template, the most compressed form whose outputs agree with the logged prompts' (else lossless, else the original). Default: 2 when the bundled generator is installed and templates x 2 <= 200.", show_default=False)] = None,
    no_validate: Annotated[bool, typer.Option("--no-validate", help="Do not validate (the summary says the pack is not validated).")] = False,
    validate_tokens: Annotated[int, typer.Option("--validate-tokens", help="Tokens generated per prompt when validating.")] = 16,
    validate_threshold: Annotated[float, typer.Option("--validate-threshold", help="Least mean edit similarity of the outputs for a form to ship.")] = 0.9,
    model: Annotated[Path | None, typer.Option("--model", help="A local Hugging Face causal LM directory to validate with (default: the bundled SmolLM2).", show_default=False)] = None,
    workers: WorkersOption = None,
    fmt: FormatOption = OutputFormat.table,
    quiet: QuietOption = False,
) -> None:
    """Ingest LOGS into OUT, mine and merge prompt templates, compress them, and write OUT/pack/.

    Re-running on the same logs gives the same pack (except its created_at). The generator judges
    what ships (--validate N, on by default where it can run); the summary says when it did not.

    Example: logmine compress ~/.continue/dev_data -o ws/ --format json | jq .static_token_cut
    """
    from logmine.jobs import CompressJobConfig, compress_logs, validate_options
    from logmine.stages.compress import CompressConfig
    from logmine.stages.compress import TrimConfig

    for name, value in (("--min-fidelity", min_fidelity), ("--edit-threshold", edit_threshold), ("--semantic-threshold", semantic_threshold)):
        if not 0.0 <= value <= 1.0:
            raise OptionError(name, value, "a number from 0 to 1")
    if trim_budget < 1:
        raise OptionError("--trim-budget", trim_budget, "a positive number of tokens")
    for path in (tokenizer, embedding_model, model):
        if path is not None and not path.is_dir():
            raise InputPathError(path, "is not a local model directory (logmine never downloads models)")
    if validate is not None and validate < 1:
        raise OptionError("--validate", validate, "at least 1 request per template")
    if validate_tokens < 1:
        raise OptionError("--validate-tokens", validate_tokens, "at least 1")
    if not 0.0 <= validate_threshold <= 1.0:
        raise OptionError("--validate-threshold", validate_threshold, "a number from 0 to 1")
    if validate is not None and no_validate:
        raise OptionError("--no-validate", True, "not with --validate")
    options, skipped = validate_options(validate, "--no-validate" if no_validate else None, validate_tokens, validate_threshold,
                                        str(model) if model else None)
    config = CompressJobConfig(
        compress=CompressConfig(min_fidelity=min_fidelity, lossy=not no_lossy), edit_threshold=edit_threshold,
        semantic_threshold=semantic_threshold, embeddings=not no_embeddings,
        embedding_model=str(embedding_model) if embedding_model else None, tokenizer=str(tokenizer) if tokenizer else None,
        pack_dir=pack_dir, trim=None if no_trim else TrimConfig(budget_tokens=trim_budget, suffix_budget_tokens=max(1, trim_budget // 2)),
        validate=options, not_validated=skipped, template_workers=check_workers(workers),
    )
    with progress_bar(quiet) as progress:
        report = compress_logs(logs, out, config, progress)
    summary = report.summary()
    if fmt is OutputFormat.json:
        emit_json(summary)
        return
    _emit_tables(summary)


def _emit_tables(s: dict) -> None:  # noqa: ANN001
    from logmine.jobs import validation_line

    emit_table("logmine compress", [{"": k, "value": v} for k, v in (
        ("templates found", s["templates_found"]), ("families (pack templates)", s["families"]),
        ("traffic covered", f"{s['traffic_covered']:.1%} of {s['requests']:,} requests"),
        ("instances matched", f"{s['instances_matched']:,} of {s['requests_covered']:,}"),
        ("fidelity (mean / min)", f"{s['fidelity']:.3f} / {s['fidelity_min']:.3f}"), ("lossy templates", s["lossy_templates"]), ("gate fallbacks", s["fallbacks"]),
        ("secrets redacted", s["secrets_redacted"]), ("validation", validation_line(s)), ("time", f"{s['seconds']:.1f} s"),
        ("pack", s["pack"]),
    )], ["", "value"])
    rows = [
        {"per request": "static tokens", "before": s["static_tokens_before"], "lossless": s["static_tokens_after_lossless"],
         "lossy": s["static_tokens_after"], "lossy + trimmed": s["static_tokens_after"]},
        {"per request": "rendered tokens", "before": s["rendered_tokens_before"], "lossless": s["rendered_tokens_after_lossless"],
         "lossy": s["rendered_tokens_after_lossy"], "lossy + trimmed": s["rendered_tokens_after"]},
        {"per request": "uncached tokens", "before": s["uncached_tokens_before"], "lossless": s["uncached_tokens_after_lossless"],
         "lossy": s["uncached_tokens_after_lossy"], "lossy + trimmed": s["uncached_tokens_after"]},
        {"per request": "KV-block share", "before": s["kv_block_share_before"], "lossless": s["kv_block_share_after_lossless"],
         "lossy": None, "lossy + trimmed": s["kv_block_share_after"]},
    ]
    emit_table(f"tokens, traffic-weighted over {s['measured_requests']:,} measured requests", rows)
    if s["trim_budget_tokens"] is not None:
        f1 = "n/a" if s["trim_f1"] is None else f"{s['trim_f1']:.3f} vs {s['trim_f1_nearest_lines']:.3f} nearest lines"
        emit_table("context trimming", [{"": k, "value": v} for k, v in (
            ("budget (prefix tokens)", s["trim_budget_tokens"]), ("requests trimmed", s["trimmed_requests"]),
            (f"F1 of kept units ({s['trim_f1_requests']} completions)", f1))], ["", "value"])
    if s["secrets_by_kind"]:
        emit_table("secrets redacted", [{"kind": k, "count": v} for k, v in s["secrets_by_kind"].items()])


def register(app: typer.Typer) -> None:
    app.command("compress")(compress)
