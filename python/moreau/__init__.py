"""Moreau: nonsmooth contact dynamics of granular matter, from Python.

The engine's scenes, schemes and solvers (the extension ``moreau._moreau``) with what is
simpler to write in Python: ``solve`` takes W as a NumPy array or a SciPy sparse matrix, and
``Reference.load`` also takes the path of an expected.json.

    import moreau
    scene = moreau.load_scene("scenes/beam_compatible.json")
    sim = moreau.Simulation(scene)
    sim.run()
    print(sim.report.compatible_impulses / sim.time_step)   # support forces, N
"""

import os as _os

import numpy as _np

from ._moreau import (  # noqa: F401  (the module's API)
    CheckResult,
    ExperimentResults,
    InputError,
    Reference,
    ReferenceValue,
    Report,
    Scene,
    Simulation,
    SimulationError,
    SolverStats,
    __version__,
    judge,
    load_scene,
    parse_scene,
    passes,
    schemes,
    solvers,
)
from . import _moreau

__all__ = [
    "CheckResult", "ExperimentResults", "InputError", "Reference", "ReferenceValue", "Report",
    "Scene", "Simulation", "SimulationError", "SolverStats", "judge", "load_reference",
    "load_scene", "parse_scene", "passes", "schemes", "solve", "solve_fclib", "solvers",
]


def solve(W, q, mu=None, solver="pgs", frictional=True, rows_per_contact=None,
          friction_model="coulomb", r0=None, **options):
    """Solves one cone problem u = W r + q (the FCLIB local problem) with a registered solver.

    W: a square NumPy array or SciPy sparse matrix; q: its right-hand side; mu: the friction
    coefficient per contact (a number for all; ignored without friction). rows_per_contact
    (1, 2 or 3) defaults to 3 with friction and 1 without. options: the keys of the scene's
    solver section (tolerance=1e-10, max_iterations=500, order="reverse", ...), checked like a
    scene's; InputError names a key or value the solver cannot take. r0: the initial guess
    (read with warm_start, the default). Returns (r, stats).
    """
    rows = rows_per_contact if rows_per_contact is not None else (3 if frictional else 1)
    q = _np.ascontiguousarray(q, dtype=float).reshape(-1)
    contacts = q.size // rows if rows in (1, 2, 3) else 0
    if mu is None:
        mu = _np.zeros(contacts)
    mu = _np.asarray(mu, dtype=float)
    if mu.ndim == 0:
        mu = _np.full(contacts, float(mu))
    if r0 is not None:
        r0 = _np.ascontiguousarray(r0, dtype=float).reshape(-1)
    if hasattr(W, "tocsr"):
        csr = W.tocsr()
        return _moreau._solve_csr(csr.indptr, csr.indices, csr.data, csr.shape[0],
                                  csr.shape[1], q, mu, solver, rows, friction_model, options, r0)
    W = _np.asarray(W, dtype=float)
    if W.ndim != 2:
        raise InputError(f"W: a matrix is needed, got an array of {W.ndim} dimensions")
    return _moreau._solve_dense(W, q, mu, solver, rows, friction_model, options, r0)


def solve_fclib(path, solver="pgs", **options):
    """Solves an FCLIB file (local, or global reduced to local) as `moreau fclib solve` does.

    Returns (r, stats, info); info holds kind, contacts, dimension, symmetric, fclib_merit (the
    FCLIB natural-map merit of r), u = W r + q and, for a global problem, v.
    """
    return _moreau._solve_fclib(_os.fspath(path), solver, options)


def load_reference(path):
    """The published values of an experiment: reference/<experiment> or its expected.json."""
    path = _os.fspath(path)
    if _os.path.basename(path) == "expected.json":
        path = _os.path.dirname(path) or "."
    return Reference.load(path)
