#include "moreau/solver/apgd.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "contact_cones.hpp"
#include "moreau/solver/cone.hpp"
#include "moreau/solver/iteration_monitor.hpp"
#include "moreau/solver/solver_registry.hpp"

namespace moreau {

namespace {

using detail::de_saxce_shift;

void project(const ConeProblem& problem, VecX& x) { detail::project_onto_cones(problem, x); }

// Power iterations for the initial Lipschitz estimate: it only seeds the backtracking of
// Alg. 1 lines 10-14, which corrects an underestimate, so a rough value is enough.
constexpr int kPowerIterations = 10;

// Lower bound on lambda_max(W): the power iteration's |W v| for unit v, and the largest
// diagonal entry. 1 when W = 0, where any step is exact for the then linear objective.
double estimate_lipschitz(const DelassusOperator& delassus) {
  const int n = delassus.size();
  double largest_diagonal = 0.0;
  for (int i = 0; i < delassus.contact_count(); ++i) {
    largest_diagonal = std::max(largest_diagonal, delassus.diagonal_block(i).diagonal().maxCoeff());
  }
  VecX v = VecX::Ones(n) / std::sqrt(static_cast<double>(n));
  VecX w(n);
  double estimate = 0.0;
  for (int k = 0; k < kPowerIterations; ++k) {
    delassus.apply(v, w);
    estimate = w.norm();
    if (!(estimate > 0.0)) break;
    v = w / estimate;
  }
  const double lipschitz = std::max(estimate, largest_diagonal);
  return lipschitz > 0.0 ? lipschitz : 1.0;
}

}  // namespace

const OptionTable<ApgdOptions>& ApgdOptions::fields() {
  static const OptionTable<ApgdOptions> table = [] {
    OptionTable<ApgdOptions> t;
    add_iterative_fields(t);
    t.push_back(bool_option("adaptive_restart", &ApgdOptions::adaptive_restart)
                    .described("restart the momentum when the objective grows (Mazhar et al.)"));
    t.push_back(
        number_option("initial_lipschitz", &ApgdOptions::initial_lipschitz, Bounds::at_least(0))
            .described("first Lipschitz estimate of W; 0 estimates it (power iteration)"));
    return t;
  }();
  return table;
}

void ApgdOptions::validate() const { validate_fields(fields(), *this, "ApgdOptions"); }

namespace {
const SolverRegistrar<Apgd, ApgdOptions> kRegistration{
    "apgd",
    {.coulomb = true, .convex_relaxation = true, .frictionless = true},
    "accelerated projected gradient descent (Mazhar et al. 2015, Alg. 1)"};
}  // namespace

Apgd::Apgd(ApgdOptions options) : ContactSolver(options), apgd_(std::move(options)) {
  apgd_.validate();
}

// Mazhar et al. 2015, Alg. 1, in one function so that it reads line by line against the paper
// (the comments give its line numbers).
SolverStats Apgd::solve(const ConeProblem& problem, VecX& r) const {
  const int threads = omp_get_max_threads();
  if (auto empty = begin_solve(name(), problem, options_, threads, r)) return *empty;
  IterationMonitor monitor(name(), problem, options_, threads);

  const DelassusOperator& delassus = *problem.delassus;
  const int n = problem.size();
  const bool fixed_point_on_s =
      problem.rows() > 1 && problem.friction_model == FrictionModel::coulomb;

  // Line 1 takes gamma_0 in K: a warm start from another problem need not be.
  VecX gamma = r;
  project(problem, gamma);
  // W gamma_k is kept alongside gamma_k: by linearity W y_k follows from it (line 17) and the
  // backtracking test needs W gamma_{k+1} anyway, so an iteration costs one product per trial.
  VecX w_gamma(n);
  delassus.apply(gamma, w_gamma);
  VecX u = w_gamma + problem.q;
  VecX s = VecX::Zero(n);
  if (fixed_point_on_s) de_saxce_shift(problem, u, s);

  bool stop = monitor.check(0, gamma, u);
  VecX best = gamma;  // lines 19-21: gamma-hat, the iterate of least merit
  double best_merit = monitor.last_merit();

  // Lines 5-6, with a power-iteration estimate in place of the secant through 1_n: both only
  // seed the backtracking, and the power iteration does not depend on the initial guess.
  double lipschitz =
      apgd_.initial_lipschitz > 0.0 ? apgd_.initial_lipschitz : estimate_lipschitz(delassus);
  double theta = 1.0;  // line 4
  VecX y = gamma;      // line 3
  VecX w_y = w_gamma;
  VecX gradient(n), next(n), w_next(n), step(n);
  int iteration = 0;
  while (!stop && iteration < options_.max_iterations) {
    ++iteration;
    gradient = w_y + problem.q + s;  // line 8
    for (;;) {
      next = y - gradient / lipschitz;  // lines 9 and 13
      project(problem, next);
      delassus.apply(next, w_next);
      step = next - y;
      // Line 10: for the quadratic f, f(next) - f(y) - g.(next - y) = 1/2 d^T W d exactly, so
      // the sufficient-decrease test is d^T W d <= L |d|^2, free of the cancellation in
      // differencing two objective values. Written so that a NaN ends the loop (it is then
      // reported as diverged).
      if (!(step.dot(w_next - w_y) > lipschitz * step.squaredNorm())) break;
      lipschitz *= 2.0;  // lines 11-12
    }
    // Lines 15-16: theta_{k+1}^2 = (1 - theta_{k+1}) theta_k^2, Nesterov's sequence that gives
    // the O(1/k^2) decrease of the objective.
    const double theta_next = 0.5 * (-theta * theta + theta * std::sqrt(theta * theta + 4.0));
    const double beta = theta * (1.0 - theta) / (theta * theta + theta_next);
    // Lines 26-28: restart when the gradient at y_k and the step gamma_{k+1} - gamma_k
    // disagree (the momentum is carrying the iterate uphill).
    if (apgd_.adaptive_restart && gradient.dot(next - gamma) > 0.0) {
      y = next;
      w_y = w_next;
      theta = 1.0;
    } else {
      y = next + beta * (next - gamma);  // line 17
      w_y = w_next + beta * (w_next - w_gamma);
      theta = theta_next;
    }
    gamma.swap(next);
    w_gamma.swap(w_next);
    u = w_gamma + problem.q;
    // Fixed point on s: the Coulomb term follows the newest iterate, so the QP being solved
    // converges to the one whose solution satisfies De Saxce's complementarity.
    if (fixed_point_on_s) de_saxce_shift(problem, u, s);
    // Lines 18-25: residual, best iterate, stop.
    if (monitor.due(iteration)) {
      stop = monitor.check(iteration, gamma, u);
      if (monitor.last_merit() < best_merit) {
        best = gamma;
        best_merit = monitor.last_merit();
      }
    }
    lipschitz *= 0.9;  // lines 30-31
  }
  r = best;  // line 33
  monitor.report_merit(best_merit);
  return monitor.finish(iteration);
}

}  // namespace moreau
