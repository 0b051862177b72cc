#include "checks.hpp"

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
#include "moreau/solver/solver_registry.hpp"

namespace moreau::fclib_benchmark {

using namespace moreau;
using Clock = std::chrono::steady_clock;

namespace {

bool reference_has(const Reference& reference, const std::string& name) {
  const auto& values = reference.values();
  return std::any_of(values.begin(), values.end(),
                     [&](const ReferenceValue& value) { return value.name == name; });
}

}  // namespace

void check_problems(const std::vector<Problem>& problems, const std::vector<Run>& runs,
                    const Reference& reference, ExperimentResults& results) {
  int unknown = 0;
  for (const Problem& p : problems) {
    const std::string refused_name = "refused." + p.name;
    const std::string solved_name = "best_merit_1e-8." + p.name;
    const bool expected_refused = reference_has(reference, refused_name);
    const bool expected_solved = reference_has(reference, solved_name);
    if (!expected_refused && !expected_solved) ++unknown;
    if (expected_refused)
      results.check(refused_name, !p.supported,
                    p.supported ? "read without error" : "InputError: " + p.refusal);
    if (!expected_solved) continue;
    // The smallest FCLIB merit any solver reached in its 1e-8 run (infinite when refused).
    double best = std::numeric_limits<double>::infinity();
    std::string best_solver = "none";
    for (const Run& run : runs) {
      if (run.problem != p.name || run.tolerance != kStrictTolerance || !run.error.empty())
        continue;
      if (run.fclib_merit < best) {
        best = run.fclib_merit;
        best_solver = run.solver;
      }
    }
    results.check(solved_name, best,
                  p.supported ? "smallest FCLIB merit over the solvers' 1e-8 runs: " + best_solver
                              : "refused: " + p.refusal);
  }
  results.measure("files in the data directory the reference does not name", unknown, "",
                  "benchmarked and tabled, but not checked");
  // One solver for every file: the supported problems whose 1e-8 run of kSingleSolver does
  // not end with FCLIB merit <= 1e-8.
  int unsolved = 0;
  std::string unsolved_names;
  for (const Problem& p : problems) {
    if (!p.supported) continue;
    const bool solved = std::any_of(runs.begin(), runs.end(), [&](const Run& run) {
      return run.problem == p.name && run.solver == kSingleSolver &&
             run.tolerance == kStrictTolerance && run.solved();
    });
    if (!solved) {
      ++unsolved;
      unsolved_names += (unsolved_names.empty() ? "" : ", ") + p.name;
    }
  }
  results.check(std::string("single_solver_unsolved_1e-8.") + kSingleSolver,
                static_cast<double>(unsolved),
                unsolved_names.empty() ? "every supported problem" : "unsolved: " + unsolved_names);
}

void check_runs(const std::vector<Run>& runs, ExperimentResults& results) {
  double worst_equivalence = 0.0;
  std::string worst_equivalence_run = "none";
  double worst_recomputed = 0.0;
  std::string worst_recomputed_run = "none";
  int inconsistent_terminations = 0;
  int unrepeatable = 0;
  int errors = 0;
  int judged_differently = 0;
  std::string first_error;
  for (const Run& run : runs) {
    const std::string label =
        run.problem + " / " + run.solver + " / " + tolerance_label(run.tolerance);
    if (!run.error.empty()) {
      ++errors;
      if (first_error.empty()) first_error = label + ": " + run.error;
      continue;
    }
    if (run.equivalence_excess > worst_equivalence) {
      worst_equivalence = run.equivalence_excess;
      worst_equivalence_run = label;
    }
    // The reported merit decides convergence: it must be the merit of the r handed back, up to
    // the rounding of the solver's running u = W r + q.
    // A difference within the merit's own rounding level is rounding (two summation orders of
    // W r, as an unsymmetric W's row products against its column updates); beyond it, it is
    // judged relative to the merit.
    const double recomputed =
        std::max(0.0, std::abs(run.stats.merit - run.recomputed_suite_merit) - run.rounding_level) /
        std::max(run.recomputed_suite_merit, run.rounding_level);
    if (!(recomputed <= worst_recomputed)) {
      worst_recomputed = recomputed;
      worst_recomputed_run = label;
    }
    const bool below = run.stats.merit <= run.tolerance;
    const bool consistent =
        (run.stats.termination == Termination::converged && run.stats.converged && below) ||
        (run.stats.termination == Termination::iteration_limit && !run.stats.converged &&
         run.stats.iterations == run.max_iterations) ||
        (run.stats.termination != Termination::converged &&
         run.stats.termination != Termination::iteration_limit &&
         run.stats.termination != Termination::not_run && !run.stats.converged);
    if (!consistent) ++inconsistent_terminations;
    if (!run.repeatable) ++unrepeatable;
    if (below != run.solved()) ++judged_differently;
  }
  results.check("solver_errors", static_cast<double>(errors),
                first_error.empty() ? "no solver threw" : "first: " + first_error);
  results.check("merit_equivalence", worst_equivalence,
                "largest distance of the suite merit outside [lower, upper] x FCLIB merit, in "
                "units of upper x eps (||r|| + ||u||) / ||q||: " +
                    worst_equivalence_run);
  results.check("reported_merit_is_merit_of_r", worst_recomputed,
                "largest relative difference between SolverStats::merit and merit(problem, r): " +
                    worst_recomputed_run);
  results.check("termination_consistent", inconsistent_terminations == 0,
                std::to_string(inconsistent_terminations) +
                    " runs whose termination disagrees with their merit or iteration count");
  results.check("repeat_solves_identical", unrepeatable == 0,
                std::to_string(unrepeatable) + " runs whose repeated solves differ");
  results.measure("runs the two merits judge differently at their tolerance", judged_differently,
                  "", "suite merit <= T but FCLIB merit > T, or the reverse");
}

void measure_solvers(const std::vector<Problem>& problems, const std::vector<Run>& runs,
                     ExperimentResults& results) {
  const auto supported =
      std::count_if(problems.begin(), problems.end(), [](const Problem& p) { return p.supported; });
  results.measure("supported problems", static_cast<double>(supported), "");
  results.measure("refused problems", static_cast<double>(problems.size() - supported), "");
  for (const double tolerance : kTolerances) {
    const std::string at = " at " + tolerance_label(tolerance);
    int solved_by_any = 0;
    for (const Problem& p : problems) {
      solved_by_any += std::any_of(runs.begin(), runs.end(), [&](const Run& run) {
        return run.problem == p.name && run.tolerance == tolerance && run.solved();
      });
    }
    results.measure("problems solved by some solver" + at, solved_by_any, "");
    for (const std::string& solver : kSolvers) {
      int solved = 0;
      double seconds = 0.0;
      for (const Run& run : runs) {
        if (run.solver != solver || run.tolerance != tolerance) continue;
        solved += run.solved();
        seconds += run.stats.wall_seconds;
      }
      results.measure(solver + ": problems solved" + at, solved, "",
                      "FCLIB merit of the final r <= tolerance");
      results.measure(solver + ": total solver time" + at, seconds, "s",
                      "over every supported problem, solved or not");
    }
  }
}

}  // namespace moreau::fclib_benchmark
