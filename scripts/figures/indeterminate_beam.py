"""Bar chart of the three support forces per method (seed 000 Fig. 1-5)."""
import csv
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def make(output_dir):
    path = os.path.join(output_dir, "support_forces.csv")
    rows = list(csv.DictReader(open(path)))
    methods = list(dict.fromkeys(r["method"] for r in rows))
    supports = ["left", "middle", "right"]
    fig, ax = plt.subplots(figsize=(7, 3.6))
    width = 0.8 / len(methods)
    for k, method in enumerate(methods):
        forces = [float(next(r["force"] for r in rows if r["method"] == method and r["support"] == s))
                  for s in supports]
        xs = [i + (k - (len(methods) - 1) / 2) * width for i in range(3)]
        ax.bar(xs, forces, width, label=method)
    ax.set_xticks(range(3))
    ax.set_xticklabels(["support x = 0", "x = L/2", "x = L"])
    ax.set_ylabel("support force")
    ax.set_title("Indeterminate beam, w = 10 (seed 000 Sec. 8.1)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(output_dir, "support_forces.png"), dpi=130)
    plt.close(fig)
    return ["support_forces.png"]
