// The Newton system with equality rows (kkt_system.hpp) as one sparse symmetric quasi-definite
// matrix (Vanderbei 1995; the primal-dual regularization of Friedlander & Orban 2012, as in
// ECOS and Clarabel),
//
//   K_reg = [ H + D_p    A^T      ]      H = N + C + W^2,  D_p = delta diag(H),
//           [   A      -E - D_d   ]      D_d = delta diag(A diag(H)^-1 A^T + E),
//
// (E the relaxation of the equality rows, conic_qp.hpp; 0 for plain equalities)
// factored by CHOLMOD's simplicial LDL^T once per Newton step (the fill-reducing ordering is
// computed once: the pattern never changes), and solved with iterative refinement on the
// unregularized K (D_p = D_d = 0).
//
// Why this form: in the static problem of the Krabbenhoft/NURBS chapter (eq. 4.16) N = 0 and A
// has three equilibrium rows per particle. The dense Schur complement A H^-1 A^T of
// schur_complement_system.cpp costs one solve per row and a dense factorization, cubic in the
// particles; K_reg has the nonzeros of H (one block per contact) and of A (six per contact
// column), and its LDL^T eliminates the contact variables into a pattern like a stiffness
// matrix's. And where a particle's rows are nearly dependent in A H^-1 A^T (a polygon held by
// two contacts, a contact that opens as mu -> 0 so that its columns vanish from H^-1), the
// Schur complement loses definiteness in rounding; K_reg stays quasi-definite (H + D_p > 0,
// D_d > 0), so its LDL^T exists for every symmetric ordering and its pivots have known signs
// (n positive, m negative), without numerical pivoting.
//
// The regularization sizes: delta = 1e-8 relative to the diagonals, i.e. delta in the
// Jacobi-equilibrated matrix S K S (S = diag(H)^-1/2 on the primal rows, diag(A diag(H)^-1
// A^T)^-1/2 on the dual rows), the static regularization of ECOS (7e-8) and Clarabel (1e-8) on
// their equilibrated systems: about sqrt(epsilon), large enough that the pivots of a
// dependent direction stay ~delta instead of rounding to either sign, small enough that the
// regularized solution is already accurate to ~delta where the rows are independent.
// Proportional to the diagonals it is invariant to the units of forces and displacements
// (k_N from 1e5 to infinity, N/m and m here). Iterative refinement on the unregularized K then
// removes the regularization's error: each step multiplies it by ~delta / (delta + s), s the
// relative size of the direction's pivot, down to rounding where the rows are independent;
// along a nearly dependent direction (s << delta) it converges slowly and the remaining error
// goes into the next Newton step's residuals, which the interior point method removes like
// an inexact Newton step. Rows dependent in A itself (a mechanism: every H) are refused
// before the method starts (equality_rank.cpp), not regularized.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "cholmod_ldl.hpp"
#include "kkt_system.hpp"
#include "refinement_gmres.hpp"

namespace moreau::conic::detail {
namespace {

// The regularization relative to the diagonals (see above).
constexpr double kRegularization = 1e-8;
// Iterative refinement (GMRES-accelerated, refinement_gmres.hpp): until the equilibrated
// residual is at this fraction of the equilibrated right-hand side (rounding), or after
// kMaxRefinements solves.
constexpr double kRefinementTarget = 1e-14;
constexpr int kMaxRefinements = 40;

class QuasiDefiniteSystem final : public KktSystem {
 public:
  explicit QuasiDefiniteSystem(const ConicQp& problem)
      : problem_(problem),
        dims_(problem.cone_dimensions),
        offsets_(cone_offsets(problem.cone_dimensions)),
        n_(problem.size()),
        m_(static_cast<int>(problem.equality.rows())),
        h_diagonal_(n_),
        primal_regularization_(n_),
        dual_regularization_(m_),
        weights_(n_ + m_) {
    assemble_pattern();
    factor_.analyze(matrix_);
  }

  bool set_scaling(const std::vector<Mat3>& scaling_squared, int& iterations) override {
    iterations = 0;
    double* values = matrix_.valuePtr();
    std::copy(base_values_.begin(), base_values_.end(), values);
    for (std::size_t k = 0; k < dims_.size(); ++k) {
      for (int b = 0; b < dims_[k]; ++b) {
        for (int a = b; a < dims_[k]; ++a)
          values[block_entries_[k][3 * b + a]] += scaling_squared[k](a, b);
      }
    }
    for (int j = 0; j < n_; ++j) {
      h_diagonal_(j) = values[diagonal_[j]];
      if (!(h_diagonal_(j) > 0.0) || !std::isfinite(h_diagonal_(j))) return false;
      primal_regularization_(j) = kRegularization * h_diagonal_(j);
      values[diagonal_[j]] += primal_regularization_(j);
      weights_(j) = 1.0 / std::sqrt(h_diagonal_(j));
    }
    // diag(A diag(H)^-1 A^T + E), the scale of the dual rows (A has no zero row:
    // equality_rank.cpp).
    const SparseMatrix& a = problem_.equality;
    for (int i = 0; i < m_; ++i) {
      const double relaxation =
          problem_.equality_relaxation.size() > 0 ? problem_.equality_relaxation(i) : 0.0;
      double schur = relaxation;
      for (SparseMatrix::InnerIterator it(a, i); it; ++it) {
        schur += it.value() * it.value() / h_diagonal_(it.col());
      }
      if (!(schur > 0.0) || !std::isfinite(schur)) return false;
      dual_regularization_(i) = kRegularization * schur;
      values[diagonal_[n_ + i]] = -relaxation - dual_regularization_(i);
      weights_(n_ + i) = 1.0 / std::sqrt(schur);
    }
    if (!factor_.factorize(matrix_)) return false;
    // The inertia of a quasi-definite matrix: n positive pivots (H + D_p), m negative. A
    // wrong sign means H + D_p is not positive definite in rounding.
    const VecX d = factor_.pivots();
    return (d.head(n_).array() > 0.0).all() && (d.tail(m_).array() < 0.0).all();
  }

