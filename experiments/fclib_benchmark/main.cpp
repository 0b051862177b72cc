// FCLIB benchmark: every Coulomb solver of the suite on every problem of the FCLIB collection in
// the folder given by --data (CMake passes MOREAU_FCLIB_DATA), at the two tolerances of Acary,
// Bremond & Huber (2018), 1e-4 and 1e-8.
// Each file is solved exactly as `moreau fclib solve` does (read, reduce a global problem with
// CHOLMOD, LocalSystem, make_solver, zero initial guess) and judged by the FCLIB natural-map
// merit. See README.md for the columns, the limits and the checks.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "moreau/core/error.hpp"
#include "moreau/fclib/fclib.hpp"
#include "moreau/harness/results.hpp"
#include "moreau/harness/table.hpp"
#include "moreau/registry/solver_registry.hpp"
#include "moreau/solver/merit.hpp"
#include "moreau/solver/solver.hpp"

namespace {

using namespace moreau;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

constexpr const char* kExperiment = "fclib_benchmark";

// The solvers of the suite for the Coulomb (De Saxce) problem that FCLIB poses. md_gs,
// md_jacobi and md_blend solve the maximum-dissipation impact law (Preclik et al.), a different
// problem whose solutions are not Coulomb solutions: they are left out.
const std::vector<std::string> kSolvers = {
    "pgs",      "pgj",      "apgd",   "nlgs-sbp", "nlgs-ebp",
    "nlgs-sal", "nlgs-eal", "newton", "admm",     "ipm-direct",
};
// The solver checked to reach the FCLIB merit 1e-8 alone on every supported problem, at its
// default options and the scale's iteration limit (README.md, "Known differences").
constexpr const char* kSingleSolver = "newton";
// The two accuracies of the FCLIB solver comparison (Acary, Bremond & Huber 2018).
const std::vector<double> kTolerances = {1e-4, 1e-8};
constexpr double kStrictTolerance = 1e-8;

// PGJ's Jacobi splitting diverges at omega = 1 on strongly coupled contacts
// (projected_gauss_jacobi.hpp); 0.3 is the value the other experiments and the benchmark use.
constexpr double kPgjRelaxation = 0.3;

// Runs faster than this are repeated (up to kMaxTimingRepeats solves) and the shortest time is
// kept: a single solve of a few microseconds is dominated by cache and timer noise, which would
// decide the performance profile's "best solver" on the small problems at random.
constexpr double kTimingBudgetSeconds = 0.02;
constexpr int kMaxTimingRepeats = 5;

struct Scale {
  int max_iterations;  // sweeps (PGS, NLGS) or iterations (PGJ, APGD), the same for every solver
};

// README.md, "Iteration limits": at quick, some first-order solver reaches 1e-8 on every problem
// but spheres-in-a-box (newton reaches that one); full lets APGD finish it too.
Scale scale_for(bool full) { return full ? Scale{100000} : Scale{10000}; }

std::string format(const char* pattern, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, pattern, value);
  return buffer;
}

std::string tolerance_label(double tolerance) { return format("%.0e", tolerance); }

// One file of the collection and the local problem the solvers take.
struct Problem {
  std::string name;        // file name without .hdf5
  std::string kind = "-";  // local or global
  bool supported = false;
  std::string refusal;  // InputError message of a refused file
  int contacts = 0;
  int dofs = 0;  // global problems only
  double mu_min = 0.0, mu_max = 0.0;
  bool symmetric_w = true;
  double reduction_seconds = 0.0;  // CHOLMOD reduction of a global problem (not solver time)
  fclib::File file;
  std::unique_ptr<fclib::GlobalReduction> reduction;
  std::unique_ptr<fclib::LocalSystem> system;
  const fclib::LocalProblem* local = nullptr;
};

// The local problem of a file read into `problem.file`, as `moreau fclib solve` builds it: a
// global problem is reduced with CHOLMOD first. `local` points into `problem`.
void prepare_local_problem(Problem& problem) {
  if (problem.file.global) {
    problem.kind = "global";
    problem.dofs = problem.file.global->dofs();
    const auto start = Clock::now();
    problem.reduction = std::make_unique<fclib::GlobalReduction>(*problem.file.global);
    problem.reduction_seconds = std::chrono::duration<double>(Clock::now() - start).count();
    problem.local = &problem.reduction->local();
  } else {
    problem.kind = "local";
    problem.local = &*problem.file.local;
  }
  problem.system = std::make_unique<fclib::LocalSystem>(*problem.local);
  problem.symmetric_w = problem.system->symmetric();
  problem.contacts = problem.local->contact_count();
  if (problem.contacts > 0) {
    problem.mu_min = problem.local->mu.minCoeff();
    problem.mu_max = problem.local->mu.maxCoeff();
  }
  problem.supported = true;
}

// Reads a file and prepares its local problem, filling `problem` in place. A file the engine
// refuses with an InputError (the reader refuses rolling friction) is kept as unsupported with
// the engine's message: reported, never skipped.
void load_problem(const fs::path& path, Problem& problem) {
  problem.name = path.stem().string();
  try {
    problem.file = fclib::read_file(path);
    prepare_local_problem(problem);
  } catch (const InputError& e) {
    problem.refusal = e.what();
    problem.supported = false;
    problem.system.reset();
    problem.reduction.reset();
    problem.local = nullptr;
  }
}

