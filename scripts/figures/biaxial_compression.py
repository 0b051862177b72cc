"""Biaxial compression (Krabbenhoft/NURBS chapter Sec. 4.4.1, Fig. 4.4-4.7): deviatoric stress
sigma_1 - sigma_3 and volumetric strain eps_v against axial strain eps_a, one column per contact
stiffness k_N, the three particle families in each panel."""
import csv
import math
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

FAMILIES = [("disk", "disks", "tab:blue"), ("angular", "angular", "tab:orange"),
            ("non_convex", "non-convex", "tab:green")]
FIGURE_OF = {"inf": "Fig. 4.4", "1e+08": "Fig. 4.5", "1e+06": "Fig. 4.6", "1e+05": "Fig. 4.7"}


def label(k):
    return "k_N = inf" if k == "inf" else "k_N = 1e%d" % round(math.log10(float(k)))


def make(output_dir):
    rows = list(csv.DictReader(open(os.path.join(output_dir, "curves.csv"))))
    stiffnesses = list(dict.fromkeys(r["k_n"] for r in rows))
    fig, axes = plt.subplots(2, len(stiffnesses), figsize=(4.2 * len(stiffnesses), 7),
                             sharex=True, squeeze=False)
    for col, k in enumerate(stiffnesses):
        for family, name, colour in FAMILIES:
            curve = [r for r in rows if r["k_n"] == k and r["family"] == family]
            ea = [float(r["axial_strain"]) for r in curve]
            axes[0][col].plot(ea, [float(r["deviatoric"]) for r in curve], color=colour,
                              label=name, lw=1.2)
            axes[1][col].plot(ea, [float(r["volumetric_strain"]) for r in curve], color=colour,
                              label=name, lw=1.2)
        axes[0][col].set_title("%s (%s analogue)" % (label(k), FIGURE_OF.get(k, "")), fontsize=10)
        axes[1][col].axhline(0.0, color="grey", lw=0.5)
        axes[1][col].set_xlabel("axial strain eps_a = 1 - H/H0")
    axes[0][0].set_ylabel("sigma_1 - sigma_3")
    axes[1][0].set_ylabel("volumetric strain eps_v = 1 - WH/(W0 H0)")
    axes[0][0].legend(fontsize=8)
    fig.suptitle("Biaxial compression, sigma_3 = 125, mu = 0.5 (Krabbenhoft/NURBS chapter Sec. 4.4.1)")
    fig.tight_layout()
    fig.savefig(os.path.join(output_dir, "biaxial_compression.png"), dpi=130)
    plt.close(fig)
    return ["biaxial_compression.png"]