  bool solve(const VecX& rhs, const VecX& equality_rhs, double /*tolerance*/, bool /*warm_start*/,
             VecX& dx, VecX& dz, int& iterations) override {
    iterations = 0;
    VecX b(n_ + m_);
    b << rhs, equality_rhs;
    if (!b.allFinite()) return false;
    VecX d;
    const RefinementResult refined = refine_with_gmres(
        [this](const VecX& v, VecX& out) { out = apply_kkt(v); },
        [this](const VecX& v, VecX& out) { return factor_.solve(v, out); }, weights_, b,
        kRefinementTarget * weights_.cwiseProduct(b).norm(), kMaxRefinements, d);
    if (!refined.solved) return false;
    dx = d.head(n_);
    dz = -d.tail(m_);
    return true;
  }

 private:
  // K d with the unregularized K = K_reg - diag(D_p, -D_d) (E stays: it is part of K).
  VecX apply_kkt(const VecX& d) const {
    VecX out = matrix_.selfadjointView<Eigen::Lower>() * d;
    out.head(n_) -= primal_regularization_.cwiseProduct(d.head(n_));
    out.tail(m_) += dual_regularization_.cwiseProduct(d.tail(m_));
    return out;
  }

  // The lower triangle of K's pattern: N's, the cone blocks and the diagonal on the primal
  // rows, A below them, the diagonal on the dual rows; base_values_ holds N + C and A.
  void assemble_pattern() {
    const SparseMatrix n_matrix = problem_.hessian->assemble();
    std::vector<Eigen::Triplet<double>> triplets;
    triplets.reserve(static_cast<std::size_t>(n_matrix.nonZeros() + problem_.equality.nonZeros()) +
                     6 * dims_.size() + static_cast<std::size_t>(n_ + m_));
    for (int row = 0; row < n_matrix.outerSize(); ++row) {
      for (SparseMatrix::InnerIterator it(n_matrix, row); it; ++it) {
        if (it.col() <= row) triplets.emplace_back(row, static_cast<int>(it.col()), it.value());
      }
    }
    for (std::size_t k = 0; k < dims_.size(); ++k) {
      for (int b = 0; b < dims_[k]; ++b) {
        for (int a = b; a < dims_[k]; ++a)
          triplets.emplace_back(offsets_[k] + a, offsets_[k] + b, 0.0);
      }
    }
    for (int j = 0; j < n_; ++j) {
      triplets.emplace_back(j, j, problem_.compliance.size() > 0 ? problem_.compliance(j) : 0.0);
    }
    for (int i = 0; i < m_; ++i) {
      for (SparseMatrix::InnerIterator it(problem_.equality, i); it; ++it) {
        triplets.emplace_back(n_ + i, static_cast<int>(it.col()), it.value());
      }
      triplets.emplace_back(n_ + i, n_ + i, 0.0);
    }
    matrix_.resize(n_ + m_, n_ + m_);
    matrix_.setFromTriplets(triplets.begin(), triplets.end());
    matrix_.makeCompressed();
    base_values_.assign(matrix_.valuePtr(), matrix_.valuePtr() + matrix_.nonZeros());
    diagonal_.resize(n_ + m_);
    for (int j = 0; j < n_ + m_; ++j) diagonal_[j] = position(j, j);
    block_entries_.resize(dims_.size());
    for (std::size_t k = 0; k < dims_.size(); ++k) {
      for (int b = 0; b < dims_[k]; ++b) {
        for (int a = b; a < dims_[k]; ++a) {
          block_entries_[k][3 * b + a] = position(offsets_[k] + a, offsets_[k] + b);
        }
      }
    }
  }

  // Index of entry (row, column) of the pattern in the value array.
  int position(int row, int column) const {
    const int* begin = matrix_.innerIndexPtr() + matrix_.outerIndexPtr()[column];
    const int* end = matrix_.innerIndexPtr() + matrix_.outerIndexPtr()[column + 1];
    return static_cast<int>(std::lower_bound(begin, end, row) - matrix_.innerIndexPtr());
  }

  const ConicQp& problem_;
  const std::vector<int>& dims_;
  std::vector<int> offsets_;
  int n_;
  int m_;
  CholmodLdl::LowerMatrix matrix_;                 // K_reg, lower triangle
  std::vector<double> base_values_;                // N + C and A on the pattern
  std::vector<int> diagonal_;                      // position of each diagonal entry
  std::vector<std::array<int, 9>> block_entries_;  // cone block entries (a >= b)
  VecX h_diagonal_;                                // diag(H)
  VecX primal_regularization_;                     // D_p
  VecX dual_regularization_;                       // D_d
  VecX weights_;                                   // the equilibration S
  CholmodLdl factor_;
};

}  // namespace

std::unique_ptr<KktSystem> make_quasi_definite_system(const ConicQp& problem) {
  return std::make_unique<QuasiDefiniteSystem>(problem);
}

}  // namespace moreau::conic::detail
