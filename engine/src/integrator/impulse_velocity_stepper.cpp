#include "moreau/integrator/impulse_velocity_stepper.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <utility>

#include "moreau/core/error.hpp"
#include "moreau/integrator/scheme_registry.hpp"

namespace moreau {
namespace {

// phi' = (phi + dt Q(phi) omega) / |.|, with Q(phi) omega = 1/2 (0, omega) * phi for the
// world-frame angular velocity (the matrix Q_ii of Preclik et al. Sec. 2).
Quat advance_orientation(const Quat& orientation, const Vec3& omega, double dt) {
  const Quat rate(0.0, omega.x(), omega.y(), omega.z());
  Quat next;
  next.coeffs() = orientation.coeffs() + 0.5 * dt * (rate * orientation).coeffs();
  return next.normalized();
}

}  // namespace

const SchemeRegistrar<ImpulseVelocityStepper, ImpulseVelocityOptions> kRegistration{
    "impulse_velocity", "impulse-velocity time stepping (Preclik et al. Sec. 3.1)"};

const OptionTable<ImpulseVelocityOptions>& ImpulseVelocityOptions::fields() {
  using O = ImpulseVelocityOptions;
  static const OptionTable<O> table{
      // Preclik et al. Sec. 3.1: epsilon in [0, 1].
      number_option("error_reduction", &O::error_reduction, Bounds::closed(0.0, 1.0))
          .described("epsilon of Preclik et al. Sec. 3.1: the share of a penetration removed "
                     "per step"),
      friction_model_option<O>(),
  };
  return table;
}

void ImpulseVelocityOptions::validate() const {
  StepSettings::validate();
  validate_fields(fields(), *this, "ImpulseVelocityOptions");
}

ImpulseVelocityStepper::ImpulseVelocityStepper(World& world, ImpulseVelocityOptions options,
                                               std::unique_ptr<ContactSolver> solver)
    : ContactDynamicsStepper(world, std::move(solver), detail::validated(options),
                             "impulse_velocity"),
      options_(std::move(options)) {}

// Velocity at the end of the step without contact impulses, Preclik et al. Sec. 3.1:
// v + M^-1 dt (f_ext, tau_ext - omega x I omega), the gyroscopic term explicit; prescribed
// bodies keep their velocity, fixed ones have none.
Vec6 ImpulseVelocityStepper::free_velocity(int body, const InverseMass& inverse_mass) const {
  const RigidBody& b = world_.bodies[body];
  if (b.motion == Motion::fixed) return Vec6::Zero();
  if (b.motion == Motion::prescribed) return b.velocity();
  const double dt = options_.time_step;
  Vec6 impulse = dt * world_.external_force(body);
  impulse.tail<3>() -= dt * b.angular_velocity.cross(b.inertia_world() * b.angular_velocity);
  return b.velocity() + inverse_mass.apply(impulse);
}

// u = W r + q with q = J v_free plus the (error-reduced) gap term on the normal row.
void ImpulseVelocityStepper::build_problem(StepState& state, std::vector<Contact> candidates,
                                           StepReport& report) {
  build_offset_problem(state, std::move(candidates), report, options_.friction_model);
}

double ImpulseVelocityStepper::normal_offset(const Contact& contact, double dt) const {
  const double rate = contact.gap / dt;
  return options_.error_reduction * std::min(0.0, rate) + std::max(0.0, rate);
}

// Positions implicit in the end-of-step velocities.
void ImpulseVelocityStepper::update_positions(StepState& state) {
  for (RigidBody& body : world_.bodies) {
    if (body.motion == Motion::fixed) continue;
    body.position += state.dt * body.linear_velocity;
    body.orientation = advance_orientation(body.orientation, body.angular_velocity, state.dt);
  }
}

}  // namespace moreau
