#pragma once
// Accelerated proximal gradient descent (Nesterov, with Lipschitz backtracking and adaptive
// restart, the scheme of Mazhar et al. 2015 Alg. 1) for
//
//   min_{x >= 0}  f(x) + g(x),   f smooth convex,  g(x) = sum_i g_i(x_i) separable convex,
//
// where the projection step of APGD becomes the proximal step of g plus the bound (for g = 0
// it is exactly the projected APGD). Olsen & Kamrin Sec. 7 re-uses APGD for the bound-constrained
// subproblems of its augmented Lagrangian; putting the complementary energy of the contacts
// (separable, and for Hertzian contacts with an unbounded curvature at f = 0) into g keeps
// the step size set by the smooth quadratic part alone.
#include <functional>

#include "moreau/core/types.hpp"

namespace moreau {

// Returns f(x) and, when `gradient` is not null, writes grad f(x) into it.
using SmoothFunction = std::function<double(const VecX& x, VecX* gradient)>;

// The separable part: value g(x), and prox: out = argmin_{y >= 0} g(y) + |y - v|^2 / (2 step).
struct SeparableTerm {
  std::function<double(const VecX& x)> value;
  std::function<void(const VecX& v, double step, VecX& out)> prox;
};

// g = 0: prox is the projection onto x >= 0.
SeparableTerm nonnegative_orthant();

struct BoundConstrainedOptions {
  // Stop when || x - prox_g(x - grad f(x), 1) ||_inf <= tolerance (the natural residual; for
  // g = 0 the projected gradient), in the units of x: callers scale their problem to O(1).
  double tolerance = 1e-10;
  int max_iterations = 100000;
  double initial_lipschitz = 1.0;  // first guess of the Lipschitz constant of grad f
};

struct BoundConstrainedStats {
  int iterations = 0;
  int function_evaluations = 0;
  double residual = 0.0;
  bool converged = false;
  double lipschitz = 0.0;  // final estimate, a good start for the next call
};

// x: start on entry (projected onto x >= 0), minimizer on exit.
BoundConstrainedStats minimize_nonnegative(const SmoothFunction& f, const SeparableTerm& g, VecX& x,
                                           const BoundConstrainedOptions& options);

}  // namespace moreau
