#include "steady.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <utility>

namespace blade_trench {

using namespace moreau;
namespace fs = std::filesystem;

Steady steady(const RunResult& run, double start, double end) {
  Steady s;
  const std::vector<WindowRow>& w = run.windows;
  double sum = 0.0;
  int count = 0;
  for (std::size_t k = 0; k < w.size(); ++k) {
    if (w[k].time <= start + 1e-9 || w[k].time > end + 1e-9) continue;
    sum += w[k].draft;
    ++count;
    if (k + 1 >= kSmoothing) {
      double m = 0.0;
      for (int j = 0; j < kSmoothing; ++j) m += w[k - j].draft / kSmoothing;
      s.smoothed.push_back(m);
    }
  }
  if (count > 0) s.mean = sum / count;
  return s;
}

double relative_rms(const Steady& a, const Steady& dem) {
  const std::size_t n = std::min(a.smoothed.size(), dem.smoothed.size());
  if (n == 0) return std::numeric_limits<double>::quiet_NaN();
  double sum = 0.0;
  for (std::size_t k = 0; k < n; ++k) sum += std::pow(a.smoothed[k] - dem.smoothed[k], 2);
  return std::sqrt(sum / n) / std::abs(dem.mean);
}

double per_step(const RunResult& run, double WindowRow::*field) {
  double total = 0.0;
  for (const WindowRow& w : run.windows) total += w.*field;
  return run.steps > 0 ? total / static_cast<double>(run.steps) : 0.0;
}

double mean_error(const RunResult& run) {
  double sum = 0.0;
  int count = 0;
  for (const WindowRow& w : run.windows)
    if (std::isfinite(w.error)) {
      sum += w.error;
      ++count;
    }
  return count > 0 ? sum / count : std::numeric_limits<double>::quiet_NaN();
}

// The steady draft of an IPM run against the DEM's over the same window.
ToleranceResult judge(double tolerance, RunResult run, const RunResult& dem, double steady_start) {
  ToleranceResult r;
  r.tolerance = tolerance;
  r.run = std::move(run);
  r.draft = steady(r.run, steady_start);
  r.steady_end = r.run.windows.empty() ? steady_start : r.run.windows.back().time;
  const Steady dem_draft = steady(dem, steady_start, r.steady_end);
  r.dem_mean = dem_draft.mean;
  r.mean_difference = std::abs(r.draft.mean - dem_draft.mean) / std::abs(dem_draft.mean);
  r.rms_difference = relative_rms(r.draft, dem_draft);
  return r;
}

bool separated(const RunResult& r) { return !r.failure.empty() || r.first_separated_window >= 0; }

std::string separation_note(const RunResult& r) {
  if (!r.failure.empty()) return r.label + " stopped: " + r.failure;
  if (r.first_separated_window >= 0) {
    const WindowRow& w = r.windows[r.first_separated_window];
    return r.label + ": particles separate from t = " + std::to_string(w.time) + " s (" +
           std::to_string(w.fast_grains) + " grains faster than " +
           std::to_string(kSeparationSpeed) + " m/s, largest speed " + std::to_string(w.max_speed) +
           " m/s)";
  }
  double fastest = 0.0;
  for (const WindowRow& w : r.windows) fastest = std::max(fastest, w.max_speed);
  return r.label + ": no separation (largest grain speed " + std::to_string(fastest) + " m/s)";
}

}  // namespace blade_trench
