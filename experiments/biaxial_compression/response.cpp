#include "response.hpp"

#include <algorithm>
#include <cmath>

namespace biaxial {

ResponseMeasures measure_response(const TestRun& run) {
  ResponseMeasures m;
  if (run.points.size() < 2) return m;
  m.final_axial_strain = run.points.back().axial_strain;
  double sum = 0.0, window_sum = 0.0, window_square = 0.0, newton = 0.0, seconds = 0.0;
  int window = 0;
  const int steps = static_cast<int>(run.points.size()) - 1;
  for (const TestPoint& p : run.points) {
    m.compaction = std::max(m.compaction, p.volumetric_strain);
    m.dilation = std::max(m.dilation, -p.volumetric_strain);
    if (p.step == 0) continue;
    const double q = p.deviatoric();
    m.peak = std::max(m.peak, q);
    sum += q;
    newton += p.newton_steps;
    seconds += p.step_seconds;
    m.substeps += p.substeps - 1;
    if (p.axial_strain >= 2.0 / 3.0 * m.final_axial_strain) {
      ++window;
      window_sum += q;
      window_square += q * q;
    }
  }
  m.mean = sum / steps;
  m.mean_newton_steps = newton / steps;
  m.mean_step_seconds = seconds / steps;
  m.residual = window_sum / window;
  m.residual_deviation = std::sqrt(std::max(0.0, window_square / window - m.residual * m.residual));
  m.first_step_ratio = run.points[1].deviatoric() / m.peak;
  return m;
}

}  // namespace biaxial
