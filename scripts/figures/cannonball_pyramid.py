"""Figures of Olsen & Kamrin Sec. 8.2-8.3: force networks (Fig. 8-17 a), histograms of nonzero
contact forces against DEM (Fig. 8-18 b, 12, 15, 18) and floor pressure maps (Fig. 19)."""
import csv
import os
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

VARIANTS = ["uniform Hookean", "uniform Hertzian", "multi-species Hookean"]
METHODS = ["DEM", "APGD", "PGS", "compatible CD after APGD", "compatible CD after PGS"]


def read(path):
    return list(csv.DictReader(open(path)))


def floor_maps(rows, output_dir):
    data = defaultdict(dict)
    for r in rows:
        data[(r["variant"], r["method"])][(float(r["x"]), float(r["z"]))] = float(r["load"])
    vmax = max(float(r["load"]) for r in rows)
    fig, axes = plt.subplots(len(METHODS), len(VARIANTS), figsize=(3.2 * len(VARIANTS), 2.9 * len(METHODS)),
                             squeeze=False)
    for j, variant in enumerate(VARIANTS):
        for i, method in enumerate(METHODS):
            ax = axes[i][j]
            points = data.get((variant, method))
            if not points:
                ax.axis("off")
                continue
            xs = sorted({p[0] for p in points})
            zs = sorted({p[1] for p in points})
            grid = np.array([[points[(x, z)] for x in xs] for z in zs])
            image = ax.imshow(grid, origin="lower", vmin=0, vmax=vmax, cmap="viridis")
            ax.set_xticks([])
            ax.set_yticks([])
            if i == 0:
                ax.set_title(variant, fontsize=9)
            if j == 0:
                ax.set_ylabel(method, fontsize=8)
    fig.colorbar(image, ax=axes, shrink=0.6, label="load on base sphere (N)")
    fig.suptitle("Floor reaction under the pyramid (cf. Olsen & Kamrin Fig. 19)")
    fig.savefig(os.path.join(output_dir, "floor_maps.png"), dpi=110)
    plt.close(fig)


def histograms(rows, output_dir):
    forces = defaultdict(list)
    for r in rows:
        f = float(r["force"])
        if f > 0:
            forces[(r["variant"], r["method"])].append(f)
    fig, axes = plt.subplots(1, len(VARIANTS), figsize=(4.2 * len(VARIANTS), 3.4))
    for ax, variant in zip(axes, VARIANTS):
        reference = forces.get((variant, "DEM"), [])
        if not reference:
            continue
        bins = np.linspace(0, max(max(v) for (var, _), v in forces.items() if var == variant), 30)
        for method, style in [("DEM", "k-"), ("APGD", "C0--"), ("PGS", "C1--"), ("compatible CD after APGD", "C2:")]:
            values = forces.get((variant, method), [])
            counts, edges = np.histogram(values, bins=bins)
            ax.step(edges[:-1], counts, style, where="post", label=method)
        ax.set_title(variant, fontsize=9)
        ax.set_xlabel("contact force (N)")
        ax.set_ylabel("nonzero contacts")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(output_dir, "force_histograms.png"), dpi=110)
    plt.close(fig)


def networks(rows, output_dir):
    variant = "uniform Hookean"
    panels = ["DEM", "APGD", "PGS", "compatible CD after APGD"]
    fig = plt.figure(figsize=(4.0 * len(panels), 4.0))
    selected = [r for r in rows if r["variant"] == variant]
    fmax = max(float(r["force"]) for r in selected)
    cmap = plt.get_cmap("plasma")
    for k, method in enumerate(panels):
        ax = fig.add_subplot(1, len(panels), k + 1, projection="3d")
        for r in selected:
            if r["method"] != method:
                continue
            f = float(r["force"])
            if f <= 0:
                continue
            ax.plot([float(r["ax"]), float(r["bx"])], [float(r["az"]), float(r["bz"])],
                    [float(r["ay"]), float(r["by"])], color=cmap(f / fmax), linewidth=0.4 + 2.0 * f / fmax)
        ax.set_title(method, fontsize=9)
        ax.set_axis_off()
        ax.view_init(elev=18, azim=35)
    fig.suptitle("Contact force network, uniform Hookean (cf. Olsen & Kamrin Fig. 8-11 a)")
    fig.savefig(os.path.join(output_dir, "force_networks.png"), dpi=110)
    plt.close(fig)


def tolerance_curve(output_dir):
    path = os.path.join(output_dir, "tolerance_error.csv")
    if not os.path.exists(path):
        return []
    rows = read(path)
    fig, ax = plt.subplots(figsize=(5, 3.6))
    for variant in VARIANTS:
        points = sorted((float(r["tolerance"]), float(r["error"])) for r in rows if r["variant"] == variant)
        if points:
            ax.loglog(*zip(*points), "o-", label=variant)
    ax.set_xlabel("solver tolerance (CD merit and truss residual)")
    ax.set_ylabel("||F_compat - F_DEM|| / ||F_DEM||")
    ax.invert_xaxis()
    ax.legend(fontsize=8)
    ax.set_title("Compatible CD vs DEM: error against tolerance", fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(output_dir, "tolerance_error.png"), dpi=120)
    plt.close(fig)
    return ["tolerance_error.png"]


def in_plane_loads(rows, output_dir):
    """Load locked into the in-plane contacts (spheres of the same layer) per layer, in sphere
    weights, for cold- and warm-started classic CD against DEM: the self-stress of
    warm-started rigid CD that inverts the floor map."""
    variant = "uniform Hookean"
    methods = ["DEM", "APGD", "APGD warm-started", "PGS", "PGS warm-started"]
    selected = [r for r in rows if r["variant"] == variant and r["method"] in methods]
    if not any(r["method"] == "APGD warm-started" for r in selected):
        return []
    heights = sorted({round(float(r["ay"]), 9) for r in selected})
    weight = 2000.0 * 4.0 / 3.0 * np.pi * 1.25e-3 ** 3 * 9.81  # as experiments/cannonball_pyramid
    loads = defaultdict(lambda: np.zeros(len(heights)))
    for r in selected:
        if abs(float(r["ay"]) - float(r["by"])) > 1e-7:
            continue
        layer = heights.index(round(float(r["ay"]), 9))
        loads[r["method"]][layer] += float(r["force"]) / weight
    fig, ax = plt.subplots(figsize=(6, 3.6))
    width = 0.8 / len(methods)
    for k, method in enumerate(methods):
        ax.bar(np.arange(len(heights)) + k * width, loads[method], width, label=method)
    ax.set(xlabel="layer (0 = fixed base)", ylabel="in-plane contact force (sphere weights)",
           title="Load locked into in-plane contacts, uniform Hookean")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(output_dir, "in_plane_loads.png"), dpi=120)
    plt.close(fig)
    return ["in_plane_loads.png"]


def make(output_dir):
    floor_maps(read(os.path.join(output_dir, "floor.csv")), output_dir)
    figures = ["floor_maps.png"] + tolerance_curve(output_dir)
    # Every contact force of the published pyramid is tens of MB: a recorded run
    # (results/published) keeps the floor readings only, and the contact figures need a run's
    # own output folder.
    contacts_path = os.path.join(output_dir, "contacts.csv")
    if os.path.exists(contacts_path):
        contacts = read(contacts_path)
        histograms(contacts, output_dir)
        networks(contacts, output_dir)
        figures += ["force_histograms.png", "force_networks.png"] + in_plane_loads(contacts, output_dir)
    return figures
