#pragma once
// Accelerated projected gradient descent (Nesterov, with Lipschitz backtracking and adaptive
// restart, the scheme of Mazhar et al. 2015 Alg. 1) for a smooth convex function over the
// non-negative orthant. Seed 000 Sec. 7 re-uses APGD for the bound-constrained subproblems
// of its augmented Lagrangian; this is that general form (the contact solver `apgd` is the
// same scheme specialized to quadratic cone problems).
#include <functional>

#include "moreau/core/types.hpp"

namespace moreau {

// Returns f(x) and, when `gradient` is not null, writes grad f(x) into it.
using SmoothFunction = std::function<double(const VecX& x, VecX* gradient)>;

struct BoundConstrainedOptions {
  // Stop when || x - max(0, x - grad f(x)) ||_inf <= tolerance (projected-gradient residual,
  // in the units of x per unit of gradient: callers scale their problem to O(1)).
  double tolerance = 1e-10;
  int max_iterations = 100000;
  double initial_lipschitz = 1.0;  // first guess of the gradient's Lipschitz constant
};

struct BoundConstrainedStats {
  int iterations = 0;
  int function_evaluations = 0;
  double projected_gradient = 0.0;
  bool converged = false;
  double lipschitz = 0.0;  // final estimate, a good start for the next call
};

// x: start on entry (projected onto x >= 0), minimizer on exit.
BoundConstrainedStats minimize_nonnegative(const SmoothFunction& f, VecX& x,
                                           const BoundConstrainedOptions& options);

}  // namespace moreau
