#include "moreau/solver/bound_constrained_apgd.hpp"

#include <cmath>

namespace moreau {

SeparableTerm nonnegative_orthant() {
  return {[](const VecX&) { return 0.0; },
          [](const VecX& v, double, VecX& out) { out = v.cwiseMax(0.0); }};
}

BoundConstrainedStats minimize_nonnegative(const SmoothFunction& f, const SeparableTerm& g, VecX& x,
                                           const BoundConstrainedOptions& options) {
  BoundConstrainedStats stats;
  VecX scratch(x.size());
  x = x.cwiseMax(0.0);
  auto natural_residual = [&](const VecX& point, const VecX& gradient) {
    g.prox(point - gradient, 1.0, scratch);
    return (point - scratch).lpNorm<Eigen::Infinity>();
  };
  VecX gradient_x(x.size());
  f(x, &gradient_x);
  ++stats.function_evaluations;
  stats.residual = natural_residual(x, gradient_x);
  double lipschitz = options.initial_lipschitz > 0.0 ? options.initial_lipschitz : 1.0;
  if (stats.residual <= options.tolerance) {
    stats.converged = true;
    stats.lipschitz = lipschitz;
    return stats;
  }
  double theta = 1.0;
  VecX y = x, gradient_y = gradient_x, x_next(x.size()), gradient_next(x.size());
  double f_y = f(y, nullptr);
  for (int k = 1; k <= options.max_iterations; ++k) {
    stats.iterations = k;
    // Backtracking (Mazhar et al. 2015 Alg. 1, lines 7-11) on the smooth part: grow L until
    // its quadratic upper bound at y holds for the proximal step. Near convergence the values
    // differ by less than their rounding, so the bound is also accepted in its curvature form
    // (grad f(x+) - grad f(y)) . s <= L |s|^2, exact for the quadratic objectives used here.
    for (;;) {
      g.prox(y - gradient_y / lipschitz, 1.0 / lipschitz, x_next);
      const double f_next = f(x_next, &gradient_next);
      ++stats.function_evaluations;
      const VecX step = x_next - y;
      const double step_squared = step.squaredNorm();
      if (f_next <= f_y + gradient_y.dot(step) + 0.5 * lipschitz * step_squared ||
          (gradient_next - gradient_y).dot(step) <= lipschitz * step_squared)
        break;
      lipschitz *= 2.0;
    }
    stats.residual = natural_residual(x_next, gradient_next);
    if (stats.residual <= options.tolerance) {
      x = x_next;
      stats.converged = true;
      break;
    }
    // Nesterov momentum (lines 12-14) with adaptive restart when the step and the previous
    // displacement disagree (lines 16-19, O'Donoghue & Candes: gradient-mapping test).
    const double theta_next = 0.5 * (-theta * theta + theta * std::sqrt(theta * theta + 4.0));
    const double beta = theta * (1.0 - theta) / (theta * theta + theta_next);
    if ((y - x_next).dot(x_next - x) > 0.0) {
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
