#pragma once
// Sparse LDL^T of a symmetric matrix without pivoting (CHOLMOD, simplicial, AMD ordering),
// private to the conic core. Unlike the LL^T factorizations of the Newton systems it accepts
// an indefinite matrix whose LDL^T exists for every symmetric ordering (a quasi-definite KKT
// matrix, Vanderbei 1995) and exposes the pivots D, from which the inertia (the signs of the
// primal and the dual pivots) and near-zero pivots (dependent rows) are read.
#include <cholmod.h>

#include <Eigen/SparseCore>
#include <vector>

#include "moreau/core/types.hpp"

namespace moreau::conic::detail {

class CholmodLdl {
 public:
  // The lower triangle of the matrix, compressed by column.
  using LowerMatrix = Eigen::SparseMatrix<double, Eigen::ColMajor, int>;

  CholmodLdl();
  ~CholmodLdl();
  CholmodLdl(const CholmodLdl&) = delete;
  CholmodLdl& operator=(const CholmodLdl&) = delete;

  // Fill-reducing ordering and symbolic factorization of the pattern of `lower`: done once
  // per pattern; factorize() then reuses it for every matrix with that pattern. Throws
  // SimulationError when CHOLMOD cannot (out of memory).
  void analyze(const LowerMatrix& lower);
  // Numeric factorization; false on a zero or non-finite pivot.
  bool factorize(const LowerMatrix& lower);
  // The pivots D of the last factorization, indexed by the matrix's own rows (not the
  // elimination order).
  const VecX& pivots() const { return pivots_; }
  // x = (L D L^T)^-1 b; false when CHOLMOD fails or x is not finite.
  bool solve(const VecX& b, VecX& x);

 private:
  // The matrix is factored as the upper triangle of P A P^T, which is what CHOLMOD's simplicial
  // LDL^T reads (the rows of L, in column form): handed a lower triangle and a fill-reducing
  // permutation, cholmod_factorize builds that triangle by a permuted transpose, with fresh
  // memory, at every factorization. Here the permuted triangle's pattern is built once per
  // pattern and refilled through `upper_position_`, and the factor is CHOLMOD's for that
  // triangle in its natural order; the numbers are the same.
  std::vector<int> permutation_;   // row k of P A P^T is row permutation_[k] of A
  std::vector<int> upper_column_;  // the permuted upper triangle, compressed by column
  std::vector<int> upper_row_;
  std::vector<double> upper_value_;
  std::vector<int> upper_position_;  // of each stored entry of `lower` in upper_value_
  cholmod_sparse view(const LowerMatrix& lower) const;
  cholmod_sparse upper_view();

  cholmod_common common_;
  cholmod_factor* factor_ = nullptr;
  // cholmod_solve2's solution and workspaces, kept between solves.
  cholmod_dense* solution_ = nullptr;
  cholmod_dense* workspace_y_ = nullptr;
  cholmod_dense* workspace_e_ = nullptr;
  VecX permuted_;  // P b
  VecX pivots_;
};

}  // namespace moreau::conic::detail
