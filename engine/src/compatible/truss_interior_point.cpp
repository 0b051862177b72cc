// Primal-dual interior point method for the no-tension truss of Olsen & Kamrin eq. 36:
//   min_x sum_i c_i x_i^q   s.t.  A x = b,  x >= 0     (scaled form, scaled_truss.hpp)
// KKT: grad phi(x) - A^T y - z = 0, A x = b, X Z e = 0, x, z >= 0. Each Newton step eliminates
// dz and dx and solves the normal equations (A Theta A^T) dy = ..., Theta = (H + Z X^-1)^-1
// with H the (diagonal) Hessian of phi, by a CHOLMOD factorization whose symbolic analysis
// is reused across Newton steps and across solves on the same pattern. Mehrotra's
// predictor-corrector chooses the centring (Nocedal & Wright 2006, Alg. 14.3 for the QP of Hookean
// contacts; for the Hertzian power law the objective is convex and separable, and the same step
// with the Hessian updated at each iterate is their Alg. 19.1 without the merit function, primal
// and dual step lengths then kept equal).
#include <Eigen/CholmodSupport>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <vector>

#include "moreau/compatible/no_tension_truss.hpp"
#include "scaled_truss.hpp"

namespace moreau {
namespace {

// Largest step in (0, 1] keeping v + step * dv >= 0.
double step_to_boundary(const VecX& v, const VecX& dv) {
  double step = 1.0;
  for (Eigen::Index i = 0; i < v.size(); ++i)
    if (dv(i) < 0.0) step = std::min(step, -v(i) / dv(i));
  return step;
}

// Fraction of the step to the boundary actually taken (Nocedal & Wright eq. 14.39).
constexpr double kStepFraction = 0.995;
// Relative regularization of the normal equations: rows of the equilibrium operator may be
// dependent (e.g. a body whose contacts span fewer directions than its degrees of freedom
// carry load), which makes A Theta A^T singular without changing the solution set.
constexpr double kNormalRegularization = 1e-13;

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// CHOLMOD settings of the normal equations, chosen by timing them on the published-scale
// pyramid's network (14,440 contacts, 7,410 equilibrium rows; experiments/cannonball_pyramid/
// README.md): nested dissection (CHOLMOD_NESDIS) needs about half the factorization time of
// CHOLMOD's default choice, AMD alone about twice; CHOLMOD_AUTO picks the supernodal
// factorization for this fill (the simplicial one is 3-8 times slower).
constexpr int kOrdering = CHOLMOD_NESDIS;
constexpr int kFactorization = CHOLMOD_AUTO;

// The normal equations' factorization with its symbolic analysis, kept per thread between
// solves: the pattern of A Theta A^T depends only on A (Theta is a positive diagonal), so the
// Newton steps of one solve and the solves of later steps on the same contact network share
// one analysis. The analysis is redone when the pattern differs.
struct NormalEquations {
  Eigen::CholmodDecomposition<SparseMatrix, Eigen::Lower> cholesky;
  std::vector<SparseMatrix::StorageIndex> outer, inner;  // pattern of the analysed matrix

