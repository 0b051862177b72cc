#!/usr/bin/python3
"""Compares the draft force of two blade_trench runs of different trenches (the medium trench
against the published one, experiments/blade_trench/README.md) from their draft_series.csv.

For every run the two folders share (DEM, IPM 1e-2 ... 1e-6), it prints the mean draft of each
over consecutive windows of --width seconds that both runs cover, and their relative
difference (second / first - 1). Over the --steady window it prints the two means, the RMS of
the difference of the runs' moving means over --smooth seconds (relative to the first run's
mean), and each run's scatter of those moving means: two trenches of different size can be said
to reach the same plateau when their means differ by less than that scatter.

Usage: compare_trench_scales.py FIRST_DIR SECOND_DIR [--width 0.25] [--steady 1.5 2.0]
                                [--smooth 0.05]
"""
import argparse
import csv
import math
import os
import statistics
import sys

# Times in the series are multiples of the 10 ms window; comparisons of window edges allow this.
EPSILON = 1e-9


def read_series(folder):
    """{run: [(time, draft), ...]} from FOLDER/draft_series.csv."""
    path = os.path.join(folder, "draft_series.csv")
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        sys.exit(f"{path}: cannot read: {e.strerror}")
    series = {}
    for number, row in enumerate(rows, start=2):
        try:
            time, draft = float(row["time"]), float(row["draft"])
        except (KeyError, TypeError, ValueError):
            sys.exit(f"{path}:{number}: expected the columns run, time and draft with numbers")
        series.setdefault(row["run"], []).append((time, draft))
    return series


def values(series, start, end):
    """The drafts of the windows ending in (start, end]."""
    return [d for t, d in series if start + EPSILON < t <= end + EPSILON]


def moving_means(series, start, end, count):
    """Means of the last `count` windows, for each window ending in (start, end]."""
    drafts = [d for _, d in series]
    return [sum(drafts[k - count + 1:k + 1]) / count for k, (t, _) in enumerate(series)
            if start + EPSILON < t <= end + EPSILON and k + 1 >= count]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("first")
    parser.add_argument("second")
    parser.add_argument("--width", type=float, default=0.25, help="window of the means, s")
    parser.add_argument("--steady", type=float, nargs=2, default=[1.5, 2.0],
                        metavar=("START", "END"), help="the steady window, s")
    parser.add_argument("--smooth", type=float, default=0.05,
                        help="span of the moving means over the steady window, s")
    args = parser.parse_args()
    if not args.width > 0 or not args.smooth > 0 or not args.steady[1] > args.steady[0]:
        sys.exit("--width and --smooth must be > 0 and the steady window's end after its start")
    first, second = read_series(args.first), read_series(args.second)
    shared = [run for run in first if run in second]
    if not shared:
        sys.exit(f"no run in both folders: {sorted(first)} and {sorted(second)}")
    print("run,start,end,first_mean,second_mean,difference")
    for run in shared:
        end_both = min(first[run][-1][0], second[run][-1][0])
        start = 0.0
        while start + args.width <= end_both + EPSILON:
            a = statistics.mean(values(first[run], start, start + args.width))
            b = statistics.mean(values(second[run], start, start + args.width))
            print(f"{run},{start:g},{start + args.width:g},{a:.1f},{b:.1f},{b / a - 1:+.3f}")
            start += args.width
    print()
    print("run,steady_start,steady_end,first_mean,second_mean,difference,"
          "rms_of_moving_mean_difference,first_scatter,second_scatter")
    a_start, a_end = args.steady
    for run in shared:
        a, b = values(first[run], a_start, a_end), values(second[run], a_start, a_end)
        if not a or not b:
            print(f"{run},{a_start:g},{a_end:g},not covered by both runs")
            continue
        step = first[run][0][0]
        count = max(1, round(args.smooth / step))
        ma = moving_means(first[run], a_start, a_end, count)
        mb = moving_means(second[run], a_start, a_end, count)
        n = min(len(ma), len(mb))
        mean_a, mean_b = statistics.mean(a), statistics.mean(b)
        rms = math.sqrt(sum((mb[k] - ma[k]) ** 2 for k in range(n)) / n) / mean_a
        print(f"{run},{a_start:g},{a_end:g},{mean_a:.1f},{mean_b:.1f},{mean_b / mean_a - 1:+.3f},"
              f"{rms:.3f},{statistics.pstdev(ma):.1f},{statistics.pstdev(mb):.1f}")


if __name__ == "__main__":
    main()
