#pragma once
// Accelerated projected gradient descent (APGD): Mazhar, Heyn, Negrut, Tasora, "Using
// Nesterov's method to accelerate multibody dynamics with friction and contact", ACM TOG
// 2015, Algorithm 1, on the QP
//   min 1/2 r^T W r + r^T q   over r in K = K_1 x ... x K_n
// (Olsen & Kamrin eq. 22 for frictionless problems; the cone complementarity problem of the convex
// relaxation for frictional ones). Nesterov momentum, Lipschitz backtracking, a 0.9 step
// growth per iteration, adaptive restart (ApgdOptions::adaptive_restart) and the best
// iterate by merit returned. For FrictionModel::coulomb with frictional rows the De Saxce
// term s_i = mu_i |u_t,i| e_n is added to q and refreshed from every new iterate (the "fixed
// point on s" of Acary, Bremond & Huber), so the QP's solution at the fixed point solves the
// De Saxce complementarity problem; that loop has no convergence guarantee for large mu.
// Initial Lipschitz constant: ApgdOptions::initial_lipschitz, or a power-iteration
// estimate of lambda_max(W) when it is 0. The contacts are projected in parallel (OpenMP);
// the result does not depend on the thread count.
#include "moreau/solver/solver.hpp"

namespace moreau {

// What APGD reads: the common options, the merit check, restart and the initial step.
struct ApgdOptions : IterativeSolverOptions {
  bool adaptive_restart = true;
  double initial_lipschitz = 0.0;  // 0 = estimate from a power iteration
  static const OptionTable<ApgdOptions>& fields();
  void validate() const;  // throws InputError naming the field
};

class Apgd final : public ContactSolver {
 public:
  // Throws InputError for options that cannot be used (ApgdOptions::validate).
  explicit Apgd(ApgdOptions options = {});
  std::string name() const override { return "apgd"; }
  SolverStats solve(const ConeProblem& problem, VecX& r) const override;

 private:
  ApgdOptions apgd_;
};

}  // namespace moreau