  NormalEquations() {
    cholesky.cholmod().print = 0;
    cholesky.cholmod().nmethods = 1;
    cholesky.cholmod().method[0].ordering = kOrdering;
    cholesky.cholmod().supernodal = kFactorization;
  }
  bool same_pattern(const SparseMatrix& m) const {
    return static_cast<Eigen::Index>(outer.size()) == m.outerSize() + 1 &&
           static_cast<Eigen::Index>(inner.size()) == m.nonZeros() &&
           std::equal(outer.begin(), outer.end(), m.outerIndexPtr()) &&
           std::equal(inner.begin(), inner.end(), m.innerIndexPtr());
  }
  // Analyses `m` unless the stored analysis has its pattern; returns whether it analysed.
  bool analyse(const SparseMatrix& m) {
    if (same_pattern(m)) return false;
    cholesky.analyzePattern(m);
    // Eigen reports success whatever CHOLMOD's analysis did; its status is negative on an error
    // (e.g. CHOLMOD_NOT_INSTALLED: a CHOLMOD built without its partitioning module has no nested
    // dissection), and AMD is always there.
    if (cholesky.cholmod().status < 0 && cholesky.cholmod().method[0].ordering != CHOLMOD_AMD) {
      cholesky.cholmod().method[0].ordering = CHOLMOD_AMD;
      cholesky.analyzePattern(m);
    }
    outer.assign(m.outerIndexPtr(), m.outerIndexPtr() + m.outerSize() + 1);
    inner.assign(m.innerIndexPtr(), m.innerIndexPtr() + m.nonZeros());
    return true;
  }
};

NormalEquations& normal_equations_of_this_thread() {
  thread_local std::unique_ptr<NormalEquations> cache;
  if (!cache) cache = std::make_unique<NormalEquations>();
  return *cache;
}

// The equilibrium rows that some contact reaches, scaled: rows without any contact carry no
// unknown, their load must vanish (to the equilibrium tolerance), and they leave the system so
// that the normal equations stay regular. Empty when such a row carries load.
struct SupportedRows {
  SparseMatrix a;
  SparseMatrix a_transpose;
  VecX b;
};

std::optional<SupportedRows> supported_rows(const NoTensionTrussProblem& problem,
                                            const NoTensionTrussOptions& options,
                                            const detail::ScaledTruss& scaled) {
  std::vector<Eigen::Index> rows;
  double unsupported = 0.0;
  for (Eigen::Index r = 0; r < scaled.a.rows(); ++r) {
    if (scaled.row_scale(r) > 0.0)
      rows.push_back(r);
    else
      unsupported += std::pow(problem.load(r), 2);
  }
  if (std::sqrt(unsupported) > options.equilibrium_tolerance * problem.load.norm()) {
    return std::nullopt;
  }
  const Eigen::Index m = static_cast<Eigen::Index>(rows.size());
  SparseMatrix selection(m, scaled.a.rows());
  for (Eigen::Index k = 0; k < m; ++k) selection.insert(k, rows[k]) = 1.0;
  SupportedRows system;
  system.a = selection * scaled.a;
  system.a_transpose = system.a.transpose();
  system.b = selection * scaled.b;
  return system;
}

// Factors the regularised normal equations A Theta A^T + shift I; false when they are not
// positive definite.
bool factor_normal_equations(const SupportedRows& system, const VecX& theta,
                             NormalEquations& normal_equations, NoTensionTrussStats& stats) {
  auto start = Clock::now();
  SparseMatrix normal = system.a * theta.asDiagonal() * system.a_transpose;
  const double shift = kNormalRegularization * normal.diagonal().maxCoeff();
  for (Eigen::Index r = 0; r < normal.rows(); ++r) normal.coeffRef(r, r) += shift;
  stats.normal_matrix_seconds += seconds_since(start);
  start = Clock::now();
  if (normal_equations.analyse(normal)) stats.analysis_seconds += seconds_since(start);
  start = Clock::now();
  normal_equations.cholesky.factorize(normal);
  stats.factorization_seconds += seconds_since(start);
  ++stats.factorizations;
  return normal_equations.cholesky.info() == Eigen::Success;
}

// Start: the given forces (the classic CD ones are an equilibrium already) moved into the
// interior, z from the dual equation with y = 0.
void starting_point(const VecX& f, const detail::ScaledTruss& scaled, VecX& x, VecX& z) {
  x = (f / scaled.force_scale).cwiseMax(0.0);
  x.array() += 0.1 * std::max(x.mean(), 1.0);
  z.resize(x.size());
  for (Eigen::Index i = 0; i < x.size(); ++i) z(i) = std::max(scaled.gradient(i, x(i)), 1e-3);
}

// Below the optimality tolerance, the forces of contacts that carry nothing are the interior
// point's residual x_i ~ mu / z_i: they are set to zero, as the projection of the augmented
// Lagrangian's iterates does.
void final_forces(const VecX& x, const NoTensionTrussOptions& options,
                  const detail::ScaledTruss& scaled, VecX& f) {
  f = scaled.force_scale * x;
  for (Eigen::Index i = 0; i < x.size(); ++i)
    if (x(i) <= options.optimality_tolerance) f(i) = 0.0;
}

}  // namespace

namespace detail {

void solve_by_interior_point(const NoTensionTrussProblem& problem,
                             const NoTensionTrussOptions& options, const ScaledTruss& scaled,
                             VecX& f, NoTensionTrussStats& stats) {
  const Eigen::Index n = problem.equilibrium.cols();
  const std::optional<SupportedRows> system = supported_rows(problem, options, scaled);
  if (!system) {
    f.setZero(n);
    stats.termination = "load on degrees of freedom that no contact reaches";
    return;
  }
  const SparseMatrix& a = system->a;
  const SparseMatrix& a_transpose = system->a_transpose;
  const VecX& b = system->b;
  const Eigen::Index m = b.size();
  const double b_norm = b.norm();
  const bool quadratic = problem.law == ContactLaw::hookean;

  VecX x, z;
  starting_point(f, scaled, x, z);
  VecX y = VecX::Zero(m);

  NormalEquations& normal_equations = normal_equations_of_this_thread();
  VecX gradient(n), curvature(n), theta(n), dx, dy, dz;
  for (int k = 1; k <= options.max_interior_point_iterations; ++k) {
    for (Eigen::Index i = 0; i < n; ++i) {
      gradient(i) = scaled.gradient(i, x(i));
      curvature(i) = scaled.curvature(i, x(i));
    }
    const VecX dual_residual = gradient - a_transpose * y - z;
    const VecX primal_residual = a * x - b;
    // The same measures as the augmented Lagrangian: equilibrium relative to the load, and
    // the projected gradient of the Lagrangian on the scaled forces.
    stats.equilibrium_residual = primal_residual.norm() / b_norm;
    const VecX lagrangian_gradient = gradient - a_transpose * y;
    stats.optimality_residual =
        (x - (x - lagrangian_gradient).cwiseMax(0.0)).lpNorm<Eigen::Infinity>();
    if (stats.equilibrium_residual <= options.equilibrium_tolerance &&
        stats.optimality_residual <= options.optimality_tolerance) {
      stats.converged = true;
      break;
    }
    stats.outer_iterations = k;
    stats.inner_iterations = k;
    for (Eigen::Index i = 0; i < n; ++i) theta(i) = 1.0 / (curvature(i) + z(i) / x(i));
    if (!factor_normal_equations(*system, theta, normal_equations, stats)) {
      f = scaled.force_scale * x;
      stats.termination = "normal equations not positive definite";
      return;
    }
    // Newton step for the complementarity right-hand side r_c (X Z e + ... = r_c).
    auto newton = [&](const VecX& complementarity) {
      const VecX rhs_x = -dual_residual + complementarity.cwiseQuotient(x);
      const VecX rhs_y = -primal_residual - a * theta.cwiseProduct(rhs_x);
      const auto solve_start = Clock::now();
      dy = normal_equations.cholesky.solve(rhs_y);
      stats.solve_seconds += seconds_since(solve_start);
      ++stats.solves;
      dx = theta.cwiseProduct(rhs_x + a_transpose * dy);
      dz = (complementarity - z.cwiseProduct(dx)).cwiseQuotient(x);
    };
    const double mu = x.dot(z) / static_cast<double>(n);
    // Predictor (affine scaling), then the centred corrector with sigma = (mu_aff / mu)^3.
    newton(-x.cwiseProduct(z));
    const double primal_affine = step_to_boundary(x, dx);
    const double dual_affine = step_to_boundary(z, dz);
    const double mu_affine =
        (x + primal_affine * dx).dot(z + dual_affine * dz) / static_cast<double>(n);
    const double sigma = std::pow(mu_affine / mu, 3);
    const VecX second_order = dx.cwiseProduct(dz);
    newton(-x.cwiseProduct(z) - second_order + VecX::Constant(n, sigma * mu));
    double primal_step = std::min(1.0, kStepFraction * step_to_boundary(x, dx));
    double dual_step = std::min(1.0, kStepFraction * step_to_boundary(z, dz));
    if (!quadratic) primal_step = dual_step = std::min(primal_step, dual_step);
    x += primal_step * dx;
    y += dual_step * dy;
    z += dual_step * dz;
    if (!x.allFinite() || !z.allFinite()) {
      f.setZero(n);
      stats.termination = "diverged (non-finite iterate)";
      return;
    }
  }
  final_forces(x, options, scaled, f);
  stats.penalty = 0.0;
  stats.termination = stats.converged ? "converged" : "iteration limit";
}

}  // namespace detail
}  // namespace moreau
