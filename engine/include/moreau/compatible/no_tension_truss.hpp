#pragma once
// The no-tension truss in complementary energy, Olsen & Kamrin eq. 36:
//
//   min_f  sum_i (p-1)/p  k~_i^(1/(1-p))  f_i^(p/(p-1))
//   s.t.   (B^T f)_j = F~_j  for free degrees of freedom j (Gamma_N),   f >= 0,
//
// whose solution is the unique force distribution of an elastic contact network in the limit
// of infinite stiffness (Hookean p = 2: a QP; Hertzian p = 5/2: a smooth convex NLP).
// Solved as in Olsen & Kamrin Sec. 7 by a bound-constrained augmented Lagrangian method
// (LANCELOT; Conn, Gould & Toint 1991, in the form of Nocedal & Wright Alg. 17.4) whose
// subproblems min_{f >= 0} L_A(f; lambda, mu) are solved by APGD, or by a primal-dual
// interior point method whose Newton steps solve the normal equations A Theta A^T with
// CHOLMOD (Mehrotra predictor-corrector; Nocedal & Wright Alg. 16.4 / 19.1 for the convex
// separable objective). Both solve the same problem; compatible_cd's tests and the pyramid
// experiment check that they agree.
#include <string>

#include "moreau/contact/delassus.hpp"
#include "moreau/core/option_table.hpp"
#include "moreau/core/types.hpp"

namespace moreau {

enum class ContactLaw {
  hookean,   // p = 2, f = k c
  hertzian,  // p = 5/2, f = k c^(3/2)
};
double power_law_exponent(ContactLaw law);
std::string to_string(ContactLaw law);

struct NoTensionTrussProblem {
  // B^T restricted to the free degrees of freedom (rows: Gamma_N, columns: contacts), i.e.
  // the equilibrium operator of the truss.
  SparseMatrix equilibrium;
  VecX load;                // F~ on the same rows (Olsen & Kamrin eq. 37)
  VecX relative_stiffness;  // k~_i > 0 per contact (Olsen & Kamrin eq. 35)
  ContactLaw law = ContactLaw::hookean;
  void validate() const;  // throws InputError
};

enum class TrussMethod {
  augmented_lagrangian,  // Olsen & Kamrin Sec. 7 (LANCELOT-style, APGD subproblems)
  interior_point,        // primal-dual, CHOLMOD normal equations
};
std::string to_string(TrussMethod method);

struct NoTensionTrussOptions {
  TrussMethod method = TrussMethod::augmented_lagrangian;
  // Equilibrium: ||B^T f - F~||_2 <= tolerance ||F~||_2.
  double equilibrium_tolerance = 1e-10;
  // Optimality of the subproblem, on forces scaled by max|F~|: || f - P(f - grad L) ||_inf.
  double optimality_tolerance = 1e-10;
  int max_outer_iterations = 60;
  int max_inner_iterations = 200000;  // APGD iterations per subproblem
  int max_interior_point_iterations = 200;
  double initial_penalty = 10.0;  // mu_0 of the augmented Lagrangian (scaled problem)
  double penalty_growth = 10.0;   // mu <- growth mu when equilibrium does not improve enough
  // The keys a scene sets (integrator.compatible): the tolerances, the method and its limits.
  static const OptionTable<NoTensionTrussOptions>& fields();
  void validate() const;
};

struct NoTensionTrussStats {
  bool converged = false;
  std::string termination;  // "converged", "outer iteration limit", "empty"
  int outer_iterations = 0;
  int inner_iterations = 0;  // APGD iterations (augmented Lagrangian) or Newton steps (IPM)
  double equilibrium_residual = 0.0;  // ||B^T f - F~|| / ||F~||
  double optimality_residual = 0.0;
  double penalty = 0.0;
  double wall_seconds = 0.0;
  // Interior point method only: time spent on its normal equations A Theta A^T (CHOLMOD).
  double normal_matrix_seconds = 0.0;  // forming A Theta A^T
  double analysis_seconds = 0.0;       // symbolic analysis (0 when a previous solve's is reused)
  int factorizations = 0;              // numeric factorizations, one per Newton step
  double factorization_seconds = 0.0;  // all of them
  int solves = 0;                      // triangular solves, two per Newton step
  double solve_seconds = 0.0;
};

// f: start (e.g. the classic CD forces) on entry, compatible forces on exit. Dispatches on
// options.method.
NoTensionTrussStats solve_no_tension_truss(const NoTensionTrussProblem& problem,
                                           const NoTensionTrussOptions& options, VecX& f);

}  // namespace moreau
