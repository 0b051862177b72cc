#include "moreau/solver/cone.hpp"

#include <algorithm>

namespace moreau {

// mu must be finite and >= 0 (ConeProblem::validate enforces it); mu = 0 makes K the ray
// {r_t = 0, r_n >= 0} and K* the half-space {u_n >= 0}. Entries past `rows` are returned as 0.
Vec3 project_onto_cone(const Vec3& x, double mu, int rows) {
  Vec3 p = Vec3::Zero();
  const double normal = x[0];
  if (rows == 1) {
    p[0] = std::max(normal, 0.0);
    return p;
  }
  const auto tangent = x.segment(1, rows - 1);
  const double tangent_norm = tangent.norm();
  if (normal >= 0.0 && tangent_norm <= mu * normal) {  // normal >= 0 matters for mu = 0
    p.head(rows) = x.head(rows);
    return p;
  }
  // The polar cone K° = -K* = {mu |x_t| <= -x_n} projects to the apex.
  if (mu * tangent_norm <= -normal) return p;
  // Otherwise the projection lies on the boundary ray through x_t: minimise the distance over
  // (s, mu s x_t / |x_t|), which gives s = (x_n + mu |x_t|) / (1 + mu^2). Here |x_t| > 0,
  // since x_t = 0 puts x in K (x_n >= 0) or in K° (x_n < 0).
  const double projected_normal = (normal + mu * tangent_norm) / (1.0 + mu * mu);
  p[0] = projected_normal;
  p.segment(1, rows - 1) = (mu * projected_normal / tangent_norm) * tangent;
  return p;
}

// Moreau's decomposition x = P_{K*}(x) + P_{(K*)°}(x) with (K*)° = -K gives
// P_{K*}(x) = x + P_K(-x), which also covers mu = 0 (K* a half-space) without dividing by mu.
Vec3 project_onto_dual_cone(const Vec3& x, double mu, int rows) {
  Vec3 p = Vec3::Zero();
  p.head(rows) = x.head(rows);
  return p + project_onto_cone(-p, mu, rows);
}

Vec3 de_saxce_velocity(const Vec3& u, double mu, int rows) {
  Vec3 v = Vec3::Zero();
  v.head(rows) = u.head(rows);
  if (rows > 1) v[0] += mu * u.segment(1, rows - 1).norm();
  return v;
}

}  // namespace moreau
