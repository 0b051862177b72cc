#pragma once
// Sparse LDL^T of a symmetric matrix without pivoting (CHOLMOD, simplicial, AMD ordering),
// private to the conic core. Unlike the LL^T factorizations of the Newton systems it accepts
// an indefinite matrix whose LDL^T exists for every symmetric ordering (a quasi-definite KKT
// matrix, Vanderbei 1995) and exposes the pivots D, from which the inertia (the signs of the
// primal and the dual pivots) and near-zero pivots (dependent rows) are read.
#include <cholmod.h>

#include <Eigen/SparseCore>

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
  // The pivots D, indexed by the matrix's own rows (not the elimination order).
  VecX pivots() const;
  // x = (L D L^T)^-1 b; false when CHOLMOD fails or x is not finite.
  bool solve(const VecX& b, VecX& x);

 private:
  cholmod_sparse view(const LowerMatrix& lower) const;

  cholmod_common common_;
  cholmod_factor* factor_ = nullptr;
};

}  // namespace moreau::conic::detail
