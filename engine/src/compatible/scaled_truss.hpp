#pragma once
// The no-tension truss of Olsen & Kamrin eq. 36 in the scaled form both of its solvers work on
// (no_tension_truss.cpp, truss_interior_point.cpp): forces in units of the largest load
// component, equilibrium rows normalized. Private to engine/src/compatible.
#include <cmath>

#include "moreau/compatible/no_tension_truss.hpp"

namespace moreau::detail {

struct ScaledTruss {
  double force_scale = 1.0;  // f = force_scale * x
  double exponent = 2.0;     // q = p / (p - 1), exponent of x in eq. 36
  VecX coefficient;          // (p-1)/p k~^(1/(1-p)) per contact
  VecX row_scale;            // 1 / |row| of the equilibrium operator (0 for an empty row)
  SparseMatrix a;            // row-scaled equilibrium operator
  VecX b;                    // row-scaled load / force_scale

  // Scale forces by the largest load component so the scaled problem is O(1); constant
  // factors in the objective (eq. 36 drops kappa the same way) do not move the minimizer.
  // Equilibrium rows in different units (forces, moments) are equilibrated by their norms;
  // row scaling leaves the feasible set unchanged.
  explicit ScaledTruss(const NoTensionTrussProblem& problem) {
    const Eigen::Index n = problem.equilibrium.cols();
    force_scale = problem.load.lpNorm<Eigen::Infinity>();
    const double p = power_law_exponent(problem.law);
    exponent = p / (p - 1.0);
    coefficient.resize(n);
    for (Eigen::Index i = 0; i < n; ++i)
      coefficient(i) = (p - 1.0) / p * std::pow(problem.relative_stiffness(i), 1.0 / (1.0 - p));
    row_scale.resize(problem.equilibrium.rows());
    for (Eigen::Index r = 0; r < problem.equilibrium.rows(); ++r) {
      const double norm = problem.equilibrium.row(r).norm();
      row_scale(r) = norm > 0.0 ? 1.0 / norm : 0.0;
    }
    a = row_scale.asDiagonal() * problem.equilibrium;
    b = row_scale.asDiagonal() * (problem.load / force_scale);
  }

  // sum_i c_i x_i^q and its derivatives, per contact.
  double energy(const VecX& x) const { return coefficient.dot(x.array().pow(exponent).matrix()); }
  double gradient(Eigen::Index i, double x) const {
    return coefficient(i) * exponent * std::pow(x, exponent - 1.0);
  }
  double curvature(Eigen::Index i, double x) const {
    return coefficient(i) * exponent * (exponent - 1.0) * std::pow(x, exponent - 2.0);
  }
};

// The two solvers behind solve_no_tension_truss, which validates, handles the empty problem,
// and reports the unscaled equilibrium residual and the time. Each leaves the forces in f
// (unscaled) and its iterations, optimality residual and termination in stats.
void solve_by_augmented_lagrangian(const NoTensionTrussOptions& options, const ScaledTruss& scaled,
                                   VecX& f, NoTensionTrussStats& stats);
void solve_by_interior_point(const NoTensionTrussProblem& problem,
                             const NoTensionTrussOptions& options, const ScaledTruss& scaled,
                             VecX& f, NoTensionTrussStats& stats);

}  // namespace moreau::detail
