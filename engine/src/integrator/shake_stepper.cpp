#include "moreau/integrator/shake_stepper.hpp"

#include <cmath>
#include <sstream>
#include <utility>

#include "moreau/contact/contact_system.hpp"
#include "moreau/core/error.hpp"
#include "moreau/integrator/scheme_registry.hpp"

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

// One stepper, two schemes: the name decides ShakeOptions::scheme.
// SHAKE has no velocity problem, so closed_gap is RATTLE's key alone.
const SchemeRegistrar<ShakeStepper, ShakeOptions> kShake{
    "shake",
    "nonsmooth SHAKE (Kleinert et al. eq. 14-20)",
    {},
    [](ShakeOptions& o) { o.scheme = ShakeScheme::shake; },
    [](SchemeRegistration& r) {
      std::erase_if(r.options, [](const auto& field) { return field.key == "closed_gap"; });
    }};
const SchemeRegistrar<ShakeStepper, ShakeOptions> kRattle{
    "rattle", "nonsmooth RATTLE (Kleinert et al. eq. 21)", {}, [](ShakeOptions& o) {
      o.scheme = ShakeScheme::rattle;
    }};

const OptionTable<ShakeOptions>& ShakeOptions::fields() {
  using O = ShakeOptions;
  static const OptionTable<O> table{
      friction_model_option<O>(),
      // Kleinert et al. eq. 21: the linearized end-of-step gap below which RATTLE's velocity
      // CCP holds a contact.
      number_option("closed_gap", &O::closed_gap, Bounds::at_least(0.0), "m")
          .described("RATTLE: the linearized end-of-step gap below which a contact enters the "
                     "velocity problem (eq. 21e)"),
      // Kleinert et al. start each CCP from zero; this starts it from the previous step's.
      bool_option("warm_start", &O::warm_start)
          .described("start SHAKE's CCP from the previous step's impulses of the same contacts"),
  };
  return table;
}

void ShakeOptions::validate() const {
  StepSettings::validate();
  validate_fields(fields(), *this, "ShakeOptions");
  if (!std::isfinite(closed_gap))
    throw OptionError("ShakeOptions.closed_gap", "must be a finite number >= 0");
}

ShakeStepper::ShakeStepper(World& world, ShakeOptions options,
                           std::unique_ptr<ContactSolver> solver)
    : ContactDynamicsStepper(world, std::move(solver), detail::validated(options),
                             to_string(options.scheme)),
      options_(std::move(options)) {}

// The SHAKE CCP (Kleinert eq. 18-20): u = N gamma + r, N = G M^-1 G^T,
// r = g(q^j) / h + dg/dt + G (v^{j-1/2} + M^-1 k^j): every potential contact enters with the
// gap rate g(q^j) / h of eq. 17 (the default normal offset); dg/dt is the prescribed bodies'
// share of G v, which the free velocity holds. The solve starts from zero impulses unless
// options_.warm_start.
void ShakeStepper::build_problem(StepState& state, std::vector<Contact> candidates,
                                 StepReport& report) {
  build_offset_problem(state, std::move(candidates), report, options_.friction_model);
}

void ShakeStepper::initial_guess(const StepReport& report, VecX& impulses) {
  if (options_.warm_start && solver().options().warm_start)
    warm_start_.apply(report.contacts, report.rows_per_contact, impulses);
}

// After eq. 14b (the pipeline's v^{j+1/2} = v^{j-1/2} + M^-1 (k^j + G^T gamma^j)): RATTLE's
// velocity CCP (eq. 21d-e) on the contacts closed at q^{j+1}, giving nu^{j+1}.
void ShakeStepper::after_velocity_update(StepState& state, StepReport& report) {
  const int rows = state.rows;
  const int contact_count = static_cast<int>(report.contacts.size());
  const int body_count = static_cast<int>(world_.bodies.size());
  ShakeStepDetails details;
  details.position_impulses = report.impulses;
  if (options_.warm_start) warm_start_.remember(report.contacts, report.impulses);
  details.velocity_impulses = VecX::Zero(rows * contact_count);
  details.mean_velocities.resize(kBodyDofs * body_count);
  for (int b = 0; b < body_count; ++b) {
    const RigidBody& body = world_.bodies[b];
    details.mean_velocities.segment<6>(kBodyDofs * b) =
        body.motion == Motion::fixed ? Vec6::Zero() : body.velocity();
  }
  end_velocity_.resize(0);
  details.velocity_solver_stats = not_run_stats(solver());
  if (options_.scheme == ShakeScheme::rattle && contact_count > 0) {
    // u^{j+1} = N gamma_l + r is g(q^{j+1}) / h linearized (eq. 17).
    const VecX& gamma_l = details.position_impulses;
    VecX end_gap_rate(rows * contact_count);
    state.system->apply(gamma_l, end_gap_rate);
    end_gap_rate += state.problem.q;
    std::vector<int> closed;
    std::vector<Contact> closed_contacts;
    for (int i = 0; i < contact_count; ++i) {
      if (state.dt * end_gap_rate(rows * i) <= options_.closed_gap || gamma_l(rows * i) > 0.0) {
        closed.push_back(i);
        closed_contacts.push_back(report.contacts[i]);
      }
    }
    details.closed_contacts = static_cast<long>(closed.size());
    // T_K at the apex is K itself: u = G nu^{j+1} + dg/dt in K*, gamma_r in K, with
    // nu^{j+1} = v^{j+1/2} + M^-1 G^T gamma_r (eq. 21d); k^j plays no role here.
    const ContactSystem closed_system(world_, closed_contacts, rows);
    const ConeProblem velocity_problem =
        velocity_ccp(world_, closed_system, closed_contacts, details.mean_velocities, rows,
                     options_.friction_model);
    VecX closed_gamma_r = VecX::Zero(rows * static_cast<int>(closed.size()));
    details.velocity_solver_stats = solve_ccp(solver(), velocity_problem, closed_gamma_r);
    end_velocity_ =
        add_impulse_response(world_, closed_system, details.mean_velocities, closed_gamma_r);
    for (int k = 0; k < static_cast<int>(closed.size()); ++k)
      details.velocity_impulses.segment(rows * closed[k], rows) =
          closed_gamma_r.segment(rows * k, rows);
    // gamma^j = gamma_l^j + gamma_r^j (Kleinert Sec. 3.2).
    report.impulses += details.velocity_impulses;
  }
  report.set_details(std::move(details));
}

// Eq. 14a / 21a: q^{j+1} = q^j + h v^{j+1/2}; the world then keeps nu^{j+1} for RATTLE.
void ShakeStepper::update_positions(StepState& state) {
  integrate_positions(world_, state.dt);
  if (end_velocity_.size() > 0) set_dynamic_velocities(world_, end_velocity_);
}

const ShakeStepDetails& shake_details(const StepReport& report) {
  const auto* details = report.find_details<ShakeStepDetails>();
  if (!details) throw InputError("shake_details: the report is not of a SHAKE or RATTLE step");
  return *details;
}

}  // namespace moreau
