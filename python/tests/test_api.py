"""The Python module's API: errors and their messages, array shapes, the GIL, cone problems,
checkpoints and the harness's verdicts. Run with PYTHONPATH set to the build's python folder."""

import json
import os
import pathlib
import subprocess
import threading
import time

import numpy as np
import pytest
import scipy.sparse

import moreau

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCENES = ROOT / "scenes"
REFERENCE = ROOT / "reference"


def ball_document():
    """scenes/sphere_on_plane.json (plain JSON): a ball that lands at 0.31 s and rolls on."""
    return json.loads((SCENES / "sphere_on_plane.json").read_text())


def test_exceptions_are_value_and_runtime_errors():
    assert issubclass(moreau.InputError, ValueError)
    assert issubclass(moreau.SimulationError, RuntimeError)


def test_missing_scene_names_the_file():
    with pytest.raises(moreau.InputError, match="no_such_scene.json"):
        moreau.load_scene("no_such_scene.json")


def test_parse_scene_names_source_path_and_key():
    document = ball_document()
    document["solver"]["tolerence"] = 1e-8
    with pytest.raises(moreau.InputError) as error:
        moreau.parse_scene(document, "ball.json")
    message = str(error.value)
    assert message.startswith("ball.json")
    assert "tolerence" in message
    document = ball_document()
    document["time_step"] = -1.0
    with pytest.raises(moreau.InputError, match="time_step"):
        moreau.parse_scene(document, "ball.json")


def test_input_error_carries_the_cli_message(tmp_path):
    cli = os.environ.get("MOREAU_CLI", "")
    if not os.path.exists(cli):
        pytest.skip("MOREAU_CLI names no moreau program")
    document = ball_document()
    document["bodies"][1]["shape"]["radius"] = -0.05
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document))
    with pytest.raises(moreau.InputError) as error:
        moreau.load_scene(str(path))
    run = subprocess.run([cli, "run", str(path)], capture_output=True, text=True)
    assert run.returncode == 2
    assert run.stderr == f"moreau: error: {error.value}\n"


def test_registries():
    schemes = {s["name"]: s for s in moreau.schemes()}
    assert {"semi_implicit_euler", "theta", "dem"} <= set(schemes)
    assert all(s["description"] for s in schemes.values())
    solvers = {s["name"]: s for s in moreau.solvers()}
    assert "coulomb" in solvers["pgs"]["laws"]
    assert "tolerance" in [o["key"] for o in solvers["pgs"]["options"]]


def test_bodies_contacts_and_report_have_their_shapes():
    scene = moreau.parse_scene(ball_document(), "ball.json")
    assert scene.body_count == 2 and scene.scheme == "semi_implicit_euler"
    sim = moreau.Simulation(scene)
    report = sim.step(400)  # past the landing at 0.31 s
    assert sim.steps_taken == 400 and report.step == 400
    assert sim.time == pytest.approx(0.4)
    bodies = sim.bodies()
    assert bodies["names"] == ["floor", "ball"]
    assert bodies["positions"].shape == (2, 3)
    assert bodies["orientations"].shape == (2, 4)
    assert bodies["linear_velocities"].shape == (2, 3)
    assert bodies["angular_velocities"].shape == (2, 3)
    assert np.allclose(np.linalg.norm(bodies["orientations"], axis=1), 1.0)
    contacts = sim.contacts()
    assert report.active_contacts == 1
    assert contacts["bodies"].tolist() == [[0, 1]]
    assert contacts["points"].shape == (1, 3) and contacts["normals"].shape == (1, 3)
    assert contacts["impulses"].shape == (1, 3)
    assert contacts["impulses"][0, 0] > 0  # the floor carries the ball
    stats = report.solver_stats
    assert stats.solver == "pgs" and stats.termination == "converged" and stats.converged
    assert stats.criterion == "merit" and stats.criterion_value <= 1e-10
    assert len(stats.merit_history) >= 1


def test_checkpoint_restart_continues_the_run(tmp_path):
    scene = moreau.parse_scene(ball_document(), "ball.json")
    sim = moreau.Simulation(scene)
    sim.step(350)
    path = tmp_path / "checkpoint.json"
    sim.checkpoint(path, metadata={"by": "test"})
    sim.step(50)
    restarted = moreau.Simulation(scene, restart=path)
    assert restarted.steps_taken == 350 and restarted.restart_metadata == {"by": "test"}
    restarted.step(50)
    assert restarted.time == pytest.approx(sim.time, abs=1e-12)
    # The solver's warm start is not in a checkpoint: equal to the solver's tolerance.
    assert np.allclose(restarted.bodies()["positions"], sim.bodies()["positions"], atol=1e-9)
    with pytest.raises(moreau.InputError, match="missing.json"):
        moreau.Simulation(scene, restart=tmp_path / "missing.json")


