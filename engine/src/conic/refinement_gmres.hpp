#pragma once
// Iterative refinement accelerated by GMRES (private to the conic core): the solution of
// K d = b with an approximate factorization M ~ K (a regularized one), by right-preconditioned
// restarted GMRES (Saad & Schultz 1986) on S K M^-1 S^-1 u = S b, d = M^-1 S^-1 u, with a
// diagonal scaling S in whose norm the residual is measured. Plain refinement d += M^-1 (b -
// K d) multiplies the error by I - M^-1 K, whose eigenvalues are ~delta / (delta + s) for the
// directions whose pivots s the regularization delta dominates: it stalls along them. GMRES
// removes such a handful of outlying eigenvalues in as many iterations (the rest of M^-1 K is
// clustered at 1), at the cost of plain refinement per iteration (one solve with M, one
// product with K).
#include <functional>
#include <vector>

#include "moreau/core/types.hpp"

namespace moreau::conic::detail {

struct RefinementResult {
  bool solved = false;    // the first solve with M succeeded (else d is not set)
  double residual = 0.0;  // |S (b - K d)| at the end
  int iterations = 0;     // solves with M after the first
};

// d = M^-1 b refined until |S (b - K d)| <= target, `max_iterations` GMRES iterations in all
// or a restart that gains less than a factor 2. apply_k(v, out): out = K v; solve_m(v, out):
// out = M^-1 v (false on failure: the refinement stops with the best d so far).
RefinementResult refine_with_gmres(const std::function<void(const VecX&, VecX&)>& apply_k,
                                   const std::function<bool(const VecX&, VecX&)>& solve_m,
                                   const VecX& scaling, const VecX& b, double target,
                                   int max_iterations, VecX& d);

}  // namespace moreau::conic::detail
