#include "moreau/solver/merit.hpp"

#include <algorithm>
#include <cmath>

#include "moreau/solver/cone.hpp"

namespace moreau {

MeritScaling merit_scaling(const ConeProblem& problem) {
  const int contacts = problem.contact_count();
  const int rows = problem.rows();
  MeritScaling scaling;
  scaling.block_scale.resize(contacts);
  double scale_sum = 0.0;
  int scaled = 0;
  for (int i = 0; i < contacts; ++i) {
    const double trace = problem.delassus->diagonal_block(i).topLeftCorner(rows, rows).trace();
    scaling.block_scale[i] = trace > 0.0 ? rows / trace : 0.0;
    if (trace > 0.0) {
      scale_sum += scaling.block_scale[i];
      ++scaled;
    }
  }
  const double fallback = scaled > 0 ? scale_sum / scaled : 1.0;
  for (int i = 0; i < contacts; ++i) {
    if (scaling.block_scale[i] == 0.0) scaling.block_scale[i] = fallback;
  }
  scaling.q_norm = std::max(problem.q.norm(), kMeritVelocityFloor);
  return scaling;
}

double merit(const ConeProblem& problem, const MeritScaling& scaling, const VecX& r,
             const VecX& u) {
  const int rows = problem.rows();
  const bool de_saxce = rows > 1 && problem.friction_model == FrictionModel::coulomb;
  double sum = 0.0;
  for (int i = 0; i < problem.contact_count(); ++i) {
    Vec3 r_i = Vec3::Zero();
    Vec3 u_i = Vec3::Zero();
    r_i.head(rows) = r.segment(i * rows, rows);
    u_i.head(rows) = u.segment(i * rows, rows);
    const double mu = rows > 1 ? problem.mu[i] : 0.0;
    if (de_saxce) u_i = de_saxce_velocity(u_i, mu, rows);
    const double d = scaling.block_scale[i];
    const Vec3 residual = (r_i - project_onto_cone(r_i - d * u_i, mu, rows)) / d;
    sum += residual.squaredNorm();
  }
  return std::sqrt(sum) / scaling.q_norm;
}

double merit(const ConeProblem& problem, const VecX& r) {
  VecX u(problem.size());
  problem.delassus->apply(r, u);
  u += problem.q;
  return merit(problem, merit_scaling(problem), r, u);
}

}  // namespace moreau
