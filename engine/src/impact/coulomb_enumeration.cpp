#include "moreau/impact/coulomb_enumeration.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace moreau {
namespace {

using Vec2 = Eigen::Vector2d;

double cross(const Vec2& u, const Vec2& v) { return u.x() * v.y() - u.y() * v.x(); }

// The sliding solution x = x_n (1, mu d) if it is one: x_n > 0, and the slip u_to is non-zero
// and opposes d (|u_to| x_to = -mu x_n u_to with x_to = mu x_n d). The callers choose d with
// u_to parallel to d.
bool sliding(const SingleContactProblem& problem, double x_n, const Vec2& d, Vec3& x) {
  if (!(x_n > 0.0) || !std::isfinite(x_n)) return false;
  x = Vec3(x_n, problem.mu * x_n * d.x(), problem.mu * x_n * d.y());
  const Vec2 slip = problem.relative_velocity(x).tail<2>();
  return slip.norm() > CoulombTolerances::slip * problem.b.norm() && slip.dot(d) < 0.0;
}

// b_n != 0: f_r(alpha) u_to(alpha) = g0 + G d with g0 = b_n a_tn - A_nn b_to and
// G = mu b_n A_to,to - mu b_to a_tn^T; u_to x d = 0 is the trigonometric equation
// (g0 + G d) . (-R d) = 0 (R the quarter turn).
void sliding_off_plane(const SingleContactProblem& problem, CoulombSolutionSet& set) {
  const ReducedProblem reduced(problem);
  const double b_n = problem.b.x();
  const double mu = problem.mu;
  const Vec2 b_to = problem.b.tail<2>();
  const Vec2 g0 = b_n * reduced.a_tn - reduced.a_nn * b_to;
  const Eigen::Matrix2d g =
      mu * b_n * problem.a.bottomRightCorner<2, 2>() - mu * b_to * reduced.a_tn.transpose();
  const Eigen::Matrix2d minus_quarter_turn = (Eigen::Matrix2d() << 0.0, 1.0, -1.0, 0.0).finished();
  const TrigonometricPolynomial s = dot_of_affine(g0, g, Vec2::Zero(), minus_quarter_turn);
  // Identically zero when its coefficients are rounding noise next to the terms they sum.
  if (s.scale() <= CoulombTolerances::root * (g0.norm() + g.norm())) {
    set.every_direction_parallel = true;
    return;
  }
  for (const double alpha :
       real_roots(s, CoulombTolerances::root, CoulombTolerances::merge_angle)) {
    const Vec2 d(std::cos(alpha), std::sin(alpha));
    Vec3 x;
    if (sliding(problem, b_n / reduced.boundary_factor(mu, d), d, x))
      set.isolated.push_back({x, CoulombKind::sliding});
  }
}

// b_n = 0: x_n > 0 needs f_r(d) = 0, the ray directions of eq. (9). Along such a d,
// u_to = x_n w - b_to with w = a_tn + mu A_to,to d, and u_to x d = x_n (w x d) - (b_to x d).
void sliding_in_plane(const SingleContactProblem& problem, CoulombSolutionSet& set) {
  const ReducedProblem reduced(problem);
  const double mu = problem.mu;
  const double s = reduced.a_tn.norm();
  const double excess = reduced.a_nn - mu * s;
  std::vector<Vec2> directions;
  if (std::abs(excess) <= CoulombTolerances::parabola * reduced.a_nn) {
    directions.push_back(-reduced.a_tn / s);
  } else if (excess < 0.0) {
    const double alpha0 = std::atan2(reduced.a_tn.y(), reduced.a_tn.x());
    const double delta = std::acos(-reduced.a_nn / (mu * s));
    for (const double alpha : {alpha0 - delta, alpha0 + delta}) {
      directions.emplace_back(std::cos(alpha), std::sin(alpha));
    }
  }
  const Vec2 b_to = problem.b.tail<2>();
  for (const Vec2& d : directions) {
    const Vec2 w = reduced.a_tn + mu * problem.a.bottomRightCorner<2, 2>() * d;
    const double w_cross = cross(w, d);
    const double b_cross = cross(b_to, d);
    const Vec3 unit(1.0, mu * d.x(), mu * d.y());  // x = x_n unit
    if (std::abs(w_cross) > CoulombTolerances::parallel * w.norm()) {
      Vec3 x;
      if (sliding(problem, b_cross / w_cross, d, x)) {
        set.isolated.push_back({x, CoulombKind::sliding});
      }
      continue;
    }
    if (std::abs(b_cross) > CoulombTolerances::parallel * b_to.norm()) continue;
    // u_to is parallel to d for every x_n: the solutions are the x_n > 0 where
    // u_to . d = x_n (w . d) - b_to . d < 0.
    const double w_dot = w.dot(d);
    const double b_dot = b_to.dot(d);
    const double infinity = std::numeric_limits<double>::infinity();
    if (w_dot > 0.0) {
      if (b_dot > 0.0) set.continua.push_back({Vec3::Zero(), unit, b_dot / w_dot});
    } else if (w_dot < 0.0) {
      const double from = std::max(0.0, b_dot / w_dot);
      set.continua.push_back({from * unit, unit, infinity});
    } else if (b_dot > 0.0) {
      set.continua.push_back({Vec3::Zero(), unit, infinity});
    }
  }
}

}  // namespace

std::string to_string(CoulombKind kind) {
  switch (kind) {
    case CoulombKind::no_impulse:
      return "no_impulse";
    case CoulombKind::sticking:
      return "sticking";
    case CoulombKind::sliding:
      return "sliding";
  }
  return "unknown";
}

CoulombSolutionSet enumerate_coulomb_solutions(const SingleContactProblem& problem) {
  CoulombSolutionSet set;
  const double b_n = problem.b.x();
  const double mu = problem.mu;
  if (b_n <= 0.0) set.isolated.push_back({Vec3::Zero(), CoulombKind::no_impulse});

  const Vec3 x0 = problem.a.ldlt().solve(problem.b);
  const bool sticks = x0.x() > 0.0 && std::hypot(x0.y(), x0.z()) <=
                                          mu * x0.x() * (1.0 + MaxDissipationTolerances::cone);
  if (sticks) set.isolated.push_back({x0, CoulombKind::sticking});

  if (mu == 0.0) {
    // Frictionless: x = (b_n / A_nn, 0, 0) slides unless it is the sticking x0.
    if (b_n > 0.0 && !sticks) {
      set.isolated.push_back({Vec3(b_n / problem.a(0, 0), 0.0, 0.0), CoulombKind::sliding});
    }
  } else if (b_n != 0.0) {
    sliding_off_plane(problem, set);
  } else {
    sliding_in_plane(problem, set);
  }
  std::sort(set.isolated.begin(), set.isolated.end(),
            [&](const CoulombSolution& p, const CoulombSolution& q) {
              return problem.objective(p.x) > problem.objective(q.x);
            });
  return set;
}

double coulomb_residual(const SingleContactProblem& problem, const Vec3& x) {
  const double d = problem.a.trace() / 3.0;
  const double scale = std::max({problem.b.norm(), d * x.norm(), 1e-300});
  const Vec3 u = problem.relative_velocity(x);
  const Vec2 x_to = x.tail<2>();
  const Vec2 u_to = u.tail<2>();
  double error = std::abs(std::min(d * x.x(), u.x()));
  error = std::max(error, d * std::max(0.0, x_to.norm() - problem.mu * x.x()));
  error = std::max(error, d * (u_to.norm() * x_to + problem.mu * x.x() * u_to).norm() / scale);
  return error / scale;
}

}  // namespace moreau
