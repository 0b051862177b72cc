#include "moreau/variational/variational_stepper.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "moreau/contact/contact_system.hpp"
#include "moreau/core/error.hpp"
#include "moreau/integrator/scheme_registry.hpp"
#include "solver_report.hpp"

namespace moreau {
namespace {

// F = (theta dt^2)^1/2 M^-1/2 H of the dynamic force problem (Krabbenhoft/NURBS chapter
// eq. 4.15, N = theta dt^2 H^T M^-1 H = F^T F) on the planar degrees of freedom of each body
// (x, y, rotation about z: 3 rows per body, force_problem.hpp): the 2D inverse mass is
// diagonal there (model/body.hpp) and zero on the other three.
SparseMatrix planar_factor(const ContactSystem& system, double scale) {
  constexpr int kPlanarDofs[3] = {0, 1, 5};
  const int rows_per_contact = system.rows_per_contact();
  std::vector<Eigen::Triplet<double>> triplets;
  triplets.reserve(static_cast<std::size_t>(system.contact_count()) * rows_per_contact * 6);
  for (int i = 0; i < system.contact_count(); ++i) {
    const ContactRows& rows = system.rows()[i];
    for (int side = 0; side < 2; ++side) {
      const int body = side == 0 ? rows.body_a : rows.body_b;
      if (body < 0) continue;
      const InverseMass& inverse = system.inverse_mass(body);
      const double root[3] = {std::sqrt(inverse.linear(0)), std::sqrt(inverse.linear(1)),
                              std::sqrt(inverse.angular(2, 2))};
      const JacobianBlock& jacobian = side == 0 ? rows.jacobian_a : rows.jacobian_b;
      for (int k = 0; k < rows_per_contact; ++k) {
        for (int j = 0; j < 3; ++j) {
          const double value = scale * root[j] * jacobian(k, kPlanarDofs[j]);
          if (value != 0.0) triplets.emplace_back(3 * body + j, rows_per_contact * i + k, value);
        }
      }
    }
  }
  SparseMatrix factor(3 * system.body_count(), rows_per_contact * system.contact_count());
  factor.setFromTriplets(triplets.begin(), triplets.end());
  return factor;
}

}  // namespace

namespace {

// The solver section of a variational_theta scene: the scheme solves with the conic QP core, so
// solver.name may only pick its back-end, ipm-direct (CHOLMOD, the default) or ipm (CG);
// solver.tolerance and solver.max_iterations (its Newton steps) set the core's.
void take_solver_section(const std::string& solver, const SolverOptions& given,
                         const std::vector<std::string>& given_keys, AnySchemeOptions& options) {
  conic::InteriorPointOptions& ipm = options.get<VariationalOptions>().interior_point;
  const auto has = [&given_keys](const char* key) {
    return std::find(given_keys.begin(), given_keys.end(), key) != given_keys.end();
  };
  if (has("name")) {
    if (solver != "ipm" && solver != "ipm-direct")
      throw OptionError("name",
                        "scheme \"variational_theta\" solves with the interior point core: use "
                        "\"ipm-direct\" (default) or \"ipm\"");
    ipm.backend =
        solver == "ipm" ? conic::LinearBackend::conjugate_gradient : conic::LinearBackend::cholmod;
  }
  if (has("tolerance")) ipm.tolerance = given.tolerance;
  if (has("max_iterations")) ipm.max_newton_steps = given.max_iterations;
}

}  // namespace

const SchemeRegistrar<VariationalStepper, VariationalOptions> kRegistration{
    "variational_theta",
    "variational contact dynamics with contact elasticity, 2D (Krabbenhoft/NURBS chapter eq. "
    "4.4-4.15)",
    {},
    {},
    [](SchemeRegistration& r) {
      r.takes_solver = false;
      r.solver_section = take_solver_section;
      r.own_solver = [](const AnySchemeOptions& options) {
        const conic::InteriorPointOptions& ipm = options.get<VariationalOptions>().interior_point;
        return OwnSolver{ipm.backend == conic::LinearBackend::cholmod ? "ipm-direct" : "ipm",
                         ipm.tolerance};
      };
    }};

const OptionTable<VariationalOptions>& VariationalOptions::fields() {
  using O = VariationalOptions;
  // k_N, k_T of eq. 4.8 (N/m per unit thickness), > 0, "inf" for rigid.
  const auto stiffness = [](const char* key, double variational::ContactStiffness::*member,
                            const char* meaning) {
    return accessed_option<O, double>(
               key,
               {[member](const O& o) { return o.contact.stiffness.*member; },
                [member](O& o, double x) { o.contact.stiffness.*member = x; }},
               Bounds::above(0.0), "N/m (per unit thickness)")
        .with_word("inf", std::numeric_limits<double>::infinity())
        .described(meaning);
  };
  static const OptionTable<O> table{
      // The chapter's eq. 4.7: theta in [1/2, 1], e = (1 - theta) / theta.
      number_option("theta", &O::theta, Bounds::closed(0.5, 1.0))
          .described("theta of eq. 4.4-4.6; restitution e = (1 - theta) / theta (eq. 4.7)"),
      stiffness("k_n", &variational::ContactStiffness::normal,
                "normal contact stiffness k_N of eq. 4.8; \"inf\": rigid"),
      stiffness("k_t", &variational::ContactStiffness::tangential,
                "tangential contact stiffness k_T of eq. 4.8; \"inf\": rigid, no history"),
  };
  return table;
}

void VariationalOptions::validate(const World& world) const {
  StepSettings::validate();
  // Krabbenhoft/NURBS chapter eq. 4.7: e = (1 - theta) / theta in [0, 1].
  if (!(theta >= 0.5 && theta <= 1.0)) {
    throw InputError(
        "theta must be in [0.5, 1] (restitution e = (1 - theta) / theta in [0, 1]), got " +
        std::to_string(theta));
  }
  contact.validate(world);
  interior_point.validate();
}

VariationalStepper::VariationalStepper(World& world, VariationalOptions options)
    : Stepper(world), options_(std::move(options)) {
  options_.contact.frictional = options_.frictional;
  world_.validate();
  options_.validate(world_);
  if (!world_.is_planar()) {
    throw InputError(
        "variational_theta: the scheme is two-dimensional (Krabbenhoft/NURBS chapter "
        "Sec. 4.2); set dimension 2");
  }
}

void VariationalStepper::set_time_step(double dt) {
  VariationalOptions changed = options_;
  changed.time_step = dt;
  changed.validate(world_);
  options_ = std::move(changed);
}

const StepReport& VariationalStepper::step() {
  const double dt = options_.time_step;
  const double theta = options_.theta;
  const int body_count = static_cast<int>(world_.bodies.size());
  StepReport report;
  report.rows_per_contact = 2;
  report.contacts = detect_contacts(world_, options_.collision, &report.collision_stats);
  const std::vector<Contact>& contacts = report.contacts;
  const int n = static_cast<int>(contacts.size());
  report.active_contacts = n;

  // v0, the velocity without contacts v_free = v0 + dt M^-1 f_ext and the displacement without
  // contacts dx_free = dt v0 + theta dt^2 M^-1 f_ext (M_bar^-1 f_bar0 of eq. 4.4-4.5);
  // prescribed bodies move with their velocity, fixed ones not at all.
  VecX v0 = VecX::Zero(kBodyDofs * body_count), v_free = v0, dx_free = v0;
  for (int b = 0; b < body_count; ++b) {
    const RigidBody& body = world_.bodies[b];
    if (body.motion == Motion::fixed) continue;
    const Vec6 v = body.velocity();
    const Vec6 dv =
        body.is_dynamic()
            ? Vec6(dt * inverse_mass(body, world_.dimension).apply(world_.external_force(b)))
            : Vec6::Zero();
    v0.segment<6>(kBodyDofs * b) = v;
    v_free.segment<6>(kBodyDofs * b) = v + dv;
    dx_free.segment<6>(kBodyDofs * b) = dt * v + theta * dt * dv;
  }

  ContactSystem system(world_, contacts, 2);
  const std::vector<variational::ContactKey> keys = variational::contact_keys(contacts);
  variational::ForceProblem problem = variational::contact_force_problem(
      world_, contacts, dx_free, options_.contact, history_, keys);
  // N = F^T F passed as F where the core uses it (the augmented KKT matrix, the default, or the
  // body space: both factor F's 3 rows per body instead of N's contact-by-contact couplings,
  // docs/variational.md "Cost"); otherwise N assembled.
  if (n > 0 && (options_.interior_point.body_space || options_.interior_point.augmented_kkt))
    problem.hessian_factor = planar_factor(system, std::sqrt(theta) * dt);
  else if (n > 0)
    problem.hessian = (theta * dt * dt) * system.assemble();
  problem.force_scale = variational::mean_particle_weight(world_, problem.length_scale / (dt * dt));
  VecX displacement = problem.linear;  // g0 e_n + H^T dx_free
  for (int i = 0; i < n; ++i) displacement(2 * i) -= contacts[i].gap;
  VariationalStepDetails details;
  details.shear_history = problem.shear_history.size() > 0 ? problem.shear_history : VecX::Zero(n);
  details.persistent_contacts = options_.contact.rigid_tangential() ? 0 : history_.persistent(keys);

  const std::clock_t cpu_start = std::clock();
  variational::ForceSolution solution =
      variational::solve_force_problem(problem, options_.interior_point);
  report.solve_cpu_seconds = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  report.solver_stats = variational::solver_stats(solution, options_.interior_point, n);
  if (n == 0) solution.forces = VecX::Zero(0);

  // Eq. 4.6 with the contact forces constant over the step: v = v_free + dt M^-1 H f, and
  // dx = dt ((1 - theta) v0 + theta v).
  report.impulses = dt * solution.forces;
  const VecX dv = n > 0 ? system.body_velocity_change(report.impulses) : VecX::Zero(v0.size());
  for (int b = 0; b < body_count; ++b) {
    RigidBody& body = world_.bodies[b];
    if (!body.is_dynamic()) continue;
    const Vec6 v = v_free.segment<6>(kBodyDofs * b) + dv.segment<6>(kBodyDofs * b);
    body.set_velocity((1.0 - theta) * v0.segment<6>(kBodyDofs * b) + theta * v);
    v_free.segment<6>(kBodyDofs * b) = v;
  }
  if (n > 0) displacement += (theta * dt) * system.contact_velocity(dv);
  integrate_positions(world_, dt);
  for (int b = 0; b < body_count; ++b) {
    if (world_.bodies[b].is_dynamic())
      world_.bodies[b].set_velocity(v_free.segment<6>(kBodyDofs * b));
  }

  details.forces = solution.forces;
  details.displacements = displacement;
  for (int i = 0; i < n; ++i) details.displacements(2 * i) += contacts[i].gap;
  details.interior_point = solution.stats;
  if (!options_.contact.rigid_tangential() && n > 0)
    history_.store(keys, contacts, variational::tangential_forces(solution, n));
  if (n == 0) history_.clear();
  report.set_details(std::move(details));
  return finish_step(std::move(report));
}

const VariationalStepDetails& variational_details(const StepReport& report) {
  const auto* details = report.find_details<VariationalStepDetails>();
  if (!details)
    throw InputError("variational_details: the report is not of a variational_theta step");
  return *details;
}

}  // namespace moreau
