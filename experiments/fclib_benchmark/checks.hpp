#pragma once
// The checks of reference/fclib_benchmark/expected.json (README.md, "Checks"): the problems read
// and refused, the solvers' results at each tolerance, the runs' consistency, and the measures
// of each solver.
#include <vector>

#include "collection.hpp"
#include "moreau/harness/results.hpp"
#include "solver_runs.hpp"

namespace moreau::fclib_benchmark {

void check_problems(const std::vector<Problem>& problems, const std::vector<Run>& runs,
                    const Reference& reference, ExperimentResults& results);

void check_runs(const std::vector<Run>& runs, ExperimentResults& results);

void measure_solvers(const std::vector<Problem>& problems, const std::vector<Run>& runs,
                     ExperimentResults& results);

}  // namespace moreau::fclib_benchmark