def test_solver_failure_policy_stop_raises_simulation_error():
    document = ball_document()
    document["solver"] = {"name": "pgs", "tolerance": 1e-14, "max_iterations": 1,
                          "on_failure": "stop"}
    sim = moreau.Simulation(moreau.parse_scene(document, "ball.json"))
    with pytest.raises(moreau.SimulationError):
        sim.step(400)


def test_step_releases_the_gil():
    document = json.loads((SCENES / "box_of_spheres.json").read_text())
    sim = moreau.Simulation(moreau.parse_scene(document, "box.json"))
    worker = threading.Thread(target=sim.step, args=(150,))
    # From before start(): a thread that held the GIL could run its whole step inside start().
    gaps, start = [], time.perf_counter()
    last = start
    worker.start()
    while worker.is_alive():
        now = time.perf_counter()
        gaps.append(now - last)
        last = now
    duration = time.perf_counter() - start
    worker.join()
    assert sim.steps_taken == 150
    # Holding the GIL, the step would have stopped this loop for its whole duration.
    assert duration > 0.05, "the steps were too short to tell"
    assert max(gaps) < duration / 2


def test_solve_two_frictionless_contacts():
    W = np.array([[2.0, 1.0], [1.0, 2.0]])
    q = np.array([-1.0, -1.0])
    r, stats = moreau.solve(W, q, solver="pgs", frictional=False, tolerance=1e-12)
    assert np.allclose(r, [1 / 3, 1 / 3], atol=1e-10)
    assert stats.converged and stats.termination == "converged"
    r_sparse, _ = moreau.solve(scipy.sparse.csr_matrix(W), q, frictional=False, tolerance=1e-12)
    assert np.allclose(r_sparse, r, atol=1e-12)


def test_every_frictionless_solver_of_the_registry_solves_it():
    W = np.array([[2.0, 1.0], [1.0, 2.0]])
    for solver in moreau.solvers():
        if "frictionless" not in solver["laws"]:
            continue
        r, stats = moreau.solve(W, [-1.0, -1.0], solver=solver["name"], frictional=False)
        assert np.allclose(r, [1 / 3, 1 / 3], atol=1e-6), solver["name"]


def test_solve_one_sticking_frictional_contact():
    # W = I: r = -q while |r_t| <= mu r_n, so the contact sticks.
    r, stats = moreau.solve(np.eye(3), [-1.0, 0.2, 0.0], mu=0.5, tolerance=1e-12)
    assert np.allclose(r, [1.0, -0.2, 0.0], atol=1e-9) and stats.converged


def test_solve_options_are_checked_like_scene_keys():
    W, q = np.eye(2), [-1.0, -1.0]
    with pytest.raises(moreau.InputError, match="tolerance"):
        moreau.solve(W, q, frictional=False, tolerance=-1.0)
    with pytest.raises(moreau.InputError, match="no_such_option"):
        moreau.solve(W, q, frictional=False, no_such_option=1)
    with pytest.raises(moreau.InputError, match="no_such_solver"):
        moreau.solve(W, q, solver="no_such_solver", frictional=False)
    r, _ = moreau.solve(W, q, frictional=False, order="reverse", max_iterations=50)
    assert np.allclose(r, [1.0, 1.0])


def test_solve_fclib_file():
    data = pathlib.Path(os.environ.get("MOREAU_FCLIB_DATA", ROOT.parent / "shared/data/fclib"))
    path = data / "local_problem_test.hdf5"
    if not path.exists():
        pytest.skip(f"no FCLIB collection at {data}")
    r, stats, info = moreau.solve_fclib(path, "nlgs-eal", tolerance=1e-8, max_iterations=2000)
    assert info["kind"] == "local" and r.shape == (info["dimension"] * info["contacts"],)
    assert stats.iterations >= 1 and np.isfinite(info["fclib_merit"])


def test_reference_and_verdicts():
    reference = moreau.load_reference(REFERENCE / "indeterminate_beam" / "expected.json")
    assert reference.experiment == "indeterminate_beam"
    middle = reference["compatible_stiff_middle_middle"]
    assert middle.published == 6.0 and middle.comparison == "relative"
    assert moreau.judge(middle, 6.0).verdict == "pass"
    assert moreau.judge(middle, 6.1).verdict == "fail"
    verdicts = set()
    for directory in sorted(REFERENCE.iterdir()):
        for value in moreau.Reference.load(str(directory)).values:
            if value.scales and "nowhere" not in value.scales:
                verdicts.add(moreau.judge(value, 0.0, scale="nowhere").verdict)
            if value.known_differences.get("") and value.comparison != "holds":
                far = 1e6 * (1 + abs(value.published) + abs(value.published_high))
                failing = -far if value.comparison == "at_least" else far
                verdicts.add(moreau.judge(value, failing).verdict)
    assert verdicts == {"not evaluated", "known difference"}
    with pytest.raises(moreau.InputError, match="no_such_value"):
        reference["no_such_value"]
