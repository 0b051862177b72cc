"""Figures of the pile_problems experiment (Kleinert, Simeon & Dressler Sec. 5): error against
wall time per solver on each pile (Fig. 6) and the time to reach 5e-2, 1e-2 and 5e-4 against the
number of unknowns (Fig. 7)."""
import csv
import math
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

TIME_FLOOR = 1e-6  # s: the first iterate (r = 0, time 0) drawn here on the log axis


def read(output_dir, name):
    with open(os.path.join(output_dir, name)) as f:
        return list(csv.DictReader(f))


def ordered(values):
    return list(dict.fromkeys(values))


ERROR_SUFFIX = " [error]"  # runs recorded on the paper's error(gamma, u), not the merit
MEASURES = (("suite merit", False), ("paper's error(gamma, u)", True))


def on_error(solver):
    return solver.endswith(ERROR_SUFFIX)


def finish(fig, axes, ylabel, title, path):
    for row, (measure, _) in enumerate(MEASURES):
        axes[row][0].set_ylabel(f"{ylabel}\n{measure}")
        axes[row][0].legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def make(output_dir):
    curves = read(output_dir, "convergence.csv")
    piles = ordered(r["pile"] for r in curves)
    solvers = ordered(r["solver"] for r in curves)
    fig, axes = plt.subplots(2, len(piles), figsize=(4.2 * len(piles), 7.2), squeeze=False)
    for row, (_, error) in enumerate(MEASURES):
        for ax, pile in zip(axes[row], piles):
            rows = [r for r in curves if r["pile"] == pile]
            for solver in (s for s in solvers if on_error(s) == error):
                rs = [r for r in rows if r["solver"] == solver]
                if rs:
                    ax.loglog([max(float(r["seconds"]), TIME_FLOOR) for r in rs],
                              [float(r["merit"]) for r in rs], label=solver)
            for tol in (5e-2, 1e-2, 5e-4):
                ax.axhline(tol, color="0.7", lw=0.7, ls=":")
            ax.set_title(f"pile {pile}: {rows[0]['spheres']} spheres, "
                         f"{rows[0]['contacts']} contacts", fontsize=9)
            ax.set_xlabel("wall time (s)")
    finish(fig, axes, "error", "Error against wall time, one SHAKE step's CCP (Kleinert Fig. 6)",
           os.path.join(output_dir, "error_vs_time.png"))

    times = read(output_dir, "time_to_tolerance.csv")
    tolerances = ordered(r["tolerance"] for r in times)
    # One colour per solver in every panel, also where a solver reached no point.
    colours = {s: f"C{i}" for i, s in enumerate(ordered(r["solver"] for r in times))}
    fig, axes = plt.subplots(2, len(tolerances), figsize=(4.2 * len(tolerances), 7.2),
                             squeeze=False)
    for row, (measure, error) in enumerate(MEASURES):
        for ax, tol in zip(axes[row], tolerances):
            for solver in (s for s in colours if on_error(s) == error):
                rs = [r for r in times if r["tolerance"] == tol and r["solver"] == solver]
                pts = [(3 * int(r["contacts"]), float(r["seconds"])) for r in rs
                       if r["seconds"] not in ("", "nan") and not math.isnan(float(r["seconds"]))]
                if pts:
                    ax.loglog(*zip(*pts), "o-", color=colours[solver], label=solver)
            ax.set_title(f"{measure} below {float(tol):g}", fontsize=9)
            ax.set_xlabel("unknowns (3 x contacts)")
    finish(fig, axes, "wall time (s); missing = not reached",
           "Time to tolerance against problem size (Kleinert Fig. 7)",
           os.path.join(output_dir, "time_to_tolerance.png"))
    return ["error_vs_time.png", "time_to_tolerance.png"]
