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
// before the method starts (equality_rows.cpp), not regularized.
//
// The augmented form (InteriorPointOptions::augmented_kkt) applies the same factorization to
// a problem whose N = F^T F is known (QuadraticFactor: F = (theta dt^2)^1/2 M^-1/2 H S in the
// dynamic problem of the Krabbenhoft/NURBS chapter, eq. 4.15): F's rows join A's as rows
// relaxed by the identity, F dx - w = 0, whose elimination gives back (N + C + W^2) dx,
//
//   [ C + W^2 + D_p     F^T         A^T     ]
//   [      F         -I - D_f               ]
//   [      A                     -E - D_d   ].
//
// That is the chapter's mixed form eq. 4.8 (forces and displacements both unknown) in the
// interior point method's Newton step. Its nonzeros are the contacts' 2 x 2 blocks and F's six
// entries per contact column: every contact couples two bodies, so it stays as sparse as the
// contact graph, while N + C + W^2 couples every pair of contacts of a body (a dense clique of
// ~70 rows for a non-convex particle with 35 contacts), and the body-space form
// K = I + F (C + W^2)^-1 F^T (body_space_system.cpp) fixes the elimination order, contacts
// first, whose pivots C + W^2 vanish on closed rigid contacts near the solution and blow up
// K's entries along stiff chains. Here the ordering is AMD's, the pivots are bounded below by
// the regularization, taken relative to diag(C + W^2 + F^T F) (the diagonal of the eliminated
// Newton matrix) with its own delta (kAugmentedRegularization), and the refinement on the
// unregularized matrix recovers the digits.
#include <Eigen/Eigenvalues>
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
// The augmented form's: just above rounding (50 epsilon). Its pivots C + W^2 of closed rigid
// contacts fall to rounding relative to the diagonal near the solution (W^2 ~ mu / x^2), and
// 1e-8 there makes the regularized matrix differ from the true one along every such contact,
// hundreds of directions that the refinement then needs 40 GMRES iterations for, stalling at
// 1e-12 (200 compacted disks, variational_step_benchmark: 45 Newton steps per time step
// against 24 with 50 epsilon, one step diverged); 50 epsilon keeps the pivots' signs
// (0 does not: 4 of 4 steps failed there) and the refinement takes 1-10 iterations to 1e-14.
constexpr double kAugmentedRegularization = 1e-14;
// Iterative refinement (GMRES-accelerated, refinement_gmres.hpp): until the equilibrated
// residual is at this fraction of the equilibrated right-hand side (rounding), or after
// kMaxRefinements solves.
constexpr double kRefinementTarget = 1e-14;
constexpr int kMaxRefinements = 40;
constexpr double kBlockDominance = 100.0;

