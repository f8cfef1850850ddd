"""Free-text logs as users have them, on Loghub-2k: the raw ``<system>_2k.log`` lines, header found
by :func:`logmine.textlog.detect_header` (never told), messages mined -- against the benchmark's
own ``Content`` column (the header cut off by Loghub's per-system format string).

Per system: the header grammar found, the share of entries whose message equals ``Content``,
and GA / PA (corrected labels) of mining the found messages next to mining ``Content`` (the
path of ``bench/loghub.py``). Same miner, same config; only who cut the header differs.

Example:
    python bench/loghub_headers.py
    python bench/loghub_headers.py --data ../shared/benchmarks/loghub-2k --json out/bench/loghub_headers.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("POLARS_MAX_THREADS", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from loghub import load  # noqa: E402
from loghub import systems as labelled_systems  # noqa: E402

from logmine.evaluate import score  # noqa: E402
from logmine.stages.templates import mine_templates  # noqa: E402
from logmine.textlog import detect_header, entries  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "benchmarks" / "loghub-2k"


def run_system(data: Path, system: str) -> dict[str, object]:
    lines = (data / system / f"{system}_2k.log").read_text(encoding="utf-8", errors="replace").splitlines()
    content, labels, _ = load(data, system)
    header = detect_header(lines)
    found = list(entries(lines, header))
    out: dict[str, object] = {"system": system, "header": header.name if header else None, "entries": len(found), "lines": len(lines)}
    mined = mine_templates(content)
    base = score(labels, mined.assignments, [mined.templates[t] for t in mined.assignments])
    out.update(ga_content=round(base.ga, 3), pa_content=round(base.pa, 3))
    if len(found) == len(content):
        messages = [e.message for e in found]
        out["message_match"] = round(sum(m.strip() == c.strip() for m, c in zip(messages, content, strict=True)) / len(content), 3)
        raw = mine_templates(messages)
        s = score(labels, raw.assignments, [raw.templates[t] for t in raw.assignments])
        out.update(ga_raw=round(s.ga, 3), pa_raw=round(s.pa, 3))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="Loghub-2k directory (one folder per system)")
    parser.add_argument("--json", type=Path, help="also write every figure here")
    args = parser.parse_args()
    systems = [s for s in labelled_systems(args.data) if (args.data / s / f"{s}_2k.log").is_file()]
    results = [run_system(args.data, s) for s in systems]
    print("| system | header found | entries | message = Content | GA Content | GA raw | PA Content | PA raw |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for r in results:
        cells = [r["system"], f"`{r['header']}`" if r["header"] else "none", r["entries"], r.get("message_match", "-"),
                 r["ga_content"], r.get("ga_raw", "-"), r["pa_content"], r.get("pa_raw", "-")]
        print("| " + " | ".join(str(c) for c in cells) + " |")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
