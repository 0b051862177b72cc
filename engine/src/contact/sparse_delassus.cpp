#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <utility>

#include "moreau/contact/delassus.hpp"
#include "moreau/core/error.hpp"

namespace moreau {

namespace {

// Below this many stored entries one product costs less than an OpenMP fork/join.
constexpr Eigen::Index kParallelNonZeros = 20000;

// Relative asymmetry |W_jk - W_kj| / max|W| accepted from a stored matrix (rounding in the
// file's writer). update_sweep reads column blocks as row blocks and relies on symmetry.
constexpr double kSymmetryTolerance = 1e-10;

}  // namespace

SparseDelassus::SparseDelassus(SparseMatrix matrix, int rows_per_contact)
    : matrix_(std::move(matrix)), rows_per_contact_(rows_per_contact), contact_count_(0) {
  if (rows_per_contact < 1 || rows_per_contact > 3) {
    throw InputError("SparseDelassus: rows_per_contact = " + std::to_string(rows_per_contact) +
                     " must be 1, 2 or 3");
  }
  if (matrix_.rows() != matrix_.cols()) {
    throw InputError("SparseDelassus: W is " + std::to_string(matrix_.rows()) + " x " +
                     std::to_string(matrix_.cols()) + ", it must be square");
  }
  if (matrix_.rows() % rows_per_contact != 0) {
    throw InputError(
        "SparseDelassus: size " + std::to_string(matrix_.rows()) +
        " is not a multiple of rows_per_contact = " + std::to_string(rows_per_contact));
  }
  matrix_.makeCompressed();
  contact_count_ = static_cast<int>(matrix_.rows() / rows_per_contact);

  double largest = 0.0;
  for (Eigen::Index k = 0; k < matrix_.nonZeros(); ++k) {
    const double value = matrix_.valuePtr()[k];
    if (!std::isfinite(value)) throw InputError("SparseDelassus: W has a non-finite entry");
    largest = std::max(largest, std::abs(value));
  }
  const SparseMatrix transpose = matrix_.transpose();
  const SparseMatrix asymmetry = matrix_ - transpose;
  for (Eigen::Index row = 0; row < asymmetry.outerSize(); ++row) {
    for (SparseMatrix::InnerIterator it(asymmetry, row); it; ++it) {
      if (std::abs(it.value()) > kSymmetryTolerance * largest) {
        std::ostringstream message;
        message << "SparseDelassus: W is not symmetric: W(" << it.row() << ", " << it.col()
                << ") - W(" << it.col() << ", " << it.row() << ") = " << it.value();
        throw InputError(message.str());
      }
    }
  }
}

void SparseDelassus::apply(const VecX& x, VecX& y) const {
  const Eigen::Index n = matrix_.rows();
  y.resize(n);
  const int* outer = matrix_.outerIndexPtr();
  const int* inner = matrix_.innerIndexPtr();
  const double* values = matrix_.valuePtr();
  // Row-major storage: each output entry is one independent dot product, so the parallel
  // result is bitwise identical to the serial one.
#pragma omp parallel for schedule(static) if (matrix_.nonZeros() > kParallelNonZeros)
  for (Eigen::Index row = 0; row < n; ++row) {
    double sum = 0.0;
    for (int k = outer[row]; k < outer[row + 1]; ++k) sum += values[k] * x[inner[k]];
    y[row] = sum;
  }
}

Mat3 SparseDelassus::diagonal_block(int contact) const {
  Mat3 block = Mat3::Zero();
  const int first = contact * rows_per_contact_;
  for (int a = 0; a < rows_per_contact_; ++a) {
    for (SparseMatrix::InnerIterator it(matrix_, first + a); it; ++it) {
      const Eigen::Index b = it.col() - first;
      if (b >= 0 && b < rows_per_contact_) block(a, b) = it.value();
    }
  }
  return block;
}

// work = W r.
void SparseDelassus::begin_sweep(const VecX& r, VecX& work) const { apply(r, work); }

Vec3 SparseDelassus::local_velocity(int contact, const VecX& work) const {
  Vec3 u = Vec3::Zero();
  u.head(rows_per_contact_) = work.segment(contact * rows_per_contact_, rows_per_contact_);
  return u;
}

// work += W(:, block) dr, read as W(block, :)^T dr by symmetry (rows are what the row-major
// storage gives in O(entries of the block)).
void SparseDelassus::update_sweep(int contact, const Vec3& dr, VecX& work) const {
  const int first = contact * rows_per_contact_;
  for (int a = 0; a < rows_per_contact_; ++a) {
    if (dr[a] == 0.0) continue;
    for (SparseMatrix::InnerIterator it(matrix_, first + a); it; ++it) {
      work[it.col()] += it.value() * dr[a];
    }
  }
}

}  // namespace moreau
