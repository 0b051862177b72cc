#include "moreau/impact/single_contact.hpp"

#include <Eigen/Cholesky>
#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <utility>
#include <vector>

#include "moreau/core/error.hpp"

namespace moreau {
namespace {

using Vec2 = Eigen::Vector2d;

// Rotation by +90 degrees: R d = d_perp, the derivative of d(alpha) = (cos alpha, sin alpha).
const Eigen::Matrix2d kQuarterTurn = (Eigen::Matrix2d() << 0.0, -1.0, 1.0, 0.0).finished();

// Keeps the candidate with the lowest objective.
struct Best {
  Vec3 x = Vec3::Zero();
  double objective = std::numeric_limits<double>::infinity();
  int candidates = 0;
  void offer(const SingleContactProblem& problem, const Vec3& candidate) {
    ++candidates;
    const double value = problem.objective(candidate);
    if (value < objective) {
      objective = value;
      x = candidate;
    }
  }
};

// The candidates of eq. (9): the rays r d of the b_n = 0 conic (the two asymptote directions
// alpha0 +- delta alpha of a hyperbola, the direction -a_tn of a parabola), each at
// r = max(0, d^T b^ / d^T A^ d) (eq. 9); both rays are tried (see the header). Lifted with the
// actual b_n they lie inside the conic section for b_n >= 0 (|x_to| <= -mu a_tn.x_to / A_nn
// <= mu x_n), and for b_n > 0 they follow its branches to O(b_n) far out, where the angle of a
// boundary point comes closer to the asymptote than a double resolves.
void offer_rays(const SingleContactProblem& problem, const ReducedProblem& reduced, double excess,
                Best& best) {
  if (excess > 0.0) return;  // ellipse: no unbounded directions
  const double s = reduced.a_tn.norm();
  std::vector<Vec2> rays;
  if (excess < 0.0) {
    // Eq. (6): alpha0 = atan2(A_no, A_nt), delta alpha = acos(-A_nn / (mu |(A_nt, A_no)|)).
    const double alpha0 = std::atan2(reduced.a_tn.y(), reduced.a_tn.x());
    const double delta = std::acos(std::max(-1.0, -reduced.a_nn / (problem.mu * s)));
    for (const double alpha : {alpha0 - delta, alpha0 + delta}) {
      rays.emplace_back(std::cos(alpha), std::sin(alpha));
    }
  } else {
    rays.push_back(-reduced.a_tn / s);
  }
  for (const Vec2& d : rays) {
    const double r = std::max(0.0, d.dot(reduced.b_hat) / d.dot(reduced.a_hat * d));
    best.offer(problem, reduced.lift(r * d));
  }
}

// Eq. (7)-(8): the stationary angles of f_obj(alpha) in I, mapped to the boundary point r d,
// r = mu b_n / f_r(alpha). The vertex alpha0, where f_r is largest and which always lies in I,
// is added so that the set is never empty; extra candidates are harmless, as every one is
// feasible. Far out on a hyperbola branch the optimal angle can fall between two doubles
// (r = mu b_n / f_r changes by ~eps / |alpha - asymptote| per ulp of alpha); the point of the
// same ray that minimises the objective radially, r' = clamp(d^T b^ / d^T A^ d, 0, r), which
// lies inside the conic section, then comes closer to the optimum and is offered as well.
void offer_boundary(const SingleContactProblem& problem, const ReducedProblem& reduced,
                    Best& best) {
  std::vector<double> angles = root_candidates(stationarity_equation(problem));
  angles.push_back(std::atan2(reduced.a_tn.y(), reduced.a_tn.x()));
  for (const double alpha : angles) {
    const Vec2 d(std::cos(alpha), std::sin(alpha));
    const double f_r = reduced.boundary_factor(problem.mu, d);
    if (!(f_r > 0.0)) continue;  // alpha outside I: the ray never meets the boundary
    const double r = problem.mu * reduced.b_n / f_r;
    // On the cone by construction (x_n = |x_to| / mu), on the plane to rounding (f_r exact).
    best.offer(problem, Vec3(r / problem.mu, r * d.x(), r * d.y()));
    const double radial = std::clamp(d.dot(reduced.b_hat) / d.dot(reduced.a_hat * d), 0.0, r);
    if (radial < r) best.offer(problem, reduced.lift(radial * d));
  }
}

// Error-free transformations: a b = p + e and a + b = s + e exactly (Ogita, Rump & Oishi 2005).
void two_product(double a, double b, double& p, double& e) {
  p = a * b;
  e = std::fma(a, b, -p);
}

void two_sum(double a, double b, double& s, double& e) {
  s = a + b;
  const double z = s - a;
  e = (a - (s - z)) + (b - z);
}

}  // namespace

std::string to_string(MaxDissipationCase kind) {
  switch (kind) {
    case MaxDissipationCase::separating:
      return "separating";
    case MaxDissipationCase::frictionless:
      return "frictionless";
    case MaxDissipationCase::sticking:
      return "sticking";
    case MaxDissipationCase::degenerate:
      return "degenerate";
    case MaxDissipationCase::conic_boundary:
      return "conic_boundary";
  }
  return "unknown";
}

void SingleContactProblem::validate() const {
  std::ostringstream message;
  if (!a.allFinite() || !b.allFinite()) {
    message << "single-contact problem: A and b must be finite";
  } else if (!(mu >= 0.0) || !std::isfinite(mu)) {
    message << "single-contact problem: mu = " << mu << " must be finite and >= 0";
  } else if ((a - a.transpose()).norm() > 1e-12 * a.norm()) {
    message << "single-contact problem: A must be symmetric";
  } else if (Eigen::LLT<Mat3>(a).info() != Eigen::Success) {
    message << "single-contact problem: A must be positive definite";
  } else {
    return;
  }
  throw InputError(message.str());
}

ReducedProblem::ReducedProblem(const SingleContactProblem& problem)
    : a_tn(problem.a(0, 1), problem.a(0, 2)), a_nn(problem.a(0, 0)), b_n(problem.b.x()) {
  // Sec. 3.2: A^ = A_to,to - a_tn a_tn^T / A_nn, b^ = b_to - a_tn b_n / A_nn.
  a_hat = problem.a.bottomRightCorner<2, 2>() - a_tn * a_tn.transpose() / a_nn;
  b_hat = problem.b.tail<2>() - a_tn * (b_n / a_nn);
}

Vec3 ReducedProblem::lift(const Eigen::Vector2d& x_to) const {
  return Vec3((b_n - a_tn.dot(x_to)) / a_nn, x_to.x(), x_to.y());
}

double ReducedProblem::boundary_factor(double mu, const Eigen::Vector2d& d) const {
  // A_nn + (mu A_nt) d_t + (mu A_no) d_o in double-double: every product and sum split into
  // its rounded value and its exact error, the errors summed last.
  double m_t, m_t_error, m_o, m_o_error;
  two_product(mu, a_tn.x(), m_t, m_t_error);
  two_product(mu, a_tn.y(), m_o, m_o_error);
  double p_t, p_t_error, p_o, p_o_error;
  two_product(m_t, d.x(), p_t, p_t_error);
  two_product(m_o, d.y(), p_o, p_o_error);
  double sum1, sum1_error, sum2, sum2_error;
  two_sum(a_nn, p_t, sum1, sum1_error);
  two_sum(sum1, p_o, sum2, sum2_error);
  return sum2 +
         (sum1_error + sum2_error + p_t_error + p_o_error + m_t_error * d.x() + m_o_error * d.y());
}

TrigonometricPolynomial stationarity_equation(const SingleContactProblem& problem) {
  // With d = (cos alpha, sin alpha), r(alpha) = mu b_n / f_r(alpha) and gamma = r d:
  //   grad f = A^ gamma - b^ = (M d - A_nn b^) / f_r,    M = mu b_n A^ - mu b^ a_tn^T,
  //   t(alpha) ~ r' d + r R d = (r / f_r) (A_nn R d + mu R a_tn),
  // so eq. (7) times f_r^2 / r > 0 is (M d - A_nn b^) . (A_nn R d + mu R a_tn) = 0, eq. (8).
  const ReducedProblem reduced(problem);
  const double mu = problem.mu;
  const Eigen::Matrix2d m =
      mu * reduced.b_n * reduced.a_hat - mu * reduced.b_hat * reduced.a_tn.transpose();
  return dot_of_affine(-reduced.a_nn * reduced.b_hat, m, mu * kQuarterTurn * reduced.a_tn,
                       reduced.a_nn * kQuarterTurn);
}

MaxDissipationSolution solve_max_dissipation(const SingleContactProblem& problem) {
  const double b_n = problem.b.x();
  const double a_nn = problem.a(0, 0);
  const double mu = problem.mu;
  if (b_n < 0.0) return {Vec3::Zero(), MaxDissipationCase::separating, 0};
  if (mu == 0.0) return {Vec3(b_n / a_nn, 0.0, 0.0), MaxDissipationCase::frictionless, 0};

  // P1: the unconstrained minimum x0 = A^-1 b lies on the plane of maximum compression; if it
  // is in the friction cone it is the solution (a sticking contact).
  const Vec3 x0 = problem.a.ldlt().solve(problem.b);
  if (x0.x() >= 0.0 &&
      std::hypot(x0.y(), x0.z()) <= mu * x0.x() * (1.0 + MaxDissipationTolerances::cone)) {
    return {x0, MaxDissipationCase::sticking, 0};
  }

  // The minimum lies on the boundary of the conic section (b_n > 0) or of the degenerate conic
  // (b_n = 0: the origin if A_nn > mu |a_tn| (P2), else a ray or two rays, eq. 9).
  const ReducedProblem reduced(problem);
  const double excess = a_nn - mu * reduced.a_tn.norm();
  Best best;
  best.offer(problem, reduced.lift(Eigen::Vector2d::Zero()));  // the apex, always feasible
  offer_rays(problem, reduced, excess, best);
  if (b_n > 0.0) offer_boundary(problem, reduced, best);
  const MaxDissipationCase kind =
      b_n > 0.0 ? MaxDissipationCase::conic_boundary : MaxDissipationCase::degenerate;
  return {best.x, kind, best.candidates};
}

}  // namespace moreau
