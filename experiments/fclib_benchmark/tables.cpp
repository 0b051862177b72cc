#include "tables.hpp"

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
#include "moreau/harness/table.hpp"
#include "moreau/solver/merit.hpp"
#include "moreau/solver/solver_registry.hpp"

namespace moreau::fclib_benchmark {

using namespace moreau;
using Clock = std::chrono::steady_clock;

void write_problems_csv(ExperimentResults& results, const std::string& dir,
                        const std::vector<Problem>& problems) {
  CsvTable out(results, dir, "problems.csv",
               {"problem", "kind", "supported", "contacts", "dofs", "mu_min", "mu_max",
                "symmetric_w", "reduction_seconds", CsvTable::quoted("refusal")},
               6);
  for (const Problem& p : problems) {
    std::string refusal = p.refusal;
    std::replace(refusal.begin(), refusal.end(), ',', ';');
    std::replace(refusal.begin(), refusal.end(), '"', '\'');
    out.row(p.name, p.kind, p.supported, p.contacts, p.dofs, p.mu_min, p.mu_max, p.symmetric_w,
            p.reduction_seconds, refusal);
  }
}

void write_runs_csv(ExperimentResults& results, const std::string& dir,
                    const std::vector<Run>& runs) {
  CsvTable out(results, dir, "runs.csv",
               {"problem", "solver", "tolerance", "max_iterations", "termination", "iterations",
                "solver_seconds", "fclib_merit", "suite_merit", "recomputed_suite_merit",
                "rounding_level", "solved", "timing_repeats"},
               10);
  for (const Run& run : runs)
    out.row(run.problem, run.solver, run.tolerance, run.max_iterations, termination_of(run),
            run.stats.iterations, run.stats.wall_seconds, run.fclib_merit, run.stats.merit,
            run.recomputed_suite_merit, run.rounding_level, run.solved(), run.timing_repeats);
}

void write_table(const std::string& path, const std::vector<Problem>& problems,
                 const std::vector<Run>& runs, int max_iterations) {
  std::ofstream out(path);
  for (const double tolerance : kTolerances) {
    out << "### FCLIB merit <= " << tolerance_label(tolerance) << " (limit " << max_iterations
        << " iterations)\n\n| problem | kind | contacts |";
    for (const std::string& solver : kSolvers) out << " " << solver << " |";
    out << "\n|---|---|---|";
    for (std::size_t k = 0; k < kSolvers.size(); ++k) out << "---|";
    out << "\n";
    for (const Problem& p : problems) {
      out << "| " << p.name << " | " << p.kind << " | " << p.contacts << " |";
      if (!p.supported) {
        for (std::size_t k = 0; k < kSolvers.size(); ++k) out << " unsupported |";
        out << "\n";
        continue;
      }
      for (const std::string& solver : kSolvers) {
        const auto run = std::find_if(runs.begin(), runs.end(), [&](const Run& candidate) {
          return candidate.problem == p.name && candidate.solver == solver &&
                 candidate.tolerance == tolerance;
        });
        if (run == runs.end()) {
          out << " - |";
        } else if (!run->error.empty()) {
          out << " error |";
        } else if (run->solved()) {
          out << " " << run->stats.iterations << " it, "
              << format("%.3g", 1e3 * run->stats.wall_seconds) << " ms |";
        } else {
          out << " no (" << format("%.1e", run->fclib_merit) << ") |";
        }
      }
      out << "\n";
    }
    out << "\n";
  }
  out << "Cells: iterations and solver wall time where the FCLIB merit of the final r is at most "
         "the tolerance, else `no` and the merit reached. Times are the shortest of up to "
      << kMaxTimingRepeats << " identical solves for runs under " << kTimingBudgetSeconds
      << " s.\n";
  if (!out) throw InputError(path + ": cannot write");
}

}  // namespace moreau::fclib_benchmark
