#pragma once
// The step pipeline shared by the contact-dynamics schemes. One step:
//   1. v_start, and v_free = v + dt M^-1 F (+ the scheme's explicit terms), at q_k;
//   2. the scheme's position move before detection (Dumont: to q_m, eq. 18);
//   3. contact detection within the collision margin;
//   4. the scheme's contact problem u = W r + q (which contacts enter, q, W);
//   5. the solve from the scheme's initial guess (zero, or a warm start);
//   6. v_{k+1} = v_free + M^-1 H r for the dynamic bodies;
//   7. the scheme's post-processing (compatible CD) and its position update;
//   8. t += dt and the finiteness check.
// A scheme overrides only the hooks where its paper differs.
#include <memory>
#include <string>
#include <vector>

#include "moreau/collision/collision_detector.hpp"
#include "moreau/contact/contact_system.hpp"
#include "moreau/integrator/step_settings.hpp"
#include "moreau/integrator/stepper.hpp"
#include "moreau/nlgs/nlgs_solver.hpp"

namespace moreau {

namespace detail {
// For a scheme's constructor: its options checked before the base class reads them.
template <class Options>
const Options& validated(const Options& options) {
  options.validate();
  return options;
}
}  // namespace detail

class ContactDynamicsStepper : public Stepper {
 public:
  const StepReport& step() final;
  double time_step() const final { return time_step_; }
  const ContactSolver& solver() const { return *solver_; }

 protected:
  // Throws InputError when `solver` is null (naming the scheme) or the world is invalid.
  ContactDynamicsStepper(World& world, std::unique_ptr<ContactSolver> solver,
                         const StepSettings& settings, const std::string& scheme);

  // What the hooks of one step share.
  struct StepState {
    double dt = 0.0;
    int rows = 1;
    VecX velocity_start;  // v_k, 6 per body (fixed bodies zero)
    VecX velocity_free;   // v_free, 6 per body
    std::unique_ptr<ContactSystem> system;
    ConeProblem problem;
    // The normal-row offset per contact when the problem is of the exported form (StepProblem);
    // empty for a problem that is not (Dumont's impact-scaled W~).
    VecX normal_offset;
    std::unique_ptr<DelassusOperator> delassus;  // a scheme's own W, when it is not `system`
  };

  // Step 1: the velocity of `body` at the end of the step without contact impulses. The
  // default, v + dt M^-1 F_ext, is Olsen & Kamrin eq. 13 with f = 0 and Dumont eq. 2-3 with a
  // constant force; prescribed bodies keep their velocity, fixed ones have none.
  virtual Vec6 free_velocity(int body, const InverseMass& inverse_mass) const;
  // Step 2: moves positions before detection (nothing by default).
  virtual void before_detection(StepState&) {}
  // Step 4: chooses the contacts of the problem among `candidates` (into report.contacts),
  // builds state.system over them and fills state.problem (q, mu, friction model, W).
  virtual void build_problem(StepState& state, std::vector<Contact> candidates,
                             StepReport& report) = 0;
  // Step 5: the solver's initial guess (zero by default).
  virtual void initial_guess(const StepReport&, VecX&) {}
  // Step 7: after the velocity update and before the position update.
  virtual void after_velocity_update(StepState&, StepReport&) {}
  virtual void update_positions(StepState& state) = 0;
  // The problem of Olsen & Kamrin eq. 20 and Preclik et al. Sec. 3.1: every candidate enters,
  // W = H^T M^-1 H and q = H^T v_free + normal_offset on the normal rows; exported to FCLIB.
  void build_offset_problem(StepState& state, std::vector<Contact> candidates, StepReport& report,
                            FrictionModel friction_model);
  // The normal-row offset of build_offset_problem for one contact, in m/s; by default the gap
  // rate Phi / dt of Olsen & Kamrin eq. 16.
  virtual double normal_offset(const Contact& contact, double dt) const { return contact.gap / dt; }

  const CollisionOptions& collision() const { return collision_; }
  bool frictional() const { return frictional_; }

 private:
  std::unique_ptr<ContactSolver> solver_;
  double time_step_;
  bool frictional_;
  CollisionOptions collision_;
  CollisionDetector detector_;
  std::vector<Contact> spare_contacts_;  // capacity for the next step's detection
  void solve(StepState& state, VecX& impulses, StepReport& report) const;
  void notify_problem(const StepState& state, const VecX& impulses, const StepReport& report);
};

// Dumont's eps_glob terms of a step whose solver is an NLGS (nlgs_solver.hpp); null for
// another solver or a step without contacts.
const NlgsStats* nlgs_stats(const StepReport& report);

}  // namespace moreau
