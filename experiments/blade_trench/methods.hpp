#pragma once
// The methods of Kleinert Sec. 5 on the settled trench (README.md, "Methods"): the penalty DEM
// reference, nonsmooth SHAKE with the matrix-free IPM at each tolerance of Table 1 (and at PGJ's
// step), and PGJ; each from the same settled packing.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "moreau/harness/results.hpp"
#include "steady.hpp"
#include "trench_config.hpp"
#include "trench_runs.hpp"

namespace blade_trench {

namespace fs = std::filesystem;

using moreau::ExperimentResults;

constexpr double kCdStep = 1e-2;   // Kleinert Sec. 5
constexpr double kPgjStep = 1e-3;  // the paper's best PGJ run
// The IPM at PGJ's step: the time step's share of its difference from the DEM.
constexpr double kFineStep = 1e-3;
constexpr int kPgjIterations = 2000;    // Kleinert Sec. 5, the best PGJ run
constexpr double kPgjRelaxation = 0.3;  // as the other experiments (projected_gauss_jacobi.hpp)
std::string tolerance_name(double tolerance);

RunResult run_dem(const TrenchConfig& c, double density, const fs::path& packing,
                  const RunSpec& spec);

// The settled packing every run starts from, and the particle density from its measured
// packing fraction; both written beside the results with the scene.
struct Start {
  fs::path checkpoint;
  double density = 0.0;
};

// The packing is settled into, or read from, `cache` (empty: the build tree's trench-cache);
// `interrupt` is the --interrupt-after test hook (null: none), trench_scene.hpp.
Start prepare(const TrenchConfig& config, const fs::path& dir, const fs::path& cache,
              long* interrupt, ExperimentResults& results);

using SpecFor =
    std::function<RunSpec(const std::string& label, const std::string& slug, double duration)>;

// The IPM at the configuration's fine tolerance with h = 1e-3 s, its steady draft against the
// DEM's (none when the configuration has no such run).
std::vector<ToleranceResult> run_fine_ipm(const TrenchConfig& config, const Start& start,
                                          const SpecFor& spec, const RunResult& dem);

std::vector<ToleranceResult> run_tolerances(const TrenchConfig& config, const Start& start,
                                            const SpecFor& spec, const RunResult& dem,
                                            const fs::path& dir);

// PGJ at the paper's best setting (h = 1e-3 s), and at the IPM's step h = 1e-2 s: the latter
// tells the time step's share of a difference from the DEM from the solver's.
std::vector<RunResult> run_pgj(const TrenchConfig& config, const Start& start, const SpecFor& spec,
                               int iterations);

}  // namespace blade_trench
