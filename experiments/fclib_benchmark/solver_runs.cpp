#include "solver_runs.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>

#include "moreau/core/error.hpp"
#include "moreau/solver/merit.hpp"
#include "moreau/solver/projected_gauss_jacobi.hpp"
#include "moreau/solver/solver_registry.hpp"

namespace moreau::fclib_benchmark {

using namespace moreau;
using Clock = std::chrono::steady_clock;

std::string format(const char* pattern, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, pattern, value);
  return buffer;
}

std::string tolerance_label(double tolerance) { return format("%.0e", tolerance); }

MeritBounds merit_bounds(const ConeProblem& problem) {
  const MeritScaling scaling = merit_scaling(problem);
  MeritBounds bounds;
  for (const double d : scaling.block_scale) {
    bounds.lower = std::min(bounds.lower, std::min(1.0, 1.0 / d));
    bounds.upper = std::max(bounds.upper, std::max(1.0, 1.0 / d));
  }
  return bounds;
}

Run run_solver(const Problem& problem, const std::string& solver_name, double tolerance,
               int max_iterations, const MeritBounds& bounds) {
  Run run;
  run.problem = problem.name;
  run.solver = solver_name;
  run.tolerance = tolerance;
  run.max_iterations = max_iterations;
  const ConeProblem& cone = problem.system->problem();
  SolverOptions common;
  common.tolerance = tolerance;
  common.max_iterations = max_iterations;
  common.record_history = false;
  AnySolverOptions options = default_solver_options(solver_name, common);
  if (auto* pgj = options.get_if<PgjOptions>()) pgj->relaxation = kPgjRelaxation;
  VecX r;
  try {
    const auto solver = make_solver(solver_name, options);
    double total_seconds = 0.0;
    while (run.timing_repeats < kMaxTimingRepeats &&
           (run.timing_repeats == 0 || total_seconds < kTimingBudgetSeconds)) {
      VecX attempt = VecX::Zero(problem.local->q.size());  // zero initial guess, as the CLI
      const SolverStats stats = solver->solve(cone, attempt);
      total_seconds += stats.wall_seconds;
      if (run.timing_repeats == 0) {
        run.stats = stats;
        r = attempt;
      } else {
        run.repeatable = run.repeatable && attempt == r && stats.iterations == run.stats.iterations;
        run.stats.wall_seconds = std::min(run.stats.wall_seconds, stats.wall_seconds);
      }
      ++run.timing_repeats;
    }
  } catch (const std::exception& e) {
    run.error = e.what();
    return run;
  }
  run.fclib_merit = fclib::natural_map_merit(*problem.local, r);
  run.recomputed_suite_merit = merit(cone, r);
  const VecX u = problem.local->W.matrix * r + problem.local->q;
  run.rounding_level = std::numeric_limits<double>::epsilon() * (r.norm() + u.norm()) /
                       std::max(problem.local->q.norm(), kMeritVelocityFloor);
  const double suite = run.recomputed_suite_merit;
  const double outside = std::max(
      {0.0, suite - bounds.upper * run.fclib_merit, bounds.lower * run.fclib_merit - suite});
  if (outside > 0.0) {
    run.equivalence_excess =
        outside / std::max(bounds.upper * run.rounding_level, std::numeric_limits<double>::min());
  }
  return run;
}

std::string termination_of(const Run& run) {
  return run.error.empty() ? to_string(run.stats.termination) : "error";
}

}  // namespace moreau::fclib_benchmark
