#pragma once
// Nonsmooth SHAKE and RATTLE of Kleinert, Simeon & Dressler (Sec. 3), from a Galerkin
// projection in time of the measure differential inclusion (Kleinert eq. 6).
//
// SHAKE (Kleinert eq. 14), positions implicit in the cone complementarity problem:
//   q^{j+1} = q^j + h v^{j+1/2}                                          (eq. 14a)
//   M (v^{j+1/2} - v^{j-1/2}) = k^j + G^T gamma^j,  k^j = h f_ext        (eq. 14b)
//   K  ni  g(q^{j+1}) / h  _|_  gamma^j  in  K*                          (eq. 14c)
// with g(q^{j+1}) / h replaced by its linearization (eq. 17)
//   u^{j+1} = g(q^j) / h + G v^{j+1/2} + dg/dt = N gamma + r             (eq. 18-20)
// so that each step solves the CCP  K ni u = N gamma + r _|_ gamma in K*  (eq. 20, 22) with
// N = G M^-1 G^T (the suite's Delassus operator W) and r = g/h + G (v^{j-1/2} + M^-1 k^j),
// dg/dt entering through the velocities of prescribed bodies. For friction the cone pair is
// K_mu (impulses) and K_mu* (the linearized constraint, eq. 22): the convex (De Saxce-relaxed)
// cone complementarity problem, FrictionModel::convex_relaxation. Any ContactSolver solves it.
//
// RATTLE (Kleinert eq. 21) adds a second, velocity-level CCP after the SHAKE step, with an
// auxiliary velocity nu that carries the recursion (eq. 21b uses nu^j where eq. 14b has
// v^{j-1/2}):
//   M (nu^{j+1} - v^{j+1/2}) = G^T gamma_r^j                             (eq. 21d)
//   G nu^{j+1} + dg/dt in T_K(g(q^{j+1}))  _|_  gamma_r^j in T_K*(g(q^{j+1}))  (eq. 21e)
// and reports the total impulse gamma^j = gamma_l^j + gamma_r^j, which converges as h -> 0
// where SHAKE's per-step impulses depend on where an impact falls in the step (Kleinert
// Sec. 3.2, Fig. 3). The tangent cone of K at g(q^{j+1}) is the whole space for a contact that
// is open at the end of the step (gamma_r = 0 there) and the cone itself for a closed one
// (the apex of K_mu*), so the second CCP is the velocity CCP u = G nu + dg/dt over the closed
// contacts. A contact counts as closed when its linearized end-of-step gap h u_n^{j+1}
// (eq. 17) is below ShakeOptions::closed_gap or it carries a normal impulse gamma_l,n > 0.
// Both CCPs use the contact frames and Jacobian G(q^j) of the step: eq. 21e has G(q^{j+1}),
// which differs from G(q^j) by O(h) for spheres; keeping G(q^j) is the same first-order
// linearization as eq. 17 and keeps the second problem's N symmetric (N = G M^-1 G^T).
//
// Rotation-locked bodies (RigidBody::rotation_locked) are the non-rotating spheres of the
// paper; rotating bodies are integrated too (integrate_positions), with f_ext without a
// gyroscopic term. World velocities after a step: SHAKE leaves v^{j+1/2}; RATTLE leaves
// nu^{j+1}, the velocity the next step starts from, and reports v^{j+1/2} = (q^{j+1} - q^j) / h
// in ShakeStepDetails::mean_velocities.
#include <memory>
#include <string>

#include "moreau/integrator/contact_dynamics_stepper.hpp"
#include "moreau/integrator/impulse_warm_start.hpp"

namespace moreau {

enum class ShakeScheme {
  shake,   // Kleinert eq. 14-20: one CCP per step
  rattle,  // Kleinert eq. 21: SHAKE's CCP then the velocity-level CCP on the tangent cone
};
std::string to_string(ShakeScheme scheme);

// What only SHAKE and RATTLE report (Kleinert eq. 14-21).
struct ShakeStepDetails {
  VecX position_impulses;    // gamma_l^j of eq. 21c (= StepReport::impulses for SHAKE)
  VecX velocity_impulses;    // gamma_r^j of eq. 21e per contact (zero for SHAKE and open ones)
  long closed_contacts = 0;  // contacts of the RATTLE velocity CCP
  SolverStats velocity_solver_stats;  // of the RATTLE velocity CCP (not_run for SHAKE)
  VecX mean_velocities;               // v^{j+1/2} = (q^{j+1} - q^j) / h, 6 per body
};

// The time step is Kleinert's h; frictionless, the cone is K = R+.
struct ShakeOptions : StepSettings {
  ShakeScheme scheme = ShakeScheme::shake;
  // Kleinert eq. 22: gamma in K_mu, u in K_mu* (convex_relaxation). coulomb (De Saxce's
  // velocity) is allowed for comparison with the other steppers of the suite.
  FrictionModel friction_model = FrictionModel::convex_relaxation;
  // Potential contacts: pairs whose gap is below collision.margin enter the CCP (Kleinert
  // Sec. 5: below half the mean radius).
  // RATTLE: a contact is closed at the end of the step when its linearized gap h u_n^{j+1} is
  // below this, m. It must exceed the gap error of the first solve (solver tolerance times
  // h |r|) and stay far below the particle size; 1e-9 m is both for the suite's scenes.
  double closed_gap = 1e-9;
  // Kleinert's SHAKE starts each CCP from zero impulses (their IPM takes no start). true
  // starts SHAKE's CCP from the previous step's gamma^j of the same contacts (ImpulseWarmStart;
  // used when the solver's own warm_start is on too): an iterative solver (APGD, PGJ) with a
  // fixed iteration budget then carries a deep packing's weight across steps instead of
  // solving it anew from zero each step.
  bool warm_start = false;
  static const OptionTable<ShakeOptions>& fields();  // integrator keys
  void validate() const;                             // throws InputError naming the field
};

class ShakeStepper final : public ContactDynamicsStepper {
 public:
  // Any ContactSolver solves both CCPs; it must not be null. StepReport::impulses is the total
  // impulse per contact (gamma^j for SHAKE, gamma_l^j + gamma_r^j for RATTLE), solver_stats
  // those of the first (SHAKE) CCP; the rest is in ShakeStepDetails (shake_details).
  ShakeStepper(World& world, ShakeOptions options, std::unique_ptr<ContactSolver> solver);

  std::string scheme() const override { return to_string(options_.scheme); }
  // The exported problem is SHAKE's CCP (the first one): free_velocity is v^{j-1/2} (or nu^j)
  // + M^-1 k^j, normal_offset g(q^j) / h.
  bool exports_problems() const override { return true; }
  const ShakeOptions& options() const { return options_; }

 private:
  ShakeOptions options_;
  VecX end_velocity_;  // nu^{j+1} of RATTLE (empty for SHAKE), set in after_velocity_update
  ImpulseWarmStart warm_start_;  // gamma^j of SHAKE's CCP, with options_.warm_start

  void build_problem(StepState& state, std::vector<Contact> candidates,
                     StepReport& report) override;
  void initial_guess(const StepReport& report, VecX& impulses) override;
  void after_velocity_update(StepState& state, StepReport& report) override;
  void update_positions(StepState& state) override;
  void on_bodies_renumbered(const std::vector<int>& new_index) override {
    warm_start_.renumber(new_index);
  }
};

// The SHAKE/RATTLE part of a report of ShakeStepper; throws InputError for another scheme's.
const ShakeStepDetails& shake_details(const StepReport& report);

}  // namespace moreau
