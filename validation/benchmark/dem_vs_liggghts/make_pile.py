#!/usr/bin/python3
"""The pile of the DEM comparison with LIGGGHTS, from one seeded generator.

  make_pile.py settle DIR            DIR/settle.json: the spheres on a jittered lattice in an
                                     open box, with random horizontal velocities (Moreau scene
                                     that pours them and writes a checkpoint at its end)
  make_pile.py bench DIR CHECKPOINT  from the settled checkpoint, at rest:
                                     DIR/pile.json   the Moreau scene of the timed runs
                                     DIR/pile.data   the same spheres as a LIGGGHTS data file
                                     DIR/params.in   LIGGGHTS' per-type-pair contact parameters
                                     DIR/pile.txt    box size, skin and counts (key value)

Spheres and law are the blade trench's DEM reference: radii uniform in [8, 16] mm, density
2,285 kg/m^3, E = 1e8 Pa, nu = 0.3, Hookean k_n = 4/3 E* sqrt(R* d), critical normal damping,
Cundall-Strack k_t = 2/7 k_n, mu = 0.25, rotation locked. Numbers are written with repr(), the
shortest text that reads back to the same double, so both codes start from identical positions.
"""
import json
import math
import os
import random
import sys

SEED = 2015
NX, NY, NZ = 24, 14, 24  # lattice sites along x, y (up), z: 8,064 spheres
SPACING = 0.033  # m, as the trench's lattice
R_MIN, R_MAX = 0.008, 0.016
DENSITY = 2285.0
E, NU, MU = 1e8, 0.3, 0.25
KT_RATIO = 2.0 / 7.0
POUR_SPEED = 0.5  # m/s, half-width of the random horizontal velocities of the pour
SETTLE_TIME_STEP = 4e-6  # s, below half the stability estimate of the settled pile
SETTLE_STEPS = 100000  # 0.4 s
TYPE_BINS = 32  # LIGGGHTS atom types over [R_MIN, R_MAX]; the walls are type TYPE_BINS + 1

LX, LZ = NX * SPACING, NZ * SPACING
SKIN = 0.1 * R_MIN  # Moreau's default skin: a tenth of the smallest radius the scene allows


def lattice():
    rng = random.Random(SEED)
    spheres = []
    for j in range(NY):
        for k in range(NZ):
            for i in range(NX):
                r = rng.uniform(R_MIN, R_MAX)
                free = 0.5 * SPACING - r
                centre = [(i + 0.5) * SPACING, (j + 0.5) * SPACING, (k + 0.5) * SPACING]
                position = [c + rng.uniform(-free, free) for c in centre]
                velocity = [rng.uniform(-POUR_SPEED, POUR_SPEED), 0.0,
                            rng.uniform(-POUR_SPEED, POUR_SPEED)]
                spheres.append({"radius": r, "position": position, "velocity": velocity})
    return spheres


def scene(spheres, description, integrator, output):
    bodies = []
    for n, s in enumerate(spheres):
        body = {"name": "g%d" % n, "shape": {"type": "sphere", "radius": s["radius"]},
                "position": s["position"], "material": "grain", "rotation_locked": True}
        if any(v != 0.0 for v in s["velocity"]):
            body["velocity"] = s["velocity"]
        bodies.append(body)
    return {
        "description": description,
        "dimension": 3,
        "gravity": [0, -9.81, 0],
        "integrator": integrator,
        "materials": [{"name": "grain", "density": DENSITY, "youngs_modulus": E,
                       "poisson_ratio": NU}],
        "friction": {"default": MU},
        "generators": [{"type": "container", "name": "box", "min": [0, 0, 0],
                        "max": [LX, 2.0, LZ], "open_top": True, "material": "grain"}],
        "bodies": bodies,
        "output": output,
    }


def dem_section(time_step):
    return {"law": "hookean", "damping_ratio": 1.0, "tangential": True,
            "tangential_stiffness_ratio": KT_RATIO, "time_step": time_step, "skin": SKIN}


def write_json(path, value):
    with open(path, "w") as f:
        json.dump(value, f, indent=1)
        f.write("\n")


def settle(directory):
    data = scene(lattice(), "DEM vs LIGGGHTS: pour of the pile (seed %d)" % SEED,
                 {"scheme": "dem"}, {"csv": False, "vtk": False, "every": SETTLE_STEPS,
                                     "checkpoint_every": SETTLE_STEPS})
    data["time_step"] = SETTLE_TIME_STEP  # the run covers steps x time_step
    data["steps"] = SETTLE_STEPS
    data["dem"] = dem_section(SETTLE_TIME_STEP)
    write_json(os.path.join(directory, "settle.json"), data)


