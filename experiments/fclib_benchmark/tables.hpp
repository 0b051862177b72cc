#pragma once
// The raw data of the benchmark: problems.csv, runs.csv and table.md (README.md, "Outputs").
#include <string>
#include <vector>

#include "collection.hpp"
#include "moreau/harness/results.hpp"
#include "solver_runs.hpp"

namespace moreau::fclib_benchmark {

void write_problems_csv(ExperimentResults& results, const std::string& dir,
                        const std::vector<Problem>& problems);

void write_runs_csv(ExperimentResults& results, const std::string& dir,
                    const std::vector<Run>& runs);

// Problems x solvers, one table per tolerance: "iterations, milliseconds" where solved, else
// the FCLIB merit reached.
void write_table(const std::string& path, const std::vector<Problem>& problems,
                 const std::vector<Run>& runs, int max_iterations);

// Reference entries are named "<kind>.<problem>"; the reference decides which problems are
// expected to be solved and which refused, and every entry must be checked (exit_code).

}  // namespace moreau::fclib_benchmark
