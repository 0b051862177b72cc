#include "moreau/solver/projected_gauss_jacobi.hpp"

#include <omp.h>

#include <utility>
#include <vector>

#include "moreau/solver/cone.hpp"
#include "moreau/solver/iteration_monitor.hpp"
#include "moreau/solver/solver_registry.hpp"

namespace moreau {

namespace {

// Below this many contacts the per-iteration projections cost less than an OpenMP fork/join.
constexpr int kParallelContacts = 2048;

}  // namespace

const OptionTable<PgjOptions>& PgjOptions::fields() {
  static const OptionTable<PgjOptions> table = [] {
    OptionTable<PgjOptions> t;
    add_iterative_fields(t);
    t.push_back(number_option("relaxation", &PgjOptions::relaxation, Bounds::open(0, 2))
                    .described("over-relaxation omega of each projected step"));
    return t;
  }();
  return table;
}

void PgjOptions::validate() const { validate_fields(fields(), *this, "PgjOptions"); }

namespace {
const SolverRegistrar<ProjectedGaussJacobi, PgjOptions> kRegistration{
    "pgj",
    {.coulomb = true, .convex_relaxation = true, .frictionless = true},
    "projected Gauss-Jacobi, the contacts in parallel (Olsen & Kamrin eq. 22)"};
}  // namespace

ProjectedGaussJacobi::ProjectedGaussJacobi(PgjOptions options)
    : ContactSolver(options), pgj_(std::move(options)) {
  pgj_.validate();
}

SolverStats ProjectedGaussJacobi::solve(const ConeProblem& problem, VecX& r) const {
  const int threads = omp_get_max_threads();
  if (auto empty = begin_solve(name(), problem, options_, threads, r)) return *empty;
  IterationMonitor monitor(name(), problem, options_, threads);

  const DelassusOperator& delassus = *problem.delassus;
  const int contacts = problem.contact_count();
  const int rows = problem.rows();
  const bool de_saxce = rows > 1 && problem.friction_model == FrictionModel::coulomb;
  const double omega = pgj_.relaxation;
  // Same local step as PGS (1 / W_ii, rows / trace(W_ii)); a zero diagonal block means a zero
  // column of the positive semi-definite W: that impulse moves nothing and is left as it is.
  std::vector<double> step(contacts);
  for (int i = 0; i < contacts; ++i) {
    const double trace = delassus.diagonal_block(i).topLeftCorner(rows, rows).trace();
    step[i] = trace > 0.0 ? rows / trace : 0.0;
  }

  // For any omega > 0 the fixed points of r <- P_K(r - omega G u^) are exactly the solutions:
  // of the LCP (Olsen & Kamrin eq. 21) for one row, of the cone complementarity problem (Kleinert
  // et al. eq. 22, with u^ for Coulomb) otherwise; omega only decides whether Jacobi reaches them.
  // u = W r + q is both the merit's velocity of the current iterate and the Jacobi right-hand
  // side of the next one: one Delassus product per iteration.
  VecX u(problem.size());
  delassus.apply(r, u);
  u += problem.q;
  int iteration = 0;
  bool stop = monitor.check(0, r, u);
  while (!stop && iteration < options_.max_iterations) {
    ++iteration;
#pragma omp parallel for schedule(static) if (contacts > kParallelContacts)
    for (int i = 0; i < contacts; ++i) {
      if (step[i] == 0.0) continue;
      const double mu = rows > 1 ? problem.mu[i] : 0.0;
      Vec3 r_i = Vec3::Zero();
      Vec3 u_i = Vec3::Zero();
      r_i.head(rows) = r.segment(i * rows, rows);
      u_i.head(rows) = u.segment(i * rows, rows);
      if (de_saxce) u_i = de_saxce_velocity(u_i, mu, rows);
      r.segment(i * rows, rows) =
          project_onto_cone(r_i - omega * step[i] * u_i, mu, rows).head(rows);
    }
    delassus.apply(r, u);
    u += problem.q;
    if (monitor.due(iteration)) stop = monitor.check(iteration, r, u);
  }
  return monitor.finish(iteration);
}

}  // namespace moreau
