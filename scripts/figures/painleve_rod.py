"""Figures of the painleve_rod experiment (Preclik et al. Sec. 4.1-4.2): the (theta0, mu) plane with
mu* and the outcome of each impact model (cf. Fig. 8), the academic problem's objective on the
plane of maximum compression (cf. Fig. 7), and the rod's tip velocity in time stepping."""
import csv
import math
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read(output_dir, name):
    return list(csv.DictReader(open(os.path.join(output_dir, name))))


def plane(output_dir):
    rows = read(output_dir, "painleve_sweep.csv")
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), sharey=True)
    theta = [math.radians(t) for t in range(1, 90)]
    mu_star = [(math.cos(t) + 1 / (3 * math.cos(t))) / math.sin(t) for t in theta]
    outcomes = [
        ("maximum dissipation", lambda r: "Lambda0 (sticks)" if r["md_impulsive"] == "1" else "0"),
        ("Coulomb-like", lambda r: {("1", "0"): "{0}", ("2", "0"): "{0, Lambda0}"}.get(
            (r["coulomb_isolated"], r["coulomb_continua"]), "{0, Lambda0} + segment")),
    ]
    colors = {"Lambda0 (sticks)": "tab:red", "0": "tab:blue", "{0}": "tab:blue",
              "{0, Lambda0}": "tab:red", "{0, Lambda0} + segment": "black"}
    dense = len(rows) > 5000  # the published-scale sweep: small markers
    for ax, (title, outcome) in zip(axes, outcomes):
        groups = {}
        for r in rows:
            groups.setdefault(outcome(r), []).append(r)
        for label, members in groups.items():
            ax.scatter([math.degrees(float(r["theta0"])) for r in members], [float(r["mu"]) for r in members],
                       s=(1 if dense else 6) if label != "{0, Lambda0} + segment" else (3 if dense else 14),
                       color=colors[label], label=label)
        ax.plot([math.degrees(t) for t in theta], mu_star, "k-", lw=1, label="mu*(theta0)")
        ax.plot([math.degrees(0.5 * math.acos(-0.6))], [4 / 3], "k*", ms=10, label="min mu* = 4/3")
        ax.set_xlim(0, 90)
        ax.set_ylim(0, 4)
        ax.set_xlabel("theta0 [deg]")
        ax.set_title(f"{title}: impact solutions at t0")
        ax.legend(fontsize=7, loc="upper center")
    axes[0].set_ylabel("mu")
    fig.suptitle("Painleve rod, Preclik et al. Sec. 4.2 (cf. Fig. 8)")
    fig.tight_layout()
    fig.savefig(os.path.join(output_dir, "painleve_plane.png"), dpi=130)
    plt.close(fig)
    return "painleve_plane.png"


def contour(output_dir):
    grid = read(output_dir, "academic_contour.csv")
    ts = sorted({float(r["x_t"]) for r in grid})
    os_ = sorted({float(r["x_o"]) for r in grid})
    index = {(float(r["x_t"]), float(r["x_o"])): float(r["objective"]) for r in grid}
    z = [[index[(t, o)] for t in ts] for o in os_]
    points = read(output_dir, "academic_points.csv")
    fig, ax = plt.subplots(figsize=(5.6, 6.4))
    levels = sorted(set([-0.77, -0.7, -0.634, -0.5, -0.393, -0.252, 0.0, 0.5, 1.0, 2.0]))
    cs = ax.contour(ts, os_, z, levels=levels, colors="gray", linewidths=0.7)
    ax.clabel(cs, fontsize=6)
    boundary = [r for r in points if r["kind"] == "boundary"]
    ax.plot([float(r["x_t"]) for r in boundary], [float(r["x_o"]) for r in boundary], "b-", lw=1.4,
            label="conic section boundary")
    styles = {"unconstrained": ("k", "x", "x0 = A^-1 b"), "max_dissipation": ("r", "x", "x* (max. dissipation)"),
              "coulomb": ("r", "o", "Coulomb solutions")}
    for kind, (color, marker, label) in styles.items():
        members = [r for r in points if r["kind"] == kind]
        xs = [float(r["x_t"]) for r in members]
        ys = [float(r["x_o"]) for r in members]
        if marker == "o":
            ax.scatter(xs, ys, marker=marker, s=40, facecolors="none", edgecolors=color, label=label, zorder=3)
        else:
            ax.scatter(xs, ys, marker=marker, s=40, color=color, label=label, zorder=3)
    ax.set_xlabel("x_t")
    ax.set_ylabel("x_o")
    ax.set_title("Academic problem on the plane of maximum compression\n(Preclik et al. Sec. 4.1, cf. Fig. 7)", fontsize=9)
    ax.legend(fontsize=7, loc="lower left")
    fig.tight_layout()
    fig.savefig(os.path.join(output_dir, "academic_contour.png"), dpi=130)
    plt.close(fig)
    return "academic_contour.png"


def stepping(output_dir):
    rows = read(output_dir, "painleve_stepping.csv")
    fig, ax = plt.subplots(figsize=(7, 3.8))
    runs = list(dict.fromkeys((r["model"], r["mu"]) for r in rows))
    for model, mu in runs:
        members = [r for r in rows if r["model"] == model and r["mu"] == mu]
        ax.plot([1e3 * float(r["time"]) for r in members], [float(r["tip_velocity_x"]) for r in members],
                "-" if model == "max_dissipation" else "--", lw=1.2,
                label=f"{model.replace('_', ' ')}, mu = {float(mu):.3g}")
    ax.set_xlim(0, 50)
    ax.set_xlabel("time [ms]")
    ax.set_ylabel("tip velocity along x [m/s]")
    ax.set_title("Painleve rod in time stepping, theta0 = 63.4 deg (mu* = 4/3), v0 = 1 m/s", fontsize=9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(output_dir, "painleve_stepping.png"), dpi=130)
    plt.close(fig)
    return "painleve_stepping.png"


def make(output_dir):
    return [plane(output_dir), contour(output_dir), stepping(output_dir)]
