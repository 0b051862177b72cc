#pragma once
// The Newton matrix H = N + C + W^2 of the interior point method (interior_point.hpp) behind
// one interface, with a matrix-free CG and a CHOLMOD back-end (private to the engine).
#include <memory>
#include <vector>

#include "moreau/conic/interior_point.hpp"

namespace moreau::conic::detail {

class NewtonSystem {
 public:
  virtual ~NewtonSystem() = default;
  // Sets the block-diagonal part W^2 (one dim x dim block per cone) of H = N + C + W^2.
  // Returns false when H is found not positive definite.
  virtual bool set_scaling(const std::vector<Mat3>& scaling_squared) = 0;
  // W^-2 per cone, given before set_scaling: computed from the scaling's factors
  // (A^-1 A^-T), it keeps its accuracy where W^2 has a condition number beyond 1/epsilon
  // (sliding contacts near the solution), which inverting W^2 would not.
  virtual void set_inverse_scaling(const std::vector<Mat3>& /*inverse_scaling_squared*/) {}
  // dx ~= H^-1 rhs with residual |H dx - rhs| <= tolerance (exact up to rounding for the
  // direct back-end). warm_start: an iterative back-end starts from the solution of its
  // previous solve with the same scaling (the corrector from the predictor) instead of 0.
  // Returns false when H is found not positive definite; `iterations` gets the Krylov count.
  virtual bool solve(const VecX& rhs, double tolerance, VecX& dx, int& iterations,
                     bool warm_start = false) = 0;
  // Whether the last solve met its tolerance (an iterative back-end stops at
  // max_krylov_iterations without).
  virtual bool reached_tolerance() const { return true; }
};

// out = B v (accumulate: out += B v) for the block-diagonal B with one dim x dim block per
// cone (leading block of blocks[k]); 3-dimensional cones take a fixed-size product, several
// times cheaper than the runtime-sized one.
void apply_cone_blocks(const std::vector<Mat3>& blocks, const std::vector<int>& dims,
                       const std::vector<int>& offsets, const VecX& v, VecX& out,
                       bool accumulate = false);

// inverse = the inverse of the leading dim x dim block of `block` (zero beyond it) by Cholesky;
// false, with inverse zero, when that block is not numerically positive definite. Fixed-size
// for 3-dimensional cones: a runtime-sized factor allocates per cone.
bool invert_cone_block(const Mat3& block, int dim, Mat3& inverse);

// The back-end options.backend asks for, in the body space when N has a factor
// (QuadraticFactor) and options.body_space is set, else in the cone variables.
std::unique_ptr<NewtonSystem> make_newton_system(const ConicQp& problem,
                                                 const InteriorPointOptions& options);
// Preconditioned CG on H in the cone variables (warm_start: from the dx passed in).
std::unique_ptr<NewtonSystem> make_conjugate_gradient_system(const ConicQp& problem,
                                                             const InteriorPointOptions& options);
// CHOLMOD on the assembled H in the cone variables.
std::unique_ptr<NewtonSystem> make_cholmod_system(const ConicQp& problem);
// CG or CHOLMOD on the body-space form of H = D + F^T F (body_space_system.cpp).
std::unique_ptr<NewtonSystem> make_body_space_system(const ConicQp& problem,
                                                     const InteriorPointOptions& options);

}  // namespace moreau::conic::detail
