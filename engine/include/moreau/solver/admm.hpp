#pragma once
// ADMM on the Coulomb problem (the ADMM of the FCLIB comparison, Acary, Bremond & Huber 2018,
// after Boyd, Parikh, Chu, Peleato & Eckstein 2011, "Distributed optimization and statistical
// learning via the alternating direction method of multipliers"). The De Saxce fixed point
// turns Coulomb's law into the convex problem
//   min 1/2 r^T W r + (q + s)^T r   over r in K,   s_i = mu_i |u_t,i| e_n,
// split as r = z with z in K. Scaled-form iteration (Boyd et al. eq. 3.5-3.7) with penalty rho:
//   r    <- (W + rho I)^-1 (rho (z - xi) - q - s)
//   z    <- P_K(r + xi)
//   xi   <- xi + r - z
//   s    <- mu |u_t(r)| e_n,  u = W r + q     (the De Saxce fixed point, refreshed every step,
//                                            from the subproblem's r, not the projected z)
// Adaptive penalty by residual balancing (Boyd et al. section 3.4.1): with the primal residual
// |r - z| and the dual residual rho |z - z_prev|, rho is multiplied (divided) by
// penalty_factor when one exceeds balance times the other, xi rescaled accordingly. W + rho I
// is factored once per penalty value: CHOLMOD when W is symmetric, UMFPACK's LU when it is
// not (some FCLIB files store an unsymmetric W). The returned iterate is z (in K); it stops on
// the suite's merit (merit.hpp) of z <= tolerance, SolverStats::merit being that merit. The
// fixed point on s has no convergence guarantee for large mu (as in APGD).
#include <string>

#include "moreau/solver/solver.hpp"

namespace moreau {

// The common options count ADMM iterations (each one solve with the factored W + rho I) and
// bound the suite's merit (merit.hpp).
struct AdmmOptions : SolverOptions {
  double divergence_factor = 1e8;  // merit > factor * initial merit => diverged
  // Initial penalty; 0 = trace(W) / rows, the mean diagonal entry: a penalty of the size of W
  // weighs the split r = z like the contacts' own compliance.
  double initial_penalty = 0.0;
  double balance = 10.0;        // residual ratio that triggers a penalty change (Boyd: 10)
  double penalty_factor = 2.0;  // penalty change per trigger (Boyd: 2)
  int balance_every = 10;       // iterations between penalty updates (each costs a factorization)
  static const OptionTable<AdmmOptions>& fields();
  void validate() const;  // throws InputError naming the field
};

struct AdmmStats {
  SolverStats stats;
  int factorizations = 0;        // of W + rho I
  double final_penalty = 0.0;    // rho at the end
  double primal_residual = 0.0;  // |r - z| at the end
  double dual_residual = 0.0;    // rho |z - z_prev| at the end
};

class Admm final : public ContactSolver {
 public:
  explicit Admm(AdmmOptions options = {});
  std::string name() const override { return "admm"; }
  SolverStats solve(const ConeProblem& problem, VecX& r) const override;
  AdmmStats solve_with_details(const ConeProblem& problem, VecX& r) const;
  const AdmmOptions& admm_options() const { return admm_options_; }

 private:
  AdmmOptions admm_options_;
};

}  // namespace moreau
