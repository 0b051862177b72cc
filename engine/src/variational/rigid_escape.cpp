#include "moreau/variational/rigid_escape.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "moreau/core/error.hpp"

namespace moreau::variational {
namespace {

// Rounding level of the unit rows: a barycentric weight or a decrease of |x|^2 below it is zero.
constexpr double kRound = 1e-12;
// Wolfe's algorithm ends in finitely many steps (the hull of at most 2 x contacts rows); these
// bounds only stop a cycle of rounding, after which the certificate below is still checked.
constexpr int kMajorSteps = 200;
constexpr int kMinorSteps = 8;

double cross2(const Vec3& r, const Vec3& v) { return r.x() * v.y() - r.y() * v.x(); }

// The point of least norm of the affine hull of rows[set]: weights w (summing to 1) of
// x = rows[set[0]] + sum_k c_k (rows[set[k]] - rows[set[0]]), the least-squares c of minimum
// norm (a rank-deficient set, from rounding, still gives a point of the hull).
VecX affine_minimizer(const std::vector<Vec3>& rows, const std::vector<int>& set) {
  const int k = static_cast<int>(set.size());
  VecX w = VecX::Zero(k);
  w(0) = 1.0;
  if (k == 1) return w;
  Eigen::MatrixXd d(3, k - 1);
  for (int i = 1; i < k; ++i) d.col(i - 1) = rows[set[i]] - rows[set[0]];
  const VecX c = d.completeOrthogonalDecomposition().solve(-rows[set[0]]);
  w.tail(k - 1) = c;
  w(0) = 1.0 - c.sum();
  return w;
}

// Wolfe's minor cycle: moves the weights `lambda` of `set` toward the affine minimizer until
// that lies inside the simplex, dropping the points whose weight reaches zero.
void minor_cycle(const std::vector<Vec3>& rows, std::vector<int>& set, VecX& lambda) {
  for (int step = 0; step < kMinorSteps; ++step) {
    const VecX w = affine_minimizer(rows, set);
    if (w.minCoeff() > kRound) {
      lambda = w;
      return;
    }
    double theta = 1.0;
    for (int i = 0; i < w.size(); ++i) {
      if (w(i) <= kRound) theta = std::min(theta, lambda(i) / (lambda(i) - w(i)));
    }
    lambda = theta * w + (1.0 - theta) * lambda;
    std::vector<int> kept_set;
    std::vector<double> kept_weight;
    for (int i = 0; i < lambda.size(); ++i) {
      if (lambda(i) > kRound) {
        kept_set.push_back(set[i]);
        kept_weight.push_back(lambda(i));
      }
    }
    set = kept_set;
    lambda = Eigen::Map<VecX>(kept_weight.data(), static_cast<int>(kept_weight.size()));
  }
}

// Wolfe (1976), "Finding the nearest point in a polytope": the point of least norm of the convex
// hull of `rows` (unit vectors of R^3), by a corral `set` of affinely independent points.
Vec3 min_norm_point(const std::vector<Vec3>& rows) {
  std::vector<int> set{0};
  VecX lambda = VecX::Ones(1);
  Vec3 x = rows[0];
  for (int step = 0; step < kMajorSteps; ++step) {
    int j = 0;
    for (int i = 1; i < static_cast<int>(rows.size()); ++i)
      if (rows[i].dot(x) < rows[j].dot(x)) j = i;
    // x is the nearest point when no row lies beyond the plane through x normal to x.
    if (x.dot(x) - rows[j].dot(x) <= kRound) return x;
    if (std::find(set.begin(), set.end(), j) != set.end()) return x;  // rounding: no progress
    set.push_back(j);
    lambda.conservativeResize(lambda.size() + 1);
    lambda(lambda.size() - 1) = 0.0;
    minor_cycle(rows, set, lambda);
    x.setZero();
    for (int i = 0; i < static_cast<int>(set.size()); ++i) x += lambda(i) * rows[set[i]];
    // Four affinely independent points with positive weights span R^3 affinely: x is then the
    // origin, inside the hull (a fourth point that rounding left dependent: no further progress).
    if (x.norm() <= kRound) return Vec3::Zero();
    if (set.size() >= 4) return x;
  }
  return x;
}

void check(const EscapeContact& c, std::size_t k) {
  const std::string where = "rigid escape: contacts[" + std::to_string(k) + "]";
  if (!c.lever.allFinite()) throw InputError(where + ".lever: not finite");
  if (!c.opening.allFinite() || std::abs(c.opening.head<2>().norm() - 1.0) > 1e-9)
    throw InputError(where + ".opening: must be a unit vector in the xy plane");
  if (!(c.friction >= 0.0) || !std::isfinite(c.friction))
    throw InputError(where + ".friction: must be finite and non-negative");
}

}  // namespace

Escape rigid_escape(const std::vector<EscapeContact>& contacts) {
  Escape escape;
  if (contacts.empty()) {
    escape.margin = 1.0;
    return escape;
  }
  double reach = 0.0;
  for (std::size_t k = 0; k < contacts.size(); ++k) {
    check(contacts[k], k);
    reach = std::max(reach, contacts[k].lever.head<2>().norm());
  }
  escape.reach = reach > 0.0 ? reach : 1.0;
  std::vector<Vec3> rows;
  for (const EscapeContact& c : contacts) {
    const Vec3 o(c.opening.x(), c.opening.y(), 0.0);
    const Vec3 t(-o.y(), o.x(), 0.0);
    const Vec3 a(o.x(), o.y(), cross2(c.lever, o) / escape.reach);
    const Vec3 b(t.x(), t.y(), cross2(c.lever, t) / escape.reach);
    for (const double side : {1.0, -1.0}) rows.push_back((a + side * c.friction * b).normalized());
  }
  const Vec3 x = min_norm_point(rows);
  if (x.norm() <= kRound) return escape;
  // The certificate: the margin of the direction found, whatever rounding did to the corral.
  const Vec3 v = x.normalized();
  double margin = 1.0;
  for (const Vec3& g : rows) margin = std::min(margin, g.dot(v));
  if (margin > 0.0) {
    escape.margin = margin;
    escape.motion = v;
  }
  return escape;
}

}  // namespace moreau::variational
