#include "moreau/integrator/contact_dynamics_stepper.hpp"

#include <ctime>
#include <utility>

#include "moreau/core/error.hpp"

namespace moreau {

const StepReport& Stepper::finish_step(StepReport&& report) {
  world_.time += time_step();
  ++step_count_;
  report.step = step_count_;
  report.time = world_.time;
  world_.check_finite(step_count_);
  report_ = std::move(report);
  return report_;
}

void integrate_position(RigidBody& b, double h) {
  if (b.motion == Motion::fixed) return;
  b.position += h * b.linear_velocity;
  const double angle = h * b.angular_velocity.norm();
  if (angle > 0.0) {
    const Quat rotation(Eigen::AngleAxisd(angle, b.angular_velocity.normalized()));
    b.orientation = (rotation * b.orientation).normalized();
  }
}

void integrate_positions(World& world, double h) {
  for (RigidBody& b : world.bodies) integrate_position(b, h);
}

ContactDynamicsStepper::ContactDynamicsStepper(World& world, std::unique_ptr<ContactSolver> solver,
                                               const StepSettings& settings,
                                               const std::string& scheme)
    : Stepper(world),
      solver_(std::move(solver)),
      time_step_(settings.time_step),
      frictional_(settings.frictional),
      collision_(settings.collision) {
  world_.validate();
  if (!solver_) throw InputError(scheme + " stepper: no contact solver given");
}

Vec6 ContactDynamicsStepper::free_velocity(int body, const InverseMass& inverse_mass) const {
  const RigidBody& b = world_.bodies[body];
  if (b.motion == Motion::fixed) return Vec6::Zero();
  if (b.motion == Motion::prescribed) return b.velocity();
  return b.velocity() + time_step_ * inverse_mass.apply(world_.external_force(body));
}

void ContactDynamicsStepper::build_offset_problem(StepState& state, std::vector<Contact> candidates,
                                                  StepReport& report,
                                                  FrictionModel friction_model) {
  report.contacts = std::move(candidates);
  const std::vector<Contact>& contacts = report.contacts;
  const int contact_count = static_cast<int>(contacts.size());
  state.system = std::make_unique<ContactSystem>(world_, contacts, state.rows);
  ConeProblem& problem = state.problem;
  problem.delassus = state.system.get();
  problem.friction_model = friction_model;
  problem.q = local_velocities(world_, contacts, state.velocity_free, state.rows);
  problem.mu = friction_coefficients(world_, contacts);
  state.normal_offset.resize(contact_count);
  for (int i = 0; i < contact_count; ++i) {
    state.normal_offset(i) = normal_offset(contacts[i], state.dt);
    problem.q(state.rows * i) += state.normal_offset(i);
  }
}

void ContactDynamicsStepper::solve(StepState& state, VecX& impulses, StepReport& report) const {
  const std::clock_t cpu_start = std::clock();
  if (report.contacts.empty()) {
    report.solver_stats.solver = solver_->name();
    report.solver_stats.termination = Termination::not_run;
    report.solver_stats.converged = true;
  } else if (const auto* nlgs = dynamic_cast<const NlgsSolver*>(solver_.get())) {
    NlgsStats stats = nlgs->solve_with_terms(state.problem, impulses);
    report.solver_stats = stats.common;
    report.set_details(std::move(stats));
  } else {
    report.solver_stats = solver_->solve(state.problem, impulses);
  }
  report.solve_cpu_seconds = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
}

void ContactDynamicsStepper::notify_problem(const StepState& state, const VecX& impulses,
                                            const StepReport& report) {
  if (!problem_observer_ || report.contacts.empty() || state.normal_offset.size() == 0) return;
  StepProblem view;
  view.world = &world_;
  view.contacts = &report.contacts;
  view.step = step_count_ + 1;
  view.time_step = state.dt;
  view.rows_per_contact = state.rows;
  view.friction_model = state.problem.friction_model;
  view.free_velocity = &state.velocity_free;
  view.normal_offset = &state.normal_offset;
  view.friction = &state.problem.mu;
  view.impulses = &impulses;
  view.solver_stats = &report.solver_stats;
  problem_observer_(view);
}

const StepReport& ContactDynamicsStepper::step() {
  StepState state;
  state.dt = time_step_;
  state.rows = frictional_ ? static_cast<int>(world_.dimension) : 1;
  const int body_count = static_cast<int>(world_.bodies.size());
  StepReport report;
  report.step = step_count_ + 1;
  report.rows_per_contact = state.rows;

  state.velocity_start.resize(kBodyDofs * body_count);
  state.velocity_free.resize(kBodyDofs * body_count);
  for (int b = 0; b < body_count; ++b) {
    const RigidBody& body = world_.bodies[b];
    state.velocity_start.segment<6>(kBodyDofs * b) =
        body.motion == Motion::fixed ? Vec6::Zero() : body.velocity();
    state.velocity_free.segment<6>(kBodyDofs * b) =
        free_velocity(b, inverse_mass(body, world_.dimension));
  }

  before_detection(state);
  // The detector keeps its arrays from step to step, and the contact list of two steps ago
  // (handed back below) lends its capacity: on a large world neither is new memory whose pages
  // the kernel faults in and zeroes at every step.
  std::vector<Contact> candidates = std::move(spare_contacts_);
  detector_.detect(world_, collision_, candidates, &report.collision_stats);
  build_problem(state, std::move(candidates), report);
  report.active_contacts = static_cast<long>(report.contacts.size());

  VecX impulses = VecX::Zero(state.rows * static_cast<long>(report.contacts.size()));
  initial_guess(report, impulses);
  solve(state, impulses, report);
  notify_problem(state, impulses, report);

  // v_{k+1} = v_free + M^-1 H r (Olsen & Kamrin eq. 13, Dumont eq. 3, Preclik et al. Sec. 3.1).
  const VecX velocity_change = state.system->body_velocity_change(impulses);
  for (int b = 0; b < body_count; ++b) {
    RigidBody& body = world_.bodies[b];
    if (!body.is_dynamic()) continue;
    body.set_velocity(state.velocity_free.segment<6>(kBodyDofs * b) +
                      velocity_change.segment<6>(kBodyDofs * b));
  }
  report.impulses = std::move(impulses);
  after_velocity_update(state, report);
  update_positions(state);
  // last_report() keeps this step's contacts; the previous step's list becomes the spare.
  spare_contacts_ = std::move(report_.contacts);
  return finish_step(std::move(report));
}

const NlgsStats* nlgs_stats(const StepReport& report) { return report.find_details<NlgsStats>(); }

}  // namespace moreau
