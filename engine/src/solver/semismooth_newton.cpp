#include "moreau/solver/semismooth_newton.hpp"

#include <Eigen/Dense>
#include <Eigen/KLUSupport>
#include <algorithm>
#include <cmath>
#include <deque>
#include <utility>
#include <vector>

#include "moreau/core/error.hpp"
#include "moreau/solver/iteration_monitor.hpp"
#include "moreau/solver/merit.hpp"
#include "moreau/solver/projected_gauss_seidel.hpp"
#include "moreau/solver/solver_registry.hpp"
#include "solver_options_common.hpp"

namespace moreau {
namespace {

using ColumnMatrix = Eigen::SparseMatrix<double, Eigen::ColMajor>;
// Tangential vectors and blocks (1 or 2 rows) on the stack: the line search evaluates the
// Alart-Curnier function of every contact several times per iteration.
using TangentVector = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 2, 1>;
using TangentMatrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 2, 2>;

struct Rho {
  VecX normal;
  VecX tangent;
};

// rho_n,i = scale / W_ii,nn, rho_t,i = scale / mean(W_ii,tt) (semismooth_newton.hpp). A contact
// whose diagonal entry is not positive takes the mean rho of the others (1 if none has one).
Rho contact_rho(const ConeProblem& problem, double scale) {
  const int contacts = problem.contact_count();
  const int rows = problem.rows();
  Rho rho{VecX::Zero(contacts), VecX::Zero(contacts)};
  double normal_sum = 0.0, tangent_sum = 0.0;
  int normal_count = 0, tangent_count = 0;
  for (int i = 0; i < contacts; ++i) {
    const Mat3 block = problem.delassus->diagonal_block(i);
    if (block(0, 0) > 0.0) {
      rho.normal[i] = scale / block(0, 0);
      normal_sum += rho.normal[i];
      ++normal_count;
    }
    if (rows > 1) {
      const double tangent = block.diagonal().segment(1, rows - 1).mean();
      if (tangent > 0.0) {
        rho.tangent[i] = scale / tangent;
        tangent_sum += rho.tangent[i];
        ++tangent_count;
      }
    }
  }
  const double normal_fallback = normal_count > 0 ? normal_sum / normal_count : 1.0;
  const double tangent_fallback = tangent_count > 0 ? tangent_sum / tangent_count : normal_fallback;
  for (int i = 0; i < contacts; ++i) {
    if (rho.normal[i] == 0.0) rho.normal[i] = normal_fallback;
    if (rho.tangent[i] == 0.0) rho.tangent[i] = tangent_fallback;
  }
  return rho;
}

// One contact's Alart-Curnier function Phi_i(r_i, u_i) (semismooth_newton.hpp) and, when
// `ar` and `au` are given, an element of its generalized Jacobian: dPhi = A_r dr + A_u du.
// Where a max or a projection is not differentiable (on the kink), the branch taken is the
// one of the strict inequality below, which is an element of the Clarke Jacobian.
Vec3 alart_curnier(const Vec3& r, const Vec3& u, double mu, double rho_n, double rho_t, int rows,
                   Mat3* ar, Mat3* au) {
  Vec3 phi = Vec3::Zero();
  if (ar) {
    ar->setZero();
    au->setZero();
  }
  const double normal_argument = r[0] - rho_n * u[0];
  const bool pressed = normal_argument > 0.0;
  if (pressed) {
    phi[0] = rho_n * u[0];
    if (au) (*au)(0, 0) = rho_n;
  } else {
    phi[0] = r[0];
    if (ar) (*ar)(0, 0) = 1.0;
  }
  if (rows == 1) return phi;
  const int t = rows - 1;
  const double radius = mu * std::max(normal_argument, 0.0);
  const TangentVector y = r.segment(1, t) - rho_t * u.segment(1, t);
  const double y_norm = y.norm();
  if (y_norm <= radius) {  // stick: the projection is the identity
    phi.segment(1, t) = rho_t * u.segment(1, t);
    if (au) au->block(1, 1, t, t) = rho_t * TangentMatrix::Identity(t, t);
    return phi;
  }
  // Slip (or take-off when radius = 0): P(y) = radius y / |y|.
  const TangentVector direction = y / y_norm;
  phi.segment(1, t) = r.segment(1, t) - radius * direction;
  if (ar) {
    const TangentMatrix curvature =
        (radius / y_norm) * (TangentMatrix::Identity(t, t) - direction * direction.transpose());
    ar->block(1, 1, t, t) = TangentMatrix::Identity(t, t) - curvature;
    au->block(1, 1, t, t) = rho_t * curvature;
    if (pressed) {  // d radius = mu (dr_n - rho_n du_n)
      ar->block(1, 0, t, 1) = -mu * direction;
      au->block(1, 0, t, 1) = mu * rho_n * direction;
    }
  }
  return phi;
}

// Phi(r) for all contacts, and the generalized Jacobian blocks when asked.
struct Evaluation {
  VecX phi;
  std::vector<Mat3> ar, au;
};

void evaluate(const ConeProblem& problem, const Rho& rho, const VecX& r, const VecX& u,
              bool jacobian, Evaluation& out) {
  const int contacts = problem.contact_count();
  const int rows = problem.rows();
  out.phi.resize(problem.size());
  if (jacobian) {
    out.ar.resize(contacts);
    out.au.resize(contacts);
  }
  for (int i = 0; i < contacts; ++i) {
    Vec3 r_i = Vec3::Zero();
    Vec3 u_i = Vec3::Zero();
    r_i.head(rows) = r.segment(i * rows, rows);
    u_i.head(rows) = u.segment(i * rows, rows);
    const double mu = rows > 1 ? problem.mu[i] : 0.0;
    const Vec3 phi =
        alart_curnier(r_i, u_i, mu, rho.normal[i], rho.tangent[i], rows,
                      jacobian ? &out.ar[i] : nullptr, jacobian ? &out.au[i] : nullptr);
    out.phi.segment(i * rows, rows) = phi.head(rows);
  }
}

// The block-diagonal matrix of the contacts' rows x rows blocks, every entry stored (also the
// zeros), so that J = A_u W + A_r keeps one sparsity pattern over the iterations and KLU's
// symbolic analysis is done once.
ColumnMatrix block_diagonal(const std::vector<Mat3>& blocks, int rows) {
  const int contacts = static_cast<int>(blocks.size());
  std::vector<Eigen::Triplet<double>> entries;
  entries.reserve(static_cast<std::size_t>(contacts) * rows * rows);
  for (int i = 0; i < contacts; ++i) {
    for (int a = 0; a < rows; ++a) {
      for (int b = 0; b < rows; ++b)
        entries.emplace_back(i * rows + a, i * rows + b, blocks[i](a, b));
    }
  }
  ColumnMatrix m(contacts * rows, contacts * rows);
  m.setFromTriplets(entries.begin(), entries.end());
  return m;
}

// Solves J d = -phi, J = A_u W + A_r: dense LU for small problems, KLU above (KLU takes
// 0.72 s against UMFPACK's 1.09 s for Newton on KaplasTower, 0.028 s against 0.045 s on
// Capsules: with the reference BLAS, UMFPACK's supernodal kernels have no edge).
class NewtonSystem {
 public:
  NewtonSystem(const ConeProblem& problem, int dense_rows)
      : rows_(problem.rows()),
        sparse_(problem.size() > dense_rows),
        w_(problem.delassus->assemble()) {
    if (!sparse_) dense_w_ = Eigen::MatrixXd(w_);
  }
  bool sparse() const { return sparse_; }