# LIGGGHTS' hooke/stiffness takes k_n, k_t and gamma_n per pair of atom types. Moreau's law:
# grain-grain k_n = 4/3 E* sqrt(R* (r_a + r_b)) = 4/3 E* sqrt(r_a r_b), grain-wall
# k_n = 4/3 E* sqrt(2) r, E* = E / (2 (1 - nu^2)); gamma_n = 2 sqrt(k_n m*). Each type stands
# for the radii of its bin, taken at the bin's midpoint.
def type_of(r):
    return min(int((r - R_MIN) / (R_MAX - R_MIN) * TYPE_BINS), TYPE_BINS - 1) + 1


def bin_radius(t):
    return R_MIN + (t - 0.5) * (R_MAX - R_MIN) / TYPE_BINS


def pair_parameters(ti, tj):
    e_star = E / (2.0 * (1.0 - NU * NU))
    wall = TYPE_BINS + 1
    if ti == wall and tj == wall:
        ti = tj = TYPE_BINS  # never used: walls do not touch walls
    if wall in (ti, tj):
        r = bin_radius(tj if ti == wall else ti)
        kn = 4.0 / 3.0 * e_star * math.sqrt(2.0) * r
        m_eff = 4.0 / 3.0 * math.pi * r ** 3 * DENSITY
    else:
        ra, rb = bin_radius(ti), bin_radius(tj)
        kn = 4.0 / 3.0 * e_star * math.sqrt(ra * rb)
        ma = 4.0 / 3.0 * math.pi * ra ** 3 * DENSITY
        mb = 4.0 / 3.0 * math.pi * rb ** 3 * DENSITY
        m_eff = ma * mb / (ma + mb)
    return kn, KT_RATIO * kn, 2.0 * math.sqrt(kn * m_eff)


def bench(directory, checkpoint_path):
    spheres = lattice()
    with open(checkpoint_path) as f:
        checkpoint = json.load(f)
    positions = {b["name"]: b["position"] for b in checkpoint["bodies"]}
    for n, s in enumerate(spheres):
        s["position"] = positions["g%d" % n]
        s["velocity"] = [0.0, 0.0, 0.0]
    data = scene(spheres,
                 "DEM vs LIGGGHTS: the poured pile of %d spheres at rest (seed %d, settled for "
                 "%d steps)" % (len(spheres), SEED, checkpoint["step"]),
                 {"scheme": "dem"}, {"csv": False, "vtk": False, "progress": False,
                                     "every": 1000000000})
    data["steps"] = 1000
    data["dem"] = dem_section("auto")
    write_json(os.path.join(directory, "pile.json"), data)

    top = max(s["position"][1] + s["radius"] for s in spheres)
    types = TYPE_BINS + 1
    with open(os.path.join(directory, "pile.data"), "w") as f:
        f.write("LIGGGHTS data: DEM vs LIGGGHTS pile (seed %d)\n\n" % SEED)
        f.write("%d atoms\n%d atom types\n\n" % (len(spheres), types))
        margin = 0.05
        f.write("%r %r xlo xhi\n" % (-margin, LX + margin))
        f.write("%r %r ylo yhi\n" % (-margin, top + 1.0))
        f.write("%r %r zlo zhi\n\n" % (-margin, LZ + margin))
        f.write("Atoms\n\n")
        for n, s in enumerate(spheres):
            x, y, z = s["position"]
            f.write("%d %d %r %r %r %r %r\n" % (n + 1, type_of(s["radius"]), 2.0 * s["radius"],
                                               DENSITY, x, y, z))
    params = [[pair_parameters(i, j) for j in range(1, types + 1)] for i in range(1, types + 1)]
    with open(os.path.join(directory, "params.in"), "w") as f:
        f.write("# per-type-pair parameters written by make_pile.py (types 1-%d: radius bins of "
                "%r m, %d: walls)\n" % (TYPE_BINS, (R_MAX - R_MIN) / TYPE_BINS, types))
        for name, index in (("kn", 0), ("kt", 1), ("gamman_abs", 2)):
            values = " ".join("%r" % params[i][j][index] for i in range(types)
                              for j in range(types))
            f.write("fix p_%s all property/global %s peratomtypepair %d %s\n" %
                    (name, name, types, values))
        f.write("fix p_gammat_abs all property/global gammat_abs peratomtypepair %d %s\n" %
                (types, " ".join(["0.0"] * (types * types))))
        f.write("fix p_mu all property/global coefficientFriction peratomtypepair %d %s\n" %
                (types, " ".join([repr(MU)] * (types * types))))
        f.write("variable walltype equal %d\n" % types)
    with open(os.path.join(directory, "pile.txt"), "w") as f:
        f.write("spheres %d\nlx %r\nlz %r\nskin %r\ntypes %d\n" %
                (len(spheres), LX, LZ, SKIN, types))


def main(argv):
    if len(argv) == 3 and argv[1] == "settle":
        settle(argv[2])
    elif len(argv) == 4 and argv[1] == "bench":
        bench(argv[2], argv[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
