#pragma once
// The interior point method of Kleinert, Simeon & Dressler (Sec. 4) as a ContactSolver:
// "ipm" (matrix-free CG, the paper's IPM-MF) and "ipm-direct" (CHOLMOD).
//
// The cone problem's CCP (Kleinert eq. 22: K_mu ∋ gamma ⊥ u = W gamma + q ∈ K_mu*) goes to
// the self-dual form (eq. 23) per contact by gamma = S x, y = S^T u with
//   S = diag(1/sqrt(mu), sqrt(mu), sqrt(mu)) = T_y / sqrt(mu) = sqrt(mu) T_x^-1,
// the paper's T_x, T_y up to the positive factor sqrt(mu) per contact (cones are invariant
// under it), chosen so that N = S^T W S stays symmetric also for contact-wise different mu;
// then x in C <=> gamma in K_mu, y in C <=> u in K_mu*, x^T y = gamma^T u, and the CCP is the
// optimality condition of the conic QP min 1/2 x^T N x + (S^T q)^T x over C (conic_qp.hpp).
// Frictionless rows and contacts with mu = 0 keep their normal row only (cone R+; the
// tangential impulse of a mu = 0 contact is 0).
//
// FrictionModel::convex_relaxation is solved directly. FrictionModel::coulomb (De Saxce) is
// wrapped in a fixed point on s_i = mu_i |u_t,i| (q_n += s, each convex problem solved by the
// IPM, s refreshed from its solution) until the Coulomb merit meets the tolerance; it has no
// convergence guarantee for large mu, and says so by its status (a fixed point that gains
// less than 10% in 3 rounds in a row stops as stalled).
//
// Termination: converged (merit <= tolerance), iteration_limit (max_iterations Newton steps
// used, or the CG solves at max_krylov_iterations), numerical_limit (the IPM reached the
// accuracy double precision allows before the tolerance: on friction cones near merit 1e-9,
// see conic/interior_point.hpp), breakdown (N not positive semi-definite, dependent
// equalities), stalled (a Coulomb fixed point that stops gaining or runs out of rounds),
// diverged (no solution: non-finite iterates or steps that shrink to nothing);
// SolverStats::stop_reason says it in words.
// SolverStats: merit is the suite's merit (merit.hpp) of the returned r; iterations counts
// Newton steps (over all fixed-point rounds); krylov_iterations(_per_step) the CG iterations;
// kleinert_error the paper's error(gamma, u) (see kleinert_error() below).
// SolverOptions read: tolerance (on the merit, or on kleinert_error with
// IpmOptions::stopping), max_iterations (Newton steps in all), warm_start (the fixed point
// starts its s from the given r), record_history.
#include "moreau/conic/interior_point.hpp"
#include "moreau/solver/solver.hpp"

namespace moreau {

// The paper's error(gamma, u) on the self-dual CCP (eq. 23) of the problem with free term
// q (+ the De Saxce term s for Coulomb problems): with x = S^-1 gamma, y = S^T (u + s),
// r = S^T (q + s),
//   error = max( dist(y, C) / |r|, x^T y / (|x| |r|) )
// (dual infeasibility and complementarity; gamma is in K_mu by construction of the IPM, and
// y = N x + r holds exactly since u is recomputed from gamma). The paper takes the measure
// from Kleinert et al. 2014 without printing it; this is the IPM's own stopping measure.
double kleinert_error(const ConeProblem& problem, const VecX& r, const VecX& u);

// Which measure SolverOptions::tolerance bounds: the suite's merit, or the paper's
// error(gamma, u) as Kleinert et al. stop (merit_history then records it, SolverStats::criterion
// is "kleinert_error", SolverStats::merit stays the suite's merit).
enum class IpmStopping { merit, kleinert_error };

// What "ipm" and "ipm-direct" read: the common options (tolerance on the stopping measure,
// max_iterations Newton steps over all fixed-point rounds), the stopping measure, the core
// method's options (its back-end is the name's: CG for "ipm", CHOLMOD for "ipm-direct"; its
// own tolerance and max_newton_steps are set for each round from the common options) and the
// Coulomb fixed point's.
struct IpmOptions : SolverOptions {
  IpmStopping stopping = IpmStopping::merit;
  conic::InteriorPointOptions core;
  int max_fixed_point_iterations = 50;  // Coulomb problems: rounds of the fixed point on s
  // Coulomb problems: each round's convex problem is solved to this fraction of
  // max(tolerance, the Coulomb merit at the round's start) (an inexact fixed point: no
  // accuracy beyond what the next refresh of s undoes).
  double inner_tolerance_fraction = 0.1;
  static const OptionTable<IpmOptions>& fields();
  void validate() const;  // throws InputError naming the field
};

// The termination that a stop of the conic core means: converged; iteration_limit (Newton
// steps or the Krylov solves at their limit); numerical_limit; breakdown (N not positive
// semi-definite, dependent equalities); diverged.
Termination termination_of(conic::InteriorPointStatus status);

class InteriorPointSolver final : public ContactSolver {
 public:
  // Throws InputError for options that cannot be used.
  explicit InteriorPointSolver(IpmOptions options = {});
  std::string name() const override;
  SolverStats solve(const ConeProblem& problem, VecX& r) const override;
  const IpmOptions& ipm_options() const { return ipm_; }

 private:
  IpmOptions ipm_;
};

}  // namespace moreau
