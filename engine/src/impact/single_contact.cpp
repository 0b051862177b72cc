#include "moreau/impact/single_contact.hpp"

#include <Eigen/Cholesky>
#include <cmath>
#include <limits>
#include <sstream>
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

// Eq. (9): the minimum of the reduced objective along the rays of the b_n = 0 conic (one ray
// for a parabola, the two asymptotes for a hyperbola), each ray r d with
// r = max(0, d^T b^ / d^T A^ d). Both rays are tried (see the header).
MaxDissipationSolution minimize_over_rays(const SingleContactProblem& problem,
                                          const ReducedProblem& reduced, bool parabola) {
  const double s = reduced.a_tn.norm();
  std::vector<Vec2> directions;
  if (parabola) {
    directions.push_back(-reduced.a_tn / s);
  } else {
    // Eq. (6): alpha0 = atan2(A_no, A_nt), delta alpha = acos(-A_nn / (mu |(A_nt, A_no)|)).
    const double alpha0 = std::atan2(reduced.a_tn.y(), reduced.a_tn.x());
    const double delta = std::acos(-reduced.a_nn / (problem.mu * s));
    for (const double alpha : {alpha0 - delta, alpha0 + delta}) {
      directions.emplace_back(std::cos(alpha), std::sin(alpha));
    }
  }
  Best best;
  for (const Vec2& d : directions) {
    const double r = std::max(0.0, d.dot(reduced.b_hat) / d.dot(reduced.a_hat * d));
    best.offer(problem, reduced.lift(r * d));
  }
  return {best.x, MaxDissipationCase::degenerate, best.candidates};
}

// Eq. (7)-(8): the minimum of f_obj(alpha) over I among the stationary angles. The vertex
// alpha0, where f_r is largest and which always lies in I, is added so that the candidate set
// is never empty; extra candidates are harmless, as every one is a feasible boundary point.
MaxDissipationSolution minimize_over_boundary(const SingleContactProblem& problem,
                                              const ReducedProblem& reduced) {
  std::vector<double> angles = root_candidates(stationarity_equation(problem));
  angles.push_back(std::atan2(reduced.a_tn.y(), reduced.a_tn.x()));
  Best best;
  for (const double alpha : angles) {
    const Vec2 d(std::cos(alpha), std::sin(alpha));
    const double f_r = reduced.a_nn + problem.mu * reduced.a_tn.dot(d);  // eq. (6)
    if (!(f_r > 0.0)) continue;  // alpha outside I: the ray never meets the boundary
    const double r = problem.mu * reduced.b_n / f_r;
    // On the cone boundary by construction: x_n = |x_to| / mu.
    best.offer(problem, Vec3(r / problem.mu, r * d.x(), r * d.y()));
  }
  return {best.x, MaxDissipationCase::conic_boundary, best.candidates};
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

  const ReducedProblem reduced(problem);
  const double excess = a_nn - mu * reduced.a_tn.norm();  // > 0: ellipse (P2)
  const bool parabola = std::abs(excess) <= MaxDissipationTolerances::parabola * a_nn;
  const bool ellipse = !parabola && excess > 0.0;
  if (b_n == 0.0) {
    // Degenerate ellipse: the conic section is the origin alone.
    if (ellipse) return {Vec3::Zero(), MaxDissipationCase::degenerate, 1};
    return minimize_over_rays(problem, reduced, parabola);
  }
  if (!ellipse && b_n <= MaxDissipationTolerances::negligible_normal * problem.b.norm()) {
    return minimize_over_rays(problem, reduced, parabola);
  }
  return minimize_over_boundary(problem, reduced);
}

}  // namespace moreau
