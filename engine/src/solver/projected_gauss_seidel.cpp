#include "moreau/solver/projected_gauss_seidel.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "iteration_monitor.hpp"
#include "moreau/solver/cone.hpp"

namespace moreau {

ProjectedGaussSeidel::ProjectedGaussSeidel(SolverOptions options)
    : ContactSolver(std::move(options)) {
  detail::validate_options(options_);
}

SolverStats ProjectedGaussSeidel::solve(const ConeProblem& problem, VecX& r) const {
  constexpr int kThreads = 1;
  if (auto empty = detail::begin_solve(name(), problem, options_, kThreads, r)) return *empty;
  detail::IterationMonitor monitor(name(), problem, options_, kThreads);

  const DelassusOperator& delassus = *problem.delassus;
  const int contacts = problem.contact_count();
  const int rows = problem.rows();
  const bool de_saxce = rows > 1 && problem.friction_model == FrictionModel::coulomb;
  const double omega = options_.relaxation;
  // Local step g_i: 1 / W_ii makes the frictionless update the exact minimiser of the QP
  // (Olsen & Kamrin eq. 22) in r_i alone; rows / trace(W_ii) is the same "local mass" for a cone
  // block, where the exact local solve would need an inner iteration. A contact with a zero
  // diagonal block has a zero column in W (W is positive semi-definite): its impulse changes
  // no velocity, nothing determines it, so it is skipped and keeps its initial value.
  std::vector<double> step(contacts);
  for (int i = 0; i < contacts; ++i) {
    const double trace = delassus.diagonal_block(i).topLeftCorner(rows, rows).trace();
    step[i] = trace > 0.0 ? rows / trace : 0.0;
  }
  const std::vector<int> order = visiting_order(options_, contacts);

  VecX work;
  VecX u(problem.size());
  const auto measure = [&](int iteration) {
    for (int i = 0; i < contacts; ++i) {
      u.segment(i * rows, rows) = delassus.local_velocity(i, work).head(rows);
    }
    u += problem.q;
    return monitor.check(iteration, r, u);
  };

  delassus.begin_sweep(r, work);
  int iteration = 0;
  bool stop = measure(0);
  while (!stop && iteration < options_.max_iterations) {
    ++iteration;
    for (const int i : order) {
      if (step[i] == 0.0) continue;
      const double mu = rows > 1 ? problem.mu[i] : 0.0;
      Vec3 r_i = Vec3::Zero();
      Vec3 q_i = Vec3::Zero();
      r_i.head(rows) = r.segment(i * rows, rows);
      q_i.head(rows) = problem.q.segment(i * rows, rows);
      Vec3 u_i = delassus.local_velocity(i, work) + q_i;
      if (de_saxce) u_i = de_saxce_velocity(u_i, mu, rows);
      const Vec3 updated = project_onto_cone(r_i - omega * step[i] * u_i, mu, rows);
      delassus.update_sweep(i, updated - r_i, work);
      r.segment(i * rows, rows) = updated.head(rows);
    }
    if (monitor.due(iteration)) stop = measure(iteration);
  }
  return monitor.finish(iteration);
}

}  // namespace moreau
