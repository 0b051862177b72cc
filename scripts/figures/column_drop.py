"""Column drop (Krabbenhoft/NURBS chapter Sec. 4.4.2, Fig. 4.8-4.13): snapshots of each column,
the final free surfaces overlaid, and the kinetic energy, toe and largest overlap per step."""
import csv
import math
import os
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.collections import PatchCollection  # noqa: E402
from matplotlib.patches import Circle, Polygon  # noqa: E402

FAMILIES = ["non_convex", "angular", "disk"]
COLOURS = {"non_convex": "tab:red", "angular": "tab:blue", "disk": "tab:green"}


def read(output_dir, name):
    with open(os.path.join(output_dir, name)) as f:
        return list(csv.DictReader(f))


def load_shapes(output_dir):
    shapes = defaultdict(list)
    for r in read(output_dir, "shapes.csv"):
        key = (r["family"], int(r["shape"]))
        shapes[key].append((float(r["x"]), float(r["y"])))
    return shapes


def patches(rows, family, shapes):
    out = []
    for r in rows:
        k = int(r["particle"]) % 16
        x, y, a = float(r["x"]), float(r["y"]), float(r["angle"])
        if family == "disk":
            out.append(Circle((x, y), shapes[("disk", k)][0][0]))
            continue
        c, s = math.cos(a), math.sin(a)
        pts = [(x + c * px - s * py, y + s * px + c * py) for px, py in shapes[(family, k)]]
        out.append(Polygon(pts, closed=True))
    return out


def snapshots_figure(output_dir, snaps, shapes, mu):
    """One row per family, one column per snapshot of the run (the last one is the final step)."""
    runs = [f + ("_mu0.5" if mu else "_mu0") for f in FAMILIES]
    steps = {run: sorted({int(r["step"]) for r in snaps if r["run"] == run}) for run in runs}
    columns = max(len(v) for v in steps.values())
    # Same scale in every panel (the paper's Fig. 4.10 and 4.13 compare dimensions); a disk
    # layer that keeps spreading at mu = 0 is cut at three times the widest other deposit.
    xs = {run: max(float(r["x"]) for r in snaps if r["run"] == run) for run in runs}
    width = min(max(xs.values()), 3.0 * max(xs[r] for r in runs if not r.startswith("disk"))) + 1.0
    height = max(float(r["y"]) for r in snaps if r["run"] in runs) + 1.5
    fig, axes = plt.subplots(len(runs), columns, figsize=(2.4 * columns, 1.2 + 2.2 * len(runs) * height / width * columns / 4),
                             squeeze=False)
    for i, run in enumerate(runs):
        family = run.rsplit("_mu", 1)[0]
        for j in range(columns):
            ax = axes[i][j]
            ax.set_xticks([])
            ax.set_yticks([])
            if j >= len(steps[run]):
                ax.axis("off")
                continue
            step = steps[run][j]
            rows = [r for r in snaps if r["run"] == run and int(r["step"]) == step]
            ax.add_collection(PatchCollection(patches(rows, family, shapes), facecolor=COLOURS[family],
                                              edgecolor="k", linewidth=0.2))
            ax.set_xlim(0, width)
            ax.set_ylim(0, height)
            ax.set_aspect("equal")
            ax.set_title(f"{family}, step {step}", fontsize=7)
    fig.suptitle(f"Column drop, mu = {0.5 if mu else 0} (chapter Fig. {'4.8-4.9' if mu else '4.11-4.12'})")
    fig.tight_layout()
    name = f"column_drop_mu{'05' if mu else '0'}.png"
    fig.savefig(os.path.join(output_dir, name), dpi=120)
    plt.close(fig)
    return name


def profiles_figure(output_dir, profiles):
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.4))
    for ax, suffix, title in [(axes[0], "_mu0.5", "mu = 0.5 (Fig. 4.10)"), (axes[1], "_mu0", "mu = 0 (Fig. 4.13)")]:
        for family in FAMILIES:
            rows = [r for r in profiles if r["run"] == family + suffix]
            ax.step([float(r["x"]) for r in rows], [float(r["height"]) for r in rows], where="mid",
                    color=COLOURS[family], label=family)
        ax.set_xlabel("x from the symmetry wall (mean diameters)")
        ax.set_ylabel("free surface height")
        ax.set_title("final free surface, " + title, fontsize=10)
        others = [float(r["x"]) for r in profiles
                  if r["run"].endswith(suffix) and not r["run"].startswith("disk") and r["occupied"] == "1"]
        ax.set_xlim(0, 3.0 * max(others) if others else None)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(output_dir, "column_drop_profiles.png"), dpi=130)
    plt.close(fig)
    return "column_drop_profiles.png"


def series_figure(output_dir, series):
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.4))
    for run in dict.fromkeys(r["run"] for r in series):
        rows = [r for r in series if r["run"] == run]
        family = run.rsplit("_mu", 1)[0]
        style = "-" if run.endswith("0.5") else "--"
        step = [int(r["step"]) for r in rows]
        kw = dict(color=COLOURS[family], linestyle=style, label=run, linewidth=0.9)
        axes[0].semilogy(step, [max(float(r["energy_ratio"]), 1e-12) for r in rows], **kw)
        axes[1].plot(step, [float(r["toe"]) for r in rows], **kw)
        axes[2].semilogy(step, [max(float(r["max_overlap"]), 1e-12) for r in rows], **kw)
    axes[0].set_ylabel("kinetic energy / (M g d), all particles")
    axes[1].set_ylabel("toe (mean diameters)")
    axes[2].set_ylabel("largest overlap of the step (d)")
    for ax in axes:
        ax.set_xlabel("step")
    axes[1].legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(os.path.join(output_dir, "column_drop_series.png"), dpi=130)
    plt.close(fig)
    return "column_drop_series.png"


def make(output_dir):
    shapes = load_shapes(output_dir)
    snaps = read(output_dir, "snapshots.csv")
    profiles = read(output_dir, "profiles.csv")
    names = [snapshots_figure(output_dir, snaps, shapes, mu) for mu in (True, False)]
    names.append(profiles_figure(output_dir, profiles))
    names.append(series_figure(output_dir, read(output_dir, "series.csv")))
    return names
