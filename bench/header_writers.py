"""Headers of free-text logs written by real writers: found, not given, then read entry by entry.

Python's ``logging`` writes 60 records in each of a dozen layouts (its documentation's, Flask's,
Django's, uvicorn's ...); with ``--java``, the JDK's ``java.util.logging`` writes its default
two-line layout and two one-line ones. Each record is the truth: the entry found for it must
carry its message, its level and, where the layout puts them in the header, its logger and
thread. Files given with ``--files`` (logs of other writers: a Ray session, the JVM's unified
logging, PostgreSQL ...) have no truth: their header, entries and first entry are printed.

    .venv/bin/python bench/header_writers.py [--java] [--files DIR_OR_FILE ...] [--root PATH]

``--root`` reads ``logmine`` from another checkout (a baseline worktree).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

LAYOUTS = {  # layout -> fields its header holds besides the timestamp
    "%(asctime)s - %(name)s - %(levelname)s - %(message)s": ("logger", "level"),
    "%(asctime)s %(name)-12s %(levelname)-8s %(message)s": ("logger", "level"),
    "%(asctime)s,%(msecs)03d %(name)s %(levelname)s %(message)s": ("logger", "level"),
    "%(asctime)s [%(threadName)s] %(levelname)s %(name)s - %(message)s": ("thread", "level", "logger"),
    "%(asctime)s [%(levelname)s] %(name)s: %(message)s": ("level", "logger"),
    "%(asctime)s %(levelname)s %(name)s %(message)s": ("level",),
    "%(levelname)s:%(name)s:%(message)s": ("level", "logger"),
    "%(levelname)s:     %(message)s": ("level",),
    "[%(asctime)s] %(levelname)s in %(module)s: %(message)s": ("level", "module"),
    "%(levelname)s %(asctime)s %(module)s %(process)d %(thread)d %(message)s": ("level",),
    "%(levelname)-8s %(asctime)s %(name)s %(message)s": ("level",),
    "%(asctime)s\t%(levelname)s %(filename)s:%(lineno)s -- %(message)s": ("level",),
}

JAVA = """import java.util.logging.*;
public class Gen {
  public static void main(String[] a) throws Exception {
    Logger root = Logger.getLogger("");
    for (Handler h : root.getHandlers()) root.removeHandler(h);
    FileHandler fh = new FileHandler(a[0]);
    fh.setFormatter(new SimpleFormatter());
    root.addHandler(fh); root.setLevel(Level.ALL); fh.setLevel(Level.ALL);
    Logger[] ls = {Logger.getLogger("com.acme.Server"), Logger.getLogger("com.acme.db.Pool")};
    Level[] lv = {Level.INFO, Level.WARNING, Level.FINE, Level.CONFIG};
    for (int i = 0; i < 60; i++) {
      Logger l = ls[i % 2];
      if (i % 7 == 3) l.log(Level.SEVERE, "Request " + i + " failed", new IllegalStateException("bad " + i));
      else l.log(lv[i % 4], "Took " + (i * 3) + " ms for job " + i);
    }
    fh.close();
  }
}
"""
JUL_LAYOUTS = (None, "%1$tF %1$tT.%1$tL %4$s [%3$s] %5$s%6$s%n", "[%1$tc] %4$s: %2$s - %5$s%6$s%n")
"""SimpleFormatter's formats: None is its default (two lines an entry)."""


def java_files(work: Path) -> dict[str, Path]:
    if shutil.which("javac") is None or shutil.which("java") is None:
        print("(no javac/java: java.util.logging skipped)")
        return {}
    (work / "Gen.java").write_text(JAVA)
    subprocess.run(["javac", "Gen.java"], cwd=work, check=True)
    files = {}
    for k, layout in enumerate(JUL_LAYOUTS):
        path = work / f"jul{k}.log"
        prop = [] if layout is None else [f"-Djava.util.logging.SimpleFormatter.format={layout}"]
        subprocess.run(["java", *prop, "-cp", ".", "Gen", str(path)], cwd=work, check=True)
        files[f"java.util.logging {layout or 'default (two lines)'}"] = path
    return files


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--java", action="store_true", help="also write java.util.logging's layouts (needs javac)")
    ap.add_argument("--files", nargs="*", default=[], help="logs of other writers to read (files or directories)")
    ap.add_argument("--root", default=str(Path(__file__).resolve().parents[1]), help="checkout to import logmine from")
    args = ap.parse_args()
    sys.path.insert(0, args.root)
    from logmine.sample.pylogging import python_logging_lines
    from logmine.textlog import detect_header, entries

    print("| writer and layout | header found | records | entries | message, level and header fields right |")
    print("|---|---|---:|---:|---:|")
    total = right_total = 0
    for layout, fields in LAYOUTS.items():
        lines, records = python_logging_lines(layout)
        header = detect_header(lines)
        found = list(entries(lines, header))
        right = 0
        if len(found) == len(records):
            for entry, record in zip(found, records, strict=True):
                want = {"level": record.levelname, "logger": record.name, "thread": record.threadName, "module": record.module}
                got = {**entry.fields, "module": entry.fields.get("logger")}  # a layout's module is its logger slot
                right += entry.message == record.getMessage() and all(got.get(f) == want[f] for f in fields)
        total, right_total = total + len(records), right_total + right
        print(f"| Python `{layout}` | `{header.name if header else None}` | {len(records)} | {len(found)} | {right / len(records):.3f} |")
    print(f"| **all Python layouts** | | {total} | | **{right_total / total:.3f}** |")
    if args.java:
        with tempfile.TemporaryDirectory() as tmp:
            for name, path in java_files(Path(tmp)).items():
                lines = path.read_text().splitlines()
                header = detect_header(lines)
                found = list(entries(lines, header))
                levels = sum(bool(e.fields.get("level")) for e in found)
                print(f"| {name} | `{header.name if header else None}` | 60 | {len(found)} | {levels / 60:.3f} (level found) |")
    paths = [p for f in args.files for p in (sorted(Path(f).iterdir()) if Path(f).is_dir() else [Path(f)]) if p.is_file()]
    if paths:
        print("\n| file | lines | header found | entries | entries with header fields | first entry's fields |")
        print("|---|---:|---|---:|---:|---|")
    for path in paths:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        header = detect_header(lines)
        found = list(entries(lines, header))
        first = {k: v for k, v in (found[0].fields if found else {}).items() if v is not None}
        print(f"| {path.name} | {len(lines)} | `{header.name if header else None}` | {len(found)} | "
              f"{sum(e.has_header for e in found)} | {first} |")


if __name__ == "__main__":
    main()
