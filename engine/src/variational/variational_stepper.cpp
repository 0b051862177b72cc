#include "moreau/variational/variational_stepper.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "contact_screening.hpp"
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
      bool_option("screen_contacts", &O::screen_contacts)
          .described("solve with the contacts a step can close and prove the others open "
                     "(same solution, fewer contacts)"),
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

namespace {

// The first working set of contact screening (VariationalOptions::screen_contacts,
// contact_screening.hpp).

// Twice a pair's approach speed at the step's start, over the step: the first working set holds
// the contacts whose gap one step can close even if the step's impulses double the speeds (a
// body at rest that is struck); the check below catches the rest.
constexpr double kScreeningSpeedFactor = 2.0;

// A bound on the speed at which a pair's gap closes at the step's start (with the step's
// external impulse, v_free): |v_a - v_b| + |omega_a| R_a + |omega_b| R_b with R the bounding
// radius. Relative, so that the grains of a flowing mass that move together keep their open
// contacts out of the solve.
class ApproachBound {
 public:
  ApproachBound(const World& world, const VecX& v_free)
      : linear_(world.bodies.size()), spin_(world.bodies.size(), 0.0) {
    for (std::size_t b = 0; b < world.bodies.size(); ++b) {
      const auto v = v_free.segment<6>(kBodyDofs * static_cast<Eigen::Index>(b));
      linear_[b] = v.head<3>();
      const double omega = v.tail<3>().norm();
      if (omega > 0.0) spin_[b] = omega * bounding_radius(world.bodies[b].shape.geometry);
    }
  }
  double operator()(int a, int b) const {
    return (linear_[a] - linear_[b]).norm() + spin_[a] + spin_[b];
  }

 private:
  std::vector<Vec3> linear_;
  std::vector<double> spin_;
};

}  // namespace

const StepReport& VariationalStepper::step() {
  const double dt = options_.time_step;
  const double theta = options_.theta;
  const int body_count = static_cast<int>(world_.bodies.size());
  StepReport report;
  report.rows_per_contact = 2;
  detector_.detect(world_, options_.collision, detected_, &report.collision_stats);
  const std::vector<Contact>& detected = detected_;
  const int detected_count = static_cast<int>(detected.size());

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

  // The whole problem's vectors (cheap: one row pair per contact); the solve takes the working
  // set, with the whole problem's stop-test scale.
  const std::vector<variational::ContactKey> detected_keys = variational::contact_keys(detected);
  variational::ForceProblem whole = variational::contact_force_problem(
      world_, detected, dx_free, options_.contact, history_, detected_keys);
  whole.force_scale = variational::mean_particle_weight(world_, whole.length_scale / (dt * dt));
  if (detected_count > 0) whole.displacement_scale = variational::stop_displacement_scale(whole);

  std::vector<char> working(detected.size(), 1);
  if (options_.screen_contacts) {
    const ApproachBound approach(world_, v_free);
    // A body whose support gives way in the step falls by g dt^2 relative to its neighbours.
    const double fall = world_.gravity.norm() * dt;
    const double resolution = variational::history_resolution(
        history_, options_.interior_point.tolerance, whole.force_scale);
    for (int i = 0; i < detected_count; ++i) {
      const Contact& c = detected[i];
      const double reach = kScreeningSpeedFactor * dt * (approach(c.body_a, c.body_b) + fall);
      working[i] = c.gap <= reach || history_.carried_force(detected_keys[i]) > resolution;
    }
  }

  VariationalStepDetails details;
  std::vector<int> chosen, left_out;
  VecX dv = VecX::Zero(v0.size()), chosen_motion;  // H^T theta dt dv on the working set
  variational::ForceProblem problem;               // of the last round
  variational::ForceSolution solution;
  double solve_cpu = 0.0, solve_wall = 0.0;
  int newton_steps = 0;
  for (;;) {
    variational::split_contacts(working, chosen, left_out);
    report.contacts = variational::pick(detected, chosen);
    const int n = static_cast<int>(chosen.size());
    ContactSystem system(world_, report.contacts, 2);
    problem = variational::select_contacts(whole, chosen);
    // N = F^T F passed as F where the core uses it (the augmented KKT matrix, the default, or
    // the body space: both factor F's 3 rows per body instead of N's contact-by-contact
    // couplings, docs/variational.md "Cost"); otherwise N assembled.
    if (n > 0 && (options_.interior_point.body_space || options_.interior_point.augmented_kkt))
      problem.hessian_factor = planar_factor(system, std::sqrt(theta) * dt);
    else if (n > 0)
      problem.hessian = (theta * dt * dt) * system.assemble();

    const std::clock_t cpu_start = std::clock();
    solution = variational::solve_force_problem(problem, options_.interior_point);
    solve_cpu += static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
    solve_wall += solution.wall_seconds;
    newton_steps += solution.stats.newton_steps;
    ++details.screening_rounds;
    if (n == 0) solution.forces = VecX::Zero(0);
    dv = n > 0 ? system.body_velocity_change(dt * solution.forces) : VecX::Zero(v0.size());
    if (n > 0) chosen_motion = (theta * dt) * system.contact_velocity(dv);
    // The left-out contacts' end-of-step displacement: g0 e_n + H^T (dx_free + theta dt dv).
    if (!variational::admit_closing_contacts(
            world_, detected, whole, left_out, (theta * dt) * dv,
            options_.interior_point.tolerance * whole.displacement_scale, working))
      break;
  }
  const int n = static_cast<int>(chosen.size());
  const std::vector<variational::ContactKey> keys = variational::pick(detected_keys, chosen);
  report.active_contacts = n;
  report.solve_cpu_seconds = solve_cpu;
  solution.wall_seconds = solve_wall;
  report.solver_stats = variational::solver_stats(solution, options_.interior_point, n);
  report.solver_stats.iterations = newton_steps;
  details.screened_contacts = static_cast<long>(left_out.size());
  VecX displacement = problem.linear;  // g0 e_n + H^T dx_free
  for (int i = 0; i < n; ++i) displacement(2 * i) -= report.contacts[i].gap;
  details.shear_history = problem.shear_history.size() > 0 ? problem.shear_history : VecX::Zero(n);
  details.persistent_contacts = options_.contact.rigid_tangential() ? 0 : history_.persistent(keys);

  // Eq. 4.6 with the contact forces constant over the step: v = v_free + dt M^-1 H f, and
  // dx = dt ((1 - theta) v0 + theta v).
  report.impulses = dt * solution.forces;
  for (int b = 0; b < body_count; ++b) {
    RigidBody& body = world_.bodies[b];
    if (!body.is_dynamic()) continue;
    const Vec6 v = v_free.segment<6>(kBodyDofs * b) + dv.segment<6>(kBodyDofs * b);
    body.set_velocity((1.0 - theta) * v0.segment<6>(kBodyDofs * b) + theta * v);
    v_free.segment<6>(kBodyDofs * b) = v;
  }
  if (n > 0) displacement += chosen_motion;
  integrate_positions(world_, dt);
  for (int b = 0; b < body_count; ++b) {
    if (world_.bodies[b].is_dynamic())
      world_.bodies[b].set_velocity(v_free.segment<6>(kBodyDofs * b));
  }

  details.forces = solution.forces;
  details.displacements = displacement;
  for (int i = 0; i < n; ++i) details.displacements(2 * i) += report.contacts[i].gap;
  details.interior_point = solution.stats;
  if (!options_.contact.rigid_tangential() && n > 0)
    history_.store(keys, report.contacts, variational::tangential_forces(solution, n));
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
