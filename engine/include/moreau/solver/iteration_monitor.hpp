#pragma once
// Bookkeeping shared by the solvers (and open to new ones): validation, initial guess,
// merit checks, divergence detection and the final SolverStats, so that every solver stops
// on the same criteria and reports the same fields.
#include <chrono>
#include <optional>
#include <string>

#include "moreau/solver/merit.hpp"
#include "moreau/solver/solver.hpp"

namespace moreau {

// Validates the problem and sets r to the initial guess (the given r if
// options.warm_start, else 0). Returns the final stats right away for an empty problem.
std::optional<SolverStats> begin_solve(const std::string& solver, const ConeProblem& problem,
                                       const SolverOptions& options, int threads, VecX& r);

// The one iteration monitor of the suite's iterative solvers: which iterations are measured,
// the history, divergence (a non-finite value, or the watched value growing past
// divergence_factor times its initial value), convergence (the criterion at or below its
// tolerance) and the final SolverStats with the criterion that fired. The criterion is the merit
// unless a solver names its own (set_criterion): then the merit, where the solver measures it,
// is still the watched value and the one reported in SolverStats::merit.
class IterationMonitor {
 public:
  IterationMonitor(std::string solver, const ConeProblem& problem,
                   const IterativeSolverOptions& options, int threads);

  const MeritScaling& scaling() const { return scaling_; }
  // A criterion other than the merit (SolverStats::criterion) with its own tolerance.
  void set_criterion(std::string criterion, double tolerance);
  // Whether iteration k (1-based) is one at which the merit is measured.
  bool due(int iteration) const {
    return iteration % options_.check_every == 0 || iteration == options_.max_iterations;
  }
  // Measures the merit of the iterate after `iteration` iterations (0: the initial guess),
  // u = W r + q. Returns true when the solver must stop: converged or diverged.
  bool check(int iteration, const VecX& r, const VecX& u);
  // The same for values measured by the solver: `watched` goes into the history and the
  // divergence test, `criterion` is compared with the tolerance; `finite` false (a solver's
  // other measure is not finite) stops as diverged too.
  bool check(int iteration, double watched, double criterion, bool finite = true);
  double last_merit() const { return last_merit_; }
  // Overrides the merit reported, for a solver that returns an earlier iterate (APGD) or does
  // not measure the merit while it iterates (the md_* solvers).
  void report_merit(double merit);
  SolverStats finish(int iterations);

 private:
  const ConeProblem& problem_;
  const IterativeSolverOptions& options_;
  MeritScaling scaling_;
  SolverStats stats_;
  double initial_merit_ = 0.0;
  double last_merit_ = 0.0;
  double last_criterion_ = 0.0;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace moreau
