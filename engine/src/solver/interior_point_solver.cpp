#include "moreau/solver/interior_point_solver.hpp"

#include <omp.h>

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <sstream>

#include "moreau/conic/jordan_algebra.hpp"
#include "moreau/contact/contact_system.hpp"
#include "moreau/core/error.hpp"
#include "moreau/solver/cone.hpp"
#include "moreau/solver/iteration_monitor.hpp"
#include "moreau/solver/merit.hpp"
#include "moreau/solver/solver_registry.hpp"

namespace moreau {

const OptionTable<IpmOptions>& IpmOptions::fields() {
  using O = IpmOptions;
  static const OptionTable<O> table = [] {
    OptionTable<O> t;
    add_common_fields(t);
    t.push_back(choice_option("stopping", &O::stopping,
                              {{"merit", IpmStopping::merit},
                               {"kleinert_error", IpmStopping::kleinert_error}})
                    .described("what tolerance bounds: the suite's merit or Kleinert's error"));
    for (OptionField<O>& field :
         nested_options(conic::InteriorPointOptions::fields(), &O::core,
                        {"preconditioner", "max_krylov_iterations", "max_forcing",
                         "predictor_forcing", "predictor_relative_residual", "step_fraction",
                         "body_space", "assemble_body_space", "warm_start_corrector"}))
      t.push_back(std::move(field));
    t.push_back(integer_option("max_fixed_point_iterations", &O::max_fixed_point_iterations,
                               Bounds::at_least(1))
                    .described("Coulomb problems: rounds of the fixed point on s"));
    t.push_back(number_option("inner_tolerance_fraction", &O::inner_tolerance_fraction,
                              Bounds::left_open(0, 1))
                    .described("Coulomb problems: each round's tolerance as a fraction"));
    return t;
  }();
  return table;
}

void IpmOptions::validate() const {
  validate_fields(fields(), *this, "IpmOptions");
  core.validate();
}

namespace {

// The CCP of a cone problem in the self-dual variables of Kleinert eq. 23: gamma = S x with S
// diagonal, one reduced variable per kept row (interior_point_solver.hpp).
class SelfDualTransform {
 public:
  explicit SelfDualTransform(const ConeProblem& problem) : rows_(problem.rows()) {
    for (int i = 0; i < problem.contact_count(); ++i) {
      const double mu = rows_ > 1 ? problem.mu[i] : 0.0;
      const int kept = mu > 0.0 ? rows_ : 1;
      dimensions_.push_back(kept);
      for (int a = 0; a < kept; ++a) {
        full_row_.push_back(i * rows_ + a);
        contact_.push_back(i);
        scale_.push_back(kept == 1 ? 1.0 : (a == 0 ? 1.0 / std::sqrt(mu) : std::sqrt(mu)));
      }
    }
  }
  int reduced_size() const { return static_cast<int>(full_row_.size()); }
  const std::vector<int>& dimensions() const { return dimensions_; }
  int contact(int reduced) const { return contact_[reduced]; }
  int full_row(int reduced) const { return full_row_[reduced]; }
  double scale(int reduced) const { return scale_[reduced]; }

  // gamma = S x (full size, zeros on dropped rows).
  void expand(const VecX& x, VecX& gamma, int full_size) const {
    gamma = VecX::Zero(full_size);
    for (int j = 0; j < reduced_size(); ++j) gamma[full_row_[j]] = scale_[j] * x[j];
  }
  // S^T v.
  VecX restrict(const VecX& v) const {
    VecX out(reduced_size());
    for (int j = 0; j < reduced_size(); ++j) out[j] = scale_[j] * v[full_row_[j]];
    return out;
  }
  // S^-1 gamma.
  VecX reduce(const VecX& gamma) const {
    VecX out(reduced_size());
    for (int j = 0; j < reduced_size(); ++j) out[j] = gamma[full_row_[j]] / scale_[j];
    return out;
  }
  // S as a sparse full x reduced matrix.
  SparseMatrix matrix(int full_size) const {
    std::vector<Eigen::Triplet<double>> triplets;
    for (int j = 0; j < reduced_size(); ++j) triplets.emplace_back(full_row_[j], j, scale_[j]);
    SparseMatrix s(full_size, reduced_size());
    s.setFromTriplets(triplets.begin(), triplets.end());
    return s;
  }

