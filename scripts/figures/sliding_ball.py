"""Sliding ball (Dumont Sec. 4.1): v(t) and r omega(t) per method against the analytic
solution (Fig. 4), and the eps_glob terms over the NLGS iterations of steps 5 and 2000
(Fig. 5-7)."""
import csv
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

V0, MU, G = 1.5, 0.7, 9.81  # Dumont Sec. 4.1, as in experiments/sliding_ball/main.cpp
TERMS = ["motion", "projection", "bipotential", "penetration", "epsilon_glob"]
FLOOR = 1e-20  # zero terms are drawn at this level on the log scale


def make(output_dir):
    rows = list(csv.DictReader(open(os.path.join(output_dir, "trajectory.csv"))))
    methods = list(dict.fromkeys(r["method"] for r in rows))

    fig, axes = plt.subplots(2, 4, figsize=(15, 6.5), sharex=True, sharey=True)
    for ax, method in zip(axes.flat, methods):
        rs = [r for r in rows if r["method"] == method]
        t = [float(r["time"]) for r in rs]
        ax.plot(t, [float(r["speed"]) for r in rs], label="v")
        ax.plot(t, [float(r["rolling_speed"]) for r in rs], label="r omega")
        # The 2D-disk diagnostic rolls at 2/3 v0 from v0 / (3 mu g); the ball at 5/7 v0.
        disk = method.startswith("disk")
        t_star = V0 / (3 * MU * G) if disk else 2 * V0 / (7 * MU * G)
        v_roll = 2 / 3 * V0 if disk else 5 / 7 * V0
        ts = [0, t_star, t[-1]]
        ax.plot(ts, [V0, v_roll, v_roll], "k:", lw=1, label="analytic v")
        ax.plot(ts, [0, v_roll, v_roll], "k--", lw=1, label="analytic r omega")
        ax.set_title(method.upper())
        ax.set_xlabel("t (s)")
    for ax in axes.flat[len(methods):]:
        ax.axis("off")
    axes[0][0].set_ylabel("m/s")
    axes[1][0].set_ylabel("m/s")
    axes[0][0].legend(fontsize=7)
    fig.suptitle("Sliding ball: slide then roll, t* = 2 v0 / (7 mu g) (Dumont Sec. 4.1)")
    fig.tight_layout()
    fig.savefig(os.path.join(output_dir, "velocities.png"), dpi=110)
    plt.close(fig)

    conv = list(csv.DictReader(open(os.path.join(output_dir, "convergence.csv"))))
    steps = sorted({int(r["step"]) for r in conv})
    methods = list(dict.fromkeys(r["method"] for r in conv))
    fig, axes = plt.subplots(len(steps), len(methods), figsize=(3.2 * len(methods), 3.0 * len(steps)),
                             squeeze=False)
    for i, step in enumerate(steps):
        for j, method in enumerate(methods):
            ax = axes[i][j]
            rs = [r for r in conv if r["method"] == method and int(r["step"]) == step]
            its = [int(r["iteration"]) for r in rs]
            for term in TERMS:
                ax.semilogy(its, [max(float(r[term]), FLOOR) for r in rs], label=term,
                            lw=2 if term == "epsilon_glob" else 1)
            ax.set_title(f"{method.upper()}, step {step}", fontsize=9)
            ax.set_xlabel("NLGS iteration")
    axes[0][0].legend(fontsize=6)
    fig.suptitle("eps_glob terms (eq. 37) per NLGS iteration (Dumont Fig. 5-7); zeros at 1e-20")
    fig.tight_layout()
    fig.savefig(os.path.join(output_dir, "convergence.png"), dpi=100)
    plt.close(fig)
    return ["velocities.png", "convergence.png"]
