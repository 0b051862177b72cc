#!/usr/bin/env python3
"""Clears one scale's experiment outputs before the main job runs that scale again.

usage: clear_run_outputs.py OUTPUT_DIR CTEST_JSON

OUTPUT_DIR is one scale's folder of raw results (build/experiment-output/full). Everything in it
is removed, so that the report cannot mix the last run's results with the new ones, except the
checkpoints of the runs that resume: the `checkpoints/` folder inside the output folder of every
test whose command has --resume (the long runs, which continue from their checkpoints at each
start: a published trench or channel flow takes days, so a start that wiped them would never
finish). Those tests are read from CTEST_JSON, the output of `ctest --show-only=json-v1` ('-':
standard input). Prints what it keeps.
"""
import json
import os
import shutil
import sys


def resuming_outputs(ctest_json):
    """The --output folders of the tests whose command has --resume."""
    outputs = set()
    for test in ctest_json.get("tests", []):
        command = test.get("command", [])
        if "--resume" not in command or "--output" not in command:
            continue
        at = command.index("--output") + 1
        if at < len(command):
            outputs.add(os.path.realpath(command[at]))
    return outputs


def clear(output_dir, keep_checkpoints_of):
    kept = []
    if not os.path.isdir(output_dir):
        return kept
    for name in sorted(os.listdir(output_dir)):
        entry = os.path.join(output_dir, name)
        resumes = os.path.isdir(entry) and os.path.realpath(entry) in keep_checkpoints_of
        if not resumes:
            remove(entry)
            continue
        for inner in sorted(os.listdir(entry)):
            if inner == "checkpoints":
                kept.append(os.path.join(entry, inner))
            else:
                remove(os.path.join(entry, inner))
    return kept


def remove(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    else:
        os.remove(path)


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    output_dir, json_path = sys.argv[1], sys.argv[2]
    try:
        if json_path == "-":
            ctest_json = json.load(sys.stdin)
        else:
            with open(json_path) as f:
                ctest_json = json.load(f)
    except (OSError, ValueError) as error:
        print(f"{json_path}: cannot read the test list: {error}", file=sys.stderr)
        return 2
    for path in clear(output_dir, resuming_outputs(ctest_json)):
        print(f"kept {path} (the run resumes from it)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
