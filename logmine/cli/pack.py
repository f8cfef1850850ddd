"""`logmine pack verify|diff`: check a template pack, or show what changed between two."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from logmine.cli._options import FormatOption
from logmine.cli._output import OutputFormat, emit_json, emit_table, stdout

pack_app = typer.Typer(help="Check and compare template packs.", no_args_is_help=True)
PackArg = Annotated[Path, typer.Argument(help="A pack directory (holding pack.json and manifest.json).", show_default=False)]


@pack_app.command("verify")
def verify(pack: PackArg, fmt: FormatOption = OutputFormat.table) -> None:
    """Check a pack's manifest hashes, format version and schema; exit 1 if anything is wrong.

    Example: logmine pack verify out/demo/pack
    """
    from logmine.pack import load_pack

    loaded = load_pack(pack)
    result = {"pack": str(pack), "ok": True, "format_version": loaded.format_version, "templates": len(loaded.templates),
              "shared_prefixes": len(loaded.shared_prefixes), "created_at": loaded.created_at}
    if fmt is OutputFormat.json:
        emit_json(result)
    else:
        stdout.print(f"ok: {pack} (format {loaded.format_version}, {len(loaded.templates)} templates, "
                     f"{len(loaded.shared_prefixes)} shared prefixes)")


@pack_app.command("diff")
def diff(old: PackArg, new: PackArg, fmt: FormatOption = OutputFormat.table) -> None:
    """Show templates added, removed and changed between two packs (e.g. last night's and today's).

    Example: logmine pack diff packs/2026-11-27 packs/2026-11-28
    """
    from logmine.pack import diff_packs, load_pack

    changes = diff_packs(load_pack(old), load_pack(new))
    if fmt is OutputFormat.json:
        emit_json(changes)
        return
    rows = [{"change": c["change"], "template": c["name"], "id": c["id"], "detail": c["detail"]} for c in changes["templates"]]
    emit_table(f"pack diff: {len(rows)} template changes", rows, ["change", "template", "id", "detail"])
    for key, (a, b) in changes["totals"].items():
        stdout.print(f"{key}: {a} -> {b}")


def register(app: typer.Typer) -> None:
    app.add_typer(pack_app, name="pack")
