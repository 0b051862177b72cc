"""Olsen & Kamrin Sec. 8.1 from Python: a rigid platform of weight 10 N on three fixed disks,
the middle one three times stiffer (scenes/beam_compatible.json). Classic CD leaves the split
to the solver; compatible CD (their Alg. 1) and a stiff DEM give 2 / 6 / 2 N. The measured
support forces are judged by the harness against reference/indeterminate_beam/expected.json,
as the C++ experiment does. Run with PYTHONPATH set to the build's python folder."""

import pathlib

import numpy as np
import pytest

import moreau

ROOT = pathlib.Path(__file__).resolve().parents[2]
SIDES = ("left", "middle", "right")  # the disks are bodies 0, 1, 2


@pytest.fixture(scope="module")
def reference():
    return moreau.load_reference(ROOT / "reference" / "indeterminate_beam")


def support_forces(support, force):
    """Force per support (N), by the disk each contact touches."""
    out = np.zeros(3)
    for disk, f in zip(support, force):
        out[disk] += f
    return out


def test_compatible_cd_carries_2_6_2(reference):
    scene = moreau.load_scene(str(ROOT / "scenes" / "beam_compatible.json"))
    sim = moreau.Simulation(scene)
    report = sim.run()
    assert report.step == scene.steps == 50
    contacts = sim.contacts()
    assert contacts["bodies"].shape == (3, 2)
    support = contacts["bodies"][:, 0]
    compatible = support_forces(support, report.compatible_impulses / sim.time_step)
    for side, force in zip(SIDES, compatible):
        check = moreau.judge(reference[f"compatible_stiff_middle_{side}"], force)
        assert check.verdict == "pass", (side, force)
    # Whatever split the classic solve chose, it carries the weight.
    classic = support_forces(support, contacts["impulses"][:, 0] / sim.time_step)
    assert moreau.judge(reference["pgs_natural_total"], classic.sum()).verdict == "pass"


def test_dem_carries_2_6_2(reference):
    scene = moreau.load_scene(str(ROOT / "scenes" / "beam_compatible.json"))
    scene.set_scheme("dem")
    sim = moreau.Simulation(scene)
    sim.run()
    # Its own time step covers the scene's 0.05 s.
    assert sim.scheme == "dem" and 0.05 <= sim.time < 0.0501
    contacts = sim.contacts()
    # The DEM reports dt times its contact force; settled, its damping adds nothing.
    dem = support_forces(contacts["bodies"][:, 0], contacts["impulses"][:, 0] / sim.time_step)
    for side, force in zip(SIDES, dem):
        check = moreau.judge(reference[f"dem_stiff_middle_{side}"], force)
        assert check.verdict == "pass", (side, force)
