// Validation of FCLIB problems, their conversion to the suite's ConeProblem, the reduction
// of a global problem to a local one, and the FCLIB natural-map merit.
#include <Eigen/CholmodSupport>
#include <Eigen/UmfPackSupport>
#include <algorithm>
#include <cmath>
#include <string>

#include "moreau/core/error.hpp"
#include "moreau/fclib/fclib.hpp"
#include "moreau/solver/cone.hpp"
#include "moreau/solver/merit.hpp"

namespace moreau::fclib {
namespace {

// Relative asymmetry |M_jk - M_kj| / max|M| accepted in a mass matrix: rounding in the
// writer of the file, as for W in SparseDelassus.
constexpr double kMassSymmetryTolerance = 1e-10;

[[noreturn]] void fail(const std::string& where, const std::string& dataset,
                       const std::string& what) {
  throw InputError("FCLIB file " + where + ": " + dataset + ": " + what);
}

std::string size_text(const ColumnMatrix& a) {
  return std::to_string(a.rows()) + " x " + std::to_string(a.cols());
}

void check_finite(const std::string& where, const std::string& dataset, const VecX& values) {
  for (Eigen::Index k = 0; k < values.size(); ++k) {
    if (!std::isfinite(values[k])) {
      fail(where, dataset, "entry " + std::to_string(k) + " is not finite");
    }
  }
}

void check_finite(const std::string& where, const std::string& dataset, const ColumnMatrix& a) {
  for (Eigen::Index k = 0; k < a.nonZeros(); ++k) {
    if (!std::isfinite(a.valuePtr()[k])) fail(where, dataset, "an entry is not finite");
  }
}

void check_size(const std::string& where, const std::string& dataset, Eigen::Index actual,
                Eigen::Index expected, const std::string& because) {
  if (actual != expected) {
    fail(where, dataset,
         "has " + std::to_string(actual) + " entries, expected " + std::to_string(expected) + " (" +
             because + ")");
  }
}

void check_spacedim(const std::string& where, const std::string& root, int spacedim) {
  if (spacedim != 2 && spacedim != 3) {
    fail(where, root + "/spacedim",
         std::to_string(spacedim) + " is not supported (2 or 3 rows per contact)");
  }
}

void check_mu(const std::string& where, const std::string& dataset, const VecX& mu) {
  check_finite(where, dataset, mu);
  for (Eigen::Index k = 0; k < mu.size(); ++k) {
    if (mu[k] < 0.0) {
      fail(where, dataset,
           "entry " + std::to_string(k) + " is " + std::to_string(mu[k]) +
               ", friction coefficients must be >= 0");
    }
  }
}

// Whether M is symmetric to the rounding of the file's writer. FCLIB's sparse layouts have no
// "one triangle stored" flag (fclib.h): the matrix is the one stored, as Siconos reads it. A
// file that stores one triangle only (CubeH8, LMGC_GlobalFrictionContactProblem00046: the upper
// one) thus poses a triangular M, and completing it into a symmetric matrix would solve
// another problem (whose solution has FCLIB merit 0.78 and 0.084 on the stored ones).
bool is_symmetric_mass(const ColumnMatrix& m) {
  double largest = 0.0;
  for (Eigen::Index k = 0; k < m.nonZeros(); ++k) {
    largest = std::max(largest, std::abs(m.valuePtr()[k]));
  }
  const ColumnMatrix transpose = m.transpose();
  const ColumnMatrix asymmetry = m - transpose;
  for (Eigen::Index k = 0; k < asymmetry.nonZeros(); ++k) {
    if (std::abs(asymmetry.valuePtr()[k]) > kMassSymmetryTolerance * largest) return false;
  }
  return true;
}

// Relative asymmetry below which W goes into SparseDelassus (its own acceptance bound).
constexpr double kDelassusSymmetryTolerance = 1e-10;

bool is_symmetric(const ColumnMatrix& w) {
  double largest = 0.0;
  for (Eigen::Index k = 0; k < w.nonZeros(); ++k) {
    largest = std::max(largest, std::abs(w.valuePtr()[k]));
  }
  const ColumnMatrix transpose = w.transpose();
  const ColumnMatrix asymmetry = w - transpose;
  for (Eigen::Index k = 0; k < asymmetry.nonZeros(); ++k) {
    if (std::abs(asymmetry.valuePtr()[k]) > kDelassusSymmetryTolerance * largest) return false;
  }
  return true;
}

// W as stored, without the symmetry SparseDelassus relies on: products by rows, sweep
// updates by columns (a column-major copy), so Gauss-Seidel solves the stored problem.
class UnsymmetricDelassus final : public DelassusOperator {
 public:
  UnsymmetricDelassus(const ColumnMatrix& w, int rows_per_contact)
      : rows_(w),
        columns_(w),
        rows_per_contact_(rows_per_contact),
        contact_count_(static_cast<int>(w.rows()) / rows_per_contact) {
    rows_.makeCompressed();
    columns_.makeCompressed();
  }
  int contact_count() const override { return contact_count_; }
  int rows_per_contact() const override { return rows_per_contact_; }
  void apply(const VecX& x, VecX& y) const override { y = rows_ * x; }
  Mat3 diagonal_block(int contact) const override {
    Mat3 block = Mat3::Zero();
    const int first = contact * rows_per_contact_;
    for (int a = 0; a < rows_per_contact_; ++a) {
      for (SparseMatrix::InnerIterator it(rows_, first + a); it; ++it) {
        const Eigen::Index b = it.col() - first;
        if (b >= 0 && b < rows_per_contact_) block(a, b) = it.value();
      }
    }
    return block;
  }
  void begin_sweep(const VecX& r, VecX& work) const override { apply(r, work); }
  Vec3 local_velocity(int contact, const VecX& work) const override {
    Vec3 u = Vec3::Zero();
    u.head(rows_per_contact_) = work.segment(contact * rows_per_contact_, rows_per_contact_);
    return u;
  }
  void update_sweep(int contact, const Vec3& dr, VecX& work) const override {
    const int first = contact * rows_per_contact_;
    for (int a = 0; a < rows_per_contact_; ++a) {
      if (dr[a] == 0.0) continue;
      for (ColumnMatrix::InnerIterator it(columns_, first + a); it; ++it) {
        work[it.row()] += it.value() * dr[a];
      }
    }
  }
  SparseMatrix assemble() const override { return rows_; }

