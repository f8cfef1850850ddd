"""Generate the CLI reference (docs/cli.md) from the app itself: `python -m logmine.cli.reference`.

A test regenerates it in memory and fails when docs/cli.md has drifted from the code.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

DOC_PATH = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


def _param_line(param) -> str:  # noqa: ANN001 - typer's vendored click types
    if getattr(param, "param_type_name", "") == "argument":
        name = (param.name or "").upper()
        return f"- `{name}`{' (repeatable)' if param.nargs == -1 else ''}"
    opts = ", ".join(f"`{o}`" for o in param.opts)
    help_text = " ".join((getattr(param, "help", None) or "").split())
    default = param.default
    shown = "" if default in (None, False, ()) or param.required else f" [default: {getattr(default, 'value', default)}]"
    required = " (required)" if param.required else ""
    return f"- {opts}{required}: {help_text}{shown}"


def _command_doc(path: str, cmd) -> list[str]:  # noqa: ANN001
    lines = [f"## `{path}`", ""]
    help_text = (cmd.help or "").strip()
    if help_text:
        lines += [help_text.replace("\b\n", ""), ""]
    params = [p for p in cmd.params if p.name not in {"help"} and not getattr(p, "hidden", False)]
    if params:
        lines += [_param_line(p) for p in params] + [""]
    return lines


def render() -> str:
    from logmine.cli import app

    root = typer.main.get_command(app)
    out = ["# logmine command reference", "", "Generated from the code by `python -m logmine.cli.reference`; do not edit by hand.", ""]
    ctx = typer.Context(root)

    def walk(prefix: str, group) -> None:  # noqa: ANN001
        if hasattr(group, "list_commands"):
            for name in group.list_commands(ctx):
                walk(f"{prefix} {name}", group.get_command(ctx, name))
        else:
            out.extend(_command_doc(prefix, group))

    walk("logmine", root)
    return "\n".join(out).rstrip() + "\n"


def main() -> None:
    DOC_PATH.parent.mkdir(parents=True, exist_ok=True)
    DOC_PATH.write_text(render())
    print(f"wrote {DOC_PATH}", file=sys.stderr)


if __name__ == "__main__":
    main()
