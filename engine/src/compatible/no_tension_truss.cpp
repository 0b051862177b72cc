#include "moreau/compatible/no_tension_truss.hpp"

#include <chrono>
#include <cmath>

#include "moreau/core/error.hpp"
#include "moreau/solver/bound_constrained_apgd.hpp"
#include "scaled_truss.hpp"

namespace moreau {

double power_law_exponent(ContactLaw law) { return law == ContactLaw::hookean ? 2.0 : 2.5; }

std::string to_string(ContactLaw law) {
  return law == ContactLaw::hookean ? "hookean" : "hertzian";
}

std::string to_string(TrussMethod method) {
  return method == TrussMethod::augmented_lagrangian ? "augmented_lagrangian" : "interior_point";
}

void NoTensionTrussProblem::validate() const {
  if (load.size() != equilibrium.rows())
    throw InputError("no-tension truss: load has " + std::to_string(load.size()) +
                     " entries, equilibrium has " + std::to_string(equilibrium.rows()) + " rows");
  if (relative_stiffness.size() != equilibrium.cols())
    throw InputError("no-tension truss: one relative stiffness per contact is needed");
  if (!load.allFinite()) throw InputError("no-tension truss: the load F~ is not finite");
  for (Eigen::Index i = 0; i < relative_stiffness.size(); ++i)
    if (!(relative_stiffness(i) > 0.0) || std::isnan(relative_stiffness(i)))
      throw InputError("no-tension truss: contact " + std::to_string(i) +
                       ": relative stiffness must be > 0");
}

// The truss solver's effort: its iterations are bounded by the max_* keys, and a solve that
// reaches a bound is reported as not converged.
const OptionTable<NoTensionTrussOptions>& NoTensionTrussOptions::fields() {
  using O = NoTensionTrussOptions;
  static const OptionTable<O> table{
      number_option("equilibrium_tolerance", &O::equilibrium_tolerance, Bounds::above(0.0))
          .described("||B^T f - F~|| / ||F~|| at which the truss solve stops"),
      number_option("optimality_tolerance", &O::optimality_tolerance, Bounds::above(0.0))
          .described("the truss solve's optimality residual at which it stops"),
      choice_option("method", &O::method,
                    {{"augmented_lagrangian", TrussMethod::augmented_lagrangian},
                     {"interior_point", TrussMethod::interior_point}})
          .described("augmented Lagrangian with APGD subproblems (Olsen & Kamrin Sec. 7), or "
                     "an interior point method"),
      integer_option("max_outer_iterations", &O::max_outer_iterations, Bounds::at_least(1)),
      integer_option("max_inner_iterations", &O::max_inner_iterations, Bounds::at_least(1)),
      integer_option("max_interior_point_iterations", &O::max_interior_point_iterations,
                     Bounds::at_least(1)),
  };
  return table;
}

void NoTensionTrussOptions::validate() const {
  if (!(equilibrium_tolerance > 0.0))
    throw InputError("no-tension truss: equilibrium_tolerance must be > 0");
  if (!(optimality_tolerance > 0.0))
    throw InputError("no-tension truss: optimality_tolerance must be > 0");
  if (max_outer_iterations < 1 || max_inner_iterations < 1 || max_interior_point_iterations < 1)
    throw InputError("no-tension truss: iteration limits must be >= 1");
  if (!(initial_penalty > 0.0) || !(penalty_growth > 1.0))
    throw InputError("no-tension truss: initial_penalty must be > 0 and penalty_growth > 1");
}

namespace {

// argmin_{y >= 0} w y^q + (y - v)^2 / 2 for q in (1, 2]: y = 0 when v <= 0, else the root in
// (0, v] of w q y^(q-1) + y - v, which is concave and increasing: Newton from y = v lands left
// of the root and then climbs to it monotonically; bisection guards the bracket.
double power_law_prox(double v, double w, double q) {
  if (v <= 0.0) return 0.0;
  if (q == 2.0) return v / (1.0 + 2.0 * w);
  double low = 0.0, high = v, y = v;
  for (int k = 0; k < 100; ++k) {
    const double residual = w * q * std::pow(y, q - 1.0) + y - v;
    if (residual > 0.0)
      high = y;
    else
      low = y;
    const double slope = w * q * (q - 1.0) * std::pow(y, q - 2.0) + 1.0;
    double next = y - residual / slope;
    if (!(next > low && next < high)) next = 0.5 * (low + high);
    if (std::abs(next - y) <= 1e-16 * v) return next;
    y = next;
  }
  return y;
}

}  // namespace

namespace detail {

// Olsen & Kamrin Sec. 7: bound-constrained augmented Lagrangian (Nocedal & Wright Alg. 17.4), the
// subproblems solved by APGD with the complementary energy in the proximal step.
void solve_by_augmented_lagrangian(const NoTensionTrussOptions& options, const ScaledTruss& scaled,
                                   VecX& f, NoTensionTrussStats& stats) {
  const double force_scale = scaled.force_scale;
  const double q = scaled.exponent;
  const VecX& coefficient = scaled.coefficient;
  const SparseMatrix& a = scaled.a;
  const SparseMatrix a_transpose = a.transpose();
  const VecX& b = scaled.b;
  const double b_norm = std::max(b.norm(), 1e-300);

  VecX x = f / force_scale;
  VecX lambda = VecX::Zero(a.rows());
  double mu = options.initial_penalty;
  // Nocedal & Wright Alg. 17.4: omega_k (subproblem tolerance) and eta_k (equilibrium target).
  double omega = 1.0 / mu;
  double eta = 1.0 / std::pow(mu, 0.1);
  double lipschitz = 1.0;
  VecX residual(a.rows());

  // Smooth part of the augmented Lagrangian: -lambda^T (A g - b) + mu/2 |A g - b|^2.
  auto smooth = [&](const VecX& g, VecX* gradient) -> double {
    const VecX c = a * g - b;
    if (gradient) *gradient = a_transpose * (mu * c - lambda);
    return -lambda.dot(c) + 0.5 * mu * c.squaredNorm();
  };
  // The complementary energy sum_i c_i g_i^q (eq. 36) is separable: it goes into the proximal
  // step, where its unbounded curvature at g = 0 (Hertzian q = 5/3) costs nothing.
  SeparableTerm energy;
  energy.value = [&](const VecX& g) { return scaled.energy(g); };
  energy.prox = [&](const VecX& v, double step, VecX& out) {
    out.resize(v.size());
    for (Eigen::Index i = 0; i < v.size(); ++i)
      out(i) = power_law_prox(v(i), step * coefficient(i), q);
  };
  for (int k = 1; k <= options.max_outer_iterations; ++k) {
    stats.outer_iterations = k;
    BoundConstrainedOptions inner;
    inner.tolerance = std::max(omega, 0.1 * options.optimality_tolerance);
    inner.max_iterations = options.max_inner_iterations;
    inner.initial_lipschitz = lipschitz;
    const BoundConstrainedStats inner_stats = minimize_nonnegative(smooth, energy, x, inner);
    stats.inner_iterations += inner_stats.iterations;
    lipschitz = inner_stats.lipschitz;
    residual = a * x - b;
    stats.equilibrium_residual = residual.norm() / b_norm;
    stats.optimality_residual = inner_stats.residual;
    if (stats.equilibrium_residual * b_norm <= eta) {
      if (stats.equilibrium_residual <= options.equilibrium_tolerance &&
          stats.optimality_residual <= options.optimality_tolerance) {
        stats.converged = true;
        break;
      }
      // First-order multiplier update (N&W eq. 17.39) and tighter targets.
      lambda -= mu * residual;
      eta = std::max(eta / std::pow(mu, 0.9), 0.1 * options.equilibrium_tolerance * b_norm);
      omega = std::max(omega / mu, 0.1 * options.optimality_tolerance);
    } else {
      mu *= options.penalty_growth;
      eta = std::max(1.0 / std::pow(mu, 0.1), 0.1 * options.equilibrium_tolerance * b_norm);
      omega = std::max(1.0 / mu, 0.1 * options.optimality_tolerance);
    }
  }
  f = force_scale * x;
  stats.penalty = mu;
  stats.termination = stats.converged ? "converged" : "outer iteration limit";
}

}  // namespace detail

NoTensionTrussStats solve_no_tension_truss(const NoTensionTrussProblem& problem,
                                           const NoTensionTrussOptions& options, VecX& f) {
  const auto start = std::chrono::steady_clock::now();
  problem.validate();
  options.validate();
  NoTensionTrussStats stats;
  const Eigen::Index n = problem.equilibrium.cols();
  if (f.size() != n) f = VecX::Zero(n);
  const double load_norm = problem.load.norm();
  if (n == 0 || load_norm == 0.0) {
    f.setZero(n);
    stats.converged = true;
    stats.termination = "empty";
    return stats;
  }
  const detail::ScaledTruss scaled(problem);
  if (options.method == TrussMethod::interior_point)
    detail::solve_by_interior_point(problem, options, scaled, f, stats);
  else
    detail::solve_by_augmented_lagrangian(options, scaled, f, stats);
  // Report the residual of the unscaled problem.
  stats.equilibrium_residual = (problem.equilibrium * f - problem.load).norm() / load_norm;
  stats.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return stats;
}

}  // namespace moreau