 private:
  SparseMatrix rows_;
  ColumnMatrix columns_;
  int rows_per_contact_;
  int contact_count_;
};

}  // namespace

void validate(const LocalProblem& problem, const std::string& where) {
  const std::string root = "/fclib_local";
  check_spacedim(where, root, problem.spacedim);
  const Eigen::Index n = problem.spacedim * problem.mu.size();
  const ColumnMatrix& w = problem.W.matrix;
  if (w.rows() != n || w.cols() != n) {
    fail(where, root + "/W",
         "is " + size_text(w) + ", expected " + std::to_string(n) + " x " + std::to_string(n) +
             " (spacedim " + std::to_string(problem.spacedim) + " x " +
             std::to_string(problem.mu.size()) + " contacts in vectors/mu)");
  }
  check_finite(where, root + "/W", w);
  check_size(where, root + "/vectors/q", problem.q.size(), n, "rows of W");
  check_finite(where, root + "/vectors/q", problem.q);
  check_mu(where, root + "/vectors/mu", problem.mu);
  if (problem.V) {
    if (problem.V->matrix.rows() != n) {
      fail(where, root + "/V",
           "is " + size_text(problem.V->matrix) + ", expected " + std::to_string(n) +
               " rows (rows of W)");
    }
    check_finite(where, root + "/V", problem.V->matrix);
  }
  if (problem.R) {
    if (problem.R->matrix.rows() != problem.R->matrix.cols()) {
      fail(where, root + "/R", "is " + size_text(problem.R->matrix) + ", it must be square");
    }
    check_finite(where, root + "/R", problem.R->matrix);
  }
  if (problem.s) check_finite(where, root + "/vectors/s", *problem.s);
}

void validate(const GlobalProblem& problem, const std::string& where) {
  const std::string root = "/fclib_global";
  check_spacedim(where, root, problem.spacedim);
  const Eigen::Index n = problem.spacedim * problem.mu.size();
  const ColumnMatrix& m = problem.M.matrix;
  const ColumnMatrix& h = problem.H.matrix;
  if (m.rows() != m.cols()) fail(where, root + "/M", "is " + size_text(m) + ", not square");
  if (h.rows() != m.rows() || h.cols() != n) {
    fail(where, root + "/H",
         "is " + size_text(h) + ", expected " + std::to_string(m.rows()) + " x " +
             std::to_string(n) + " (dofs of M x spacedim * contacts in vectors/mu)");
  }
  check_finite(where, root + "/M", m);
  check_finite(where, root + "/H", h);
  check_size(where, root + "/vectors/f", problem.f.size(), m.rows(), "dofs of M");
  check_finite(where, root + "/vectors/f", problem.f);
  check_size(where, root + "/vectors/w", problem.w.size(), n, "columns of H");
  check_finite(where, root + "/vectors/w", problem.w);
  check_mu(where, root + "/vectors/mu", problem.mu);
  if (problem.G) {
    if (problem.G->matrix.rows() != m.rows()) {
      fail(where, root + "/G",
           "is " + size_text(problem.G->matrix) + ", expected " + std::to_string(m.rows()) +
               " rows (dofs of M)");
    }
    check_finite(where, root + "/G", problem.G->matrix);
    if (problem.b) {
      check_size(where, root + "/vectors/b", problem.b->size(), problem.G->matrix.cols(),
                 "columns of G");
    }
  }
  if (problem.b) check_finite(where, root + "/vectors/b", *problem.b);
}

LocalSystem::LocalSystem(const LocalProblem& problem) {
  symmetric_ = is_symmetric(problem.W.matrix);
  if (symmetric_) {
    delassus_ = std::make_unique<SparseDelassus>(SparseMatrix(problem.W.matrix), problem.spacedim);
  } else {
    delassus_ = std::make_unique<UnsymmetricDelassus>(problem.W.matrix, problem.spacedim);
  }
  problem_.delassus = delassus_.get();
  problem_.q = problem.q;
  problem_.mu = problem.mu;
  problem_.friction_model = FrictionModel::coulomb;
  problem_.validate();
}

// A square sparse matrix factored once: CHOLMOD when it is symmetric (then it must be positive
// definite), UMFPACK's LU when it is not (then it must be nonsingular).
class SquareFactor {
 public:
  SquareFactor() { cholesky_.cholmod().print = 0; }
  // Returns false when the factorization fails.
  bool compute(const ColumnMatrix& a, bool symmetric) {
    symmetric_ = symmetric;
    if (symmetric_) {
      cholesky_.compute(a);
      return cholesky_.info() == Eigen::Success;
    }
    matrix_ = a;  // UmfPackLU keeps a reference to the matrix it factored
    lu_.compute(matrix_);
    return lu_.info() == Eigen::Success;
  }
  bool symmetric() const { return symmetric_; }
  template <typename Rhs>
  Rhs solve(const Rhs& rhs) const {
    if (symmetric_) return cholesky_.solve(rhs);
    return lu_.solve(rhs);
  }

