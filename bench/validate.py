"""Agreement of what a pack serves with the logged prompts, by kind of template change.

Reads the ``validation.json`` that ``logmine validate PACK -w WS`` wrote and the pack, and prints
per group (text compressed; code context trimmed only; served prompt identical to the logged one)
the templates, the mean exact match and edit similarity of the generator's outputs, and the
traffic-weighted figures; with ``--pack-validation`` also what ``compress --validate`` shipped.

    python bench/validate.py WS/validation.json WS/pack [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path


def group(t: dict, rec: dict) -> str:
    if rec.get("same_prompt") == 1.0 or (rec.get("same_prompt") is None and rec["prompt_tokens"]["ratio"] == 1.0):
        return "identical prompt"
    if t["source"] != t["original_source"]:
        return "text compressed"
    return "context trimmed only"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("validation", type=Path)
    ap.add_argument("pack", type=Path)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    doc = json.loads(a.validation.read_text())
    pack = json.loads((a.pack / "pack.json").read_text())
    by_id = {t["id"]: t for t in pack["templates"]}
    rows: dict[str, list[tuple[dict, dict]]] = {}
    for rec in doc["templates"]:
        if rec.get("requests"):
            t = by_id[rec["template_id"]]
            rows.setdefault(group(t, rec), []).append((t, rec))
    out = {}
    for name, items in sorted(rows.items()):
        w = [t["n_requests"] for t, _ in items]
        sims = [r["edit_similarity"] for _, r in items]
        exact = [r["exact_match"] for _, r in items]
        out[name] = {
            "templates": len(items), "edit_similarity": round(statistics.fmean(sims), 3), "exact_match": round(statistics.fmean(exact), 3),
            "edit_similarity_min": round(min(sims), 3),
            "edit_similarity_traffic": round(sum(s * x for s, x in zip(sims, w, strict=True)) / sum(w), 3),
            "shipped": dict(sorted({f: sum(1 for t, _ in items if (t.get("validation") or {}).get("form") == f)
                                    for f in ("compressed", "lossless", "original")}.items())),
        }
    out["total"] = {k: doc["total"].get(k) for k in ("requests", "exact_match", "edit_similarity")}
    out["pack_validation"] = pack.get("validation")
    if a.json:
        print(json.dumps(out, indent=2))
        return
    for name, r in out.items():
        print(f"{name:22} {r}")


if __name__ == "__main__":
    main()
