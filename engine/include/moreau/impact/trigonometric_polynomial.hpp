#pragma once
// Trigonometric polynomials of degree 2 in one angle, the form of Preclik et al. eq. (8):
//   s(alpha) = c0 + c1 cos(alpha + phi1) + c2 cos(2 alpha + phi2)
// held in Cartesian form (c1 cos(alpha + phi1) = c1 cos(phi1) cos(alpha) - c1 sin(phi1)
// sin(alpha), likewise for 2 alpha), which needs no square roots or atan2 and so stays exact
// when an amplitude vanishes. Their roots are found as Preclik et al. Sec. 3.2 says: y = e^(i alpha)
// turns s = 0 into a quartic in y, solved through the eigenvalues of its companion matrix.
#include <vector>

#include "moreau/core/types.hpp"

namespace moreau {

struct TrigonometricPolynomial {
  double constant = 0.0;  // c0
  double cos1 = 0.0;      // c1 cos(phi1)
  double sin1 = 0.0;      // -c1 sin(phi1)
  double cos2 = 0.0;      // c2 cos(phi2)
  double sin2 = 0.0;      // -c2 sin(phi2)

  double operator()(double alpha) const;
  double derivative(double alpha) const;
  // Sum of the absolute coefficients: bounds |s| and sets the scale of "s = 0".
  double scale() const;
};

// The trigonometric polynomial (p0 + P d) . (q0 + Q d) with d = (cos alpha, sin alpha): the
// dot product of two vectors that depend affinely on the direction d.
TrigonometricPolynomial dot_of_affine(const Eigen::Vector2d& p0, const Eigen::Matrix2d& p,
                                      const Eigen::Vector2d& q0, const Eigen::Matrix2d& q);

// Angles in (-pi, pi] of every root of the quartic in y = e^(i alpha), each polished by
// safeguarded Newton steps on s. Real roots of s are |y| = 1; the argument of a root off the
// unit circle (a complex alpha) is still returned, since near a double root rounding moves the
// pair off the circle by ~sqrt(eps). Callers that minimise over candidates lose nothing by the
// extra angles; callers that need true roots filter with `real_roots`. Empty when s is
// constant.
std::vector<double> root_candidates(const TrigonometricPolynomial& s);

// The real roots of s in (-pi, pi]: candidates with |s(alpha)| <= tolerance * s.scale(),
// merged when closer than `merge_angle` (a double root yields two nearby candidates).
std::vector<double> real_roots(const TrigonometricPolynomial& s, double tolerance,
                               double merge_angle);

}  // namespace moreau