 private:
  bool symmetric_ = true;
  ColumnMatrix matrix_;
  // Failures are reported as InputError by the caller; CHOLMOD's own messages on stderr would
  // only repeat them.
  Eigen::CholmodDecomposition<ColumnMatrix, Eigen::Lower> cholesky_;
  mutable Eigen::UmfPackLU<ColumnMatrix> lu_;  // UmfPackLU::solve is not const in Eigen 3.4
};

struct GlobalReduction::Factor {
  SquareFactor mass;
  // Schur complement S = G^T M^-1 G of the bilateral constraints, when G is present.
  SquareFactor schur;
};

// Elimination of v (and of lambda when G is present) from the FCLIB global problem
//   M v = H r + G lambda + f,   G^T v + b = 0,   u = H^T v + w.
// Without G: v = M^-1 (H r + f), so W = H^T M^-1 H and q = H^T M^-1 f + w.
// With G, lambda = -S^-1 (G^T M^-1 (H r + f) + b), S = G^T M^-1 G, which gives
//   W = H^T M^-1 H - B^T S^-1 B,   B = G^T M^-1 H,
//   q = H^T M^-1 f + w - B^T S^-1 (G^T M^-1 f + b):
// the Delassus operator of the contacts with the joints' reactions already eliminated.
GlobalReduction::GlobalReduction(const GlobalProblem& problem)
    : factor_(std::make_unique<Factor>()), H_(problem.H.matrix), f_(problem.f) {
  const bool symmetric = is_symmetric_mass(problem.M.matrix);
  if (!factor_->mass.compute(problem.M.matrix, symmetric)) {
    throw InputError(symmetric
                         ? "FCLIB global problem: M is not positive definite (CHOLMOD failed)"
                         : "FCLIB global problem: M (stored unsymmetric) is singular (UMFPACK "
                           "failed)");
  }
  const ColumnMatrix m_inverse_h = factor_->mass.solve(H_);
  ColumnMatrix w = H_.transpose() * m_inverse_h;
  const VecX m_inverse_f = factor_->mass.solve(f_);
  local_.q = H_.transpose() * m_inverse_f + problem.w;
  if (problem.G && problem.G->matrix.cols() > 0) {
    G_ = problem.G->matrix;
    b_ = problem.b ? *problem.b : VecX::Zero(G_.cols());
    m_inverse_g_ = factor_->mass.solve(G_);
    ColumnMatrix schur = G_.transpose() * m_inverse_g_;
    if (symmetric) {
      const ColumnMatrix schur_transpose = schur.transpose();
      schur = 0.5 * (schur + schur_transpose);
    }
    if (!factor_->schur.compute(schur, symmetric)) {
      throw InputError(
          "FCLIB global problem: G^T M^-1 G is singular (the columns of G, the bilateral "
          "constraints, are linearly dependent)");
    }
    const ColumnMatrix coupling = ColumnMatrix(m_inverse_g_.transpose()) * H_;  // B
    const ColumnMatrix schur_inverse_coupling = factor_->schur.solve(coupling);
    w -= ColumnMatrix(coupling.transpose()) * schur_inverse_coupling;
    const VecX constraint_rhs = G_.transpose() * m_inverse_f + b_;
    local_.q -= coupling.transpose() * factor_->schur.solve(constraint_rhs);
  }
  // With a symmetric M, W is symmetric: averaging with the transpose removes the solves'
  // rounding, so that SparseDelassus (which reads W's rows as its columns) works on exactly
  // the W the merit is computed with. With an unsymmetric M, W is kept as computed unless it
  // is symmetric to that same rounding anyway (CubeH8, one contact: 1e-12 relative), and
  // LocalSystem keeps a truly unsymmetric W (LMGC_GlobalFrictionContactProblem00046: 0.16).
  local_.spacedim = problem.spacedim;
  if (symmetric || is_symmetric(w)) {
    const ColumnMatrix w_transpose = w.transpose();
    local_.W.matrix = 0.5 * (w + w_transpose);
  } else {
    local_.W.matrix = w;
  }
  local_.W.matrix.makeCompressed();
  local_.W.storage = Storage::csr;
  local_.mu = problem.mu;
  local_.info = problem.info;
}

GlobalReduction::~GlobalReduction() = default;

VecX GlobalReduction::velocity(const VecX& r) const {
  const VecX rhs = H_ * r + f_;
  VecX v = factor_->mass.solve(rhs);
  if (G_.cols() > 0) v += m_inverse_g_ * multipliers_for(v);
  return v;
}

VecX GlobalReduction::multipliers(const VecX& r) const {
  if (G_.cols() == 0) return VecX();
  const VecX rhs = H_ * r + f_;
  return multipliers_for(factor_->mass.solve(rhs));
}

VecX GlobalReduction::multipliers_for(const VecX& unconstrained_velocity) const {
  const VecX rhs = G_.transpose() * unconstrained_velocity + b_;
  return -factor_->schur.solve(rhs);
}

double natural_map_merit(const LocalProblem& problem, const VecX& r) {
  const int rows = problem.spacedim;
  const VecX u = problem.W.matrix * r + problem.q;
  double sum = 0.0;
  for (int contact = 0; contact < problem.contact_count(); ++contact) {
    const double mu = problem.mu[contact];
    Vec3 ri = Vec3::Zero();
    Vec3 ui = Vec3::Zero();
    ri.head(rows) = r.segment(contact * rows, rows);
    ui.head(rows) = u.segment(contact * rows, rows);
    const Vec3 residual = ri - project_onto_cone(ri - de_saxce_velocity(ui, mu, rows), mu, rows);
    for (int a = 0; a < rows; ++a) sum += residual[a] * residual[a];
  }
  return std::sqrt(sum) / std::max(problem.q.norm(), kMeritVelocityFloor);
}

}  // namespace moreau::fclib
