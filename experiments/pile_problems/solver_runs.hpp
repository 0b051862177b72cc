#pragma once
// The solvers of Kleinert Sec. 5 on a pile's test problem (README.md, "Solvers"): PGJ, PGS,
// APGD and the interior point method where this build has one, each from r = 0 with its merit
// or the paper's error(gamma, u) recorded per iteration, and the time each takes to reach the
// tolerances of Kleinert Fig. 7.
#include <optional>
#include <string>
#include <vector>

#include "moreau/solver/solver.hpp"
#include "moreau/solver/solver_registry.hpp"

namespace pile_problems {

using moreau::AnySolverOptions;
using moreau::ConeProblem;
using moreau::SolverStats;
using moreau::VecX;

inline const std::vector<double> kTolerances = {5e-2, 1e-2, 5e-4};  // Kleinert Fig. 7

bool is_ipm(const std::string& name);

struct SolverRun {
  std::string label;
  bool ipm = false;
  SolverStats stats;
  VecX impulses;
  std::vector<double> time_to_tolerance;  // per kTolerances entry; NaN where not reached
  // Runs read at checkpoints (paper_error_run): iteration and seconds of each history entry.
  std::vector<int> checkpoint_iterations;
  std::vector<double> checkpoint_seconds;
  // Iterate k of merit_history: every solver records its starting point (r = 0, or the IPM's
  // interior starting point) first, then every iteration or Newton step.
  int iteration_of(std::size_t k) const {
    return checkpoint_iterations.empty() ? static_cast<int>(k) : checkpoint_iterations[k];
  }
  // Seconds at merit_history[k]. PGJ, PGS and APGD cost the same per iteration (one Delassus
  // product and one merit), so time is spread evenly. An IPM Newton step costs its Krylov
  // iterations (one product each) plus about two products (residual and merit): time is
  // spread in proportion to 2 + Krylov iterations per step (uniform for the direct back-end,
  // which reports none).
  double seconds_at(std::size_t k) const {
    if (!checkpoint_seconds.empty()) return checkpoint_seconds[k];
    if (stats.iterations <= 0) return 0.0;
    if (!ipm) return stats.wall_seconds * iteration_of(k) / stats.iterations;
    return stats.wall_seconds * krylov_cost(static_cast<int>(k)) / krylov_cost(stats.iterations);
  }
  // Products of the first `steps` Newton steps (2 + Krylov iterations each).
  double krylov_cost(int steps) const {
    const std::vector<int>& krylov = stats.krylov_iterations_per_step;
    double cost = 0.0;
    for (int i = 0; i < steps; ++i)
      cost += 2.0 + (i < static_cast<int>(krylov.size()) ? krylov[i] : 0);
    return cost;
  }
  // Krylov iterations of the first k Newton steps (the IPM's iterate k).
  int krylov_at(std::size_t k) const {
    const std::vector<int>& krylov = stats.krylov_iterations_per_step;
    int sum = 0;
    for (std::size_t i = 0; i < k && i < krylov.size(); ++i) sum += krylov[i];
    return sum;
  }
  // First history index with a value <= tolerance.
  std::optional<std::size_t> first_below(double tolerance) const {
    for (std::size_t k = 0; k < stats.merit_history.size(); ++k)
      if (stats.merit_history[k] <= tolerance) return k;
    return std::nullopt;
  }
  // First time the history (merit or the paper's error) is <= tolerance; nullopt when never.
  std::optional<double> time_to(double tolerance) const {
    const std::optional<std::size_t> k = first_below(tolerance);
    return k ? std::optional<double>(seconds_at(*k)) : std::nullopt;
  }
};

// Histories on the paper's error(gamma, u) carry this suffix in their label (the suite's merit
// has none), in the CSV files and the results.
inline const std::string kErrorSuffix = " [error]";
struct SolverSpec {
  std::string label;
  std::string name;
  AnySolverOptions options;
  bool paper_error = false;  // IPM: stop on and record kleinert_error (the paper's error)
};

// Whether the run's history is the paper's error(gamma, u) (label with kErrorSuffix), and the
// name of its measure: "error" or "merit".
bool is_error_run(const SolverRun& run);
std::string measure_name(const SolverRun& run);

std::vector<SolverSpec> solver_specs(bool full);

// Every spec's solve of `problem` from r = 0, then PGJ on the paper's error(gamma, u) (the
// measure of Kleinert Fig. 6-7), each with its times to kTolerances. `ratio_bound` > 0 (the
// largest published pile): PGJ's error run may go on past its cap until 5e-4 or that many
// times the IPM's time to it (ratio_budget).
std::vector<SolverRun> run_solvers(const ConeProblem& problem, const std::vector<SolverSpec>& specs,
                                   double ratio_bound);

}  // namespace pile_problems