 private:
  int rows_;
  std::vector<int> dimensions_;
  std::vector<int> full_row_;
  std::vector<int> contact_;
  std::vector<double> scale_;
};

// F = M^-1/2 H S with N = S^T W S = F^T F (W = H^T M^-1 H of a ContactSystem): 6 rows per
// body (the rotation rows of rotation-locked bodies are zero), so the interior point method
// can solve its Newton system in the body space (conic_qp.hpp, QuadraticFactor).
class ContactFactor final : public conic::QuadraticFactor {
 public:
  ContactFactor(const ContactSystem& system, const SelfDualTransform& transform)
      : system_(system), transform_(transform), root_(system.body_count()) {
    for (int b = 0; b < system.body_count(); ++b) {
      const InverseMass& inverse = system.inverse_mass(b);
      Eigen::Matrix<double, 6, 6> root = Eigen::Matrix<double, 6, 6>::Zero();
      root.topLeftCorner<3, 3>() = inverse.linear.cwiseMax(0.0).cwiseSqrt().asDiagonal();
      const Eigen::SelfAdjointEigenSolver<Mat3> angular(inverse.angular);
      root.bottomRightCorner<3, 3>() =
          angular.eigenvectors() * angular.eigenvalues().cwiseMax(0.0).cwiseSqrt().asDiagonal() *
          angular.eigenvectors().transpose();
      root_[b] = root;
    }
  }
  int blocks() const override { return system_.body_count(); }
  void apply(const VecX& x, VecX& w) const override {
    transform_.expand(x, gamma_, system_.size());
    system_.apply_jacobian_transpose(gamma_, w);
    scale_bodies(w);
  }
  void apply_transpose(const VecX& w, VecX& x) const override {
    velocity_ = w;
    scale_bodies(velocity_);
    system_.apply_jacobian(velocity_, product_);
    x = transform_.restrict(product_);
  }
  void cone_columns(int offset, int dim, std::array<int, 2>& block,
                    std::array<Columns, 2>& columns) const override {
    const int contact = transform_.contact(offset);
    const ContactRows& rows = system_.rows()[contact];
    const int first = contact * system_.rows_per_contact();
    block = {rows.body_a, rows.body_b};
    for (int side = 0; side < 2; ++side) {
      columns[side].setZero();
      if (block[side] < 0) continue;
      const JacobianBlock& jacobian = side == 0 ? rows.jacobian_a : rows.jacobian_b;
      for (int a = 0; a < dim; ++a) {
        const int row = transform_.full_row(offset + a) - first;
        columns[side].col(a) =
            transform_.scale(offset + a) * (root_[block[side]] * jacobian.row(row).transpose());
      }
    }
  }

 private:
  void scale_bodies(VecX& w) const {
    const int bodies = system_.body_count();
#pragma omp parallel for schedule(static) if (bodies > 2048)
    for (int b = 0; b < bodies; ++b) w.segment<6>(6 * b) = root_[b] * w.segment<6>(6 * b);
  }

