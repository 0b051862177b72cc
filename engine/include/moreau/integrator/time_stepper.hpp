#pragma once
// Semi-implicit Euler contact dynamics, seed 000 eq. 13-21 (frictionless LCP, restitution
// variant of Sec. 4.3) and its frictional cone complementarity form.
#include <functional>
#include <memory>
#include <vector>

#include "moreau/collision/collision_detector.hpp"
#include "moreau/compatible/compatible_cd.hpp"
#include "moreau/solver/solver.hpp"

namespace moreau {

enum class ImpactLaw {
  // Phi/dt in the free velocity (seed 000 eq. 16-20): perfectly plastic, contacts close
  // exactly at the end of the step.
  plastic,
  // e_n B v^t replaces Phi/dt for contacts that are closed (Phi <= 0) at the start of the
  // step (seed 000 Sec. 4.3 note); open contacts keep Phi/dt so they do not form early.
  restitution,
};

struct StepOptions {
  double time_step = 1e-3;  // s
  bool frictional = true;   // cone problem (rows = dimension) or frictionless LCP (1 row)
  FrictionModel friction_model = FrictionModel::coulomb;
  ImpactLaw impact_law = ImpactLaw::plastic;
  CollisionOptions collision;
  std::string solver = "pgs";
  SolverOptions solver_options;
  // Compatible CD post-processing (seed 000 Alg. 1, step 2); frictionless steps only.
  CompatibleOptions compatible;
  void validate() const;
};

struct StepReport {
  long step = 0;
  double time = 0.0;  // at the end of the step
  std::vector<Contact> contacts;
  VecX impulses;  // per contact (rows each), r = dt f
  int rows_per_contact = 1;
  SolverStats solver_stats;
  CollisionStats collision_stats;
  // Compatible CD impulses per contact (one row each) and the truss solver's stats, when
  // StepOptions::compatible.enabled.
  VecX compatible_impulses;
  NoTensionTrussStats compatible_stats;
  // Contact forces f = r / dt (seed 000 eq. 13 with impulses over one step).
  VecX forces(double dt) const { return impulses / dt; }
};

// The contact problem of one step as the stepper built and solved it (seed 000 eq. 20 in
// impulse form): u = W r + q with W = H^T M^-1 H over the dynamic bodies and
// q = H^T v_free + offset, the offset being Phi/dt (eq. 16) or e_n B v (Sec. 4.3) on the
// normal rows. Handed to a problem observer before the velocity update, so the world still
// holds the state at the start of the step; the pointers live only during the call.
struct StepProblem {
  const World* world = nullptr;
  const std::vector<Contact>* contacts = nullptr;
  long step = 0;             // number of the step being taken (1 for the first)
  double time_step = 0.0;    // s
  int rows_per_contact = 1;  // of the solved problem: 1 (frictionless) or the dimension
  FrictionModel friction_model = FrictionModel::coulomb;
  const VecX* free_velocity = nullptr;  // v + dt M^-1 F_ext, 6 per body (kBodyDofs)
  const VecX* normal_offset = nullptr;  // one per contact
  const VecX* friction = nullptr;       // mu per contact
  const VecX* impulses = nullptr;       // the solution r (rows_per_contact per contact)
  const SolverStats* solver_stats = nullptr;
};

class TimeStepper {
 public:
  TimeStepper(World& world, StepOptions options);

  // Advances the world by one step: detect contacts, build and solve the contact problem,
  // v+ = v + dt M^-1 F_ext + M^-1 H r (eq. 13), q+ = q + dt L(q) v+ with a normalized
  // quaternion update. Throws SimulationError naming step and body if a state turns NaN.
  const StepReport& step();

  const StepReport& last_report() const { return report_; }
  // Switches the compatible CD post-processing on or off for the following steps (e.g. only
  // for the step at which forces are read). Throws InputError on a frictional stepper.
  void set_compatible(const CompatibleOptions& compatible);
  const StepOptions& options() const { return options_; }
  // Called in every step after the contact solve (not for steps without contacts), e.g. to
  // export the problem to FCLIB (moreau/fclib/step_export.hpp). An empty function removes it.
  void set_problem_observer(std::function<void(const StepProblem&)> observer) {
    problem_observer_ = std::move(observer);
  }
  World& world() { return world_; }
  long steps_taken() const { return step_count_; }

 private:
  World& world_;
  StepOptions options_;
  std::unique_ptr<ContactSolver> solver_;
  StepReport report_;
  long step_count_ = 0;
  // Warm start: impulses of the previous step matched by (body_a, body_b, point index).
  std::vector<Contact> previous_contacts_;
  VecX previous_impulses_;
  std::function<void(const StepProblem&)> problem_observer_;
};

// Velocities (6 per body) at the end of a step of length dt without contact impulses:
// v + dt M^-1 F_ext (seed 000 eq. 13 with r = 0); fixed bodies have none, prescribed bodies
// keep their own. The free term every impulse-based stepper starts from.
VecX free_velocities(const World& world, double dt);

// Integrates positions over one step with end-of-step velocities (seed 000 eq. 13, first
// line): x+ = x + dt v, R+ = exp(dt omega) R, renormalized.
void integrate_positions(World& world, double dt);

}  // namespace moreau
