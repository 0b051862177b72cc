#pragma once
// Impulse-velocity time stepping of seed 003 Sec. 3.1 (Preclik 2014): positions implicit,
// velocities explicit,
//   v' = v + M^-1 (H r + dt (f_ext, tau_ext - omega x I omega)),
//   x' = x + dt v',   phi' = (phi + dt Q(phi) omega') / |phi + dt Q(phi) omega'|,
// with the contact impulses r = integral of the contact forces over the step from a
// ContactSolver, and the non-penetration condition
//   xi_j / dt + u_n,j(r) >= 0 _|_ r_n,j >= 0,
// whose xi/dt term is scaled by the error reduction parameter epsilon for penetrations only:
//   epsilon min(0, xi_j / dt) + max(0, xi_j / dt).
// It differs from TimeStepper (seed 000) in the explicit gyroscopic term, the normalized
// first-order quaternion update, the error reduction and in taking the contact law as a
// solver: MaxDissipationGaussSeidel and friends (block_solvers.hpp) give the maximum-dissipation
// impact model of eq. (5), ProjectedGaussSeidel with FrictionModel::coulomb the Coulomb-like
// one. Each step starts the solver from zero impulses (no warm start).
#include <memory>

#include "moreau/integrator/time_stepper.hpp"

namespace moreau {

struct ImpulseVelocityOptions {
  double time_step = 1e-3;  // dt, s
  // epsilon of seed 003 Sec. 3.1, in [0, 1]: 0 ignores penetrations, 1 removes them within one
  // step (the paper takes it in [0, 1) to avoid injecting energy; 1 is allowed here so that the
  // scheme can be compared with TimeStepper's full Phi/dt).
  double error_reduction = 0.5;
  bool frictional = true;  // rows = world dimension, else 1 (frictionless)
  // Passed to the solver in the ConeProblem: it selects the law of the Coulomb-family solvers
  // (pgs, pgj, apgd); the md_* solvers ignore it.
  FrictionModel friction_model = FrictionModel::coulomb;
  CollisionOptions collision;
  void validate() const;  // throws InputError naming the field
};

class ImpulseVelocityStepper {
 public:
  // The solver decides the impact model; it must not be null.
  ImpulseVelocityStepper(World& world, ImpulseVelocityOptions options,
                         std::unique_ptr<ContactSolver> solver);

  // Advances the world by one step. Throws SimulationError naming step and body if a state
  // turns NaN. StepReport::compatible_* stay empty.
  const StepReport& step();

  const StepReport& last_report() const { return report_; }
  const ImpulseVelocityOptions& options() const { return options_; }
  const ContactSolver& solver() const { return *solver_; }
  World& world() { return world_; }
  long steps_taken() const { return step_count_; }

 private:
  World& world_;
  ImpulseVelocityOptions options_;
  std::unique_ptr<ContactSolver> solver_;
  StepReport report_;
  long step_count_ = 0;
};

}  // namespace moreau