  const ContactSystem& system_;
  const SelfDualTransform& transform_;
  std::vector<Eigen::Matrix<double, 6, 6>> root_;  // M^-1/2 per body
  mutable VecX gamma_, velocity_, product_;        // scratch (one thread calls)
};

// N = S^T W S, every product through the Delassus operator (matrix-free when W is).
class TransformedDelassus final : public conic::QuadraticOperator {
 public:
  TransformedDelassus(const DelassusOperator& delassus, const SelfDualTransform& transform)
      : delassus_(delassus), transform_(transform) {
    if (const auto* system = dynamic_cast<const ContactSystem*>(&delassus)) {
      factor_ = std::make_unique<ContactFactor>(*system, transform);
    }
  }
  const conic::QuadraticFactor* factor() const override { return factor_.get(); }
  int size() const override { return transform_.reduced_size(); }
  void apply(const VecX& x, VecX& y) const override {
    transform_.expand(x, gamma_, delassus_.size());
    delassus_.apply(gamma_, product_);
    y = transform_.restrict(product_);
  }
  Mat3 diagonal_block(int offset, int dim) const override {
    const int contact = transform_.contact(offset);
    const Mat3 w = delassus_.diagonal_block(contact);
    const int first = contact * delassus_.rows_per_contact();
    Mat3 block = Mat3::Zero();
    for (int a = 0; a < dim; ++a) {
      for (int b = 0; b < dim; ++b) {
        block(a, b) =
            transform_.scale(offset + a) * transform_.scale(offset + b) *
            w(transform_.full_row(offset + a) - first, transform_.full_row(offset + b) - first);
      }
    }
    return block;
  }
  SparseMatrix assemble() const override {
    const SparseMatrix s = transform_.matrix(delassus_.size());
    const SparseMatrix s_transpose = s.transpose();
    SparseMatrix n = s_transpose * delassus_.assemble() * s;
    return n;
  }

