#include "moreau/impact/reference_minimizer.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <utility>
#include <vector>

#include "moreau/core/error.hpp"

namespace moreau {
namespace {

// Golden-section steps per bracket: the bracket of two sample spacings shrinks by 0.618^100,
// far below the sqrt(eps) resolution of a smooth minimum in alpha.
constexpr int kGoldenSteps = 100;

struct Radial {
  const SingleContactProblem& problem;
  const ReducedProblem reduced;
  int evaluations = 0;

  // The best point of the ray at angle alpha inside the feasible set, lifted to 3D.
  Vec3 point(double alpha) {
    ++evaluations;
    const Eigen::Vector2d d(std::cos(alpha), std::sin(alpha));
    const double f_r = reduced.a_nn + problem.mu * reduced.a_tn.dot(d);
    const double limit =
        f_r > 0.0 ? problem.mu * reduced.b_n / f_r : std::numeric_limits<double>::infinity();
    const double r = std::clamp(d.dot(reduced.b_hat) / d.dot(reduced.a_hat * d), 0.0, limit);
    return reduced.lift(r * d);
  }
  double value(double alpha) { return problem.objective(point(alpha)); }
};

}  // namespace

SamplingResult minimize_by_sampling(const SingleContactProblem& problem, int samples) {
  if (samples < 8) {
    throw InputError("minimize_by_sampling: samples = " + std::to_string(samples) +
                     " must be >= 8");
  }
  SamplingResult result;
  if (problem.b.x() < 0.0) return result;
  Radial radial{problem, ReducedProblem(problem)};
  const double pi = std::numbers::pi;
  const double spacing = 2.0 * pi / samples;
  std::vector<double> values(samples);
  for (int k = 0; k < samples; ++k) values[k] = radial.value(-pi + k * spacing);

  double best_alpha = -pi;
  double best_value = values[0];
  for (int k = 0; k < samples; ++k) {
    const double previous = values[(k + samples - 1) % samples];
    const double next = values[(k + 1) % samples];
    // A local minimum of the samples; strict on one side so that a plateau (r clamped to 0 over
    // an arc) is refined once, at its edge.
    if (!(values[k] < previous && values[k] <= next)) continue;
    // Golden-section search on [alpha_k - spacing, alpha_k + spacing].
    const double ratio = 0.5 * (std::sqrt(5.0) - 1.0);
    double lo = -pi + (k - 1) * spacing;
    double hi = -pi + (k + 1) * spacing;
    double x1 = hi - ratio * (hi - lo);
    double x2 = lo + ratio * (hi - lo);
    double f1 = radial.value(x1);
    double f2 = radial.value(x2);
    for (int step = 0; step < kGoldenSteps; ++step) {
      if (f1 <= f2) {
        hi = x2;
        x2 = x1;
        f2 = f1;
        x1 = hi - ratio * (hi - lo);
        f1 = radial.value(x1);
      } else {
        lo = x1;
        x1 = x2;
        f1 = f2;
        x2 = lo + ratio * (hi - lo);
        f2 = radial.value(x2);
      }
    }
    for (const auto& [alpha, value] :
         {std::pair{x1, f1}, std::pair{x2, f2}, std::pair{-pi + k * spacing, values[k]}}) {
      if (value < best_value) {
        best_value = value;
        best_alpha = alpha;
      }
    }
  }
  result.x = radial.point(best_alpha);
  result.objective = problem.objective(result.x);
  result.evaluations = radial.evaluations;
  return result;
}

}  // namespace moreau
