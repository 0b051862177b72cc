#include "moreau/impact/trigonometric_polynomial.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <numbers>

namespace moreau {
namespace {

using Complex = std::complex<double>;

// Coefficients below this fraction of s.scale() are rounding noise: the quartic's degree drops.
// Dropping |p4| = |p0| = delta moves the roots near the unit circle by O(delta / scale) only,
// which the Newton polish on the full s removes.
constexpr double kNegligibleCoefficient = 1e-14;
// Newton polish: at most this many steps from the companion-matrix root, whose angle is already
// accurate to ~eps cond; a step longer than kLongestPolishStep means the start was not near a
// simple real root (a complex pair near a double root) and the start is kept.
constexpr int kPolishSteps = 4;
constexpr double kLongestPolishStep = 0.1;  // rad

double wrap(double alpha) {
  const double pi = std::numbers::pi;
  alpha = std::remainder(alpha, 2.0 * pi);  // in [-pi, pi]
  return alpha <= -pi ? alpha + 2.0 * pi : alpha;
}

// s(alpha) and s'(alpha) from one cosine and one sine.
void evaluate(const TrigonometricPolynomial& s, double alpha, double& value, double& slope) {
  const double c = std::cos(alpha), n = std::sin(alpha);
  const double c2 = c * c - n * n, n2 = 2.0 * c * n;
  value = s.constant + s.cos1 * c + s.sin1 * n + s.cos2 * c2 + s.sin2 * n2;
  slope = -s.cos1 * n + s.sin1 * c - 2.0 * s.cos2 * n2 + 2.0 * s.sin2 * c2;
}

double polish(const TrigonometricPolynomial& s, double start) {
  double alpha = start;
  for (int k = 0; k < kPolishSteps; ++k) {
    double value, slope;
    evaluate(s, alpha, value, slope);
    if (value == 0.0 || slope == 0.0) break;
    const double step = value / slope;
    if (std::abs(alpha - step - start) > kLongestPolishStep) return wrap(start);
    alpha -= step;
    if (std::abs(step) <= 4.0 * std::numeric_limits<double>::epsilon()) break;
  }
  return wrap(alpha);
}

}  // namespace

double TrigonometricPolynomial::operator()(double alpha) const {
  double value, slope;
  evaluate(*this, alpha, value, slope);
  return value;
}

double TrigonometricPolynomial::derivative(double alpha) const {
  double value, slope;
  evaluate(*this, alpha, value, slope);
  return slope;
}

double TrigonometricPolynomial::scale() const {
  return std::abs(constant) + std::abs(cos1) + std::abs(sin1) + std::abs(cos2) + std::abs(sin2);
}

TrigonometricPolynomial dot_of_affine(const Eigen::Vector2d& p0, const Eigen::Matrix2d& p,
                                      const Eigen::Vector2d& q0, const Eigen::Matrix2d& q) {
  // (p0 + P d).(q0 + Q d) = p0.q0 + (P^T q0 + Q^T p0).d + d^T B d with B = P^T Q, and
  // d^T B d = (B00 + B11)/2 + (B00 - B11)/2 cos 2a + (B01 + B10)/2 sin 2a.
  const Eigen::Matrix2d b = p.transpose() * q;
  const Eigen::Vector2d linear = p.transpose() * q0 + q.transpose() * p0;
  TrigonometricPolynomial s;
  s.constant = p0.dot(q0) + 0.5 * b.trace();
  s.cos1 = linear.x();
  s.sin1 = linear.y();
  s.cos2 = 0.5 * (b(0, 0) - b(1, 1));
  s.sin2 = 0.5 * (b(0, 1) + b(1, 0));
  return s;
}

std::vector<double> root_candidates(const TrigonometricPolynomial& s) {
  // y^2 s(alpha) with y = e^(i alpha), cos k alpha = (y^k + y^-k)/2, sin k alpha =
  // (y^k - y^-k)/(2i), is the quartic p4 y^4 + p3 y^3 + p2 y^2 + conj(p3) y + conj(p4).
  const Complex p4 = 0.5 * Complex(s.cos2, -s.sin2);
  const Complex p3 = 0.5 * Complex(s.cos1, -s.sin1);
  const Complex p2 = s.constant;
  const double negligible = kNegligibleCoefficient * s.scale();
  std::vector<Complex> roots;
  if (std::abs(p4) > negligible) {
    // Companion matrix of the monic quartic; its eigenvalues are all four roots.
    Eigen::Matrix4cd companion = Eigen::Matrix4cd::Zero();
    const Complex monic[4] = {std::conj(p4) / p4, std::conj(p3) / p4, p2 / p4, p3 / p4};
    for (int k = 0; k < 4; ++k) companion(k, 3) = -monic[k];
    for (int k = 1; k < 4; ++k) companion(k, k - 1) = 1.0;
    const Eigen::ComplexEigenSolver<Eigen::Matrix4cd> solver(companion, false);
    for (int k = 0; k < 4; ++k) roots.push_back(solver.eigenvalues()(k));
  } else if (std::abs(p3) > negligible) {
    // The quadratic p3 y^2 + p2 y + conj(p3) left after dividing by y; the root of larger
    // modulus from the sign-matched formula, the other from the product conj(p3) / p3.
    const Complex root = std::sqrt(p2 * p2 - 4.0 * p3 * std::conj(p3));
    const Complex large = (std::real(std::conj(p2) * root) >= 0.0) ? -(p2 + root) : -(p2 - root);
    const Complex y1 = large / (2.0 * p3);
    roots.push_back(y1);
    if (std::abs(y1) > 0.0) roots.push_back(std::conj(p3) / (p3 * y1));
  }
  std::vector<double> angles;
  angles.reserve(roots.size());
  for (const Complex& y : roots) {
    if (!(std::abs(y) > 0.0) || !std::isfinite(std::abs(y))) continue;
    angles.push_back(polish(s, std::arg(y)));
  }
  return angles;
}

std::vector<double> real_roots(const TrigonometricPolynomial& s, double tolerance,
                               double merge_angle) {
  const double bound = tolerance * s.scale();
  std::vector<double> roots;
  for (const double alpha : root_candidates(s)) {
    if (std::abs(s(alpha)) <= bound) roots.push_back(alpha);
  }
  std::sort(roots.begin(), roots.end());
  std::vector<double> merged;
  for (const double alpha : roots) {
    if (!merged.empty() && alpha - merged.back() <= merge_angle) {
      if (std::abs(s(alpha)) < std::abs(s(merged.back()))) merged.back() = alpha;
      continue;
    }
    merged.push_back(alpha);
  }
  // The first and last roots may be one root seen from both sides of +-pi.
  if (merged.size() > 1 && merged.front() + 2.0 * std::numbers::pi - merged.back() <= merge_angle) {
    if (std::abs(s(merged.back())) < std::abs(s(merged.front()))) merged.front() = merged.back();
    merged.pop_back();
  }
  return merged;
}

}  // namespace moreau
