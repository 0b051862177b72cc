#pragma once
// The semi-implicit Euler contact dynamics of Olsen & Kamrin eq. 13-21 (after Anitescu):
// frictionless LCP, the restitution variant of their Sec. 4.3, and the frictional cone
// complementarity form; with the compatible CD post-processing of their Alg. 1 on
// frictionless steps.
#include <memory>

#include "moreau/compatible/compatible_cd.hpp"
#include "moreau/integrator/contact_dynamics_stepper.hpp"
#include "moreau/integrator/impulse_warm_start.hpp"

namespace moreau {

enum class ImpactLaw {
  // Phi/dt in the free velocity (Olsen & Kamrin eq. 16-20): perfectly plastic, contacts close
  // exactly at the end of the step.
  plastic,
  // e_n B v^t replaces Phi/dt for contacts that are closed (Phi <= 0) at the start of the
  // step (Olsen & Kamrin Sec. 4.3 note); open contacts keep Phi/dt so they do not form early.
  restitution,
};

// The compatible CD post-processing of a step (Olsen & Kamrin Alg. 1): the impulse per
// contact (one row each) and the truss solver's stats.
struct CompatibleSolve {
  VecX impulses;
  NoTensionTrussStats stats;
};
// The compatible solve of a semi-implicit Euler step that ran it; null otherwise.
const CompatibleSolve* compatible_solve(const StepReport& report);
// The same for a step that must have run it: InputError otherwise.
const CompatibleSolve& compatible_result(const StepReport& report);

// Frictionless, the step's problem is the LCP of Olsen & Kamrin eq. 21.
struct SemiImplicitEulerOptions : StepSettings {
  FrictionModel friction_model = FrictionModel::coulomb;
  ImpactLaw impact_law = ImpactLaw::plastic;
  // Compatible CD post-processing (Olsen & Kamrin Alg. 1, step 2); frictionless steps only.
  CompatibleOptions compatible;
  static const OptionTable<SemiImplicitEulerOptions>& fields();  // integrator keys
  static constexpr const char* nested_key = "compatible";
  static const OptionTable<SemiImplicitEulerOptions>& nested_fields();  // integrator.compatible
  void validate() const;  // throws InputError naming the field
};

class SemiImplicitEulerStepper final : public ContactDynamicsStepper {
 public:
  // Throws InputError for invalid options, an invalid world or a null solver. With the
  // solver's warm_start, each step starts from the previous step's impulses of the same body
  // pair and point ordinal.
  SemiImplicitEulerStepper(World& world, SemiImplicitEulerOptions options,
                           std::unique_ptr<ContactSolver> solver);

  std::string scheme() const override { return "semi_implicit_euler"; }
  bool exports_problems() const override { return true; }
  // Switches the compatible CD post-processing on or off for the following steps (e.g. only
  // for the step at which forces are read). Throws InputError on a frictional stepper.
  void set_compatible(const CompatibleOptions& compatible);
  const SemiImplicitEulerOptions& options() const { return options_; }

 private:
  SemiImplicitEulerOptions options_;
  ImpulseWarmStart warm_start_;

  void build_problem(StepState& state, std::vector<Contact> candidates,
                     StepReport& report) override;
  double normal_offset(const Contact& contact, double dt) const override;
  void initial_guess(const StepReport& report, VecX& impulses) override;
  void after_velocity_update(StepState& state, StepReport& report) override;
  void update_positions(StepState& state) override;
  void on_bodies_renumbered(const std::vector<int>& new_index) override {
    warm_start_.renumber(new_index);
  }
};

}  // namespace moreau
