"""Bar charts of the three support forces per method (Olsen & Kamrin Fig. 1-5)."""
import csv
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SUPPORTS = ["left", "middle", "right"]


def bars(ax, rows, methods, title):
    width = 0.8 / len(methods)
    for k, method in enumerate(methods):
        forces = [float(next(r["force"] for r in rows if r["method"] == method and r["support"] == s))
                  for s in SUPPORTS]
        xs = [i + (k - (len(methods) - 1) / 2) * width for i in range(3)]
        ax.bar(xs, forces, width, label=method)
    ax.set_xticks(range(3))
    ax.set_xticklabels(["x = 0", "x = L/2", "x = L"])
    ax.set_ylabel("support force")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7)


def make(output_dir):
    rows = list(csv.DictReader(open(os.path.join(output_dir, "support_forces.csv"))))
    methods = list(dict.fromkeys(r["method"] for r in rows))
    uniform = [m for m in methods if "(1, 3, 1)" not in m]
    stiff = [m for m in methods if "(1, 3, 1)" in m]
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), gridspec_kw={"width_ratios": [2, 1]})
    bars(axes[0], rows, uniform, "uniform stiffness (Fig. 1-3)")
    bars(axes[1], rows, stiff, "middle contact 3x stiffer (Fig. 4-5)")
    fig.suptitle("Indeterminate beam, w = 10 (Olsen & Kamrin Sec. 8.1)")
    fig.tight_layout()
    fig.savefig(os.path.join(output_dir, "support_forces.png"), dpi=130)
    plt.close(fig)
    return ["support_forces.png"]
