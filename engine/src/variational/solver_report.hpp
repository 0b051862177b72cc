#pragma once
// The suite's SolverStats of a variational force solve (private to the engine).
#include "moreau/model/world.hpp"
#include "moreau/solver/solver.hpp"
#include "moreau/variational/force_problem.hpp"

namespace moreau::variational {

// criterion "interior_point": the larger of the core's relative residuals (force_problem.hpp);
// iterations are the Newton steps; `merit` repeats the criterion (the Coulomb merit of the
// suite does not apply to the associated friction law of eq. 4.11-4.14).
SolverStats solver_stats(const ForceSolution& solution, const conic::InteriorPointOptions& options,
                         int contact_count);

// The mean bounding radius of the dynamic bodies (1 without any): the length scale of the
// force problem's residuals (ForceProblem::length_scale).
double mean_particle_radius(const World& world);

// The mean weight m |g| of the dynamic bodies, or m times `acceleration` without gravity: the
// force scale of the dynamic problem (ForceProblem::force_scale).
double mean_particle_weight(const World& world, double acceleration);

}  // namespace moreau::variational
