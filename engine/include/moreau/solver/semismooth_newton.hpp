#pragma once
// Semismooth Newton on the Alart-Curnier function (Alart & Curnier 1991; the NSN-AC solver of
// the FCLIB comparison of Acary, Bremond & Huber 2018, section 3.3). Per contact i, with
// u = W r + q and per-contact parameters rho_n,i, rho_t,i > 0,
//   Phi_n,i = r_n,i - [r_n,i - rho_n,i u_n,i]_+
//   Phi_t,i = r_t,i - P_{B(mu_i [r_n,i - rho_n,i u_n,i]_+)}(r_t,i - rho_t,i u_t,i)
// Phi(r) = 0 exactly at a Coulomb solution. Each iteration solves J d = -Phi(r) with J an
// element of the generalized (Clarke) Jacobian, J = A_r + A_u W, A_r and A_u block diagonal;
// J is unsymmetric: dense LU (Eigen) up to dense_rows rows, sparse LU (KLU, SuiteSparse) above.
//
// Globalization: a non-monotone Armijo line search (Grippo, Lampariello & Lucidi 1986) on the
// Alart-Curnier merit psi(r) = 1/2 |Phi(r)|^2, along which the Newton direction is a descent
// direction with slope -2 psi where Phi is differentiable.
// The Newton matrix is shifted by lambda_k I, lambda_k -> 0 with |Phi| (regularization below).
// Fallback (stated): when the Newton system is singular or the line search finds no step
// above min_step, the solver takes fallback_sweeps sweeps of projected Gauss-Seidel (the
// suite's "pgs", which reaches any Coulomb solution it converges to) from the current iterate
// and resumes Newton from there.
//
// Stops on the suite's common merit (merit.hpp) <= tolerance: SolverStats::merit is that
// merit. The Alart-Curnier residual |Phi| of the final iterate is reported separately.
#include <string>

#include "moreau/solver/solver.hpp"

namespace moreau {

// The common options count Newton iterations (each one linear solve), 200 by default here
// (the registry starts every solver from SolverOptions' defaults), and bound the suite's merit.
struct SemismoothNewtonOptions : SolverOptions {
  SemismoothNewtonOptions() { max_iterations = 200; }
  double divergence_factor = 1e8;  // merit > factor * initial merit => diverged
  // Problems of at most this many rows use a dense LU: below a few hundred rows a dense
  // factorization costs less than KLU's symbolic analysis.
  int dense_rows = 240;
  // Non-monotone Armijo: psi(r + a d) <= max(last `memory` psi) - armijo * a * 2 psi(r).
  double armijo = 1e-4;
  int memory = 5;
  double backtrack = 0.5;   // step factor per rejected trial
  double min_step = 1e-10;  // below: the line search failed, fallback sweeps follow
  int fallback_sweeps = 10;
  // Regularized Newton: J + lambda_k I with lambda_k = regularization * min(1, |Phi(r_k)| /
  // |rho q|). Where W is rank deficient (hyperstatic stacks: more contact rows than degrees of
  // freedom) the Jacobian of sticking contacts is singular and the plain Newton step useless;
  // the shift is the Newton step of a proximal-point regularization, and since lambda_k -> 0
  // with |Phi| the local convergence stays quadratic. 0.1 was chosen among {0, 1e-3, 0.1} on
  // the five FCLIB problems where plain Newton stalled (experiments/fclib_benchmark/README.md).
  double regularization = 0.1;
  // rho_n,i = rho_scale / W_ii,nn and rho_t,i = rho_scale / mean(W_ii,tt): the inverse of the
  // contact's own compliance, so that r and rho u have the same units and size (Acary,
  // Bremond & Huber 2018 choose rho from W's diagonal blocks).
  double rho_scale = 1.0;
  static const OptionTable<SemismoothNewtonOptions>& fields();
  void validate() const;  // throws InputError naming the field
};

struct SemismoothNewtonStats {
  SolverStats stats;
  double alart_curnier_residual = 0.0;  // |Phi(r)|_2 / max(|q|, floor) at the returned r
  int fallback_steps = 0;               // iterations that took the fallback sweeps
  int line_search_trials = 0;           // Phi evaluations of the line search, in all
  bool sparse = false;                  // KLU (true) or dense LU (false)
};

class SemismoothNewton final : public ContactSolver {
 public:
  explicit SemismoothNewton(SemismoothNewtonOptions options = {});
  std::string name() const override { return "newton"; }
  SolverStats solve(const ConeProblem& problem, VecX& r) const override;
  SemismoothNewtonStats solve_with_details(const ConeProblem& problem, VecX& r) const;
  const SemismoothNewtonOptions& newton_options() const { return newton_options_; }

 private:
  SemismoothNewtonOptions newton_options_;
};

}  // namespace moreau
