#include "moreau/conic/conic_qp.hpp"

#include <cmath>
#include <string>

#include "moreau/conic/jordan_algebra.hpp"
#include "moreau/core/error.hpp"

namespace moreau::conic {
namespace {

bool all_finite(const VecX& v) { return v.allFinite(); }

}  // namespace

// SparseDelassus with one row per "contact" checks squareness, finiteness and symmetry and
// provides the (row-parallel, thread-count independent) product.
SparseQuadraticOperator::SparseQuadraticOperator(SparseMatrix matrix)
    : matrix_(std::move(matrix), 1) {}

void SparseQuadraticOperator::apply(const VecX& x, VecX& y) const { matrix_.apply(x, y); }

Mat3 SparseQuadraticOperator::diagonal_block(int offset, int dim) const {
  Mat3 block = Mat3::Zero();
  for (int a = 0; a < dim; ++a) {
    for (SparseMatrix::InnerIterator it(matrix_.matrix(), offset + a); it; ++it) {
      const Eigen::Index b = it.col() - offset;
      if (b >= 0 && b < dim) block(a, b) = it.value();
    }
  }
  return block;
}

std::vector<int> cone_offsets(const std::vector<int>& cone_dimensions) {
  std::vector<int> offsets(cone_dimensions.size() + 1, 0);
  for (std::size_t k = 0; k < cone_dimensions.size(); ++k) {
    offsets[k + 1] = offsets[k] + cone_dimensions[k];
  }
  return offsets;
}

void ConicQp::validate() const {
  if (hessian == nullptr) throw InputError("ConicQp.hessian (N) is not set");
  const int n = size();
  int total = 0;
  for (std::size_t k = 0; k < cone_dimensions.size(); ++k) {
    if (!valid_cone_dimension(cone_dimensions[k])) {
      throw InputError("ConicQp.cone_dimensions[" + std::to_string(k) +
                       "] = " + std::to_string(cone_dimensions[k]) + " must be 1, 2 or 3");
    }
    total += cone_dimensions[k];
  }
  if (total != n) {
    throw InputError("ConicQp.cone_dimensions sum to " + std::to_string(total) + ", N has size " +
                     std::to_string(n));
  }
  if (linear.size() != n) {
    throw InputError("ConicQp.linear (r) has " + std::to_string(linear.size()) +
                     " entries, N has size " + std::to_string(n));
  }
  if (!all_finite(linear)) throw InputError("ConicQp.linear (r) has a non-finite entry");
  if (compliance.size() != 0) {
    if (compliance.size() != n) {
      throw InputError("ConicQp.compliance has " + std::to_string(compliance.size()) +
                       " entries, N has size " + std::to_string(n));
    }
    if (!all_finite(compliance) || (compliance.array() < 0.0).any()) {
      throw InputError("ConicQp.compliance must be finite and >= 0");
    }
  }
  if (equality.rows() > 0 || equality_rhs.size() > 0) {
    if (equality.cols() != n || equality.rows() != equality_rhs.size()) {
      throw InputError("ConicQp.equality (A) is " + std::to_string(equality.rows()) + " x " +
                       std::to_string(equality.cols()) + " with " +
                       std::to_string(equality_rhs.size()) +
                       " right-hand sides (b); it must be rows x " + std::to_string(n));
    }
    for (Eigen::Index k = 0; k < equality.nonZeros(); ++k) {
      if (!std::isfinite(equality.valuePtr()[k])) {
        throw InputError("ConicQp.equality (A) has a non-finite entry");
      }
    }
    if (!all_finite(equality_rhs)) {
      throw InputError("ConicQp.equality_rhs (b) has a non-finite entry");
    }
  }
  if (equality_relaxation.size() != 0) {
    if (equality_relaxation.size() != equality.rows()) {
      throw InputError("ConicQp.equality_relaxation (E) has " +
                       std::to_string(equality_relaxation.size()) + " entries, A has " +
                       std::to_string(equality.rows()) + " rows");
    }
    if (!all_finite(equality_relaxation) || (equality_relaxation.array() < 0.0).any()) {
      throw InputError("ConicQp.equality_relaxation (E) must be finite and >= 0");
    }
  }
}

}  // namespace moreau::conic
