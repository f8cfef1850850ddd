"""Prompt templates of a ``logmine sample`` log, scored against the template names its native records carry.

``logmine sample`` writes, in each native ``llm_request`` record, the name of the template that rendered its
prompt (``attrs.template_name``). The whole sample (every format) is ingested and mined with the templates
stage, as ``logmine compress`` does; the native requests are then scored: GA of the mined templates and of
the merged families against those names. A check that is neither a development nor a held-out family of
bench/prompts.py: its templates are logmine's own generator's, and no rule was written looking at them.

Example:
    python bench/sample_templates.py
    python bench/sample_templates.py --sample sample_logs --json out/bench/sample_templates.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

os.environ.setdefault("POLARS_MAX_THREADS", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from logmine.evaluate import score  # noqa: E402
from logmine.stages.ingest.core import ingest  # noqa: E402
from logmine.stages.templates.tables import TemplatesConfig, run  # noqa: E402
from logmine.workspace import Workspace  # noqa: E402


def native_truth(sample: Path) -> dict[str, str]:
    """``request_id -> template name`` of the native records of a sample (malformed lines skipped)."""
    out: dict[str, str] = {}
    for path in sorted((sample / "native").glob("*.jsonl")):
        with path.open(encoding="utf-8", errors="replace") as f:
            for line in f:
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                attrs = record.get("attrs") if isinstance(record, dict) else None
                if record.get("type") == "llm_request" and isinstance(attrs, dict) and isinstance(attrs.get("template_name"), str):
                    out[record["request_id"]] = attrs["template_name"]
    return out


def measure(sample: Path, embeddings: bool) -> dict[str, Any]:
    truth = native_truth(sample)
    if not truth:
        raise SystemExit(f"Error: {sample}: no native llm_request record names its template (is it a `logmine sample` log?)")
    with tempfile.TemporaryDirectory() as tmp:
        ws_path = Path(tmp) / "ws"
        ingest([sample], ws_path)
        report = run(ws_path, TemplatesConfig(embeddings=embeddings))
        ws = Workspace.open(ws_path)
        assigned = ws.read("request_templates").join(ws.read("templates").select("template_id", "family_id"), on="template_id")
        rows = [(truth[r], t, fam) for r, t, fam in assigned.select("request_id", "template_id", "family_id").iter_rows() if r in truth]
    names, templates, families = (list(col) for col in zip(*rows, strict=True))
    return {
        "sample": str(sample), "native_requests": len(rows), "truth_templates": len(set(names)),
        "mined_templates": len(set(templates)), "families": len(set(families)),
        "all_mined_templates": report.templates, "all_families": report.families,
        "templates_ga": round(score(names, templates).ga, 4), "families_ga": round(score(names, families).ga, 4),
        "embeddings": embeddings,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sample", type=Path, default=ROOT / "sample_logs", help="a `logmine sample` directory")
    parser.add_argument("--embeddings", action="store_true", help="merge with the bundled embedding model too")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    if not (args.sample / "native").is_dir():
        parser.error(f"--sample {args.sample}: no native/ folder (use a `logmine sample` directory)")
    r = measure(args.sample, args.embeddings)
    print("| native requests | true templates | mined (their templates) | GA | families | GA after merging |")
    print("|---:|---:|---:|---:|---:|---:|")
    print(f"| {r['native_requests']} | {r['truth_templates']} | {r['mined_templates']} | {r['templates_ga']:.3f} | "
          f"{r['families']} | {r['families_ga']:.3f} |")
    print(f"\nAll formats: {r['all_mined_templates']} mined templates, {r['all_families']} families.")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(r, indent=1))


if __name__ == "__main__":
    main()
