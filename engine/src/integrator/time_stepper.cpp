#include "moreau/integrator/time_stepper.hpp"

#include <cmath>
#include <map>
#include <string>
#include <tuple>

#include "moreau/contact/contact_system.hpp"
#include "moreau/core/error.hpp"

namespace moreau {
namespace {

// Velocity a body would have at the end of the step without contact impulses:
// v + dt M^-1 F_ext (seed 000 eq. 13 with f = 0); prescribed bodies keep their velocity.
Vec6 free_velocity(const World& world, int body, const InverseMass& inverse_mass, double dt) {
  const RigidBody& b = world.bodies[body];
  if (b.motion == Motion::fixed) return Vec6::Zero();
  if (b.motion == Motion::prescribed) return b.velocity();
  return b.velocity() + dt * inverse_mass.apply(world.external_force(body));
}

double relative_normal_velocity(const World& world, const Contact& c) {
  auto point_velocity = [&](int body) -> Vec3 {
    const RigidBody& b = world.bodies[body];
    return b.linear_velocity + b.angular_velocity.cross(c.point - b.position);
  };
  return c.normal.dot(point_velocity(c.body_b) - point_velocity(c.body_a));
}

}  // namespace

void StepOptions::validate() const {
  if (!(time_step > 0.0) || !std::isfinite(time_step))
    throw InputError("time_step must be a finite positive number, got " +
                     std::to_string(time_step));
  collision.validate();
  if (compatible.enabled) {
    if (frictional)
      throw InputError(
          "compatible CD is defined for frictionless contact (seed 000): set frictional = false");
    compatible.truss.validate();
  }
}

TimeStepper::TimeStepper(World& world, StepOptions options)
    : world_(world), options_(std::move(options)) {
  options_.validate();
  world_.validate();
  solver_ = make_solver(options_.solver, options_.solver_options);
}

void TimeStepper::set_compatible(const CompatibleOptions& compatible) {
  StepOptions updated = options_;
  updated.compatible = compatible;
  updated.validate();
  options_ = std::move(updated);
}

VecX free_velocities(const World& world, double dt) {
  const int body_count = static_cast<int>(world.bodies.size());
  VecX velocities(kBodyDofs * body_count);
  for (int b = 0; b < body_count; ++b) {
    velocities.segment<6>(kBodyDofs * b) =
        free_velocity(world, b, inverse_mass(world.bodies[b], world.dimension), dt);
  }
  return velocities;
}

void integrate_positions(World& world, double dt) {
  for (RigidBody& b : world.bodies) {
    if (b.motion == Motion::fixed) continue;
    b.position += dt * b.linear_velocity;
    const double angle = dt * b.angular_velocity.norm();
    if (angle > 0.0) {
      const Quat rotation(Eigen::AngleAxisd(angle, b.angular_velocity.normalized()));
      b.orientation = (rotation * b.orientation).normalized();
    }
  }
}

const StepReport& TimeStepper::step() {
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
  for (int b = 0; b < body_count; ++b)
    velocity_free.segment<6>(kBodyDofs * b) = free_velocity(world_, b, system.inverse_mass(b), dt);

  // Free term q = p of seed 000 eq. 20 (impulse form, r = dt f): Phi/dt + B v_free, with the
  // velocities of fixed and prescribed bodies included through their own Jacobian rows.
  ConeProblem problem;
  problem.delassus = &system;
  problem.friction_model = options_.friction_model;
  problem.q = local_velocities(world_, contacts, velocity_free, rows);
  problem.mu = friction_coefficients(world_, contacts);
  VecX normal_offset(contact_count);
  for (int i = 0; i < contact_count; ++i) {
    const Contact& c = contacts[i];
    const double restitution = pair_restitution(world_.materials[world_.bodies[c.body_a].material],
                                                world_.materials[world_.bodies[c.body_b].material]);
    const double approach = relative_normal_velocity(world_, c);
    if (options_.impact_law == ImpactLaw::restitution &&
        (c.gap <= 0.0 || c.gap + dt * approach < 0.0)) {
      // Seed 000 Sec. 4.3: e_n B v^t replaces Phi/dt, so u_n+ >= -e_n u_n- for closed contacts
      // and for open ones (inside the margin) that the pre-impact velocity closes within the
      // step: their impact speed is v^t, not the Phi/dt they would be slowed to (the rebound
      // then starts up to one margin early).
      normal_offset(i) = restitution * approach;
    } else {
      normal_offset(i) = c.gap / dt;  // seed 000 eq. 16
    }
    problem.q(rows * i) += normal_offset(i);
  }

  // Warm start from the previous step's impulses of the same body pair and point ordinal.
  VecX impulses = VecX::Zero(rows * contact_count);
  if (options_.solver_options.warm_start && previous_impulses_.size() > 0 &&
      previous_impulses_.size() == static_cast<Eigen::Index>(previous_contacts_.size()) * rows) {
    std::map<std::tuple<int, int, int>, int> previous;
    std::map<std::pair<int, int>, int> ordinal;
    for (int i = 0; i < static_cast<int>(previous_contacts_.size()); ++i) {
      const auto key = std::make_pair(previous_contacts_[i].body_a, previous_contacts_[i].body_b);
      previous[{key.first, key.second, ordinal[key]++}] = i;
    }
    ordinal.clear();
    for (int i = 0; i < contact_count; ++i) {
      const auto key = std::make_pair(contacts[i].body_a, contacts[i].body_b);
      const auto it = previous.find({key.first, key.second, ordinal[key]++});
      if (it != previous.end())
        impulses.segment(rows * i, rows) = previous_impulses_.segment(rows * it->second, rows);
    }
  }

  if (contact_count > 0) {
    report.solver_stats = solver_->solve(problem, impulses);
  } else {
    report.solver_stats.solver = solver_->name();
    report.solver_stats.termination = Termination::not_run;
    report.solver_stats.converged = true;
  }
  if (problem_observer_ && contact_count > 0) {
    StepProblem view;
    view.world = &world_;
    view.contacts = &contacts;
    view.step = report.step;
    view.time_step = dt;
    view.rows_per_contact = rows;
    view.friction_model = options_.friction_model;
    view.free_velocity = &velocity_free;
    view.normal_offset = &normal_offset;
    view.friction = &problem.mu;
    view.impulses = &impulses;
    view.solver_stats = &report.solver_stats;
    problem_observer_(view);
  }

  // Velocity update, seed 000 eq. 13: M (v+ - v) = dt F_ext + H r.
  const VecX velocity_change = system.body_velocity_change(impulses);
  std::vector<Vec3> angular_momentum(body_count);
  std::vector<Vec6> velocity_before(body_count);
  for (int b = 0; b < body_count; ++b) velocity_before[b] = world_.bodies[b].velocity();
  for (int b = 0; b < body_count; ++b) {
    RigidBody& body = world_.bodies[b];
    if (!body.is_dynamic()) continue;
    body.set_velocity(velocity_free.segment<6>(kBodyDofs * b) +
                      velocity_change.segment<6>(kBodyDofs * b));
    angular_momentum[b] = body.inertia_world() * body.angular_velocity;
  }
  if (options_.compatible.enabled) {
    // Seed 000 Alg. 1, step 2: F~ from the velocities (eq. 37) with M at the start of the step.
    VecX velocity_start(kBodyDofs * body_count), velocity_end(kBodyDofs * body_count);
    for (int b = 0; b < body_count; ++b) {
      velocity_end.segment<6>(kBodyDofs * b) = world_.bodies[b].velocity();
      velocity_start.segment<6>(kBodyDofs * b) = velocity_before[b];
    }
    const NoTensionTrussProblem truss = compatibility_problem(
        world_, system, contacts, velocity_start, velocity_end, dt, options_.compatible.law);
    VecX forces = impulses / dt;
    report.compatible_stats = solve_no_tension_truss(truss, options_.compatible.truss, forces);
    report.compatible_impulses = dt * forces;
  }
  // Position update, seed 000 eq. 13: q+ = q + dt L(q) v+.
  integrate_positions(world_, dt);
  // Eq. 13 is a balance of momentum with M at the start of the step; keeping the world-frame
  // angular momentum J omega across the rotation (instead of omega) makes torque-free bodies
  // conserve it exactly, as d(J omega)/dt = torque in the world frame.
  for (int b = 0; b < body_count; ++b) {
    RigidBody& body = world_.bodies[b];
    if (!body.is_dynamic() || body.rotation_locked || world_.dimension == Dimension::two) continue;
    body.angular_velocity = body.inertia_world().ldlt().solve(angular_momentum[b]);
  }

  world_.time += dt;
  ++step_count_;
  report.time = world_.time;
  report.impulses = std::move(impulses);
  world_.check_finite(step_count_);
  previous_contacts_ = report.contacts;
  previous_impulses_ = report.impulses;
  report_ = std::move(report);
  return report_;
}

}  // namespace moreau
