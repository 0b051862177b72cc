#pragma once
// Impulse-velocity time stepping of Preclik et al. Sec. 3.1: positions implicit,
// velocities explicit,
//   v' = v + M^-1 (H r + dt (f_ext, tau_ext - omega x I omega)),
//   x' = x + dt v',   phi' = (phi + dt Q(phi) omega') / |phi + dt Q(phi) omega'|,
// with the contact impulses r = integral of the contact forces over the step from a
// ContactSolver, and the non-penetration condition
//   xi_j / dt + u_n,j(r) >= 0 _|_ r_n,j >= 0,
// whose xi/dt term is scaled by the error reduction parameter epsilon for penetrations only:
//   epsilon min(0, xi_j / dt) + max(0, xi_j / dt).
// It differs from the semi-implicit Euler scheme (Olsen & Kamrin) in the explicit gyroscopic term,
// the normalized first-order quaternion update, the error reduction and in taking the contact law
// as a solver: MaxDissipationGaussSeidel and friends (block_solvers.hpp) give the
// maximum-dissipation impact model of eq. (5), ProjectedGaussSeidel with FrictionModel::coulomb the
// Coulomb-like one. Each step starts the solver from zero impulses (no warm start).
#include <memory>

#include "moreau/integrator/contact_dynamics_stepper.hpp"

namespace moreau {

struct ImpulseVelocityOptions : StepSettings {
  // epsilon of Preclik et al. Sec. 3.1, in [0, 1]: 0 ignores penetrations, 1 removes them within
  // one step (the paper takes it in [0, 1) to avoid injecting energy; 1 is allowed here so that the
  // scheme can be compared with the semi-implicit Euler's full Phi/dt).
  double error_reduction = 0.5;
  // Passed to the solver in the ConeProblem: it selects the law of the Coulomb-family solvers
  // (pgs, pgj, apgd); the md_* solvers ignore it.
  FrictionModel friction_model = FrictionModel::coulomb;
  static const OptionTable<ImpulseVelocityOptions>& fields();  // integrator keys
  void validate() const;                                       // throws InputError naming the field
};

class ImpulseVelocityStepper final : public ContactDynamicsStepper {
 public:
  // The solver decides the impact model; it must not be null.
  ImpulseVelocityStepper(World& world, ImpulseVelocityOptions options,
                         std::unique_ptr<ContactSolver> solver);

  std::string scheme() const override { return "impulse_velocity"; }
  bool exports_problems() const override { return true; }
  const ImpulseVelocityOptions& options() const { return options_; }

 private:
  ImpulseVelocityOptions options_;

  Vec6 free_velocity(int body, const InverseMass& inverse_mass) const override;
  void build_problem(StepState& state, std::vector<Contact> candidates,
                     StepReport& report) override;
  double normal_offset(const Contact& contact, double dt) const override;
  void update_positions(StepState& state) override;
};

}  // namespace moreau
