#!/usr/bin/python3
"""Records published-scale results in the repository.

usage: scripts/record_published.py FULL_OUTPUT_DIR RESULTS_DIR [EXPERIMENT ...]

For every experiment folder under FULL_OUTPUT_DIR (build/experiment-output/full) whose
results.json is a published-scale run, replaces RESULTS_DIR/<experiment>/ (results/published)
with its results.json, which carries the run's provenance (commit, date, machine, threads, wall
time, command), and the small data files beside it that the figures are drawn from: CSV, JSON and
Markdown files of at most 4 MiB, with paths inside the repository made relative to it. Larger files, pictures and checkpoint folders stay in the build
tree. With EXPERIMENT names, only those are recorded.
"""
import json
import os
import shutil
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MAX_BYTES = 4 * 1024 * 1024
KINDS = (".csv", ".json", ".md")


def record(source, target):
    with open(os.path.join(source, "results.json")) as f:
        results = json.load(f)
    if results.get("scale") != "full" or "provenance" not in results:
        return f"skipped {source}: not a published-scale results.json with provenance"
    if os.path.isdir(target):
        shutil.rmtree(target)
    os.makedirs(target)
    kept, left_out = [], []
    for name in sorted(os.listdir(source)):
        path = os.path.join(source, name)
        if not os.path.isfile(path):
            continue
        if name.endswith(KINDS) and os.path.getsize(path) <= MAX_BYTES:
            # Paths inside the repository (or beside it, as ../shared) are written relative to
            # its root: a record names no folder of the machine that made it.
            with open(path, encoding="utf-8", errors="surrogateescape") as f:
                text = f.read().replace(ROOT + "/", "")
            with open(os.path.join(target, name), "w", encoding="utf-8",
                      errors="surrogateescape") as f:
                f.write(text)
            kept.append(name)
        else:
            left_out.append(name)
    run = results["provenance"]
    note = f"recorded {results['experiment']} ({run['date']}, {run['commit'][:12]}): {len(kept)} files"
    if left_out:
        note += "; left in the build tree: " + ", ".join(left_out)
    return note


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    source_dir, results_dir = sys.argv[1], sys.argv[2]
    names = sys.argv[3:]
    if not names and os.path.isdir(source_dir):
        names = sorted(os.listdir(source_dir))
    for name in names:
        source = os.path.join(source_dir, name)
        if not os.path.exists(os.path.join(source, "results.json")):
            print(f"no published-scale results.json for {name}", file=sys.stderr)
            continue
        print(record(source, os.path.join(results_dir, name)))


if __name__ == "__main__":
    main()
