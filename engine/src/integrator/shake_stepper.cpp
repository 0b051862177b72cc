#include "moreau/integrator/shake_stepper.hpp"

#include <cmath>
#include <sstream>
#include <utility>

#include "moreau/contact/contact_system.hpp"
#include "moreau/core/error.hpp"

namespace moreau {
namespace {

SolverStats not_run_stats(const ContactSolver& solver) {
  SolverStats stats;
  stats.solver = solver.name();
  stats.termination = Termination::not_run;
  stats.converged = true;
  return stats;
}

// Solves the CCP, or reports not_run for a problem without contacts.
SolverStats solve_ccp(const ContactSolver& solver, const ConeProblem& problem, VecX& impulses) {
  if (problem.contact_count() == 0) return not_run_stats(solver);
  return solver.solve(problem, impulses);
}

// base + M^-1 G^T gamma on the dynamic bodies; the others keep `base` (fixed: 0, prescribed:
// their own velocity).
VecX add_impulse_response(const World& world, const ContactSystem& system, const VecX& base,
                          const VecX& impulses) {
  VecX out = base;
  if (system.contact_count() == 0) return out;
  const VecX change = system.body_velocity_change(impulses);
  for (int b = 0; b < static_cast<int>(world.bodies.size()); ++b) {
    if (world.bodies[b].is_dynamic())
      out.segment<6>(kBodyDofs * b) += change.segment<6>(kBodyDofs * b);
  }
  return out;
}

// The CCP u = N gamma + G velocities (Kleinert eq. 20 without the g / h term, which the caller
// adds; eq. 21e as it is) over `contacts`, N = G M^-1 G^T given by `system`.
ConeProblem velocity_ccp(const World& world, const ContactSystem& system,
                         const std::vector<Contact>& contacts, const VecX& velocities, int rows,
                         FrictionModel model) {
  ConeProblem problem;
  problem.delassus = &system;
  problem.friction_model = model;
  problem.q = local_velocities(world, contacts, velocities, rows);
  problem.mu = friction_coefficients(world, contacts);
  return problem;
}

void set_dynamic_velocities(World& world, const VecX& velocities) {
  for (int b = 0; b < static_cast<int>(world.bodies.size()); ++b) {
    RigidBody& body = world.bodies[b];
    if (body.is_dynamic()) body.set_velocity(velocities.segment<6>(kBodyDofs * b));
  }
}

}  // namespace

std::string to_string(ShakeScheme scheme) {
  return scheme == ShakeScheme::shake ? "shake" : "rattle";
}

void ShakeOptions::validate() const {
  std::ostringstream message;
  if (!(time_step > 0.0) || !std::isfinite(time_step)) {
    message << "ShakeOptions.time_step = " << time_step << " must be a finite positive number";
  } else if (!(closed_gap >= 0.0) || !std::isfinite(closed_gap)) {
    message << "ShakeOptions.closed_gap = " << closed_gap << " must be a finite number >= 0";
  } else {
    collision.validate();
    return;
  }
  throw InputError(message.str());
}

ShakeStepper::ShakeStepper(World& world, ShakeOptions options,
                           std::unique_ptr<ContactSolver> solver)
    : world_(world), options_(std::move(options)), solver_(std::move(solver)) {
  options_.validate();
  world_.validate();
  if (!solver_) throw InputError("ShakeStepper: no contact solver given");
}

const ShakeStepReport& ShakeStepper::step() {
  const double h = options_.time_step;
  const int rows = options_.frictional ? static_cast<int>(world_.dimension) : 1;
  ShakeStepReport report;
  report.step = step_count_ + 1;
  report.rows_per_contact = rows;
  report.scheme = options_.scheme;
  report.contacts = detect_contacts(world_, options_.collision, &report.collision_stats);
  const std::vector<Contact>& contacts = report.contacts;
  const int contact_count = static_cast<int>(contacts.size());

  // The SHAKE CCP (Kleinert eq. 18-20): u = N gamma + r, N = G M^-1 G^T,
  // r = g(q^j) / h + dg/dt + G (v^{j-1/2} + M^-1 k^j). dg/dt is the prescribed bodies' share of
  // G v, which local_velocities includes.
  const ContactSystem system(world_, contacts, rows);
  const VecX velocity_free = free_velocities(world_, h);
  ConeProblem problem =
      velocity_ccp(world_, system, contacts, velocity_free, rows, options_.friction_model);
  VecX normal_offset(contact_count);
  for (int i = 0; i < contact_count; ++i) {
    normal_offset(i) = contacts[i].gap / h;  // g(q^j) / h of eq. 17
    problem.q(rows * i) += normal_offset(i);
  }
  VecX gamma_l = VecX::Zero(rows * contact_count);
  report.solver_stats = solve_ccp(*solver_, problem, gamma_l);
  if (problem_observer_ && contact_count > 0) {
    const StepProblem view{.world = &world_,
                           .contacts = &contacts,
                           .step = report.step,
                           .time_step = h,
                           .rows_per_contact = rows,
                           .friction_model = options_.friction_model,
                           .free_velocity = &velocity_free,
                           .normal_offset = &normal_offset,
                           .friction = &problem.mu,
                           .impulses = &gamma_l,
                           .solver_stats = &report.solver_stats};
    problem_observer_(view);
  }
  // Eq. 14b: v^{j+1/2} = v^{j-1/2} + M^-1 (k^j + G^T gamma^j).
  const VecX mean_velocity = add_impulse_response(world_, system, velocity_free, gamma_l);

  VecX gamma_r = VecX::Zero(rows * contact_count);
  VecX end_velocity = mean_velocity;
  if (options_.scheme == ShakeScheme::rattle && contact_count > 0) {
    // Eq. 21d-e on the contacts closed at q^{j+1}: u^{j+1} = N gamma_l + r is g(q^{j+1}) / h
    // linearized (eq. 17).
    VecX end_gap_rate(rows * contact_count);
    system.apply(gamma_l, end_gap_rate);
    end_gap_rate += problem.q;
    std::vector<int> closed;
    std::vector<Contact> closed_contacts;
    for (int i = 0; i < contact_count; ++i) {
      if (h * end_gap_rate(rows * i) <= options_.closed_gap || gamma_l(rows * i) > 0.0) {
        closed.push_back(i);
        closed_contacts.push_back(contacts[i]);
      }
    }
    report.closed_contacts = static_cast<long>(closed.size());
    // T_K at the apex is K itself: u = G nu^{j+1} + dg/dt in K*, gamma_r in K, with
    // nu^{j+1} = v^{j+1/2} + M^-1 G^T gamma_r (eq. 21d); k^j plays no role here.
    const ContactSystem closed_system(world_, closed_contacts, rows);
    const ConeProblem velocity_problem = velocity_ccp(world_, closed_system, closed_contacts,
                                                      mean_velocity, rows, options_.friction_model);
    VecX closed_gamma_r = VecX::Zero(rows * static_cast<int>(closed.size()));
    report.velocity_solver_stats = solve_ccp(*solver_, velocity_problem, closed_gamma_r);
    end_velocity = add_impulse_response(world_, closed_system, mean_velocity, closed_gamma_r);
    for (int k = 0; k < static_cast<int>(closed.size()); ++k)
      gamma_r.segment(rows * closed[k], rows) = closed_gamma_r.segment(rows * k, rows);
  } else {
    report.velocity_solver_stats = not_run_stats(*solver_);
  }

  // Eq. 14a / 21a: q^{j+1} = q^j + h v^{j+1/2}; the world then keeps nu^{j+1} for RATTLE.
  set_dynamic_velocities(world_, mean_velocity);
  integrate_positions(world_, h);
  set_dynamic_velocities(world_, end_velocity);

  world_.time += h;
  ++step_count_;
  report.time = world_.time;
  report.impulses = gamma_l + gamma_r;  // gamma^j = gamma_l^j + gamma_r^j (Kleinert Sec. 3.2)
  report.position_impulses = std::move(gamma_l);
  report.velocity_impulses = std::move(gamma_r);
  report.mean_velocities = mean_velocity;
  world_.check_finite(step_count_);
  report_ = std::move(report);
  return report_;
}

}  // namespace moreau
