// FCLIB benchmark: every Coulomb solver of the suite on every problem of the FCLIB collection in
// the folder given by --data (CMake passes MOREAU_FCLIB_DATA), at the two tolerances of Acary,
// Bremond & Huber (2018), 1e-4 and 1e-8.
// Each file is solved exactly as `moreau fclib solve` does (read, reduce a global problem with
// CHOLMOD, LocalSystem, make_solver, zero initial guess) and judged by the FCLIB natural-map
// merit. See README.md for the columns, the limits and the checks.
#include <chrono>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "checks.hpp"
#include "collection.hpp"
#include "moreau/harness/experiment.hpp"
#include "solver_runs.hpp"
#include "tables.hpp"

namespace {

using namespace moreau;
using namespace moreau::fclib_benchmark;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

constexpr const char* kExperiment = "fclib_benchmark";

struct Scale {
  int max_iterations;  // sweeps (PGS, NLGS) or iterations (PGJ, APGD), the same for every solver
};

// README.md, "Iteration limits": at quick, some first-order solver reaches 1e-8 on every problem
// but spheres-in-a-box (newton reaches that one); full lets APGD finish it too.
Scale scale_for(bool full) { return full ? Scale{100000} : Scale{10000}; }

// Every supported problem of the collection, every solver at every tolerance; a problem's
// matrices are freed once its runs are done.
std::vector<Run> run_collection(std::vector<Problem>& problems, const std::string& data,
                                int max_iterations) {
  std::vector<Run> runs;
  for (const fs::path& path : collection_files(data)) {
    Problem& problem = problems.emplace_back();
    load_problem(path, problem);
    std::cout << kExperiment << ": " << problem.name << " (" << problem.kind << ", "
              << problem.contacts << " contacts)" << (problem.supported ? "" : " refused")
              << std::endl;
    if (!problem.supported) continue;
    const MeritBounds bounds = merit_bounds(problem.system->problem());
    for (const double tolerance : kTolerances) {
      for (const std::string& solver : kSolvers) {
        runs.push_back(run_solver(problem, solver, tolerance, max_iterations, bounds));
      }
    }
    problem.system.reset();
    problem.reduction.reset();
    problem.file = fclib::File{};
    problem.local = nullptr;
  }
  return runs;
}

}  // namespace

int main(int argc, char** argv) {
  const auto start = Clock::now();
  std::string data_directory;
  ExperimentOptions own;
  own.option("--data", data_directory, "the FCLIB collection: a directory of *.hdf5 (required)")
      .named("DIR");
  return run_experiment(
      argc, argv, kExperiment, own,
      [&](const ExperimentArguments& args, ExperimentResults& results) {
        const Scale scale = scale_for(args.full());
        std::vector<Problem> problems;
        const std::vector<Run> runs =
            run_collection(problems, data_directory, scale.max_iterations);
        write_problems_csv(results, args.output_directory, problems);
        write_runs_csv(results, args.output_directory, runs);
        write_table(args.output_directory + "/table.md", problems, runs, scale.max_iterations);
        results.add_file("table.md", "raw");
        results.add_file("performance_profile.png", "figure");
        results.add_file("merit_map.png", "figure");
        check_problems(problems, runs, results.reference(), results);
        check_runs(runs, results);
        measure_solvers(problems, runs, results);
        results.measure("iteration limit", scale.max_iterations, "",
                        "sweeps (PGS, NLGS) or iterations (PGJ, APGD, Newton, ADMM)");
        results.measure("experiment wall time",
                        std::chrono::duration<double>(Clock::now() - start).count(), "s",
                        "reading, reductions, every solve and its timing repeats");
        return RunEnd::checked;
      });
}