struct Run {
  std::string problem;
  std::string solver;
  double tolerance = 0.0;
  int max_iterations = 0;
  SolverStats stats;
  std::string error;  // an exception from the solver (none expected)
  double fclib_merit = std::numeric_limits<double>::infinity();
  double recomputed_suite_merit = std::numeric_limits<double>::infinity();  // merit.hpp of r
  int timing_repeats = 0;
  bool repeatable = true;  // every repeat returned the same r, bit for bit
  // eps (||r|| + ||u||) / ||q||: the absolute rounding error of the FCLIB merit, whose residual
  // r - P_K(r - u^) subtracts numbers of the size of r and u (README.md, "Merits"). Where r is
  // large against u, as in LMGC_100_PR_PerioBox, it is not far below 1e-8.
  double rounding_level = 0.0;
  // How far the suite merit lies outside the interval the FCLIB merit fixes for it (README.md,
  // "Merits"), in units of upper x rounding_level (the rounding of upper x FCLIB merit): 0
  // inside.
  double equivalence_excess = 0.0;
  bool solved() const { return error.empty() && fclib_merit <= tolerance; }
};

// Bounds of suite merit / FCLIB merit from the merit scaling D_i (README.md, "Merits"): per
// contact the D-scaled natural-map residual lies between min(1, 1/D_i) and max(1, 1/D_i) times
// the unscaled one, since ||x - P(x - g d)|| grows with g and ||x - P(x - g d)|| / g shrinks.
struct MeritBounds {
  double lower = 1.0;
  double upper = 1.0;
};

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
  if (auto* pgj = std::get_if<PgjOptions>(&options)) pgj->relaxation = kPgjRelaxation;
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

// Problems x solvers, one table per tolerance: "iterations, milliseconds" where solved, else
// the FCLIB merit reached.
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

// Reference entries are named "<kind>.<problem>"; the reference decides which problems are
// expected to be solved and which refused, and every entry must be checked (exit_code).
bool reference_has(const Reference& reference, const std::string& name) {
  const auto& values = reference.values();
  return std::any_of(values.begin(), values.end(),
                     [&](const ReferenceValue& value) { return value.name == name; });
}

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
        (run.stats.termination == Termination::diverged && !run.stats.converged);
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

std::vector<fs::path> collection_files(const std::string& directory) {
  if (directory.empty()) throw InputError(std::string(kExperiment) + ": --data DIR is required");
  if (!fs::is_directory(directory))
    throw InputError(std::string(kExperiment) + ": --data " + directory + " is not a directory");
  std::vector<fs::path> files;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory)) {
    if (entry.is_regular_file() && entry.path().extension() == ".hdf5")
      files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());  // a fixed order: the run does not depend on readdir
  return files;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const auto start = Clock::now();
    std::string data_directory;
    ExperimentOptions own;
    own.option("--data", data_directory, "the FCLIB collection: a directory of *.hdf5 (required)")
        .named("DIR");
    const ExperimentArguments args = ExperimentArguments::parse(argc, argv, kExperiment, own);
    const Reference reference = Reference::load(args.reference_directory);
    ExperimentResults results(kExperiment, args.scale, reference);
    const Scale scale = scale_for(args.full());

    std::vector<Problem> problems;
    std::vector<Run> runs;
    for (const fs::path& path : collection_files(data_directory)) {
      Problem& problem = problems.emplace_back();
      load_problem(path, problem);
      std::cout << kExperiment << ": " << problem.name << " (" << problem.kind << ", "
                << problem.contacts << " contacts)" << (problem.supported ? "" : " refused")
                << std::endl;
      if (!problem.supported) continue;
      const MeritBounds bounds = merit_bounds(problem.system->problem());
      for (const double tolerance : kTolerances) {
        for (const std::string& solver : kSolvers) {
          runs.push_back(run_solver(problem, solver, tolerance, scale.max_iterations, bounds));
        }
      }
      // The problem's matrices are no longer needed: free them before the next file.
      problem.system.reset();
      problem.reduction.reset();
      problem.file = fclib::File{};
      problem.local = nullptr;
    }

    write_problems_csv(results, args.output_directory, problems);
    write_runs_csv(results, args.output_directory, runs);
    write_table(args.output_directory + "/table.md", problems, runs, scale.max_iterations);
    results.add_file("table.md", "raw");
    results.add_file("performance_profile.png", "figure");
    results.add_file("merit_map.png", "figure");

    check_problems(problems, runs, reference, results);
    check_runs(runs, results);
    measure_solvers(problems, runs, results);
    results.measure("iteration limit", scale.max_iterations, "",
                    "sweeps (PGS, NLGS) or iterations (PGJ, APGD, Newton, ADMM)");
    results.measure("experiment wall time",
                    std::chrono::duration<double>(Clock::now() - start).count(), "s",
                    "reading, reductions, every solve and its timing repeats");
    results.write(args.output_directory);
    return results.exit_code();
  } catch (const std::exception& e) {
    std::cerr << kExperiment << ": error: " << e.what() << "\n";
    return 2;
  }
}
