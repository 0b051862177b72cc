"""Figures of the fclib_benchmark experiment: the Dolan-More performance profile of the suite's
Coulomb solvers on the FCLIB collection at tolerances 1e-4 and 1e-8, and the FCLIB merit each
solver reached on each problem."""
import csv
import math
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# A solve timed at 0 s (below the clock's resolution) would make every ratio against it
# infinite; a nanosecond is far below the shortest measured solve (~1 microsecond).
TIME_FLOOR = 1e-9


def read(output_dir, name):
    with open(os.path.join(output_dir, name)) as f:
        return list(csv.DictReader(f))


def ordered(values):
    """Distinct values in first-seen order (the experiment writes a fixed order)."""
    return list(dict.fromkeys(values))


def performance_ratios(runs, problems, solvers, tolerance):
    """ratio[s][p] = time of s on p / best time on p; inf where s did not solve p (or nobody did)."""
    times = {(r["problem"], r["solver"]): max(float(r["solver_seconds"]), TIME_FLOOR)
             for r in runs if float(r["tolerance"]) == tolerance and r["solved"] == "1"}
    ratios = {s: [] for s in solvers}
    for p in problems:
        solved = [times[(p, s)] for s in solvers if (p, s) in times]
        best = min(solved) if solved else math.inf
        for s in solvers:
            ratios[s].append(times[(p, s)] / best if (p, s) in times else math.inf)
    return ratios


def profile(output_dir):
    runs = read(output_dir, "runs.csv")
    problems = [p["problem"] for p in read(output_dir, "problems.csv") if p["supported"] == "1"]
    refused = [p["problem"] for p in read(output_dir, "problems.csv") if p["supported"] != "1"]
    solvers = ordered(r["solver"] for r in runs)
    tolerances = sorted({float(r["tolerance"]) for r in runs}, reverse=True)
    limit = runs[0]["max_iterations"] if runs else "?"
    fig, axes = plt.subplots(1, len(tolerances), figsize=(5.6 * len(tolerances), 4.4), sharey=True,
                             squeeze=False)
    styles = ["-", "--", "-.", ":"]
    for ax, tolerance in zip(axes[0], tolerances):
        ratios = performance_ratios(runs, problems, solvers, tolerance)
        finite = [math.log2(x) for s in solvers for x in ratios[s] if math.isfinite(x)]
        right = max(1.0, 1.05 * max(finite)) if finite else 1.0
        for k, s in enumerate(solvers):
            # rho_s(tau) jumps at each finite log2 ratio; unsolved problems never count.
            steps = sorted(math.log2(x) for x in ratios[s] if math.isfinite(x))
            xs, ys = [0.0], [0.0]
            for i, x in enumerate(steps):
                xs += [x, x]
                ys += [ys[-1], (i + 1) / len(problems)]
            xs.append(right)
            ys.append(ys[-1])
            ax.plot(xs, ys, styles[k % len(styles)], lw=1.6, color=f"C{k}",
                    label=f"{s} ({len(steps)}/{len(problems)})")
        unsolved = sum(1 for i in range(len(problems))
                       if all(not math.isfinite(ratios[s][i]) for s in solvers))
        ax.set_xlim(0.0, right)
        ax.set_ylim(0.0, 1.02)
        ax.set_xlabel("log2 tau (time within a factor tau of the fastest solver)")
        ax.set_title(f"FCLIB merit <= {tolerance:.0e}: {unsolved} of {len(problems)} problems "
                     f"solved by no solver", fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower right", title="solver (problems solved)", title_fontsize=7)
    axes[0][0].set_ylabel("rho_s(tau): fraction of problems")
    note = f"; refused: {', '.join(refused)}" if refused else ""
    fig.suptitle(f"Dolan-More performance profile, solver wall time, zero initial guess, "
                 f"{limit} iterations at most{note}", fontsize=9)
    fig.tight_layout()
    fig.savefig(os.path.join(output_dir, "performance_profile.png"), dpi=130)
    plt.close(fig)
    return "performance_profile.png"


def merit_map(output_dir):
    runs = read(output_dir, "runs.csv")
    problems = [p["problem"] for p in read(output_dir, "problems.csv") if p["supported"] == "1"]
    solvers = ordered(r["solver"] for r in runs)
    tolerances = sorted({float(r["tolerance"]) for r in runs}, reverse=True)
    fig, axes = plt.subplots(1, len(tolerances), figsize=(5.2 * len(tolerances), 0.36 * len(problems) + 2.2),
                             sharey=True, squeeze=False)
    image = None
    for ax, tolerance in zip(axes[0], tolerances):
        index = {(r["problem"], r["solver"]): r for r in runs if float(r["tolerance"]) == tolerance}
        grid = []
        for p in problems:
            row = []
            for s in solvers:
                merit = float(index[(p, s)]["fclib_merit"]) if (p, s) in index else math.inf
                # log10 of the merit, clipped so that exact zeros and blow-ups stay on the scale.
                row.append(min(2.0, max(-16.0, math.log10(merit))) if merit > 0 else -16.0)
            grid.append(row)
        image = ax.imshow(grid, cmap="viridis_r", vmin=-16, vmax=2, aspect="auto")
        for i, p in enumerate(problems):
            for j, s in enumerate(solvers):
                run = index.get((p, s))
                if run is None:
                    continue
                text = f"{round(grid[i][j]) + 0:d}" + ("" if run["solved"] == "1" else "x")
                ax.text(j, i, text, ha="center", va="center", fontsize=6,
                        color="white" if grid[i][j] > -7 else "black")
        ax.set_xticks(range(len(solvers)))
        ax.set_xticklabels(solvers, rotation=40, ha="right", fontsize=7)
        ax.set_yticks(range(len(problems)))
        ax.set_yticklabels(problems, fontsize=6)
        ax.set_title(f"log10 FCLIB merit, runs at tolerance {tolerance:.0e} (x: not solved)", fontsize=8)
    fig.colorbar(image, ax=axes[0].tolist(), shrink=0.8, label="log10 FCLIB natural-map merit")
    fig.savefig(os.path.join(output_dir, "merit_map.png"), dpi=130, bbox_inches="tight")
    plt.close(fig)
    return "merit_map.png"


def make(output_dir):
    return [profile(output_dir), merit_map(output_dir)]
