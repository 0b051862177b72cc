// The steady statistics of the draft series (steady.hpp): an IPM run shorter than the DEM's is
// compared with the DEM over its own window, not over the DEM's longer one.
#define BOOST_TEST_MODULE blade_trench_steady
#include "steady.hpp"

#include <boost/test/unit_test.hpp>
#include <cmath>

namespace {

using namespace blade_trench;

// Windows of 10 ms up to `end` with the draft `early` until t = 0.2 s and `late` after it.
RunResult series(double end, double early, double late) {
  RunResult r;
  const int windows = static_cast<int>(std::lround(end / kWindow));
  for (int k = 1; k <= windows; ++k) {
    WindowRow w;
    w.time = k * kWindow;
    w.draft = w.time <= 0.2 + 1e-9 ? early : late;
    r.windows.push_back(w);
  }
  r.steps = windows;
  return r;
}

}  // namespace

BOOST_AUTO_TEST_CASE(a_window_ends_where_asked) {
  const RunResult dem = series(0.3, 100.0, 200.0);
  BOOST_CHECK_CLOSE(steady(dem, 0.1).mean, 150.0, 1e-9);
  BOOST_CHECK_CLOSE(steady(dem, 0.1, 0.2).mean, 100.0, 1e-9);
  BOOST_CHECK_EQUAL(steady(dem, 0.1, 0.2).smoothed.size(), 10u);
}

BOOST_AUTO_TEST_CASE(a_shorter_run_is_judged_over_its_own_window) {
  const RunResult dem = series(0.3, 100.0, 200.0);
  // The IPM agrees with the DEM over 0.1-0.2 s and stops there: no difference, where the DEM's
  // whole steady part (mean 150 N) would make it 33 %.
  const ToleranceResult short_run = judge(1e-3, series(0.2, 100.0, 100.0), dem, 0.1);
  BOOST_CHECK_CLOSE(short_run.steady_end, 0.2, 1e-9);
  BOOST_CHECK_CLOSE(short_run.dem_mean, 100.0, 1e-9);
  BOOST_CHECK_SMALL(short_run.mean_difference, 1e-12);
  BOOST_CHECK_SMALL(short_run.rms_difference, 1e-12);
  // A run as long as the DEM that misses its late rise differs by 50 N over 150 N.
  const ToleranceResult full_run = judge(1e-5, series(0.3, 100.0, 100.0), dem, 0.1);
  BOOST_CHECK_CLOSE(full_run.dem_mean, 150.0, 1e-9);
  BOOST_CHECK_CLOSE(full_run.mean_difference, 1.0 / 3.0, 1e-9);
}