  // false when J is singular or the solve produced a non-finite direction.
  bool solve(const Evaluation& evaluation, double shift, VecX& direction) {
    if (sparse_) {
      if (identity_.rows() != w_.rows()) {
        identity_.resize(w_.rows(), w_.cols());
        identity_.setIdentity();
      }
      // The sparse LU keeps a reference to the matrix it factored: a member, not a temporary.
      jacobian_ = block_diagonal(evaluation.au, rows_) * w_ + block_diagonal(evaluation.ar, rows_) +
                  shift * identity_;
      if (!analysed_) {
        lu_.analyzePattern(jacobian_);
        analysed_ = true;
      }
      lu_.factorize(jacobian_);
      if (lu_.info() != Eigen::Success) return false;
      direction = -lu_.solve(evaluation.phi);
      if (lu_.info() != Eigen::Success) return false;
    } else {
      const int n = static_cast<int>(dense_w_.rows());
      dense_j_.resize(n, n);
      for (int i = 0; i < n / rows_; ++i) {
        dense_j_.middleRows(i * rows_, rows_) =
            evaluation.au[i].topLeftCorner(rows_, rows_) * dense_w_.middleRows(i * rows_, rows_);
        dense_j_.block(i * rows_, i * rows_, rows_, rows_) +=
            evaluation.ar[i].topLeftCorner(rows_, rows_);
      }
      dense_j_.diagonal().array() += shift;
      dense_lu_.compute(dense_j_);
      // PartialPivLU does not report singularity: a zero pivot shows as a non-finite solve.
      direction = -dense_lu_.solve(evaluation.phi);
    }
    return direction.allFinite();
  }

