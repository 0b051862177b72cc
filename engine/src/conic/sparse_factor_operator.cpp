#include <cmath>
#include <string>

#include "moreau/conic/conic_qp.hpp"
#include "moreau/core/error.hpp"

namespace moreau::conic {

SparseFactorOperator::SparseFactorOperator(SparseMatrix factor, int block_rows) {
  if (block_rows < 1 || block_rows > 6) {
    throw InputError("SparseFactorOperator: block_rows = " + std::to_string(block_rows) +
                     " must lie in 1..6");
  }
  if (factor.rows() % block_rows != 0) {
    throw InputError("SparseFactorOperator: F has " + std::to_string(factor.rows()) +
                     " rows, not a multiple of block_rows = " + std::to_string(block_rows));
  }
  factor.makeCompressed();
  for (Eigen::Index i = 0; i < factor.nonZeros(); ++i) {
    if (!std::isfinite(factor.valuePtr()[i]))
      throw InputError("SparseFactorOperator: F is not finite");
  }
  factor_.rows = block_rows;
  factor_.transpose = factor.transpose();
  factor_.factor = std::move(factor);
  // The body-space Newton system needs each column in at most two blocks (a cone's columns
  // together: checked where the cones are known, cone_columns).
  std::array<int, 2> block;
  std::array<QuadraticFactor::Columns, 2> columns;
  for (Eigen::Index column = 0; column < factor_.transpose.rows(); ++column)
    factor_.cone_columns(static_cast<int>(column), 1, block, columns);
}

void SparseFactorOperator::apply(const VecX& x, VecX& y) const {
  factor_.apply(x, work_);
  factor_.apply_transpose(work_, y);
}

Mat3 SparseFactorOperator::diagonal_block(int offset, int dim) const {
  std::array<int, 2> block;
  std::array<QuadraticFactor::Columns, 2> columns;
  factor_.cone_columns(offset, dim, block, columns);
  Mat3 out = Mat3::Zero();
  for (int side = 0; side < 2; ++side) {
    if (block[side] < 0) continue;
    out.topLeftCorner(dim, dim) +=
        columns[side].leftCols(dim).transpose() * columns[side].leftCols(dim);
  }
  return out;
}

SparseMatrix SparseFactorOperator::assemble() const {
  return SparseMatrix(factor_.transpose * factor_.factor);
}

// Rows [offset, offset + dim) of F^T, sorted into at most two row blocks of F.
void SparseFactorOperator::Factor::cone_columns(int offset, int dim, std::array<int, 2>& block,
                                                std::array<Columns, 2>& columns) const {
  block = {-1, -1};
  columns[0].setZero();
  columns[1].setZero();
  for (int a = 0; a < dim; ++a) {
    for (SparseMatrix::InnerIterator it(transpose, offset + a); it; ++it) {
      const int b = static_cast<int>(it.col()) / rows;
      int side = block[0] == b ? 0 : block[1] == b ? 1 : -1;
      if (side < 0) {
        side = block[0] < 0 ? 0 : block[1] < 0 ? 1 : -1;
        if (side < 0) {
          throw InputError("SparseFactorOperator: column " + std::to_string(offset + a) +
                           " of F touches more than two blocks");
        }
        block[side] = b;
      }
      columns[side](static_cast<int>(it.col()) % rows, a) = it.value();
    }
  }
}

}  // namespace moreau::conic