class QuasiDefiniteSystem final : public KktSystem {
 public:
  QuasiDefiniteSystem(const ConicQp& problem, bool augmented)
      : problem_(problem),
        dims_(problem.cone_dimensions),
        offsets_(cone_offsets(problem.cone_dimensions)),
        n_(problem.size()),
        augmented_(augmented),
        regularization_(augmented ? kAugmentedRegularization : kRegularization),
        factor_rows_(augmented ? problem.hessian->factor()->blocks() *
                                     problem.hessian->factor()->block_rows()
                               : 0),
        m_(factor_rows_ + static_cast<int>(problem.equality.rows())),
        h_diagonal_(n_),
        n_diagonal_(VecX::Zero(n_)),
        primal_regularization_(n_),
        dual_regularization_(m_),
        weights_(n_ + m_) {
    assemble_rows();
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
      h_diagonal_(j) = values[diagonal_[j]] + n_diagonal_(j);
      if (!(h_diagonal_(j) > 0.0) || !std::isfinite(h_diagonal_(j))) return false;
      primal_regularization_(j) = regularization_ * h_diagonal_(j);
      values[diagonal_[j]] += primal_regularization_(j);
      weights_(j) = 1.0 / std::sqrt(h_diagonal_(j));
    }
    // diag(A diag(H)^-1 A^T + E), the scale of the dual rows (A has no zero row:
    // equality_rows.cpp; a zero row of F has E = 1).
    for (int i = 0; i < m_; ++i) {
      const double relaxation = relaxation_(i);
      double schur = relaxation;
      for (SparseMatrix::InnerIterator it(rows_, i); it; ++it) {
        schur += it.value() * it.value() / h_diagonal_(it.col());
      }
      if (!(schur > 0.0) || !std::isfinite(schur)) return false;
      dual_regularization_(i) = regularization_ * schur;
      values[diagonal_[n_ + i]] = -relaxation - dual_regularization_(i);
      weights_(n_ + i) = 1.0 / std::sqrt(schur);
    }
    find_stiff_directions();
    if (!factor_.factorize(matrix_)) return false;
    // The inertia of a quasi-definite matrix: n positive pivots (H + D_p), m negative. A
    // wrong sign means H + D_p is not positive definite in rounding.
    const VecX& d = factor_.pivots();
    return (d.head(n_).array() > 0.0).all() && (d.tail(m_).array() < 0.0).all();
  }

  bool solve(const VecX& rhs, const VecX& equality_rhs, double /*tolerance*/, bool /*warm_start*/,
             VecX& dx, VecX& dz, int& iterations) override {
    iterations = 0;
    VecX b(n_ + m_);
    b << rhs, VecX::Zero(factor_rows_), equality_rhs;
    if (!b.allFinite()) return false;
    VecX d;
    const RefinementResult refined = refine_with_gmres(
        [this](const VecX& v, VecX& out) { out = apply_kkt(v); },
        [this](const VecX& v, VecX& out) { return factor_.solve(v, out); }, weights_, b,
        kRefinementTarget * weights_.cwiseProduct(b).norm(), kMaxRefinements, d);
    if (!refined.solved) return false;
    resolve_cone_blocks(b, d);
    dx = d.head(n_);
    dz = -d.tail(m_ - factor_rows_);
    return true;
  }

  bool has_stiff_directions() const override { return !stiff_.empty(); }

  VecX stiff_projection(const VecX& v) const override {
    VecX out = VecX::Zero(v.size());
    for (const StiffDirections& s : stiff_) {
      Vec3 r = Vec3::Zero();
      r.head(s.dim) = v.segment(s.offset, s.dim);
      Vec3 projected = Vec3::Zero();
      for (int e = 0; e < s.dim; ++e) {
        if (s.inverse_values(e) != 0.0) projected += s.vectors.col(e) * s.vectors.col(e).dot(r);
      }
      out.segment(s.offset, s.dim) = projected.head(s.dim);
    }
    return out;
  }

 private:
  // K d with the unregularized K = K_reg - diag(D_p, -D_d) (E stays: it is part of K).
  VecX apply_kkt(const VecX& d) const {
    VecX out = matrix_.selfadjointView<Eigen::Lower>() * d;
    out.head(n_) -= primal_regularization_.cwiseProduct(d.head(n_));
    out.tail(m_) += dual_regularization_.cwiseProduct(d.tail(m_));
    return out;
  }

  // A correction of the primal rows along the stiff directions of each cone's block: with
  // B_k = sum_e lambda_e v_e v_e^T the cone's diagonal block of the unregularized K and r the
  // residual b - K d, d_k += sum over lambda_e > kBlockDominance c_k of v_e (v_e^T r_k) /
  // lambda_e, c_k the cone rows' coupling (sum of their squared entries in the dual rows over
  // their relaxation: diag(F^T F) in the augmented form). Refinement stops at rounding in the
  // equilibrated residual, i.e. at ~epsilon sqrt(h_j) |S b| in row j; near the solution W^2
  // grows like 1/mu along the direction in which a contact opens or slides (h_j to 1e15
  // relative, measured on disk columns), and that error lands in the next iterate's primal
  // residual (1e-8 of |r|, above the tolerance). Solving along those directions for the fixed
  // coupling variables recovers their digits; the coupling rows then change by at most
  // 1 / kBlockDominance of the residual removed. A sliding contact's block has one such
  // direction (its other eigenvalue ~ mu), an opening one two. The rounding that remains in
  // those rows, epsilon times the block's entries, the interior point method keeps out of its
  // primal residual by taking dy from the primal row along the same directions
  // (stiff_projection).
  void resolve_cone_blocks(const VecX& b, VecX& d) const {
    if (stiff_.empty()) return;
    const VecX residual = b - apply_kkt(d);
    for (const StiffDirections& s : stiff_) {
      Vec3 r = Vec3::Zero();
      r.head(s.dim) = residual.segment(s.offset, s.dim);
      const Vec3 correction = s.vectors * s.inverse_values.cwiseProduct(s.vectors.transpose() * r);
      d.segment(s.offset, s.dim) += correction.head(s.dim);
    }
  }

  // The cones whose block has an eigenvalue above kBlockDominance times its coupling, with
  // those eigen-directions (the block is that of the Newton step, the same for its solves).
  // trace(B_k) bounds the largest eigenvalue: most cones are skipped without an eigen-solve.
  void find_stiff_directions() {
    stiff_.clear();
    const double* values = matrix_.valuePtr();
    for (std::size_t k = 0; k < dims_.size(); ++k) {
      const int dim = dims_[k], o = offsets_[k];
      double coupling = 0.0, trace = 0.0;
      for (int c = 0; c < dim; ++c) {
        coupling += coupling_(o + c);
        trace += values[diagonal_[o + c]] - primal_regularization_(o + c);
      }
      if (!std::isfinite(coupling) || !(trace > kBlockDominance * coupling)) continue;
      Mat3 block = Mat3::Identity();
      for (int c = 0; c < dim; ++c) {
        for (int a = c; a < dim; ++a)
          block(a, c) = block(c, a) = values[block_entries_[k][3 * c + a]];
        block(c, c) -= primal_regularization_(o + c);
      }
      StiffDirections directions{o, dim, Mat3::Zero(), Vec3::Zero()};
      if (dim == 1) {
        directions.vectors(0, 0) = 1.0;
        directions.inverse_values(0) = block(0, 0);
      } else if (dim == 2) {
        Eigen::SelfAdjointEigenSolver<Eigen::Matrix2d> eigen;
        eigen.computeDirect(block.topLeftCorner<2, 2>());
        directions.vectors.topLeftCorner<2, 2>() = eigen.eigenvectors();
        directions.inverse_values.head<2>() = eigen.eigenvalues();
      } else {
        Eigen::SelfAdjointEigenSolver<Mat3> eigen;
        eigen.computeDirect(block);
        directions.vectors = eigen.eigenvectors();
        directions.inverse_values = eigen.eigenvalues();
      }
      for (int e = 0; e < dim; ++e) {
        const double lambda = directions.inverse_values(e);
        directions.inverse_values(e) = lambda > kBlockDominance * coupling ? 1.0 / lambda : 0.0;
      }
      stiff_.push_back(directions);
    }
  }

  // The dual rows [F; A] (F only in the augmented form) and their relaxation [I; E]; in the
  // augmented form also diag(N) = diag(F^T F), the column norms of F squared.
  void assemble_rows() {
    relaxation_ = VecX::Zero(m_);
    relaxation_.head(factor_rows_).setOnes();
    if (problem_.equality_relaxation.size() > 0)
      relaxation_.tail(m_ - factor_rows_) = problem_.equality_relaxation;
    if (!augmented_) {
      rows_ = problem_.equality;
      // N's couplings between cones are inside the matrix: no block correction.
      coupling_ = VecX::Constant(n_, std::numeric_limits<double>::infinity());
      return;
    }
    const QuadraticFactor& factor = *problem_.hessian->factor();
    const int block_rows = factor.block_rows();
    std::vector<Eigen::Triplet<double>> triplets;
    triplets.reserve(2 * static_cast<std::size_t>(block_rows) * static_cast<std::size_t>(n_) +
                     static_cast<std::size_t>(problem_.equality.nonZeros()));
    std::array<int, 2> block;
    std::array<QuadraticFactor::Columns, 2> columns;
    for (std::size_t k = 0; k < dims_.size(); ++k) {
      factor.cone_columns(offsets_[k], dims_[k], block, columns);
      for (int side = 0; side < 2; ++side) {
        if (block[side] < 0) continue;
        for (int c = 0; c < dims_[k]; ++c) {
          for (int r = 0; r < block_rows; ++r) {
            const double value = columns[side](r, c);
            if (value == 0.0) continue;
            triplets.emplace_back(block[side] * block_rows + r, offsets_[k] + c, value);
            n_diagonal_(offsets_[k] + c) += value * value;
          }
        }
      }
    }
    for (int i = 0; i < problem_.equality.rows(); ++i) {
      for (SparseMatrix::InnerIterator it(problem_.equality, i); it; ++it)
        triplets.emplace_back(factor_rows_ + i, static_cast<int>(it.col()), it.value());
    }
    rows_.resize(m_, n_);
    rows_.setFromTriplets(triplets.begin(), triplets.end());
    coupling_ = VecX::Zero(n_);
    for (int i = 0; i < m_; ++i) {
      for (SparseMatrix::InnerIterator it(rows_, i); it; ++it) {
        coupling_(it.col()) += relaxation_(i) > 0.0 ? it.value() * it.value() / relaxation_(i)
                                                    : std::numeric_limits<double>::infinity();
      }
    }
  }

  // The lower triangle of K's pattern: N's (unless augmented), the cone blocks and the diagonal
  // on the primal rows, [F; A] below them, the diagonal on the dual rows; base_values_ holds
  // N + C and [F; A].
  void assemble_pattern() {
    const SparseMatrix n_matrix = augmented_ ? SparseMatrix(n_, n_) : problem_.hessian->assemble();
    std::vector<Eigen::Triplet<double>> triplets;
    triplets.reserve(static_cast<std::size_t>(n_matrix.nonZeros() + rows_.nonZeros()) +
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
      for (SparseMatrix::InnerIterator it(rows_, i); it; ++it) {
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
  bool augmented_;
  double regularization_;            // delta (above)
  int factor_rows_;                  // rows of F leading the dual rows (augmented form), else 0
  int m_;                            // dual rows: F's and A's
  SparseMatrix rows_;                // [F; A]
  VecX relaxation_;                  // [I; E]
  CholmodLdl::LowerMatrix matrix_;   // K_reg, lower triangle
  std::vector<double> base_values_;  // N + C and A on the pattern
  std::vector<int> diagonal_;        // position of each diagonal entry
  std::vector<std::array<int, 9>> block_entries_;  // cone block entries (a >= b)
  VecX h_diagonal_;                                // diag(N + C + W^2)
  VecX n_diagonal_;                                // diag(F^T F) (augmented), else 0
  VecX primal_regularization_;                     // D_p
  VecX dual_regularization_;                       // D_d
  VecX weights_;                                   // the equilibration S
  struct StiffDirections {
    int offset;
    int dim;
    Mat3 vectors;         // columns: the block's eigenvectors (first dim entries)
    Vec3 inverse_values;  // 1 / eigenvalue along a stiff direction, else 0
  };
  std::vector<StiffDirections> stiff_;  // of the current Newton step
  VecX coupling_;  // per primal row: sum over dual rows of (row entry)^2 / relaxation
  CholmodLdl factor_;
};

}  // namespace

std::unique_ptr<KktSystem> make_quasi_definite_system(const ConicQp& problem, bool augmented) {
  return std::make_unique<QuasiDefiniteSystem>(problem, augmented);
}

}  // namespace moreau::conic::detail
