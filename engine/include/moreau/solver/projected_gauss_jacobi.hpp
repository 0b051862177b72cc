#pragma once
// Projected Gauss-Jacobi (PGJ, the CCP solver Kleinert et al. compares against, see its ref. [20],
// Tasora & Anitescu 2011). Every contact is updated from the same u = W r + q, one Delassus
// product per iteration, the contacts in parallel (OpenMP):
//   r_i <- P_K(r_i - omega g_i u^_i),  g_i = rows / trace(W_ii)  (g_i = 1 / W_ii frictionless)
// with u^_i the De Saxce velocity (FrictionModel::coulomb) or u_i (convex_relaxation).
// Unlike Gauss-Seidel, the Jacobi splitting converges only for omega < 2 / lambda_max(G W)
// (G = diag(g_i)), which for a contact coupled to many others is well below 1: the default
// PgjOptions::relaxation = 1.0 may not converge, the experiments use omega = 0.3.
// The result does not depend on the thread count.
#include "moreau/solver/solver.hpp"

namespace moreau {

// What PGJ reads: the common options, the merit check and its relaxation.
struct PgjOptions : IterativeSolverOptions {
  double relaxation = 1.0;  // omega in (0, 2)
  static const OptionTable<PgjOptions>& fields();
  void validate() const;  // throws InputError naming the field
};

class ProjectedGaussJacobi final : public ContactSolver {
 public:
  // Throws InputError for options that cannot be used (PgjOptions::validate).
  explicit ProjectedGaussJacobi(PgjOptions options = {});
  std::string name() const override { return "pgj"; }
  SolverStats solve(const ConeProblem& problem, VecX& r) const override;

 private:
  PgjOptions pgj_;
};

}  // namespace moreau
