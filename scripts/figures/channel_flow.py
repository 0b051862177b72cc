"""Channel flow (Preclik et al. Sec. 4.3): the velocity and angular-velocity profiles of the last
frame on the x-y cells for both impact models (Fig. 10-11, seed 1), the radial distribution
function near the outflow (Fig. 12) and the sampled macro figures over time (Table 2)."""
import csv
import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MODELS = ["coulomb", "max_dissipation"]


def grid(rows, model, field):
    rs = [r for r in rows if r["model"] == model and r["seed"] == "1" and r["frame"] == "last"]
    nx = 1 + max(int(r["ix"]) for r in rs)
    ny = 1 + max(int(r["iy"]) for r in rs)
    values = [[float("nan")] * nx for _ in range(ny)]
    for r in rs:
        if int(r["count"]) > 0:
            values[int(r["iy"])][int(r["ix"])] = float(r[field])
    xs = [float(r["x"]) for r in rs]
    ys = [float(r["y"]) for r in rs]
    return values, (min(xs), max(xs), min(ys), max(ys))


def make(output_dir):
    rows = list(csv.DictReader(open(os.path.join(output_dir, "profile.csv"))))
    drawn = []
    for field, name, label in [("speed", "velocity_profile.png", "|v| (m/s)"),
                               ("angular_speed", "angular_velocity_profile.png",
                                "|omega| (rad/s)")]:
        fig, axes = plt.subplots(2, 1, figsize=(9, 6.5), sharex=True)
        top = max(float(r[field]) for r in rows if r["frame"] == "last" and r["seed"] == "1")
        for ax, model in zip(axes, MODELS):
            values, extent = grid(rows, model, field)
            image = ax.imshow(values, origin="lower", extent=extent, vmin=0, vmax=top,
                              aspect="equal", cmap="viridis")
            ax.set_title(f"{model.replace('_', ' ')}, last frame, seed 1")
            ax.set_ylabel("y (m)")
            fig.colorbar(image, ax=ax, label=label)
        axes[-1].set_xlabel("x (m)")
        fig.tight_layout()
        fig.savefig(os.path.join(output_dir, name), dpi=120)
        plt.close(fig)
        drawn.append(name)

    rdf = list(csv.DictReader(open(os.path.join(output_dir, "rdf.csv"))))
    fig, ax = plt.subplots(figsize=(7, 4))
    for model in MODELS:
        for seed in ["1", "2"]:
            rs = [r for r in rdf if r["model"] == model and r["seed"] == seed]
            ax.plot([float(r["r_over_d"]) for r in rs], [float(r["g"]) for r in rs],
                    label=f"{model.replace('_', ' ')} seed {seed}")
    ax.axhline(1.0, color="k", ls=":", lw=1)
    ax.set_xlabel("r / d")
    ax.set_ylabel("g(r)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(output_dir, "rdf.png"), dpi=120)
    plt.close(fig)
    drawn.append("rdf.png")

    samples = list(csv.DictReader(open(os.path.join(output_dir, "samples.csv"))))
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.5))
    for model in MODELS:
        for seed in ["1", "2"]:
            rs = [r for r in samples if r["model"] == model and r["seed"] == seed]
            t = [float(r["time"]) for r in rs]
            for ax, field in zip(axes, ["particles", "contacts_per_particle", "solid_fraction"]):
                ax.plot(t, [float(r[field]) for r in rs], marker=".",
                        label=f"{model.replace('_', ' ')} {seed}")
                ax.set_title(field.replace("_", " "))
                ax.set_xlabel("t (s)")
    axes[0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(output_dir, "samples.png"), dpi=120)
    plt.close(fig)
    drawn.append("samples.png")
    return drawn
