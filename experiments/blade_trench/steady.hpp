#pragma once
// The draft force's statistics over the steady part of a run (README.md, "Measures"): its mean,
// its moving mean and their difference from the DEM's; the solver's cost per step; the
// separation of particles the paper reports at tolerance 1e-2.
#include <limits>
#include <string>
#include <vector>

#include "trench_runs.hpp"

namespace blade_trench {

// Draft series are compared after a moving mean over this many 10 ms windows (50 ms): the
// force on a blade a few grains deep jumps from grain to grain.
constexpr int kSmoothing = 5;

struct Steady {
  double mean = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> smoothed;  // moving mean over kSmoothing windows, steady part only
};

// Over the windows that end in (start, end].
Steady steady(const RunResult& run, double start,
              double end = std::numeric_limits<double>::infinity());

// RMS of the difference of the smoothed series over their common steady part, over the DEM's
// steady mean.
double relative_rms(const Steady& a, const Steady& dem);

double per_step(const RunResult& run, double WindowRow::*field);

double mean_error(const RunResult& run);

// One IPM run per tolerance with its steady statistics against the DEM.
struct ToleranceResult {
  double tolerance = 0.0;
  RunResult run;
  Steady draft;
  // The steady part is the run's own, from the steady start to its last window; a run shorter
  // than the DEM's (--complete's looser tolerances) is compared over that window.
  double steady_end = 0.0;       // s
  double dem_mean = 0.0;         // the DEM's mean draft over the same window, N
  double mean_difference = 0.0;  // |mean - DEM mean| / DEM mean over the steady part
  double rms_difference = 0.0;   // relative_rms against the DEM
};

// The IPM run's steady draft against the DEM's over the same window: from steady_start to the
// run's last window, which may end before the DEM's.
ToleranceResult judge(double tolerance, RunResult run, const RunResult& dem, double steady_start);

bool separated(const RunResult& r);

std::string separation_note(const RunResult& r);

}  // namespace blade_trench
