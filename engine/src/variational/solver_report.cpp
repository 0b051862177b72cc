#include "solver_report.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "moreau/solver/interior_point_solver.hpp"

namespace moreau::variational {

SolverStats solver_stats(const ForceSolution& solution, const conic::InteriorPointOptions& options,
                         int contact_count) {
  SolverStats stats;
  stats.solver = "interior_point-" + conic::to_string(options.backend);
  stats.tolerance = options.tolerance;
  stats.criterion = "interior_point";
  stats.wall_seconds = solution.wall_seconds;
  if (contact_count == 0) {
    stats.termination = Termination::not_run;
    stats.converged = true;
    return stats;
  }
  const conic::InteriorPointStats& ipm = solution.stats;
  stats.iterations = ipm.newton_steps;
  stats.criterion_value =
      std::max({ipm.primal_residual, ipm.equality_residual, ipm.complementarity});
  stats.has_merit = false;
  stats.merit = std::numeric_limits<double>::quiet_NaN();
  stats.converged = ipm.status == conic::InteriorPointStatus::converged;
  stats.termination = termination_of(ipm.status);
  if (!stats.converged) stats.stop_reason = conic::to_string(ipm.status) + ": " + ipm.message;
  return stats;
}

double mean_particle_radius(const World& world) {
  double sum = 0.0;
  int count = 0;
  for (const RigidBody& b : world.bodies) {
    const double r = bounding_radius(b.shape.geometry);
    if (!b.is_dynamic() || !std::isfinite(r) || r <= 0.0) continue;
    sum += r;
    ++count;
  }
  return count > 0 ? sum / count : 1.0;
}

double mean_particle_weight(const World& world, double acceleration) {
  double mass = 0.0;
  int count = 0;
  for (const RigidBody& b : world.bodies) {
    if (!b.is_dynamic()) continue;
    mass += b.mass;
    ++count;
  }
  const double g = world.gravity.norm();
  return count > 0 ? mass / count * (g > 0.0 ? g : acceleration) : 0.0;
}

}  // namespace moreau::variational
