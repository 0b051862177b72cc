#pragma once
// Export of one time step's contact problem to FCLIB, so that any step of any scene can be
// handed to another solver library (Siconos, So-bogus, ...) and compared.
#include <string>

#include "moreau/fclib/fclib.hpp"
#include "moreau/integrator/stepper.hpp"

namespace moreau::fclib {

// One step in both FCLIB forms, each with the stepper's solution.
//  - local: W = H^T M^-1 H, q as the stepper built it (Olsen & Kamrin eq. 20, impulse form);
//  - global: M and H over the free degrees of freedom of the dynamic bodies (locked ones,
//    e.g. z in 2D, carry no mass and are left out, so M is positive definite),
//    f = M v_free and w = q - H^T v_free (gap and restitution terms, velocities of fixed and
//    prescribed bodies), so that reducing it gives back the local problem.
// FCLIB has no frictionless form: a frictionless step (one row per contact) is written with
// spacedim = the world dimension and mu = 0, which has the same solution (r_T = 0).
// The solution of the local form is (r, u = W r + q); of the global form also v (the
// end-of-step velocities of the free degrees of freedom).
struct StepExport {
  File local;
  File global;
};

// `title` names the problem (e.g. the scene file); the step number, time, solver, friction
// model and the conventions above go into the info fields.
StepExport export_step(const StepProblem& step, const std::string& title);

}  // namespace moreau::fclib
