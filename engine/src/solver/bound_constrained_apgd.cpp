#include "moreau/solver/bound_constrained_apgd.hpp"

#include <cmath>

namespace moreau {
namespace {

double projected_gradient_norm(const VecX& x, const VecX& gradient) {
  return (x - (x - gradient).cwiseMax(0.0)).lpNorm<Eigen::Infinity>();
}

}  // namespace

BoundConstrainedStats minimize_nonnegative(const SmoothFunction& f, VecX& x,
                                           const BoundConstrainedOptions& options) {
  BoundConstrainedStats stats;
  x = x.cwiseMax(0.0);
  VecX gradient_x(x.size());
  double f_x = f(x, &gradient_x);
  ++stats.function_evaluations;
  stats.projected_gradient = projected_gradient_norm(x, gradient_x);
  if (stats.projected_gradient <= options.tolerance) {
    stats.converged = true;
    stats.lipschitz = options.initial_lipschitz;
    return stats;
  }
  double lipschitz = options.initial_lipschitz > 0.0 ? options.initial_lipschitz : 1.0;
  double theta = 1.0;
  VecX y = x, gradient_y = gradient_x, x_next(x.size()), gradient_next(x.size());
  double f_y = f_x;
  for (int k = 1; k <= options.max_iterations; ++k) {
    stats.iterations = k;
    // Backtracking (Mazhar et al. 2015 Alg. 1, lines 7-11): grow L until the quadratic upper
    // bound at y holds for the projected step.
    double f_next = 0.0;
    for (;;) {
      x_next = (y - gradient_y / lipschitz).cwiseMax(0.0);
      f_next = f(x_next, nullptr);
      ++stats.function_evaluations;
      const VecX step = x_next - y;
      if (f_next <= f_y + gradient_y.dot(step) + 0.5 * lipschitz * step.squaredNorm() + 1e-15 * std::abs(f_y))
        break;
      lipschitz *= 2.0;
    }
    f(x_next, &gradient_next);
    ++stats.function_evaluations;
    stats.projected_gradient = projected_gradient_norm(x_next, gradient_next);
    if (stats.projected_gradient <= options.tolerance) {
      x = x_next;
      stats.converged = true;
      break;
    }
    // Nesterov momentum (lines 12-14) with adaptive restart when the momentum points uphill
    // (lines 16-19, O'Donoghue & Candes).
    const double theta_next = 0.5 * (-theta * theta + theta * std::sqrt(theta * theta + 4.0));
    const double beta = theta * (1.0 - theta) / (theta * theta + theta_next);
    if (gradient_y.dot(x_next - x) > 0.0) {
      y = x_next;
      theta = 1.0;
    } else {
      y = x_next + beta * (x_next - x);
      theta = theta_next;
    }
    x = x_next;
    f_y = f(y, &gradient_y);
    ++stats.function_evaluations;
    lipschitz *= 0.9;  // line 20: let the step grow again
  }
  stats.lipschitz = lipschitz;
  return stats;
}

}  // namespace moreau
