#pragma once
// Table 1 of Kleinert Sec. 5 and the draft of Fig. 10 (README.md, "Checks"): the series and the
// table of every run, the draft checks against the DEM, the separation at tolerance 1e-2, and
// the measures of every run beside the published values of expected.json.
#include <filesystem>
#include <string>
#include <vector>

#include "moreau/harness/results.hpp"
#include "steady.hpp"
#include "trench_runs.hpp"

namespace blade_trench {

namespace fs = std::filesystem;

using moreau::ExperimentResults;
using moreau::Reference;

// Published Table 1 (tolerance, RTF, Krylov iterations per step, error), expected.json "table_1".
struct Published {
  double tolerance, rtf, krylov, error;
};

std::vector<Published> table_1(const Reference& reference);

void write_series(ExperimentResults& results, const fs::path& dir,
                  const std::vector<RunResult>& runs);

void write_table(ExperimentResults& results, const fs::path& dir,
                 const std::vector<Published>& table1, const std::vector<ToleranceResult>& ipm,
                 const std::vector<ToleranceResult>& ipm_fine, const RunResult& dem,
                 const Steady& dem_draft, const std::vector<RunResult>& pgj, double steady_start);

// The checks of reference/blade_trench/expected.json. Every check is recorded, also where the
// configuration does not evaluate it (no run at that tolerance, or runs that end before the
// steady part), with NaN or false and the reason. The entries of the full scale's trenches
// carry a suffix (their bands' reasons and known differences differ): "_medium" for the medium
// trench, "_full" for the published one; the quick scale's none. Each IPM run is compared with
// the DEM over its own steady window (ToleranceResult::steady_end).
void check_drafts(ExperimentResults& results, const std::vector<ToleranceResult>& ipm,
                  const std::string& suffix);

void check_separation(ExperimentResults& results, const std::vector<ToleranceResult>& ipm,
                      const std::string& suffix);

// The draft and 1e-2 entries of the trench this run is not (suffix "_medium" or "_full"),
// recorded as not evaluated with `reason`.
void not_this_trench(ExperimentResults& results, const std::string& suffix,
                     const std::string& reason);

void measure_runs(ExperimentResults& results, const Reference& reference,
                  const std::vector<ToleranceResult>& ipm,
                  const std::vector<ToleranceResult>& ipm_fine, const RunResult& dem,
                  const std::vector<RunResult>& pgj, double steady_start, const Steady& dem_draft);

}  // namespace blade_trench