 private:
  const DelassusOperator& delassus_;
  const SelfDualTransform& transform_;
  std::unique_ptr<ContactFactor> factor_;  // when W is a ContactSystem
  mutable VecX gamma_, product_;           // scratch (the IPM applies N from one thread)
};

// s_i = mu_i |u_t,i| on the normal rows (zero elsewhere).
VecX de_saxce_shift(const ConeProblem& problem, const VecX& u) {
  const int rows = problem.rows();
  VecX s = VecX::Zero(problem.size());
  if (rows == 1) return s;
  for (int i = 0; i < problem.contact_count(); ++i) {
    s[i * rows] = problem.mu[i] * u.segment(i * rows + 1, rows - 1).norm();
  }
  return s;
}

// Coulomb fixed point: rounds in a row that may fail to reduce the merit by 10% before it
// stops (a fixed point that does not contract, e.g. large mu).
constexpr int kRoundsWithoutProgress = 3;

bool coulomb_friction(const ConeProblem& problem) {
  return problem.rows() > 1 && problem.friction_model == FrictionModel::coulomb;
}

double elapsed(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

double kleinert_error(const ConeProblem& problem, const VecX& r, const VecX& u) {
  const SelfDualTransform transform(problem);
  const VecX s = coulomb_friction(problem) ? de_saxce_shift(problem, u) : VecX::Zero(u.size());
  const VecX x = transform.reduce(r);
  const VecX y = transform.restrict(u + s);
  const double r_norm = std::max(transform.restrict(problem.q + s).norm(), kMeritVelocityFloor);
  double infeasibility = 0.0;
  int offset = 0;
  for (const int dim : transform.dimensions()) {
    Vec3 y_k = Vec3::Zero();
    y_k.head(dim) = y.segment(offset, dim);
    infeasibility += (y_k - project_onto_cone(y_k, 1.0, dim)).squaredNorm();
    offset += dim;
  }
  const double x_norm = x.norm();
  const double gap = x_norm > 0.0 ? std::abs(x.dot(y)) / (x_norm * r_norm) : 0.0;
  return std::max(std::sqrt(infeasibility) / r_norm, gap);
}

Termination termination_of(conic::InteriorPointStatus status) {
  switch (status) {
    case conic::InteriorPointStatus::converged:
      return Termination::converged;
    case conic::InteriorPointStatus::iteration_limit:
    case conic::InteriorPointStatus::krylov_limit:
      return Termination::iteration_limit;
    case conic::InteriorPointStatus::numerical_limit:
      return Termination::numerical_limit;
    case conic::InteriorPointStatus::not_positive_definite:
    case conic::InteriorPointStatus::dependent_equalities:
      return Termination::breakdown;
    case conic::InteriorPointStatus::diverged:
      break;
  }
  return Termination::diverged;
}

InteriorPointSolver::InteriorPointSolver(IpmOptions options)
    : ContactSolver(iteration_control(options)), ipm_(std::move(options)) {
  ipm_.validate();
}

std::string InteriorPointSolver::name() const {
  return ipm_.core.backend == conic::LinearBackend::cholmod ? "ipm-direct" : "ipm";
}

namespace {
// Kleinert et al.'s interior point method (Sec. 4) on the CCP and, by a fixed point on the De
// Saxce term, on Coulomb's law.
constexpr SolverLaws kIpmLaws{.coulomb = true, .convex_relaxation = true, .frictionless = true};
std::function<void(IpmOptions&)> backend(conic::LinearBackend linear) {
  return [linear](IpmOptions& o) { o.core.backend = linear; };
}
const SolverRegistrar<InteriorPointSolver, IpmOptions> kMatrixFree{
    "ipm",
    kIpmLaws,
    "interior point method, matrix-free CG (Kleinert et al. Sec. 4, IPM-MF)",
    {},
    backend(conic::LinearBackend::conjugate_gradient)};
const SolverRegistrar<InteriorPointSolver, IpmOptions> kDirect{
    "ipm-direct",
    kIpmLaws,
    "interior point method, CHOLMOD Newton systems (Kleinert et al. Sec. 4)",
    {},
    backend(conic::LinearBackend::cholmod)};

}  // namespace

SolverStats InteriorPointSolver::solve(const ConeProblem& problem, VecX& r) const {
  const auto start = std::chrono::steady_clock::now();
  const int threads = omp_get_max_threads();
  if (auto empty = begin_solve(name(), problem, options_, threads, r)) return *empty;

  SolverStats stats;
  stats.solver = name();
  stats.threads = threads;
  stats.tolerance = options_.tolerance;
  const MeritScaling scaling = merit_scaling(problem);
  const bool coulomb = coulomb_friction(problem);
  // The merit of each round's convex problem: the relaxed model with the shifted free term.
  ConeProblem shifted = problem;
  shifted.friction_model = FrictionModel::convex_relaxation;

  const SelfDualTransform transform(problem);
  const TransformedDelassus hessian(*problem.delassus, transform);
  conic::ConicQp qp;
  qp.hessian = &hessian;
  qp.cone_dimensions = transform.dimensions();
  conic::InteriorPointOptions options = ipm_.core;
  const bool paper_error = ipm_.stopping == IpmStopping::kleinert_error;

  const int n = problem.size();
  VecX gamma(n), u(n);
  problem.delassus->apply(r, u);
  u += problem.q;
  VecX s = coulomb && options_.warm_start ? de_saxce_shift(problem, u) : VecX::Zero(n);
  VecX best = r;
  double best_merit = paper_error ? kleinert_error(problem, r, u) : merit(problem, scaling, r, u);
  if (best_merit <= options_.tolerance) {
    stats.termination = Termination::converged;
  }
  const int rounds = coulomb ? ipm_.max_fixed_point_iterations : 1;
  int rounds_without_progress = 0;
  for (int round = 0; round < rounds && stats.termination != Termination::converged; ++round) {
    // Inexact fixed point: each round's convex problem is solved to a fraction of the current
    // Coulomb merit (and of the tolerance), not beyond what the next s refresh would undo.
    const double round_start_merit = best_merit;
    const double inner_tolerance =
        ipm_.inner_tolerance_fraction * std::max(options_.tolerance, round_start_merit);
    shifted.q = problem.q + s;
    qp.linear = transform.restrict(shifted.q);
    options.max_newton_steps = options_.max_iterations - stats.iterations;
    if (options.max_newton_steps <= 0) break;
    // Each Newton step: gamma = S x, u = W gamma + q (one product) and the suite's merit.
    auto stop = [&](const conic::InteriorPointIterate& iterate) {
      transform.expand(iterate.x, gamma, n);
      problem.delassus->apply(gamma, u);
      u += problem.q;
      const double coulomb_merit =
          paper_error ? kleinert_error(problem, gamma, u) : merit(problem, scaling, gamma, u);
      if (options_.record_history) stats.merit_history.push_back(coulomb_merit);
      if (coulomb_merit < best_merit) {
        best = gamma;
        best_merit = coulomb_merit;
      }
      if (coulomb_merit <= options_.tolerance) return true;
      if (!coulomb) return false;
      const VecX shifted_u = u + s;
      return (paper_error ? kleinert_error(shifted, gamma, shifted_u)
                          : merit(shifted, scaling, gamma, shifted_u)) <= inner_tolerance;
    };
    VecX x, y, z;
    const conic::InteriorPointStats result =
        conic::solve_conic_qp(qp, options, x, y, z, false, stop);
    stats.iterations += result.newton_steps;
    stats.krylov_iterations += result.krylov_iterations;
    stats.krylov_iterations_per_step.insert(stats.krylov_iterations_per_step.end(),
                                            result.krylov_iterations_per_step.begin(),
                                            result.krylov_iterations_per_step.end());
    if (best_merit <= options_.tolerance) {
      stats.termination = Termination::converged;
    } else if (coulomb && (result.status == conic::InteriorPointStatus::converged ||
                           result.status == conic::InteriorPointStatus::numerical_limit)) {
      // A Coulomb round reached its inner tolerance (or the accuracy double precision allows
      // it): refresh s from the best iterate's velocities.
      problem.delassus->apply(best, u);
      u += problem.q;
      s = de_saxce_shift(problem, u);
      rounds_without_progress =
          best_merit < 0.9 * round_start_merit ? 0 : rounds_without_progress + 1;
      if (rounds_without_progress >= kRoundsWithoutProgress) {
        stats.termination = Termination::stalled;
        std::ostringstream reason;
        reason << "the fixed point on s stalled at merit " << best_merit;
        stats.stop_reason = reason.str();
        break;
      }
    } else if (result.status == conic::InteriorPointStatus::iteration_limit) {
      stats.termination = Termination::iteration_limit;
      stats.stop_reason = result.message;
      break;
    } else {
      stats.termination = termination_of(result.status);
      stats.stop_reason = to_string(result.status) + ": " + result.message;
      break;
    }
  }
  if (stats.termination == Termination::not_run) {
    // Out of rounds or of Newton steps without reaching the tolerance: iteration_limit when
    // the Newton steps ran out (max_iterations), else the fixed point did not get there.
    if (stats.iterations >= options_.max_iterations) {
      stats.termination = Termination::iteration_limit;
      stats.stop_reason = "max_iterations Newton steps reached";
    } else {
      stats.termination = Termination::stalled;
      stats.stop_reason = "the fixed point on s did not reach the tolerance in " +
                          std::to_string(ipm_.max_fixed_point_iterations) + " rounds";
    }
  }
  if (stats.termination == Termination::converged) stats.stop_reason.clear();
  r = best;
  problem.delassus->apply(r, u);
  u += problem.q;
  stats.merit = merit(problem, scaling, r, u);
  stats.kleinert_error = kleinert_error(problem, r, u);
  stats.criterion = paper_error ? "kleinert_error" : "merit";
  stats.criterion_value = paper_error ? stats.kleinert_error : stats.merit;
  stats.converged = stats.termination == Termination::converged;
  stats.wall_seconds = elapsed(start);
  return stats;
}

}  // namespace moreau
