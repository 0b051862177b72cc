#pragma once
// The Newton system of the interior point method with its equality constraints (private to
// the engine),
//
//   H dx - A^T dz = rhs,   A dx + E dz = equality_rhs,   H = N + C + W^2,
//
// i.e. the KKT matrix [H A^T; A -E] applied to (dx, -dz) (E: the relaxation of the rows,
// conic_qp.hpp; 0 unless given). Without equality rows it is H dx = rhs
// (newton_system.hpp). Two ways to handle the rows:
// - the dense Schur complement A H^-1 A^T (one solve with H per row, a dense LDL^T): for the
//   matrix-free back-end, which has no matrix to factor, and for few rows;
// - the sparse quasi-definite KKT matrix factored by CHOLMOD (quasi_definite_system.cpp): the
//   direct back-end's way, whose cost grows with the nonzeros instead of the cube of the rows.
#include <memory>
#include <string>
#include <vector>

#include "cholmod_ldl.hpp"
#include "moreau/conic/interior_point.hpp"
#include "newton_system.hpp"

namespace moreau::conic::detail {

class KktSystem {
 public:
  virtual ~KktSystem() = default;
  // W^-2 per cone (see NewtonSystem::set_inverse_scaling), given before set_scaling.
  virtual void set_inverse_scaling(const std::vector<Mat3>& /*inverse_scaling_squared*/) {}
  // Sets W^2 (one block per cone) and prepares the elimination of the rows; `iterations` gets
  // the Krylov iterations spent on it. Returns false when H (or the KKT matrix) is found not
  // positive definite (quasi-definite): its factorization failed.
  virtual bool set_scaling(const std::vector<Mat3>& scaling_squared, int& iterations) = 0;
  // (dx, dz) of the system above; tolerance and warm_start as in NewtonSystem::solve (dx: the
  // previous solution on entry when warm_start). Returns false on a breakdown.
  virtual bool solve(const VecX& rhs, const VecX& equality_rhs, double tolerance, bool warm_start,
                     VecX& dx, VecX& dz, int& iterations) = 0;
  // Whether the last solve met its tolerance (an iterative back-end stops at
  // max_krylov_iterations without).
  virtual bool reached_tolerance() const { return true; }
  // The stiff directions of the cones' Newton blocks found by the last set_scaling: those
  // along which a cone's block of C + W^2 exceeds its coupling to the other rows by far
  // (quasi_definite_system.cpp), where the primal row is solved more accurately than the
  // complementarity row (interior_point.cpp, newton_direction). None unless a back-end finds
  // them.
  virtual bool has_stiff_directions() const { return false; }
  // v projected onto those directions (orthogonally per cone), zero in every other row.
  virtual VecX stiff_projection(const VecX& v) const { return VecX::Zero(v.size()); }
};

// The direct back-end with equality rows (and options.dense_schur_complement unset): the
// sparse quasi-definite KKT matrix; otherwise the NewtonSystem of make_newton_system with the
// dense Schur complement for the rows (none: H dx = rhs alone).
std::unique_ptr<KktSystem> make_kkt_system(const ConicQp& problem,
                                           const InteriorPointOptions& options);
std::unique_ptr<KktSystem> make_schur_complement_system(const ConicQp& problem,
                                                        const InteriorPointOptions& options);
// augmented: N = F^T F enters through F's rows ([C + W^2, F^T, A^T; F, -I, 0; A, 0, -E]),
// otherwise N is assembled into the leading block.
std::unique_ptr<KktSystem> make_quasi_definite_system(const ConicQp& problem, bool augmented);

// The equality rows by themselves (equality_rows.cpp): those linearly dependent on the others
// (numerically: a zero pivot of the LDL^T of A A^T with unit row norms), and the least-norm
// solution of A x = b.
class EqualityRows {
 public:
  explicit EqualityRows(const SparseMatrix& equality);
  // Empty when A has full row rank.
  const std::vector<int>& dependent() const { return dependent_; }
  // x = A^T (A A^T)^-1 b (0 when rows are dependent).
  VecX least_norm_solution(const VecX& b);

 private:
  const SparseMatrix& equality_;
  VecX inverse_norm_;  // 1 / |a_i| (0 for a zero row)
  CholmodLdl factor_;
  std::vector<int> dependent_;
};

}  // namespace moreau::conic::detail
