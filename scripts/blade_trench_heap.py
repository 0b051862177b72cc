#!/usr/bin/env python3
"""The heap ahead of the blade at the end of each blade_trench run, from the runs' last
checkpoints (OUTPUT/checkpoints/<run>/checkpoint_<step>.json).

    scripts/blade_trench_heap.py OUTPUT [SURFACE_HEIGHT]

Per run: the blade's front, the grains whose top lies above the settled surface (the heap) and
their volume, and the packing fraction in the box 0.15 m ahead of the blade, within its width
and 0.12-0.27 m high (the sheared material below the heap's surface). SURFACE_HEIGHT defaults to
the run's `fill surface height` in OUTPUT/results.json. Writes OUTPUT/heap.csv and prints it.
Only the run's own files are read: the measures of experiments/blade_trench/README.md ("What it
shows") come from here.
"""
import csv
import glob
import json
import math
import os
import sys


def last_checkpoint(directory):
    files = glob.glob(os.path.join(directory, "checkpoint_*.json"))
    if not files:
        return None
    return max(files, key=lambda f: int(os.path.basename(f)[len("checkpoint_"):-len(".json")]))


def measures(path, surface):
    with open(path) as f:
        state = json.load(f)
    grains = [b for b in state["bodies"] if b["motion"] == "dynamic"]
    blade = next(b for b in state["bodies"] if b["name"] == "blade")
    front = blade["position"][0] + blade["shape"]["half_extents"][0]
    centre = blade["position"][2]
    half_width = blade["shape"]["half_extents"][2]
    heap, heap_volume, solid = 0, 0.0, 0.0
    x0, x1 = front, front + 0.15
    z0, z1 = centre - half_width, centre + half_width
    y0, y1 = 0.12, 0.27
    for g in grains:
        x, y, z = g["position"]
        r = g["shape"]["radius"]
        volume = 4.0 / 3.0 * math.pi * r ** 3
        if y + r > surface:
            heap += 1
            heap_volume += volume
        if x0 < x < x1 and z0 < z < z1 and y0 < y < y1:
            solid += volume
    return {"time": state["time"], "blade_front": front, "heap_grains": heap,
            "heap_volume_litres": 1e3 * heap_volume,
            "packing_ahead": solid / ((x1 - x0) * (z1 - z0) * (y1 - y0))}


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    output = sys.argv[1]
    if len(sys.argv) == 3:
        surface = float(sys.argv[2])
    else:
        with open(os.path.join(output, "results.json")) as f:
            results = json.load(f)
        surface = next(m["value"] for m in results["measurements"]
                       if m["name"] == "fill surface height")
    rows = []
    for directory in sorted(glob.glob(os.path.join(output, "checkpoints", "*"))):
        path = last_checkpoint(directory)
        if path:
            rows.append({"run": os.path.basename(directory), **measures(path, surface)})
    if not rows:
        sys.exit(f"no checkpoints under {output}/checkpoints")
    with open(os.path.join(output, "heap.csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        for row in rows:
            writer.writerow(row)
    for row in rows:
        print(", ".join(f"{k} {v:.4g}" if isinstance(v, float) else f"{k} {v}"
                        for k, v in row.items()))


if __name__ == "__main__":
    main()
