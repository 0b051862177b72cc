#include "moreau/solver/admm.hpp"

#include <Eigen/CholmodSupport>
#include <Eigen/UmfPackSupport>
#include <algorithm>
#include <cmath>
#include <utility>

#include "contact_cones.hpp"
#include "moreau/solver/cone.hpp"
#include "moreau/solver/iteration_monitor.hpp"
#include "moreau/solver/merit.hpp"
#include "moreau/solver/solver_registry.hpp"
#include "solver_options_common.hpp"

namespace moreau {
namespace {

using ColumnMatrix = Eigen::SparseMatrix<double, Eigen::ColMajor>;

// Relative asymmetry below which W + rho I goes to CHOLMOD (SparseDelassus' own bound).
constexpr double kSymmetryTolerance = 1e-10;

bool is_symmetric(const ColumnMatrix& w) {
  const double largest = w.coeffs().cwiseAbs().maxCoeff();
  const ColumnMatrix transpose = w.transpose();
  const ColumnMatrix asymmetry = w - transpose;
  return asymmetry.nonZeros() == 0 ||
         asymmetry.coeffs().cwiseAbs().maxCoeff() <= kSymmetryTolerance * largest;
}

// W + rho I, factored once per penalty value.
class ShiftedSystem {
 public:
  explicit ShiftedSystem(ColumnMatrix w) : w_(std::move(w)), symmetric_(is_symmetric(w_)) {
    identity_.resize(w_.rows(), w_.cols());
    identity_.setIdentity();
    cholesky_.cholmod().print = 0;
  }
  // false when the factorization fails (W + rho I singular or, symmetric, indefinite).
  bool factor(double penalty) {
    shifted_ = w_ + penalty * identity_;
    if (symmetric_) {
      cholesky_.compute(shifted_);
      return cholesky_.info() == Eigen::Success;
    }
    lu_.compute(shifted_);
    return lu_.info() == Eigen::Success;
  }
  VecX solve(const VecX& rhs) {
    if (symmetric_) return cholesky_.solve(rhs);
    return lu_.solve(rhs);
  }

 private:
  ColumnMatrix w_;
  ColumnMatrix identity_;
  ColumnMatrix shifted_;  // UmfPackLU keeps a reference to the matrix it factored
  bool symmetric_;
  Eigen::CholmodDecomposition<ColumnMatrix, Eigen::Lower> cholesky_;
  Eigen::UmfPackLU<ColumnMatrix> lu_;
};

IterativeSolverOptions common_solver_options(const AdmmOptions& options) {
  IterativeSolverOptions common;
  return detail::copy_common_options(options, common);
}

}  // namespace

const OptionTable<AdmmOptions>& AdmmOptions::fields() {
  using O = AdmmOptions;
  static const OptionTable<O> table = [] {
    OptionTable<O> t;
    add_common_fields(t);
    add_divergence_field(t);
    t.push_back(number_option("initial_penalty", &O::initial_penalty, Bounds::at_least(0))
                    .described("first penalty rho; 0 takes trace(W) / rows"));
    t.push_back(number_option("balance", &O::balance, Bounds::above(1))
                    .described("residual ratio that changes the penalty (Boyd: 10)"));
    t.push_back(number_option("penalty_factor", &O::penalty_factor, Bounds::above(1))
                    .described("penalty change per trigger (Boyd: 2)"));
    t.push_back(integer_option("balance_every", &O::balance_every, Bounds::at_least(1))
                    .described("iterations between penalty updates (each one a factorization)"));
    return t;
  }();
  return table;
}

void AdmmOptions::validate() const { validate_fields(fields(), *this, "AdmmOptions"); }

namespace {
const SolverRegistrar<Admm, AdmmOptions> kRegistration{
    "admm",
    {.coulomb = true, .convex_relaxation = true, .frictionless = true},
    "ADMM with residual balancing and the De Saxce fixed point"};
}  // namespace

Admm::Admm(AdmmOptions options)
    : ContactSolver(common_solver_options(options)), admm_options_(std::move(options)) {
  admm_options_.validate();
  options_.validate();
}

SolverStats Admm::solve(const ConeProblem& problem, VecX& r) const {
  return solve_with_details(problem, r).stats;
}

AdmmStats Admm::solve_with_details(const ConeProblem& problem, VecX& r) const {
  constexpr int kThreads = 1;
  AdmmStats details;
  if (auto empty = begin_solve(name(), problem, options_, kThreads, r)) {
    details.stats = *empty;
    return details;
  }
  const AdmmOptions& o = admm_options_;
  IterationMonitor monitor(name(), problem, options_, kThreads);
  const DelassusOperator& delassus = *problem.delassus;
  const int n = problem.size();
  const ColumnMatrix w = delassus.assemble();
  ShiftedSystem system(w);

  double penalty = o.initial_penalty;
  if (penalty == 0.0) penalty = w.diagonal().sum() / n;
  if (!(penalty > 0.0)) penalty = 1.0;  // W = 0: any penalty, the problem is linear
  const auto refactor = [&] {
    ++details.factorizations;
    return system.factor(penalty);
  };

  VecX z = r;  // the iterate in K
  detail::project_onto_cones(problem, z);
  VecX u(n), s(n), xi = VecX::Zero(n), x(n), z_previous(n), x_velocity(n);
  delassus.apply(z, u);
  u += problem.q;
  // The De Saxce term (zero for the convex relaxation).
  const bool fixed_point_on_s = problem.friction_model == FrictionModel::coulomb;
  s.setZero();
  if (fixed_point_on_s) detail::de_saxce_shift(problem, u, s);
  bool stop = monitor.check(0, z, u);
  bool factored = !stop && refactor();
  int iteration = 0;
  while (!stop && factored && iteration < o.max_iterations) {
    ++iteration;
    x = system.solve(penalty * (z - xi) - problem.q - s);
    z_previous = z;
    z = x + xi;
    detail::project_onto_cones(problem, z);
    xi += x - z;
    delassus.apply(z, u);
    u += problem.q;
    // The De Saxce term from the velocity of x, the iterate that solves the W subproblem: taken
    // from z instead (the projected iterate) it diverges on BoxesStack1 and spheres-in-a-box
    // and stalls at 1e-2 to 1e-4 on six more FCLIB collection files.
    if (fixed_point_on_s) {
      delassus.apply(x, x_velocity);
      x_velocity += problem.q;
      detail::de_saxce_shift(problem, x_velocity, s);
    }
    details.primal_residual = (x - z).norm();
    details.dual_residual = penalty * (z - z_previous).norm();
    stop = monitor.check(iteration, z, u);
    if (stop || iteration % o.balance_every != 0) continue;
    // Residual balancing: the scaled dual variable xi = y / rho follows rho.
    if (details.primal_residual > o.balance * details.dual_residual) {
      penalty *= o.penalty_factor;
      xi /= o.penalty_factor;
      factored = refactor();
    } else if (details.dual_residual > o.balance * details.primal_residual) {
      penalty /= o.penalty_factor;
      xi *= o.penalty_factor;
      factored = refactor();
    }
  }
  r = z;
  details.final_penalty = penalty;
  details.stats = monitor.finish(iteration);
  if (!factored && !stop) {
    // W + rho I could not be factored: a breakdown, never reported as converged.
    details.stats.termination = Termination::breakdown;
    details.stats.converged = false;
    details.stats.stop_reason =
        "W + rho I could not be factored (rho = " + std::to_string(penalty) + ")";
  }
  return details;
}

}  // namespace moreau
