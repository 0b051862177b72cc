// The equality rows A x = b by themselves, before the interior point method starts: which rows
// are linearly dependent, and the least-norm solution of A x = b for the initial point.
//
// A row that is a linear combination of the others leaves the multipliers z non-unique for
// every H (the Schur complement A H^-1 A^T is then singular, and a regularized KKT
// factorization would pick one z silently). In the static problem of the Krabbenhoft/NURBS
// chapter (eq. 4.16) z are the particles' displacements, and a dependent row is a mechanism: a
// particle whose contacts cannot resist one of its motions (a polygon held by two frictionless
// contacts, a loaded row that no force reaches).
//
// Both come from the LDL^T of M = D A A^T D (D = diag(1 / |a_i|), unit diagonal) without
// pivoting. M is positive semi-definite, and in exact arithmetic it has exactly rank(A)
// nonzero pivots whatever the elimination order; every pivot is at least the smallest
// eigenvalue of M (it is a Schur complement of a leading block). Rounding leaves the zero
// pivots of dependent rows at ~epsilon |M|; kDependentPivot separates them from the pivots of
// independent rows, which are at least sigma_min(D A)^2: a row counts as dependent when it
// lies within an angle of ~sqrt(kDependentPivot) = 1e-6 of the span of the others.
#include <Eigen/SparseCore>
#include <cmath>

#include "kkt_system.hpp"

namespace moreau::conic::detail {
namespace {

constexpr double kDependentPivot = 1e-12;
// A shift far below kDependentPivot keeps an exactly zero pivot (CHOLMOD stops at one) away.
constexpr double kShift = 1e-14;

}  // namespace

EqualityRows::EqualityRows(const SparseMatrix& equality)
    : equality_(equality), inverse_norm_(equality.rows()) {
  const int m = static_cast<int>(equality.rows());
  for (int i = 0; i < m; ++i) {
    const double norm = equality.row(i).norm();
    inverse_norm_(i) = norm > 0.0 ? 1.0 / norm : 0.0;
  }
  const SparseMatrix scaled = inverse_norm_.asDiagonal() * equality;
  const SparseMatrix gram = scaled * SparseMatrix(scaled.transpose());
  CholmodLdl::LowerMatrix lower = CholmodLdl::LowerMatrix(gram).triangularView<Eigen::Lower>();
  for (int i = 0; i < m; ++i) lower.coeffRef(i, i) += kShift;  // a zero row has no entry yet
  lower.makeCompressed();
  factor_.analyze(lower);
  if (!factor_.factorize(lower)) {
    // Not expected with the shift; count every row as suspect rather than none.
    for (int i = 0; i < m; ++i) dependent_.push_back(i);
    return;
  }
  const VecX& pivots = factor_.pivots();
  for (int i = 0; i < m; ++i) {
    if (pivots(i) < kDependentPivot) dependent_.push_back(i);
  }
}

VecX EqualityRows::least_norm_solution(const VecX& b) {
  VecX w;
  if (!dependent_.empty() || !factor_.solve(inverse_norm_.cwiseProduct(b), w)) {
    return VecX::Zero(equality_.cols());
  }
  return equality_.transpose() * inverse_norm_.cwiseProduct(w);
}

}  // namespace moreau::conic::detail
