"""Figures of the blade_trench experiment (Kleinert, Simeon & Dressler Sec. 5): draft force
against time per tolerance with the DEM reference (Fig. 10), a snapshot of the trench at the
end of the tightest tolerance's run (Fig. 9), and the real-time factor against the tolerance
beside the paper's Table 1."""
import csv
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.collections import PatchCollection  # noqa: E402
from matplotlib.patches import Circle, Rectangle  # noqa: E402

SMOOTHING = 5  # windows of 10 ms in the moving mean, as the experiment's comparison
# Kleinert Table 1: tolerance, real-time factor of the IPM at h = 1e-2 s.
TABLE1 = [(1e-3, 20884), (1e-4, 61291), (1e-5, 83945), (1e-6, 107650)]


def read(output_dir, name):
    path = os.path.join(output_dir, name)
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return list(csv.DictReader(f))


def moving_mean(values, width):
    out = []
    for k in range(len(values)):
        window = values[max(0, k - width + 1):k + 1]
        out.append(sum(window) / len(window))
    return out


def draft_figure(output_dir):
    rows = read(output_dir, "draft_series.csv")
    runs = list(dict.fromkeys(r["run"] for r in rows))
    fig, ax = plt.subplots(figsize=(7.5, 4.2))
    for i, run in enumerate(runs):
        rs = [r for r in rows if r["run"] == run]
        t = [float(r["time"]) for r in rs]
        f = moving_mean([float(r["draft"]) for r in rs], SMOOTHING)
        style = dict(color="k", lw=2.0) if run == "DEM" else dict(lw=1.1)
        if run.startswith("PGJ"):
            style["ls"] = "--"
        elif "h=1e-3" in run:  # the IPM at PGJ's step: the time step's share
            style["ls"] = ":"
        ax.plot(t, f, label=run, **style)
    # The blade's start against grains at rest gives one impulsive CD step (several times the
    # steady draft); the axis is set by the DEM so that the steady part stays readable.
    dem = [float(r["draft"]) for r in rows if r["run"] == "DEM"]
    if dem:
        ax.set_ylim(0, 3.0 * max(moving_mean(dem, SMOOTHING)))
    ax.set_xlabel("time (s)")
    ax.set_ylabel("draft force (N), 50 ms moving mean")
    ax.set_title("Horizontal draft force on the blade, SHAKE + IPM at h = 1e-2 s (Kleinert Fig. 10)",
                 fontsize=9)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    path = os.path.join(output_dir, "draft_force.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def snapshot_figure(output_dir):
    rows = read(output_dir, "snapshot.csv")
    grains = [r for r in rows if r["body"] == "grain"]
    blades = [r for r in rows if r["body"] == "blade"]
    if not grains:
        return None
    fig, (side, top) = plt.subplots(1, 2, figsize=(11, 4))
    speed = [float(r["speed"]) for r in grains]
    views = ((side, "x", "y", "z", "side (x, y)"), (top, "x", "z", "y", "top (x, z)"))
    for ax, a, b, depth, title in views:
        # Far grains first, so that the near ones are drawn on top.
        order = sorted(range(len(grains)), key=lambda k: float(grains[k][depth]))
        circles = PatchCollection(
            [Circle((float(grains[k][a]), float(grains[k][b])), float(grains[k]["radius"]))
             for k in order], cmap="viridis", edgecolors="0.3", linewidths=0.2)
        circles.set_array([speed[k] for k in order])
        circles.set_clim(0.0, 0.4)
        ax.add_collection(circles)
        for bl in blades:
            centre = {"x": float(bl["x"]), "y": float(bl["y"]), "z": float(bl["z"])}
            half = {"x": float(bl["half_x"]), "y": float(bl["half_y"]), "z": float(bl["half_z"])}
            ax.add_patch(Rectangle((centre[a] - half[a], centre[b] - half[b]), 2 * half[a],
                                   2 * half[b], color="tab:red", alpha=0.8, zorder=3))
        ax.autoscale_view()
        ax.set_aspect("equal")
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(a + " (m)")
        ax.set_ylabel(b + " (m)")
    fig.colorbar(circles, ax=[side, top], label="grain speed (m/s)")
    fig.suptitle("Trench at the end of the tightest tolerance's run, blade in red (Kleinert Fig. 9)",
                 fontsize=9)
    path = os.path.join(output_dir, "trench_snapshot.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def rtf_figure(output_dir):
    rows = read(output_dir, "table1.csv")
    # Table 1's runs are at h = 1e-2 s; the IPM at h = 1e-3 s is drawn beside them as a point.
    ipm = [r for r in rows if r["method"] == "IPM" and float(r["time_step"]) > 5e-3]
    fine = [r for r in rows if r["method"] == "IPM" and float(r["time_step"]) <= 5e-3]
    if not ipm:
        return None
    fig, ax = plt.subplots(figsize=(6, 4))
    tol = [float(r["tolerance"]) for r in ipm]
    ax.loglog(tol, [float(r["rtf"]) for r in ipm], "o-", label="IPM, this suite (measured)")
    ax.loglog([t for t, _ in TABLE1], [r for _, r in TABLE1], "s--",
              label="IPM, Kleinert Table 1 (105,144 spheres)")
    for r in fine:
        ax.loglog([float(r["tolerance"])], [float(r["rtf"])], "^", color="C5",
                  label=f"IPM h = {float(r['time_step']):.3g} s (measured)")
    others = [r for r in rows if r["method"] in ("DEM", "PGJ")]
    for i, r in enumerate(others):
        label = f"{r['method']} h = {float(r['time_step']):.3g} s (measured)"
        ax.axhline(float(r["rtf"]), ls=":", lw=1.2, label=label, color=f"C{i + 2}")
    ax.axhline(73678, color="0.5", lw=1.0, label="DEM, published")
    ax.axhline(892780, color="0.7", lw=1.0, label="PGJ h = 1e-3 s, published")
    ax.invert_xaxis()
    ax.set_xlabel("tolerance")
    ax.set_ylabel("real-time factor (wall s per simulated s)")
    spheres = sum(1 for r in read(output_dir, "snapshot.csv") if r["body"] == "grain")
    ax.set_title(f"Real-time factor against tolerance (measured: {spheres} spheres, one thread)",
                 fontsize=9)
    ax.legend(fontsize=6)
    fig.tight_layout()
    path = os.path.join(output_dir, "rtf_vs_tolerance.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def make(output_dir):
    figures = [draft_figure(output_dir), snapshot_figure(output_dir), rtf_figure(output_dir)]
    return [os.path.basename(f) for f in figures if f]  # relative to output_dir


if __name__ == "__main__":
    import sys

    print(make(sys.argv[1]))
