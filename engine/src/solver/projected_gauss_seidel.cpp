#include "moreau/solver/projected_gauss_seidel.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "moreau/solver/cone.hpp"
#include "moreau/solver/gauss_seidel.hpp"
#include "moreau/solver/solver_registry.hpp"

namespace moreau {

const OptionTable<PgsOptions>& PgsOptions::fields() {
  static const OptionTable<PgsOptions> table = [] {
    OptionTable<PgsOptions> t;
    add_iterative_fields(t);
    t.push_back(number_option("relaxation", &PgsOptions::relaxation, Bounds::open(0, 2))
                    .described("over-relaxation omega of each projected step"));
    add_order_fields(t);
    return t;
  }();
  return table;
}

void PgsOptions::validate() const {
  validate_fields(fields(), *this, "PgsOptions");
  ContactOrderOptions::validate(static_cast<int>(custom_order.size()));
}

namespace {
const SolverRegistrar<ProjectedGaussSeidel, PgsOptions> kRegistration{
    "pgs",
    {.coulomb = true, .convex_relaxation = true, .frictionless = true},
    "projected Gauss-Seidel (Olsen & Kamrin eq. 22)"};
}  // namespace

ProjectedGaussSeidel::ProjectedGaussSeidel(PgsOptions options)
    : ContactSolver(options), pgs_(std::move(options)) {
  pgs_.validate();
}

namespace {

// The PGS local law: one projected step r_i <- P_K(r_i - omega g_i u_i) (Olsen & Kamrin eq. 22
// with the De Saxce velocity for the Coulomb cone).
struct ProjectionLaw {
  const ConeProblem& problem;
  double omega;
  bool de_saxce;
  // Local step g_i: 1 / W_ii makes the frictionless update the exact minimiser of the QP
  // (Olsen & Kamrin eq. 22) in r_i alone; rows / trace(W_ii) is the same "local mass" for a cone
  // block, where the exact local solve would need an inner iteration. A contact with a zero
  // diagonal block has a zero column in W (W is positive semi-definite): its impulse changes
  // no velocity, nothing determines it, so it is skipped and keeps its initial value.
  std::vector<double> step;

  bool active(int i) const { return step[i] != 0.0; }
  LocalUpdate solve(int i, const ContactSweep& sweep) const {
    const int rows = sweep.rows();
    const double mu = rows > 1 ? problem.mu[i] : 0.0;
    const Vec3 r_i = sweep.impulse(i);
    Vec3 u_i = sweep.velocity(i);
    if (de_saxce) u_i = de_saxce_velocity(u_i, mu, rows);
    const Vec3 updated = project_onto_cone(r_i - omega * step[i] * u_i, mu, rows);
    return {updated, updated - r_i};
  }
};

}  // namespace

SolverStats ProjectedGaussSeidel::solve(const ConeProblem& problem, VecX& r) const {
  constexpr int kThreads = 1;
  pgs_.ContactOrderOptions::validate(problem.contact_count());
  if (auto empty = begin_solve(name(), problem, options_, kThreads, r)) return *empty;
  IterationMonitor monitor(name(), problem, options_, kThreads);

  const int contacts = problem.contact_count();
  const int rows = problem.rows();
  ProjectionLaw law{problem, pgs_.relaxation,
                    rows > 1 && problem.friction_model == FrictionModel::coulomb,
                    std::vector<double>(contacts)};
  for (int i = 0; i < contacts; ++i) {
    const double trace = problem.delassus->diagonal_block(i).topLeftCorner(rows, rows).trace();
    law.step[i] = trace > 0.0 ? rows / trace : 0.0;
  }

  ContactSweep sweep(problem, r);
  VecX u;
  const auto measure = [&](int iteration) {
    sweep.velocities(u);
    return monitor.check(iteration, r, u);
  };
  const int iterations =
      gauss_seidel(sweep, visiting_order(pgs_, contacts), options_, monitor, law, measure);
  return monitor.finish(iterations);
}

}  // namespace moreau
