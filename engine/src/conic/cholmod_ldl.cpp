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
  if (solution_ != nullptr) cholmod_free_dense(&solution_, &common_);
  if (workspace_y_ != nullptr) cholmod_free_dense(&workspace_y_, &common_);
  if (workspace_e_ != nullptr) cholmod_free_dense(&workspace_e_, &common_);
  cholmod_finish(&common_);
}

namespace {

// A symmetric n x n matrix of `entries` stored entries, compressed by column, seen by CHOLMOD
// without a copy; `stype` -1: its lower triangle, 1: its upper triangle.
cholmod_sparse symmetric_view(std::size_t n, std::size_t entries, const int* column, const int* row,
                              const double* value, int stype, bool sorted) {
  cholmod_sparse a{};
  a.nrow = n;
  a.ncol = n;
  a.nzmax = entries;
  a.p = const_cast<int*>(column);
  a.i = const_cast<int*>(row);
  a.x = const_cast<double*>(value);
  a.stype = stype;
  a.itype = CHOLMOD_INT;
  a.xtype = CHOLMOD_REAL;
  a.dtype = CHOLMOD_DOUBLE;
  a.sorted = sorted ? 1 : 0;
  a.packed = 1;
  return a;
}

}  // namespace

cholmod_sparse CholmodLdl::view(const LowerMatrix& lower) const {
  return symmetric_view(static_cast<std::size_t>(lower.rows()),
                        static_cast<std::size_t>(lower.nonZeros()), lower.outerIndexPtr(),
                        lower.innerIndexPtr(), lower.valuePtr(), -1, true);
}

cholmod_sparse CholmodLdl::upper_view() {
  // Not sorted: each column holds its entries in the order of the permuted transpose.
  return symmetric_view(permutation_.size(), upper_row_.size(), upper_column_.data(),
                        upper_row_.data(), upper_value_.data(), 1, false);
}

void CholmodLdl::analyze(const LowerMatrix& lower) {
  if (!lower.isCompressed()) throw SimulationError("CholmodLdl: the matrix must be compressed");
  if (factor_ != nullptr) cholmod_free_factor(&factor_, &common_);
  const int n = static_cast<int>(lower.rows());

  // The fill-reducing ordering P (AMD, postordered) of the lower triangle.
  cholmod_sparse a = view(lower);
  cholmod_factor* ordering = cholmod_analyze(&a, &common_);
  if (ordering == nullptr)
    throw SimulationError("CHOLMOD's symbolic analysis of the KKT matrix failed (out of memory?)");
  const int* perm = static_cast<const int*>(ordering->Perm);
  permutation_.assign(perm, perm + n);
  cholmod_free_factor(&ordering, &common_);
  std::vector<int> inverse(n);
  for (int k = 0; k < n; ++k) inverse[permutation_[k]] = k;

  // The pattern of the upper triangle of P A P^T: entry (i, j) of A's lower triangle goes to
  // (min(p_i, p_j), max(p_i, p_j)), in the order in which CHOLMOD's permuted transpose
  // (cholmod_ptranspose of a lower triangle) places it, since the rounding of the simplicial
  // factorization follows the order of each column's entries: column c first receives the
  // entries of the earlier permuted columns, then those of its own original column.
  const int* outer = lower.outerIndexPtr();
  const int* inner = lower.innerIndexPtr();
  const int entries = static_cast<int>(lower.nonZeros());
  upper_column_.assign(n + 1, 0);
  for (int j = 0; j < n; ++j)
    for (int k = outer[j]; k < outer[j + 1]; ++k)
      if (inner[k] >= j) ++upper_column_[std::max(inverse[inner[k]], inverse[j]) + 1];
  for (int j = 0; j < n; ++j) upper_column_[j + 1] += upper_column_[j];
  upper_row_.resize(upper_column_[n]);
  upper_value_.assign(upper_column_[n], 0.0);
  upper_position_.assign(entries, -1);  // -1: above the diagonal, not read
  std::vector<int> fill(upper_column_.begin(), upper_column_.end() - 1);
  for (int c = 0; c < n; ++c) {
    const int j = permutation_[c];
    for (int k = outer[j]; k < outer[j + 1]; ++k) {
      if (inner[k] < j) continue;
      const int r = inverse[inner[k]];
      const int q = r > c ? fill[r]++ : fill[c]++;
      upper_row_[q] = r > c ? c : r;
      upper_position_[k] = q;
    }
  }

  // Its symbolic factorization in its own (natural) order, so that cholmod_factorize reads the
  // triangle as it is.
  const int methods = common_.nmethods, postorder = common_.postorder;
  const int order = common_.method[0].ordering;
  common_.nmethods = 1;
  common_.method[0].ordering = CHOLMOD_NATURAL;
  common_.postorder = 0;
  cholmod_sparse upper = upper_view();
  factor_ = cholmod_analyze(&upper, &common_);
  common_.nmethods = methods;
  common_.method[0].ordering = order;
  common_.postorder = postorder;
  if (factor_ == nullptr)
    throw SimulationError("CHOLMOD's symbolic analysis of the KKT matrix failed (out of memory?)");
  if (factor_->ordering != CHOLMOD_NATURAL)
    throw SimulationError("CholmodLdl: CHOLMOD did not keep the permuted matrix's order");
}

bool CholmodLdl::factorize(const LowerMatrix& lower) {
  if (static_cast<std::size_t>(lower.nonZeros()) != upper_position_.size())
    throw SimulationError("CholmodLdl: the matrix's pattern is not the analysed one");
  const double* entries = lower.valuePtr();
  for (std::size_t k = 0; k < upper_position_.size(); ++k)
    if (upper_position_[k] >= 0) upper_value_[upper_position_[k]] = entries[k];
  cholmod_sparse upper = upper_view();
  const int ok = cholmod_factorize(&upper, factor_, &common_);
  if (!ok || factor_->minor < factor_->n) return false;
  const int n = static_cast<int>(factor_->n);
  const int* column = static_cast<const int*>(factor_->p);
  const double* values = static_cast<const double*>(factor_->x);
  pivots_.resize(n);
  // Simplicial LDL^T: each column of L starts with its diagonal entry, which holds D's.
  for (int j = 0; j < n; ++j) pivots_(permutation_[j]) = values[column[j]];
  return pivots_.allFinite() && (pivots_.array() != 0.0).all();
}

bool CholmodLdl::solve(const VecX& b, VecX& x) {
  const auto n = static_cast<Eigen::Index>(permutation_.size());
  permuted_.resize(n);
  for (Eigen::Index k = 0; k < n; ++k) permuted_(k) = b(permutation_[k]);
  cholmod_dense rhs{};
  rhs.nrow = static_cast<size_t>(n);
  rhs.ncol = 1;
  rhs.nzmax = rhs.nrow;
  rhs.d = rhs.nrow;
  rhs.x = permuted_.data();
  rhs.xtype = CHOLMOD_REAL;
  rhs.dtype = CHOLMOD_DOUBLE;
  if (!cholmod_solve2(CHOLMOD_A, factor_, &rhs, nullptr, &solution_, nullptr, &workspace_y_,
                      &workspace_e_, &common_))
    return false;
  const double* values = static_cast<const double*>(solution_->x);
  x.resize(n);
  for (Eigen::Index k = 0; k < n; ++k) x(permutation_[k]) = values[k];
  return x.allFinite();
}

}  // namespace moreau::conic::detail
