#pragma once
// Every solution of the single-contact impact problem with Coulomb-like friction (Preclik et al.
// Fig. 1, impulsive column, contact closed), to show that the problem can have several:
//   x_n >= 0 _|_ u_n >= 0,   |x_to| <= mu x_n,   |u_to| x_to = -mu x_n u_to,   u = A x - b.
// The solutions are
//   - no impulse, x = 0, valid when b_n <= 0;
//   - sticking, u = 0: x0 = A^-1 b when it lies in the cone;
//   - sliding, x = x_n (1, mu d) with |d| = 1, x_n > 0, u_n = 0 and u_to = -|u_to| d != 0.
// For b_n != 0 the sliding ones follow the polynomial approach of Bonnefon & Daviet (2011,
// "Quartic formulation of Coulomb 3D frictional contact", cited by Preclik et al. Sec. 4.1): with
// d = (cos alpha, sin alpha), u_n = 0 gives x_n = b_n / f_r(alpha) (f_r of eq. 6), and
// f_r(alpha) u_to(alpha) is affine in d, so u_to parallel to d, u_to x d = 0, is a
// trigonometric polynomial of degree 2: a quartic in e^(i alpha) with at most four roots, each
// kept if x_n > 0 and u_to opposes d. For b_n = 0, x_n > 0 forces f_r(alpha) = 0: the
// directions of the rays of eq. (9), along which the solutions may form a continuum (the
// Painleve rod at mu = mu*, Preclik et al. Sec. 4.2: every convex combination of 0 and Lambda0).
#include <vector>

#include "moreau/impact/single_contact.hpp"

namespace moreau {

enum class CoulombKind { no_impulse, sticking, sliding };
std::string to_string(CoulombKind kind);

struct CoulombSolution {
  Vec3 x = Vec3::Zero();
  CoulombKind kind = CoulombKind::no_impulse;
};

// The sliding solutions start + t direction, 0 < t < length (length may be +infinity).
struct CoulombContinuum {
  Vec3 start = Vec3::Zero();
  Vec3 direction = Vec3::Zero();
  double length = 0.0;
};

struct CoulombSolutionSet {
  std::vector<CoulombSolution> isolated;  // by decreasing objective (least dissipative first)
  std::vector<CoulombContinuum> continua;
  // u_to x d vanishes for every direction d (e.g. A = a I with b_to = 0): the sliding
  // solutions, if any, are a whole arc of directions and are not listed.
  bool every_direction_parallel = false;
};

// Tolerances of the enumeration, relative to the scale of the quantity compared.
struct CoulombTolerances {
  // A polished root alpha is a root when |s(alpha)| <= root * s.scale(): a simple root polishes
  // to a few eps; a double root (tangency) to ~eps as well, since its complex pair sits
  // sqrt(eps) off the circle and s is quadratic there.
  static constexpr double root = 1e-10;
  // Roots closer than this are one (double) root, rad.
  static constexpr double merge_angle = 1e-7;
  // A sliding candidate with |u_to| <= slip |b| is the sticking solution seen on the cone
  // boundary; a cross product below parallel |w| |d| counts as zero (b_n = 0 continua).
  static constexpr double slip = 1e-10;
  static constexpr double parallel = 1e-9;
  // b_n = 0: |A_nn - mu |a_tn|| <= parabola A_nn is a parabola, one ray direction -a_tn. The
  // continuum of the Painleve rod exists at mu = mu* exactly, which rounding (of mu* and of A)
  // misses by a few eps; as two rays at alpha0 +- acos(-A_nn / (mu |a_tn|)) it would be seen
  // ~sqrt(eps) apart and broken up, as acos has slope ~1/sqrt near -1.
  static constexpr double parabola = 1e-12;
};

// A must be SPD (see SingleContactProblem::validate).
CoulombSolutionSet enumerate_coulomb_solutions(const SingleContactProblem& problem);

// How far x is from satisfying the Coulomb-like impact constraints: the largest of
// |min(D x_n, u_n)|, D max(0, |x_to| - mu x_n) and D | |u_to| x_to + mu x_n u_to | / V, over V,
// with D = trace(A) / 3 turning impulses into velocities and V = max(|b|, D |x|) the velocity
// scale of the problem (rounding leaves ~eps V in u = A x - b). Zero exactly at a solution.
double coulomb_residual(const SingleContactProblem& problem, const Vec3& x);

}  // namespace moreau
