#include "cholmod_ldl.hpp"

#include <algorithm>

#include "moreau/core/error.hpp"

namespace moreau::conic::detail {

CholmodLdl::CholmodLdl() {
  cholmod_start(&common_);
  common_.print = 0;  // failures are reported by the return values
  common_.error_handler = nullptr;
  // Simplicial LDL^T kept as such: CHOLMOD's supernodal method is LL^T only, and an LL^T of
  // an indefinite matrix does not exist.
  common_.supernodal = CHOLMOD_SIMPLICIAL;
  common_.final_asis = 1;
  // AMD alone (no METIS trial): deterministic and enough for the 2D contact networks here.
  common_.nmethods = 1;
  common_.method[0].ordering = CHOLMOD_AMD;
  common_.postorder = 1;
}

CholmodLdl::~CholmodLdl() {
  if (factor_ != nullptr) cholmod_free_factor(&factor_, &common_);
  cholmod_finish(&common_);
}

cholmod_sparse CholmodLdl::view(const LowerMatrix& lower) const {
  cholmod_sparse a{};
  a.nrow = static_cast<size_t>(lower.rows());
  a.ncol = static_cast<size_t>(lower.cols());
  a.nzmax = static_cast<size_t>(lower.nonZeros());
  a.p = const_cast<int*>(lower.outerIndexPtr());
  a.i = const_cast<int*>(lower.innerIndexPtr());
  a.x = const_cast<double*>(lower.valuePtr());
  a.stype = -1;  // symmetric, lower triangle stored
  a.itype = CHOLMOD_INT;
  a.xtype = CHOLMOD_REAL;
  a.dtype = CHOLMOD_DOUBLE;
  a.sorted = 1;
  a.packed = 1;
  return a;
}

void CholmodLdl::analyze(const LowerMatrix& lower) {
  if (!lower.isCompressed()) throw SimulationError("CholmodLdl: the matrix must be compressed");
  if (factor_ != nullptr) cholmod_free_factor(&factor_, &common_);
  cholmod_sparse a = view(lower);
  factor_ = cholmod_analyze(&a, &common_);
  if (factor_ == nullptr)
    throw SimulationError("CHOLMOD's symbolic analysis of the KKT matrix failed (out of memory?)");
}

bool CholmodLdl::factorize(const LowerMatrix& lower) {
  cholmod_sparse a = view(lower);
  const int ok = cholmod_factorize(&a, factor_, &common_);
  if (!ok || factor_->minor < factor_->n) return false;
  const VecX d = pivots();
  return d.allFinite() && (d.array() != 0.0).all();
}

VecX CholmodLdl::pivots() const {
  const int n = static_cast<int>(factor_->n);
  const int* perm = static_cast<const int*>(factor_->Perm);
  const int* column = static_cast<const int*>(factor_->p);
  const double* values = static_cast<const double*>(factor_->x);
  VecX d(n);
  // Simplicial LDL^T: each column of L starts with its diagonal entry, which holds D's.
  for (int j = 0; j < n; ++j) d(perm[j]) = values[column[j]];
  return d;
}

bool CholmodLdl::solve(const VecX& b, VecX& x) {
  cholmod_dense rhs{};
  rhs.nrow = static_cast<size_t>(b.size());
  rhs.ncol = 1;
  rhs.nzmax = rhs.nrow;
  rhs.d = rhs.nrow;
  rhs.x = const_cast<double*>(b.data());
  rhs.xtype = CHOLMOD_REAL;
  rhs.dtype = CHOLMOD_DOUBLE;
  cholmod_dense* solution = cholmod_solve(CHOLMOD_A, factor_, &rhs, &common_);
  if (solution == nullptr) return false;
  const double* values = static_cast<const double*>(solution->x);
  x = Eigen::Map<const VecX>(values, b.size());
  cholmod_free_dense(&solution, &common_);
  return x.allFinite();
}

}  // namespace moreau::conic::detail