 private:
  int rows_;
  bool sparse_;
  ColumnMatrix w_;
  ColumnMatrix identity_;
  ColumnMatrix jacobian_;
  Eigen::MatrixXd dense_w_, dense_j_;
  Eigen::PartialPivLU<Eigen::MatrixXd> dense_lu_;
  Eigen::KLU<ColumnMatrix> lu_;
  bool analysed_ = false;
};

IterativeSolverOptions common_solver_options(const SemismoothNewtonOptions& options) {
  IterativeSolverOptions common;
  return detail::copy_common_options(options, common);
}

}  // namespace

const OptionTable<SemismoothNewtonOptions>& SemismoothNewtonOptions::fields() {
  using O = SemismoothNewtonOptions;
  static const OptionTable<O> table = [] {
    OptionTable<O> t;
    add_common_fields(t);
    add_divergence_field(t);
    t.push_back(integer_option("dense_rows", &O::dense_rows, Bounds::at_least(0))
                    .described("problems of at most this many rows use a dense LU"));
    t.push_back(number_option("armijo", &O::armijo, Bounds::open(0, 1))
                    .described("sufficient decrease of the non-monotone Armijo rule"));
    t.push_back(integer_option("memory", &O::memory, Bounds::at_least(1))
                    .described("merits the non-monotone rule remembers (1: monotone)"));
    t.push_back(number_option("backtrack", &O::backtrack, Bounds::open(0, 1))
                    .described("step factor per rejected trial"));
    t.push_back(number_option("min_step", &O::min_step, Bounds::open(0, 1))
                    .described("smallest step before the fallback sweeps"));
    t.push_back(integer_option("fallback_sweeps", &O::fallback_sweeps, Bounds::at_least(1))
                    .described("projected Gauss-Seidel sweeps when Newton finds no step"));
    t.push_back(number_option("regularization", &O::regularization, Bounds::at_least(0))
                    .described("proximal shift of the Jacobian, scaled by the residual"));
    t.push_back(number_option("rho_scale", &O::rho_scale, Bounds::above(0))
                    .described("rho as this over each contact's own compliance"));
    return t;
  }();
  return table;
}

void SemismoothNewtonOptions::validate() const {
  validate_fields(fields(), *this, "SemismoothNewtonOptions");
}

namespace {
// Through the registry every solver starts from SolverOptions' defaults (10000 iterations).
SemismoothNewtonOptions registry_defaults() {
  SemismoothNewtonOptions o;
  o.max_iterations = SolverOptions{}.max_iterations;
  return o;
}
const SolverRegistrar<SemismoothNewton, SemismoothNewtonOptions> kRegistration{
    "newton",
    {.coulomb = true, .frictionless = true},
    "semismooth Newton on the Alart-Curnier function",
    registry_defaults()};
}  // namespace

SemismoothNewton::SemismoothNewton(SemismoothNewtonOptions options)
    : ContactSolver(common_solver_options(options)), newton_options_(std::move(options)) {
  newton_options_.validate();
  options_.validate();
}

SolverStats SemismoothNewton::solve(const ConeProblem& problem, VecX& r) const {
  return solve_with_details(problem, r).stats;
}

namespace {

// |Phi(0)| for a problem all of whose contacts are pressed: the size that makes the
// regularization shift dimensionless.
double pressed_phi_norm(const ConeProblem& problem, const Rho& rho) {
  double phi_scale = 0.0;
  for (int i = 0; i < problem.contact_count(); ++i) {
    const int rows = problem.rows();
    phi_scale += (rho.normal[i] * problem.q.segment(i * rows, 1)).squaredNorm() +
                 (rho.tangent[i] * problem.q.segment(i * rows + 1, rows - 1)).squaredNorm();
  }
  return std::max(std::sqrt(phi_scale), kMeritVelocityFloor);
}

// The PGS sweeps taken where the Newton direction fails.
PgsOptions fallback_options(const SemismoothNewtonOptions& o) {
  PgsOptions sweep_options;
  sweep_options.tolerance = o.tolerance;
  sweep_options.max_iterations = o.fallback_sweeps;
  sweep_options.record_history = false;
  return sweep_options;
}

}  // namespace

SemismoothNewtonStats SemismoothNewton::solve_with_details(const ConeProblem& problem,
                                                           VecX& r) const {
  constexpr int kThreads = 1;
  SemismoothNewtonStats details;
  if (auto empty = begin_solve(name(), problem, options_, kThreads, r)) {
    details.stats = *empty;
    return details;
  }
  const SemismoothNewtonOptions& o = newton_options_;
  IterationMonitor monitor(name(), problem, options_, kThreads);
  const DelassusOperator& delassus = *problem.delassus;
  const int n = problem.size();
  // Newton solves Coulomb's law itself; the convex relaxation is another problem.
  if (problem.friction_model != FrictionModel::coulomb && problem.rows() > 1) {
    throw InputError("newton solves the Coulomb problem only (FrictionModel::coulomb)");
  }
  const Rho rho = contact_rho(problem, o.rho_scale);
  NewtonSystem system(problem, o.dense_rows);
  details.sparse = system.sparse();

  const ProjectedGaussSeidel fallback(fallback_options(o));

  VecX u(n), w_direction(n), direction(n), trial(n), trial_u(n);
  delassus.apply(r, u);
  u += problem.q;
  Evaluation current, candidate;
  evaluate(problem, rho, r, u, true, current);
  double psi = 0.5 * current.phi.squaredNorm();
  std::deque<double> recent{psi};
  const double phi_scale = pressed_phi_norm(problem, rho);

  bool stop = monitor.check(0, r, u);
  int iteration = 0;
  while (!stop && iteration < o.max_iterations) {
    ++iteration;
    bool stepped = false;
    const double shift = o.regularization * std::min(1.0, std::sqrt(2.0 * psi) / phi_scale);
    if (system.solve(current, shift, direction)) {
      delassus.apply(direction, w_direction);
      const double reference = *std::max_element(recent.begin(), recent.end());
      for (double step = 1.0; step >= o.min_step; step *= o.backtrack) {
        trial = r + step * direction;
        trial_u = u + step * w_direction;
        evaluate(problem, rho, trial, trial_u, false, candidate);
        ++details.line_search_trials;
        const double trial_psi = 0.5 * candidate.phi.squaredNorm();
        if (trial_psi <= reference - o.armijo * step * 2.0 * psi) {
          r.swap(trial);
          stepped = true;
          break;
        }
      }
    }
    if (!stepped) {
      ++details.fallback_steps;
      fallback.solve(problem, r);
      recent.clear();
    }
    // u afresh from r (not u + step W d): the merit reported is then the merit of the r
    // returned, free of the drift of incremental updates.
    delassus.apply(r, u);
    u += problem.q;
    evaluate(problem, rho, r, u, true, current);
    psi = 0.5 * current.phi.squaredNorm();
    recent.push_back(psi);
    if (static_cast<int>(recent.size()) > o.memory) recent.pop_front();
    stop = monitor.check(iteration, r, u);
  }
  details.stats = monitor.finish(iteration);
  details.alart_curnier_residual =
      current.phi.norm() / std::max(problem.q.norm(), kMeritVelocityFloor);
  return details;
}

}  // namespace moreau
