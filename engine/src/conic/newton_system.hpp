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
  // dx ~= H^-1 rhs with residual |H dx - rhs| <= tolerance (exact up to rounding for the
  // direct back-end).
  // Returns false when H is found not positive definite; `iterations` gets the Krylov count.
  virtual bool solve(const VecX& rhs, double tolerance, VecX& dx, int& iterations) = 0;
};

std::unique_ptr<NewtonSystem> make_newton_system(const ConicQp& problem,
                                                 const InteriorPointOptions& options);

}  // namespace moreau::conic::detail
