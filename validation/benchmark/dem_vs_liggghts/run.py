#!/usr/bin/python3
"""Times Moreau's DEM and LIGGGHTS on the same pile (README.md) and writes the figures as JSON.

  run.py [--moreau build/cli/moreau] [--liggghts /usr/bin/liggghts] [--work out/dem_vs_liggghts]
         [--steps 5000] [--warmup 500] [--repeats 3] [--json FILE]

Pours the pile once with Moreau (cached in the work directory), writes both codes' inputs
from it, takes Moreau's time step ("auto": half the stability estimate) and gives it to
LIGGGHTS, then per repeat runs each code for WARMUP and for WARMUP + STEPS steps, alternating
the codes (the first code of a repeat alternates too). The cost per sphere-step is the
difference of the two runs' wall (and process CPU) seconds over STEPS x spheres, which leaves
out reading, set-up and the first steps. Medians over the repeats. Run it with one thread on an
otherwise idle machine; the environment sets OMP_NUM_THREADS=1 and OMP_WAIT_POLICY=passive.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def timed(command, log_path, env):
    """Runs command, returns (wall s, child CPU s, stdout+stderr)."""
    start = time.perf_counter()
    with open(log_path, "w") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
        _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    with open(log_path) as log:
        text = log.read()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("failed (%s): %s\n%s" % (status, " ".join(command), text[-3000:]))
    return wall, usage.ru_utime + usage.ru_stime, text


def read_key_values(path):
    with open(path) as f:
        return dict(line.split() for line in f if line.strip())


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--moreau", default="build/cli/moreau")
    parser.add_argument("--liggghts", default="/usr/bin/liggghts")
    parser.add_argument("--work", default="out/dem_vs_liggghts")
    parser.add_argument("--steps", type=int, default=5000)
    parser.add_argument("--warmup", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json")
    args = parser.parse_args()

    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_WAIT_POLICY="passive")
    work = os.path.abspath(args.work)
    os.makedirs(work, exist_ok=True)
    make_pile = [sys.executable, os.path.join(HERE, "make_pile.py")]

    # The pour, once: its checkpoint is the state both codes start from.
    checkpoint = os.path.join(work, "settle", "checkpoint_100000.json")
    if not os.path.exists(checkpoint):
        subprocess.run(make_pile + ["settle", work], check=True)
        print("pouring the pile with Moreau (about 3 minutes) ...", flush=True)
        timed([args.moreau, "run", os.path.join(work, "settle.json"), "--quiet", "-o",
               os.path.join(work, "settle")], os.path.join(work, "settle.log"), env)
    subprocess.run(make_pile + ["bench", work, checkpoint], check=True)
    pile = read_key_values(os.path.join(work, "pile.txt"))
    spheres = int(pile["spheres"])
    scene = os.path.join(work, "pile.json")

    # Moreau's time step for the pile at rest, given to LIGGGHTS as the same double.
    probe = os.path.join(work, "moreau_probe")
    timed([args.moreau, "run", scene, "--quiet", "--steps", "1", "-o", probe],
          os.path.join(work, "probe.log"), env)
    with open(os.path.join(probe, "summary.json")) as f:
        time_step = json.load(f)["time_step"]

    def moreau(steps, tag):
        out = os.path.join(work, "moreau_" + tag)
        wall, cpu, _ = timed([args.moreau, "run", scene, "--quiet", "--steps", str(steps),
                              "-o", out], os.path.join(work, "moreau_%s.log" % tag), env)
        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
        return wall, cpu, {"loop_seconds": summary["wall_seconds"],
                           "mean_contacts": summary["mean_contacts"]}

    def liggghts(steps, tag):
        command = [args.liggghts, "-in", os.path.join(HERE, "pile.lmp"), "-log", "none",
                   "-var", "dir", work, "-var", "dt", repr(time_step), "-var", "steps",
                   str(steps), "-var", "skin", pile["skin"], "-var", "lx", pile["lx"], "-var",
                   "lz", pile["lz"]]
        wall, cpu, text = timed(command, os.path.join(work, "liggghts_%s.log" % tag), env)
        loop = re.search(r"Loop time of ([0-9.eE+-]+) on", text)
        return wall, cpu, {"loop_seconds": float(loop.group(1)) if loop else None}

    codes = {"moreau": moreau, "liggghts": liggghts}
    runs = {name: [] for name in codes}
    order = ["moreau", "liggghts"]
    for repeat in range(args.repeats):
        for name in (order if repeat % 2 == 0 else order[::-1]):
            short = codes[name](args.warmup, "short")
            long = codes[name](args.warmup + args.steps, "long")
            sphere_steps = float(args.steps) * spheres
            row = {
                "repeat": repeat + 1,
                "wall_ns_per_sphere_step": 1e9 * (long[0] - short[0]) / sphere_steps,
                "cpu_ns_per_sphere_step": 1e9 * (long[1] - short[1]) / sphere_steps,
                "short_run": {"wall_seconds": short[0], "cpu_seconds": short[1], **short[2]},
                "long_run": {"wall_seconds": long[0], "cpu_seconds": long[1], **long[2]},
            }
            runs[name].append(row)
            print("%-8s repeat %d: %.1f ns wall, %.1f ns CPU per sphere-step" %
                  (name, repeat + 1, row["wall_ns_per_sphere_step"],
                   row["cpu_ns_per_sphere_step"]), flush=True)

    def median(name, key):
        return statistics.median(r[key] for r in runs[name])

    result = {
        "spheres": spheres,
        "time_step": time_step,
        "steps_timed": args.steps,
        "warmup_steps": args.warmup,
        "repeats": args.repeats,
        "median_wall_ns_per_sphere_step": {n: median(n, "wall_ns_per_sphere_step") for n in runs},
        "median_cpu_ns_per_sphere_step": {n: median(n, "cpu_ns_per_sphere_step") for n in runs},
    }
    result["ratio_liggghts_to_moreau_wall"] = (result["median_wall_ns_per_sphere_step"]["liggghts"]
                                               / result["median_wall_ns_per_sphere_step"]["moreau"])
    result["ratio_liggghts_to_moreau_cpu"] = (result["median_cpu_ns_per_sphere_step"]["liggghts"]
                                              / result["median_cpu_ns_per_sphere_step"]["moreau"])
    result["runs"] = runs
    print(json.dumps({k: v for k, v in result.items() if k != "runs"}, indent=1))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
