#pragma once
// The theta-method of Dumont Sec. 2.1 and 3.2, with Newton's impact law:
//
//   q_m     = q_k + (1 - theta) dt v_k                  (eq. 18: q_{k+1/2} for theta = 1/2)
//   contacts and the local-global mapping P(q_m)        (eq. 19)
//   v_free  = v_k + dt M^-1 (theta F_{k+1} + (1 - theta) F_k)   (eq. 2-3; F is gravity here)
//   u~      = (u+ + E u-) / (1 + E),  u- = P*(q_m) v_k, u+ = P*(q_m) v_{k+1}   (eq. 20)
//   solve   u~ = u~_free + W~ r with Coulomb's law on (u~, r)   (eq. 6)
//   v_{k+1} = v_free + M^-1 P r                          (eq. 3)
//   q_{k+1} = q_m + theta dt v_{k+1}                     (eq. 2, second line)
//
// E = diag(e_n, e_t, e_t): e_n is the pair's restitution (Material::restitution, the smaller of
// the two), e_t is ThetaOptions::tangential_restitution (Material has no tangential one). The
// map u+ -> u~ is S (u+ + E u-) with S = diag(1 / (1 + e)), so the contact problem solved is
// W~ = S W, q~ = S (u_free + E u-); W~ = W when every restitution is 0 and is not symmetric
// otherwise (NLGS and PGS do not need symmetry; APGD does).
//
// Which contacts enter (Dumont gives no rule): those found at q_m whose gap predicted at the
// end of the step under free motion, g(q_m) + theta dt u_free,n, is <= 0. A resting contact
// (gap ~ 0, gravity pressing it) always enters, so it does not chatter open and shut on
// round-off; a falling body enters the step in which it would reach the obstacle, and Newton's
// law then acts on the velocity it had before the step (Moreau 1999, Dumont ref. [13]).
// The NLGS starts each step from r = 0 (Dumont Sec. 3.2: "initialization of the contact
// forces with R = 0").
#include <memory>

#include "moreau/integrator/contact_dynamics_stepper.hpp"

namespace moreau {

// What only the theta scheme reports: the contacts found at q_m within the margin, before the
// free-motion gap filter keeps those that enter the problem.
struct ThetaStepDetails {
  long candidate_contacts = 0;
};
// The theta part of a report of ThetaStepper; throws InputError for another scheme's report.
const ThetaStepDetails& theta_details(const StepReport& report);

struct ThetaOptions : StepSettings {
  ThetaOptions() { time_step = 1e-4; }
  // theta in [1/2, 1]; 1/2 is Dumont's algorithm (eq. 18 and q_{k+1} = q_{k+1/2} + dt/2 v_{k+1}).
  double theta = 0.5;
  double tangential_restitution = 0.0;  // e_t of eq. 20, in [0, 1]
  // Candidates are the pairs closer than collision.margin; it must cover the relative motion of
  // one step.
  static const OptionTable<ThetaOptions>& fields();  // integrator keys
  void validate() const;                             // throws InputError naming the field
};

// The report's details hold a ThetaStepDetails (the candidates found at q_m); the contacts of
// the report are those of the problem, with their geometry at q_m.
class ThetaStepper final : public ContactDynamicsStepper {
 public:
  // Any ContactSolver; an NlgsSolver also reports its eps_glob terms (StepReport::nlgs).
  ThetaStepper(World& world, ThetaOptions options, std::unique_ptr<ContactSolver> solver);

  std::string scheme() const override { return "theta"; }
  const ThetaOptions& options() const { return options_; }

 private:
  ThetaOptions options_;

  void before_detection(StepState& state) override;
  void build_problem(StepState& state, std::vector<Contact> candidates,
                     StepReport& report) override;
  void update_positions(StepState& state) override;
};

}  // namespace moreau
