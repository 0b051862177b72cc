#pragma once
// Primal-dual interior point method for the conic QP of conic_qp.hpp (Kleinert, Simeon &
// Dressler Sec. 4.1; Kleinert, Simeon & Obermayr 2014). The variant:
//
// - Infeasible primal-dual path following on the CCP (Kleinert eq. 23)
//     y = (N + C) x + r - A^T z,  A x = b,  x_i o y_i = sigma mu e,  x_i, y_i in int C_i,
//   with mu = x^T y / m (m cones) and the centering sigma driven to 0.
// - Nesterov-Todd scaling (jordan_algebra.hpp): the complementarity row is linearized in the
//   scaled point lambda = W x = W^-1 y, which eliminates dy and leaves the Newton matrix
//   N + C + W^2 (Kleinert Sec. 4.1: "A = W + N", W block diagonal with one block per cone)
//   symmetric positive definite whenever N + C is semi-definite, so CG and Cholesky apply.
// - The scaling follows the iterates in the scaled space, as in CVXOPT (Vandenberghe, "The
//   CVXOPT linear and quadratic cone program solvers"): A <- W~ A with W~ the NT scaling of the
//   well-centered scaled step, A^T A = W^2; recomputing W from x and y loses the small
//   spectral values of iterates near the cone boundary and stalls near 1e-6. Even so, on
//   second-order cones rounding limits the complementarity (|x o y| relative) to about
//   sqrt(epsilon) ~ 1e-8 where x and y both lie on the boundary (a sliding contact): the
//   status numerical_limit then says so.
// - Mehrotra predictor-corrector: an affine step (sigma = 0) gives sigma = (mu_aff / mu)^3 and
//   the second-order term; the corrector reuses the same Newton matrix.
// - Inexact Newton (Kleinert et al. 2014): with the CG back-end each Newton system is solved
//   to the residual eta (|primal residual| + x^T y / |x|) (and at most max_forcing |rhs|),
//   with the forcing term eta = clamp(sigma, min_forcing, max_forcing) tied to the centering
//   (predictor_forcing for the predictor, or the relative residual predictor_relative_residual
//   of its own right-hand side where set), so that the linear solves tighten as the iterates
//   approach the solution; the inexactness lands in the primal residual, which the next
//   Newton right-hand side contains and removes.
// - Step length: a fraction step_fraction of the largest step keeping x and y in C.
// - The corrector's CG starts from the predictor's solution (same matrix, right-hand sides
//   that differ by the second-order and centering terms).
// - A CG that stops at max_krylov_iterations short of its forcing term gives an inexact
//   direction; after kUnproductiveStepsAllowed such steps without progress the method stops
//   with krylov_limit instead of wandering.
// Equality constraints (without them the method is the paper's): the Newton system becomes
// the KKT system [H A^T; A 0] (dx, -dz) = (rhs, A-residual), H = N + C + W^2. The direct
// back-end factors it as one sparse quasi-definite matrix [H + D_p, A^T; A, -D_d] with a
// primal-dual regularization D_p, D_d of 1e-8 relative to the diagonals and iterative
// refinement on the unregularized system (CHOLMOD LDL^T; Vanderbei 1995, Friedlander & Orban
// 2012; quasi_definite_system.cpp says why and how large): its cost grows with the nonzeros,
// and it stays defined where the rows are nearly dependent in A H^-1 A^T. The matrix-free
// back-end eliminates the rows by the dense Schur complement A H^-1 A^T (one CG solve per row
// and a dense LDL^T, cubic in the rows: meant for few). Rows that are linearly dependent in
// A itself leave z non-unique (a mechanism in a static problem): the method refuses them with
// the status dependent_equalities, naming the rows.
//
// Two linear-algebra back-ends behind one interface: matrix-free preconditioned CG (the
// paper's IPM-MF) and a direct CHOLMOD factorization. Each works in one of two spaces:
// - the cone variables: CG on N + C + W^2 with the block-diagonal preconditioner
//   (N_kk + C_k + W_k^2)^-1 (Kleinert Sec. 4.2), CHOLMOD on N + C + W^2 assembled;
// - the body space, when N = F^T F is known (QuadraticFactor; contact problems,
//   F = M^-1/2 H S) and body_space is set: the Woodbury form K = I + F D^-1 F^T
//   (D = C + W^2), CG with the body-block preconditioner (K's products from its blocks,
//   assembled per Newton step, unless assemble_body_space is false) or CHOLMOD on K. Where a pile
//   has several contacts per body, N is singular and the cone-space preconditioned matrix has
//   eigenvalues ~ W_k^2 / N_kk -> 0 on N's null space; K has no null space
//   (body_space_system.cpp; experiments/pile_problems/README.md has the measurements).
#include <functional>
#include <string>
#include <vector>

