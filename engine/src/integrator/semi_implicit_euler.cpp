#include "moreau/integrator/semi_implicit_euler.hpp"

#include <cmath>
#include <string>

#include "moreau/core/error.hpp"
#include "moreau/integrator/scheme_registry.hpp"

namespace moreau {
namespace {

double relative_normal_velocity(const World& world, const Contact& c) {
  auto point_velocity = [&](int body) -> Vec3 {
    const RigidBody& b = world.bodies[body];
    return b.linear_velocity + b.angular_velocity.cross(c.point - b.position);
  };
  return c.normal.dot(point_velocity(c.body_b) - point_velocity(c.body_a));
}

}  // namespace

const SchemeRegistrar<SemiImplicitEulerStepper, SemiImplicitEulerOptions> kRegistration{
    "semi_implicit_euler",
    "semi-implicit Euler contact dynamics (Olsen & Kamrin eq. 13-21, after Anitescu)"};

const OptionTable<SemiImplicitEulerOptions>& SemiImplicitEulerOptions::fields() {
  using O = SemiImplicitEulerOptions;
  static const OptionTable<O> table{
      friction_model_option<O>(),
      choice_option("impact_law", &O::impact_law,
                    {{"plastic", ImpactLaw::plastic}, {"restitution", ImpactLaw::restitution}})
          .described("gap / time_step in the free velocity (Olsen & Kamrin eq. 16-20), or "
                     "Newton's restitution for closed contacts (their Sec. 4.3)"),
  };
  return table;
}

const OptionTable<SemiImplicitEulerOptions>& SemiImplicitEulerOptions::nested_fields() {
  static const OptionTable<SemiImplicitEulerOptions> table =
      nested_options(CompatibleOptions::fields(), &SemiImplicitEulerOptions::compatible,
                     option_keys(CompatibleOptions::fields()));
  return table;
}

void SemiImplicitEulerOptions::validate() const {
  StepSettings::validate();
  if (compatible.enabled) {
    if (frictional)
      throw OptionError("compatible.enabled",
                        "compatible CD is defined for frictionless contact (Olsen & Kamrin): set "
                        "frictional to false");
    compatible.truss.validate();
  }
}

SemiImplicitEulerStepper::SemiImplicitEulerStepper(World& world, SemiImplicitEulerOptions options,
                                                   std::unique_ptr<ContactSolver> solver)
    : ContactDynamicsStepper(world, std::move(solver), detail::validated(options),
                             "semi_implicit_euler"),
      options_(std::move(options)) {}

void SemiImplicitEulerStepper::set_compatible(const CompatibleOptions& compatible) {
  SemiImplicitEulerOptions updated = options_;
  updated.compatible = compatible;
  updated.validate();
  options_ = std::move(updated);
}

void SemiImplicitEulerStepper::build_problem(StepState& state, std::vector<Contact> candidates,
                                             StepReport& report) {
  // Free term q = p of Olsen & Kamrin eq. 20 (impulse form, r = dt f): Phi/dt + B v_free, with
  // the velocities of fixed and prescribed bodies included through their own Jacobian rows.
  build_offset_problem(state, std::move(candidates), report, options_.friction_model);
}

double SemiImplicitEulerStepper::normal_offset(const Contact& c, double dt) const {
  if (options_.impact_law == ImpactLaw::restitution) {
    const double approach = relative_normal_velocity(world_, c);
    if (c.gap <= 0.0 || c.gap + dt * approach < 0.0) {
      // Olsen & Kamrin Sec. 4.3: e_n B v^t replaces Phi/dt, so u_n+ >= -e_n u_n- for closed
      // contacts and for open ones (inside the margin) that the pre-impact velocity closes
      // within the step: their impact speed is v^t, not the Phi/dt they would be slowed to (the
      // rebound then starts up to one margin early).
      return pair_restitution(world_.materials[world_.bodies[c.body_a].material],
                              world_.materials[world_.bodies[c.body_b].material]) *
             approach;
    }
  }
  return c.gap / dt;  // Olsen & Kamrin eq. 16
}

void SemiImplicitEulerStepper::initial_guess(const StepReport& report, VecX& impulses) {
  if (solver().options().warm_start)
    warm_start_.apply(report.contacts, report.rows_per_contact, impulses);
}

void SemiImplicitEulerStepper::after_velocity_update(StepState& state, StepReport& report) {
  warm_start_.remember(report.contacts, report.impulses);
  if (!options_.compatible.enabled) return;
  // Olsen & Kamrin Alg. 1, step 2: F~ from the velocities (eq. 37) with M at the start of the
  // step.
  const int body_count = static_cast<int>(world_.bodies.size());
  VecX velocity_end(kBodyDofs * body_count);
  for (int b = 0; b < body_count; ++b)
    velocity_end.segment<6>(kBodyDofs * b) = world_.bodies[b].velocity();
  const NoTensionTrussProblem truss =
      compatibility_problem(world_, *state.system, report.contacts, state.velocity_start,
                            velocity_end, state.dt, options_.compatible.law);
  VecX forces = report.impulses / state.dt;
  CompatibleSolve compatible;
  compatible.stats = solve_no_tension_truss(truss, options_.compatible.truss, forces);
  compatible.impulses = state.dt * forces;
  report.set_details(std::move(compatible));
}

void SemiImplicitEulerStepper::update_positions(StepState& state) {
  // Eq. 13 is a balance of momentum with M at the start of the step; keeping the world-frame
  // angular momentum J omega across the rotation (instead of omega) makes torque-free bodies
  // conserve it exactly, as d(J omega)/dt = torque in the world frame.
  const int body_count = static_cast<int>(world_.bodies.size());
  std::vector<Vec3> angular_momentum(body_count);
  for (int b = 0; b < body_count; ++b) {
    const RigidBody& body = world_.bodies[b];
    if (body.is_dynamic()) angular_momentum[b] = body.inertia_world() * body.angular_velocity;
  }
  // Position update, Olsen & Kamrin eq. 13: q+ = q + dt L(q) v+.
  integrate_positions(world_, state.dt);
  for (int b = 0; b < body_count; ++b) {
    RigidBody& body = world_.bodies[b];
    if (!body.is_dynamic() || body.rotation_locked || world_.dimension == Dimension::two) continue;
    body.angular_velocity = body.inertia_world().ldlt().solve(angular_momentum[b]);
  }
}

const CompatibleSolve* compatible_solve(const StepReport& report) {
  return report.find_details<CompatibleSolve>();
}

const CompatibleSolve& compatible_result(const StepReport& report) {
  const CompatibleSolve* solve = compatible_solve(report);
  if (!solve) throw InputError("compatible_result: the step did not run compatible CD");
  return *solve;
}

}  // namespace moreau
