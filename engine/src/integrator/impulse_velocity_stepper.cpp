#include "moreau/integrator/impulse_velocity_stepper.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <utility>

#include "moreau/contact/contact_system.hpp"
#include "moreau/core/error.hpp"

namespace moreau {
namespace {

// Velocity at the end of the step without contact impulses, seed 003 Sec. 3.1:
// v + M^-1 dt (f_ext, tau_ext - omega x I omega), the gyroscopic term explicit; prescribed
// bodies keep their velocity, fixed ones have none.
Vec6 free_velocity(const World& world, int body, const InverseMass& inverse_mass, double dt) {
  const RigidBody& b = world.bodies[body];
  if (b.motion == Motion::fixed) return Vec6::Zero();
  if (b.motion == Motion::prescribed) return b.velocity();
  Vec6 impulse = dt * world.external_force(body);
  impulse.tail<3>() -= dt * b.angular_velocity.cross(b.inertia_world() * b.angular_velocity);
  return b.velocity() + inverse_mass.apply(impulse);
}

// phi' = (phi + dt Q(phi) omega) / |.|, with Q(phi) omega = 1/2 (0, omega) * phi for the
// world-frame angular velocity (the matrix Q_ii of seed 003 Sec. 2).
Quat advance_orientation(const Quat& orientation, const Vec3& omega, double dt) {
  const Quat rate(0.0, omega.x(), omega.y(), omega.z());
  Quat next;
  next.coeffs() = orientation.coeffs() + 0.5 * dt * (rate * orientation).coeffs();
  return next.normalized();
}

}  // namespace

void ImpulseVelocityOptions::validate() const {
  std::ostringstream message;
  if (!(time_step > 0.0) || !std::isfinite(time_step)) {
    message << "ImpulseVelocityOptions.time_step = " << time_step
            << " must be a finite positive number";
  } else if (!(error_reduction >= 0.0 && error_reduction <= 1.0)) {
    message << "ImpulseVelocityOptions.error_reduction = " << error_reduction
            << " must lie in [0, 1]";
  } else {
    collision.validate();
    return;
  }
  throw InputError(message.str());
}

ImpulseVelocityStepper::ImpulseVelocityStepper(World& world, ImpulseVelocityOptions options,
                                               std::unique_ptr<ContactSolver> solver)
    : world_(world), options_(std::move(options)), solver_(std::move(solver)) {
  options_.validate();
  world_.validate();
  if (!solver_) throw InputError("ImpulseVelocityStepper: no contact solver given");
}

const StepReport& ImpulseVelocityStepper::step() {
  const double dt = options_.time_step;
  const int rows = options_.frictional ? static_cast<int>(world_.dimension) : 1;
  StepReport report;
  report.step = step_count_ + 1;
  report.rows_per_contact = rows;
  report.contacts = detect_contacts(world_, options_.collision, &report.collision_stats);
  const std::vector<Contact>& contacts = report.contacts;
  const int contact_count = static_cast<int>(contacts.size());

  const ContactSystem system(world_, contacts, rows);
  const int body_count = static_cast<int>(world_.bodies.size());
  VecX velocity_free(kBodyDofs * body_count);
  for (int b = 0; b < body_count; ++b) {
    velocity_free.segment<6>(kBodyDofs * b) = free_velocity(world_, b, system.inverse_mass(b), dt);
  }

  // u = W r + q with q = J v_free plus the (error-reduced) gap term on the normal row.
  ConeProblem problem;
  problem.delassus = &system;
  problem.friction_model = options_.friction_model;
  problem.q = local_velocities(world_, contacts, velocity_free, rows);
  problem.mu = friction_coefficients(world_, contacts);
  for (int i = 0; i < contact_count; ++i) {
    const double rate = contacts[i].gap / dt;
    problem.q(rows * i) += options_.error_reduction * std::min(0.0, rate) + std::max(0.0, rate);
  }

  VecX impulses = VecX::Zero(rows * contact_count);
  if (contact_count > 0) {
    report.solver_stats = solver_->solve(problem, impulses);
  } else {
    report.solver_stats.solver = solver_->name();
    report.solver_stats.termination = Termination::not_run;
    report.solver_stats.converged = true;
  }

  const VecX velocity_change = system.body_velocity_change(impulses);
  for (int b = 0; b < body_count; ++b) {
    RigidBody& body = world_.bodies[b];
    if (!body.is_dynamic()) continue;
    body.set_velocity(velocity_free.segment<6>(kBodyDofs * b) +
                      velocity_change.segment<6>(kBodyDofs * b));
  }
  // Positions implicit in the end-of-step velocities.
  for (RigidBody& body : world_.bodies) {
    if (body.motion == Motion::fixed) continue;
    body.position += dt * body.linear_velocity;
    body.orientation = advance_orientation(body.orientation, body.angular_velocity, dt);
  }

  world_.time += dt;
  ++step_count_;
  report.time = world_.time;
  report.impulses = std::move(impulses);
  world_.check_finite(step_count_);
  report_ = std::move(report);
  return report_;
}

}  // namespace moreau
