#pragma once
// The single-contact problem of Preclik et al. Sec. 3.2 and its maximum-dissipation solution.
//
// In the contact frame (n, t, o), with A the SPD 3x3 Delassus block, b the velocity term and
// mu >= 0 (Preclik et al. eq. 3 for impacts, eq. 5 for a time step; A x - b is the post-impulse
// relative velocity and 1/2 x^T A x - x^T b the post-impulse energy up to a constant):
//   x* = argmin 1/2 x^T A x - x^T b   subject to   |x_to| <= mu x_n               (friction cone)
//                                                  a_n^T x - b_n >= 0 _|_ x_n >= 0  (Signorini)
//                                                  a_n^T x >= 0                     (pressure)
// with a_n = A e_n. In the engine's ConeProblem (u = W r + q) this is A = W_ii, x = r_i and
// b = -(q_i + sum_{j != i} W_ij r_j).
//
// solve_max_dissipation follows the structogram of Preclik et al. Fig. 5:
//   b_n < 0                  separating: x* = 0 (the pressure constraint excludes the rest)
//   mu = 0                   frictionless: x* = (b_n / A_nn, 0, 0)
//   P1: x0 = A^-1 b in cone  sticking: x* = x0 (the unconstrained minimum)
//   b_n = 0                  degenerate conic: a point if A_nn > mu |(A_nt, A_no)| (P2),
//                            else a ray (parabola) or a wedge of two rays (hyperbola), eq. (9)
//   b_n > 0                  the minimum over the boundary of the conic section, among the
//                            roots of the stationarity condition eq. (7), which is the
//                            trigonometric equation eq. (8) (Appendix A constants), solved as a
//                            quartic in y = e^(i alpha)
// Numerical care beyond the text: every root of the quartic is a candidate, the lowest
// objective wins (a superfluous candidate costs nothing, a missed root would); f_r of eq. (6)
// is summed without cancellation (ReducedProblem::boundary_factor); near the asymptotes of a
// hyperbola, where the optimal angle can fall between two doubles, the rays of eq. (9) lifted
// with the actual b_n and the radial minimum along each candidate direction (points inside the
// conic section) join the candidates. The agreement with a brute-force minimizer on 6000 random
// problems, degenerate families included, is checked in validation/unit/max_dissipation_test.cpp.
// Two departures from the text, both checked there:
// - eq. (9) picks one ray of the degenerate hyperbola by the side of x0 relative to the axis
//   alpha0; that rule misses the minimum when A^ is far from isotropic (about 4% of random
//   SPD problems), so both rays are evaluated and the lower objective kept;
// - the degenerate parabola of the text is the ray r (A_nt, A_no), r >= 0; the feasible ray is
//   r (-A_nt, -A_no) (x_n = -(A_nt x_t + A_no x_o) / A_nn must be >= 0), as eq. (9) gives with
//   delta alpha = pi.
#include <string>

#include "moreau/core/types.hpp"
#include "moreau/impact/trigonometric_polynomial.hpp"

namespace moreau {

struct SingleContactProblem {
  Mat3 a = Mat3::Identity();  // Delassus block in the frame (n, t, o), SPD
  Vec3 b = Vec3::Zero();      // velocity term, A x - b is the relative velocity
  double mu = 0.0;            // friction coefficient, >= 0

  double objective(const Vec3& x) const { return 0.5 * x.dot(a * x) - x.dot(b); }
  Vec3 relative_velocity(const Vec3& x) const { return a * x - b; }
  // Throws InputError for a non-finite entry, a negative mu or an A that is not SPD.
  void validate() const;
};

// Which branch of Preclik et al. Fig. 5 produced the solution.
enum class MaxDissipationCase {
  separating,      // b_n < 0: x* = 0
  frictionless,    // mu = 0
  sticking,        // P1: x* = x0, zero post-impulse slip
  degenerate,      // b_n = 0: point, ray or wedge of two rays, eq. (9)
  conic_boundary,  // b_n > 0: sliding, on the boundary of the conic section (eq. 8)
};
std::string to_string(MaxDissipationCase kind);

struct MaxDissipationSolution {
  Vec3 x = Vec3::Zero();
  MaxDissipationCase kind = MaxDissipationCase::separating;
  int candidates = 0;  // points compared (conic_boundary, degenerate), else 0
};

// The unique maximum-dissipation impulse; no iteration, no options. A must be SPD (not
// checked here, for speed: call problem.validate() on untrusted input).
MaxDissipationSolution solve_max_dissipation(const SingleContactProblem& problem);

// Tolerances of the analytic solver, exposed so that tests and experiments can state them.
struct MaxDissipationTolerances {
  // P1 accepts x0 when |x0_to| <= mu x0_n (1 + cone). x0 comes from a 3x3 LDLT solve whose
  // relative error is a few eps cond(A); 1e-12 keeps a sticking impulse that rounding puts just
  // outside the cone (the Painleve rod at mu = mu* exactly) and moves the cone by far less than
  // any physical tolerance.
  static constexpr double cone = 1e-12;
};

// The stationarity condition eq. (7), t(alpha)^T (A^ gamma(alpha) - b^) = 0, multiplied by
// positive factors into the trigonometric equation eq. (8): for alpha in I (f_r(alpha) > 0)
// its sign is the sign of d f_obj / d alpha. Its amplitude-phase constants are those of seed
// 003 Appendix A. Meaningful for b_n > 0 and mu > 0.
TrigonometricPolynomial stationarity_equation(const SingleContactProblem& problem);

// Elimination of the normal component on the plane of maximum compression (Preclik et al. Sec. 3.2):
// x_n = (b_n - A_nt x_t - A_no x_o) / A_nn, reduced matrix A^ and vector b^.
struct ReducedProblem {
  Eigen::Matrix2d a_hat;
  Eigen::Vector2d b_hat;
  Eigen::Vector2d a_tn;  // (A_nt, A_no)
  double a_nn = 1.0;
  double b_n = 0.0;
  explicit ReducedProblem(const SingleContactProblem& problem);
  // The point of the plane of maximum compression with tangential part x_to.
  Vec3 lift(const Eigen::Vector2d& x_to) const;
  // f_r = A_nn + mu a_tn . d of eq. (6), evaluated with error-free products and sums (Ogita,
  // Rump & Oishi 2005, "Accurate sum and dot product", Dot2) to ~eps^2 (A_nn + mu |a_tn|): near
  // an asymptote f_r -> 0 and the plain sum would lose eps (A_nn + mu |a_tn|) / f_r of relative
  // accuracy in r = mu b_n / f_r. With f_r exact for the given d, r d is on the boundary of the
  // conic section to rounding, however close d is to an asymptote.
  double boundary_factor(double mu, const Eigen::Vector2d& d) const;
};

}  // namespace moreau