#include "moreau/conic/conic_qp.hpp"
#include "moreau/core/option_table.hpp"

namespace moreau::conic {

enum class LinearBackend { conjugate_gradient, cholmod };
std::string to_string(LinearBackend backend);

// Preconditioner of the CG back-end in the body space with K assembled.
// body_blocks: K's diagonal blocks (block Jacobi). symmetric_gauss_seidel: (D + L) D^-1 (D + L^T)
// in Eisenstat's split form, whose two sweeps replace the product with K (about twice its
// bytes per iteration, about half the iterations in the late Newton steps; measured in
// validation/benchmark/results/ipm_gauss_seidel_split.json and ipm_body_space_1e5.json).
enum class BodySpacePreconditioner { body_blocks, symmetric_gauss_seidel };
std::string to_string(BodySpacePreconditioner preconditioner);

struct InteriorPointOptions {
  // On max(primal_residual, equality_residual, complementarity) of InteriorPointStats (when
  // no StopTest is given). Second-order cones: about 1e-8 is the floor rounding allows.
  double tolerance = 1e-8;
  int max_newton_steps = 200;
  // Stall rule: stop once max(primal_residual, equality_residual, complementarity) has not
  // halved in this many Newton steps (0: off, the method runs to max_newton_steps). A stall
  // close to the solution (below 1e-6) is the numerical limit, reported as such; elsewhere it
  // is an iteration limit whose message says that the residuals stopped decreasing (typically a
  // problem without solution whose iterates grow too slowly for the divergence tests).
  int stall_newton_steps = 0;
  LinearBackend backend = LinearBackend::conjugate_gradient;
  int max_krylov_iterations = 2000;  // per linear solve (CG back-end)
  // Upper bound of the CG forcing term eta = min(max_forcing, sigma) (inexact Newton).
  double max_forcing = 0.1;
  // Forcing term of the predictor's (affine) solve. Its direction only sets the centering
  // sigma = (mu_aff / mu)^3 through the affine step length and the second-order term of the
  // corrector, whose own solve (started from it) carries the forcing term that lands in the
  // residuals; an affine step length to a few percent does not need the corrector's accuracy.
  // Measured (experiments/pile_problems/README.md, "Predictor forcing"): 0.5 instead of
  // max_forcing saves 8-18% of the Krylov iterations on the blade trench and the benchmark
  // packings, same Newton steps. Like every solve, at most max_forcing |rhs|.
  double predictor_forcing = 0.5;
  // Where > 0: the predictor's solve stops at this relative residual of its own right-hand
  // side, |H dx - rhs| <= predictor_relative_residual |rhs| (at most max_forcing), instead of
  // predictor_forcing times the Newton residual scale. Near the solution that scale is many
  // orders of magnitude below |rhs| (nine in the late Newton steps of the loaded medium blade
  // trench at 1e-5, whose predictor solves then reached the cap of max_krylov_iterations),
  // while the predictor only needs its direction to about a digit. Measured there
  // (validation/benchmark/results/ipm_trench_predictor_forcing.json): 0.1 takes 36 % fewer
  // Krylov iterations and 36 % less solver time over ten steps, the Newton steps within 1 %.
  // Not the default: at merits of 1e-8 and below (the unit tests' small piles) the rougher
  // second-order term drives iterates onto the cone boundary (diverged or numerical_limit
  // short of the tolerance), where the residual-scaled predictor does not.
  double predictor_relative_residual = 0.0;
  // Smallest forcing term: CG in double precision cannot reach below it.
  double min_forcing = 1e-13;
  // Fraction of the step to the cone boundary (keeps the iterates interior).
  double step_fraction = 0.99;
  // Solve the Newton system in the body space when N has a factor N = F^T F
  // (QuadraticFactor, e.g. contact problems), both back-ends. False: in the cone variables
  // (the paper's IPM-MF as written).
  bool body_space = true;
  // CG back-end in the body space: apply K = I + F D^-1 F^T from its blocks, assembled at each
  // Newton step (one per body and per pair of bodies in contact), instead of from F's cone
  // columns at every product: the same K, with about half the bytes per product
  // (body_space_operator.hpp; measured 1.1-1.4x faster Krylov iterations,
  // validation/benchmark/results/ipm_body_order_and_assembled_k.json). The contact-space
  // Newton matrix is never formed either
  // way. False: the matrix-free product.
  bool assemble_body_space = true;
  // With assemble_body_space (ignored by the matrix-free product, which has no L to sweep).
  BodySpacePreconditioner body_space_preconditioner =
      BodySpacePreconditioner::symmetric_gauss_seidel;
  // CG back-end: start the corrector's CG from the predictor's solution.
  bool warm_start_corrector = true;
  // Direct back-end where N = F^T F is known (QuadraticFactor): factor the augmented
  // quasi-definite KKT matrix [C + W^2, F^T; F, -I] (quasi_definite_system.cpp: one row per
  // cone variable and one per body row of F, as the mixed force-displacement form of the
  // Krabbenhoft/NURBS chapter eq. 4.8 keeps them) by a sparse LDL^T instead of N + C + W^2
  // (a dense clique per body) or the body-space K = I + F D^-1 F^T (which loses digits along
  // stiff contact chains). Takes precedence over body_space for the direct back-end.
  bool augmented_kkt = false;
  // Direct back-end with equality constraints: eliminate them by the dense Schur complement
  // A H^-1 A^T (one CHOLMOD solve per row, a dense LDL^T) instead of the sparse
  // quasi-definite KKT factorization. For comparison only: cubic in the rows, and it loses
  // definiteness where the rows are nearly dependent in A H^-1 A^T.
  bool dense_schur_complement = false;
  static const OptionTable<InteriorPointOptions>& fields();
  // Throws InputError naming the field.
  void validate() const;
};

enum class InteriorPointStatus {
  converged,
  iteration_limit,
  diverged,               // a non-finite iterate, or steps that shrink to nothing (no solution)
  not_positive_definite,  // N + C + W^2 not positive definite: N is not semi-definite
  numerical_limit,        // rounding made N + C + W^2 singular close to the solution (x, y: last
                          // iterate); the tolerance asked for more than double precision gives
  krylov_limit,           // CG back-end: the linear solves stopped at max_krylov_iterations short
                          // of their forcing term and the residuals stopped decreasing
  dependent_equalities,   // rows of A are linearly dependent (the message names them): the
                          // multipliers z are not unique (a mechanism in a static problem)
};
std::string to_string(InteriorPointStatus status);

struct InteriorPointStats {
  InteriorPointStatus status = InteriorPointStatus::iteration_limit;
  std::string message;  // why it stopped, for the non-converged statuses
  int newton_steps = 0;
  std::vector<int> krylov_iterations_per_step;  // predictor + corrector (+ Schur) per step
  int krylov_iterations = 0;                    // total
  double primal_residual = 0.0;                 // || (N + C) x + r - A^T z - y || / ||r||
  double equality_residual = 0.0;               // || A x - b || / max(||b||, ||r||) (0 without A)
  double gap = 0.0;                             // x^T y / (||x|| ||r||)
  // || (x_k o y_k)_k || / (||x|| ||r||): unlike the gap (the trace of x o y) it is of first
  // order in the angle between x_k and the reflection of y_k at a boundary-boundary pair.
  double complementarity = 0.0;
  double mu = 0.0;  // x^T y / m
};

// The iterate handed to a caller's stop test after each Newton step.
struct InteriorPointIterate {
  const VecX& x;
  const VecX& y;
  const VecX& z;  // equality multipliers (empty without equality rows)
  const InteriorPointStats& stats;
};
// Returns true to stop (counted as converged). Without one, the method stops when
// max(primal_residual, equality_residual, complementarity) <= tolerance.
using StopTest = std::function<bool(const InteriorPointIterate&)>;

// Solves `problem`. x (and z, the equality multipliers): initial guess when `warm_start`
// (shifted into the interior), solution on exit; y = (N + C) x + r - A^T z in C on exit
// (up to the primal residual). Throws InputError for an invalid problem or options;
// non-convergence is a status.
InteriorPointStats solve_conic_qp(const ConicQp& problem, const InteriorPointOptions& options,
                                  VecX& x, VecX& y, VecX& z, bool warm_start = false,
                                  const StopTest& stop = {});

}  // namespace moreau::conic
