#!/usr/bin/python3
"""Compares an experiment's output folder with another run's (a baseline): every measured value
of every check and every measurement of results.json bit for bit, and every CSV file byte for
byte. Where a CSV differs, the columns that differ are named.

Wall-clock and CPU times differ from run to run, and so do the ratios computed from them: a
difference in a check, measurement or CSV column whose name matches the timing pattern
(--timing, a regular expression, case-insensitive) is listed as a timing; any other difference
is a change of the numbers and the exit status is 1.

Usage: compare_results.py BASELINE_DIR NEW_DIR [--timing REGEX]
"""
import argparse
import csv
import filecmp
import json
import math
import os
import re
import struct
import sys

# Names of timings and of the quantities derived from them in the experiments' outputs.
DEFAULT_TIMING = "|".join([
    r"wall", r"cpu", r"clock", r"seconds", r"timing", r"real.time", r"\brtf\b", r"speed-?up",
    r"solve time", r"solver time", r"collision time", r"time to", r"time per", r"_time_",
    r"per.second", r"faster", r"slower", r"duration", r"symbolic analysis",
    r"forming the normal matrices", r"solve of the last step", r"interior point time",
])


def bits(value):
    """The bit pattern of a JSON number (None for null), so that -0.0 and 0.0, or two NaNs of
    different payloads, are told apart as they would be by memcmp."""
    if value is None:
        return None
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int):
        return ("int", value)
    return struct.pack("<d", value)


def show(value):
    if value is None:
        return "null"
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return repr(value)


def keyed(entries, key):
    """Entries by name; a name that occurs twice gets its occurrence number appended."""
    seen = {}
    result = {}
    for entry in entries:
        name = entry[key]
        n = seen.get(name, 0)
        seen[name] = n + 1
        result[name if n == 0 else f"{name} #{n + 1}"] = entry
    return result


def compare_json(old_path, new_path, timing, report):
    with open(old_path) as f:
        old = json.load(f)
    with open(new_path) as f:
        new = json.load(f)
    for section, value_key in (("checks", "measured"), ("measurements", "value")):
        old_entries = keyed(old.get(section, []), "name")
        new_entries = keyed(new.get(section, []), "name")
        for name in old_entries.keys() - new_entries.keys():
            report("change", f"results.json {section}: '{name}' missing in the new run")
        for name in new_entries.keys() - old_entries.keys():
            report("change", f"results.json {section}: '{name}' new in the new run")
        same = 0
        for name in old_entries.keys() & new_entries.keys():
            a = old_entries[name].get(value_key)
            b = new_entries[name].get(value_key)
            if bits(a) == bits(b):
                same += 1
                continue
            kind = "timing" if timing.search(name) else "change"
            report(kind, f"results.json {section}: '{name}': {show(a)} -> {show(b)}")
        report("same", f"results.json {section}: {same} of {len(old_entries)} identical")
        if section == "checks":
            for name in old_entries.keys() & new_entries.keys():
                va, vb = old_entries[name].get("verdict"), new_entries[name].get("verdict")
                if va != vb:
                    kind = "timing" if timing.search(name) else "change"
                    report(kind, f"results.json checks: '{name}': verdict {va} -> {vb}")


def compare_csv(old_path, new_path, name, timing, report):
    if filecmp.cmp(old_path, new_path, shallow=False):
        report("same", f"{name}: identical")
        return
    with open(old_path, newline="") as f:
        old = list(csv.reader(f))
    with open(new_path, newline="") as f:
        new = list(csv.reader(f))
    if not old or not new or old[0] != new[0]:
        report("change", f"{name}: the header differs")
        return
    header = old[0]
    if len(old) != len(new):
        report("change", f"{name}: {len(old) - 1} rows -> {len(new) - 1} rows")
        return
    differing = {}
    for row_a, row_b in zip(old[1:], new[1:]):
        if len(row_a) != len(row_b):
            report("change", f"{name}: a row's cell count differs")
            return
        for column, (a, b) in enumerate(zip(row_a, row_b)):
            if a != b:
                differing[column] = differing.get(column, 0) + 1
    for column, count in sorted(differing.items()):
        label = header[column] if column < len(header) else f"column {column + 1}"
        kind = "timing" if timing.search(label) else "change"
        report(kind, f"{name}: column '{label}' differs in {count} of {len(old) - 1} rows")


def hdf5_only_timestamps(old_path, new_path):
    """Whether two HDF5 files differ only in object modification times: every differing byte
    lies in a 4-byte little-endian word that is a Unix time (2020-2040) in both files."""
    with open(old_path, "rb") as f:
        old = f.read()
    with open(new_path, "rb") as f:
        new = f.read()
    if len(old) != len(new):
        return False
    low, high = 1577836800, 2208988800  # 2020-01-01, 2040-01-01

    def stamp(data, start):
        return start >= 0 and low <= struct.unpack_from("<I", data, start)[0] < high

    for i in (k for k in range(len(old)) if old[k] != new[k]):
        if not any(stamp(old, s) and stamp(new, s) for s in range(i - 3, i + 1)):
            return False
    return True


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("baseline")
    parser.add_argument("new")
    parser.add_argument("--timing", default=DEFAULT_TIMING,
                        help="regular expression of the names of timings (default: %(default)s)")
    options = parser.parse_args()
    timing = re.compile(options.timing, re.IGNORECASE)
    found = {"same": [], "timing": [], "change": []}

    def report(kind, text):
        found[kind].append(text)

    old_files = set(os.listdir(options.baseline))
    new_files = set(os.listdir(options.new))
    for name in sorted(old_files):
        old_path = os.path.join(options.baseline, name)
        new_path = os.path.join(options.new, name)
        if name not in new_files:
            report("change", f"{name}: missing in the new run")
        elif name == "results.json":
            compare_json(old_path, new_path, timing, report)
        elif name.endswith(".csv"):
            compare_csv(old_path, new_path, name, timing, report)
        elif filecmp.cmp(old_path, new_path, shallow=False):
            report("same", f"{name}: identical")
        elif name.endswith(".hdf5") and hdf5_only_timestamps(old_path, new_path):
            report("timing", f"{name}: differs only in the HDF5 objects' modification times")
        elif os.path.isfile(old_path):
            report("change", f"{name}: differs")
    for name in sorted(new_files - old_files):
        if os.path.isfile(os.path.join(options.new, name)):
            report("change", f"{name}: new in the new run")
    for text in found["same"]:
        print("same    ", text)
    for text in found["timing"]:
        print("timing  ", text)
    for text in found["change"]:
        print("CHANGED ", text)
    print(f"{len(found['change'])} changes, {len(found['timing'])} timing differences")
    return 1 if found["change"] else 0


if __name__ == "__main__":
    sys.exit(main())
