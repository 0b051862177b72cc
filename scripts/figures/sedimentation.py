"""Sedimentation (Dumont Sec. 4.2-4.4): eps_glob terms over the NLGS iterations of the
measured step for (a) and (b) (Fig. 9-12, 14-17), side views of the initial and final
configurations (Fig. 8, 13) and the rho = alpha rho_bar sweep (Table 4)."""
import csv
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.collections import PatchCollection  # noqa: E402
from matplotlib.patches import Circle  # noqa: E402

TERMS = ["motion", "projection", "bipotential", "penetration", "epsilon_glob"]
FLOOR = 1e-20  # zero terms are drawn at this level on the log scale
METHODS = ["sbp", "sal", "ebp", "eal"]


def convergence(output_dir, part, name):
    rows = [r for r in csv.DictReader(open(os.path.join(output_dir, "convergence.csv"))) if r["part"] == part]
    fig, axes = plt.subplots(2, 2, figsize=(10, 7))
    for ax, method in zip(axes.flat, METHODS):
        rs = [r for r in rows if r["run"] == method]
        its = [int(r["iteration"]) for r in rs]
        for term in TERMS:
            ax.semilogy(its, [max(float(r[term]), FLOOR) for r in rs], label=term,
                        lw=2 if term == "epsilon_glob" else 1)
        ax.set_title(method.upper())
        ax.set_xlabel("NLGS iteration")
    axes[0][0].legend(fontsize=7)
    fig.suptitle(f"Sedimentation ({part}): eps_glob terms (eq. 37) at the measured step; zeros at 1e-20")
    fig.tight_layout()
    fig.savefig(os.path.join(output_dir, name), dpi=100)
    plt.close(fig)


def snapshots(output_dir):
    rows = list(csv.DictReader(open(os.path.join(output_dir, "positions.csv"))))
    panels = [("a", "initial"), ("a", "final eal"), ("b", "initial"), ("b", "final eal")]
    fig, axes = plt.subplots(1, 4, figsize=(13, 4.5))
    for ax, (part, state) in zip(axes, panels):
        rs = [r for r in rows if r["part"] == part and r["state"] == state]
        circles = [Circle((float(r["x"]) * 1e3, float(r["y"]) * 1e3), float(r["radius"]) * 1e3) for r in rs]
        ax.add_collection(PatchCollection(circles, facecolor="tab:blue", edgecolor="k", alpha=0.5, lw=0.3))
        # The same frame for the initial and final states of a part: its box width and the
        # highest ball top.
        everything = [r for r in rows if r["part"] == part]
        ax.set_xlim(0, max((float(r["x"]) + float(r["radius"])) * 1e3 for r in everything))
        ax.set_ylim(0, max((float(r["y"]) + float(r["radius"])) * 1e3 for r in everything))
        ax.set_aspect("equal")
        ax.set_title(f"({part}) {state}", fontsize=9)
        ax.set_xlabel("x (mm)")
    axes[0].set_ylabel("y (mm)")
    fig.suptitle("Sedimentation: side view (x, y) of the balls (Dumont Fig. 8, 13)")
    fig.tight_layout()
    fig.savefig(os.path.join(output_dir, "snapshots.png"), dpi=100)
    plt.close(fig)


def rho_sweep(output_dir):
    rows = list(csv.DictReader(open(os.path.join(output_dir, "rho_sweep.csv"))))
    fig, ax = plt.subplots(figsize=(7, 4.2))
    runs = [r for r in rows if r["kind"] == "run"]
    ax.semilogx([float(r["alpha"]) for r in runs], [int(r["iterations"]) for r in runs], "o-",
                label="EBP, whole run (this work)")
    ax.semilogx([5, 2, 1, 0.5, 0.2], [652, 414, 750, 812, 667], "k*--", label="EBP, Dumont Table 4")
    for method, marker in [("sbp", "s"), ("sal", "^"), ("ebp", "v")]:
        ps = [r for r in rows if r["kind"] == "probe" and r["method"] == method]
        ok = [r for r in ps if r["termination"] == "converged"]
        bad = [r for r in ps if r["termination"] != "converged"]
        ax.semilogx([float(r["alpha"]) for r in ok], [int(r["iterations"]) for r in ok], marker,
                    fillstyle="none", label=f"{method.upper()} on the measured step")
        if bad:
            ax.semilogx([float(r["alpha"]) for r in bad], [int(r["iterations"]) for r in bad], marker,
                        color="red", label=f"{method.upper()} not converged")
    ax.axvline(2, color="gray", lw=0.8, ls=":")
    ax.set_yscale("log")
    ax.set_xlabel("alpha = rho / rho_bar")
    ax.set_ylabel("NLGS iterations at the measured step")
    ax.legend(fontsize=7)
    ax.set_title("Descent parameter sweep (Dumont Sec. 4.4, Table 4)")
    fig.tight_layout()
    fig.savefig(os.path.join(output_dir, "rho_sweep.png"), dpi=110)
    plt.close(fig)


def make(output_dir):
    convergence(output_dir, "a", "convergence_a.png")
    convergence(output_dir, "b", "convergence_b.png")
    snapshots(output_dir)
    rho_sweep(output_dir)
    return ["convergence_a.png", "convergence_b.png", "snapshots.png", "rho_sweep.png"]
