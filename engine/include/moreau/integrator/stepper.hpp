#pragma once
// The Stepper interface every time-stepping scheme implements, and the one report a step
// gives. The schemes (docs/references.md for the keys):
//   SemiImplicitEulerStepper  Olsen & Kamrin / Anitescu eq. 13-21   semi_implicit_euler.hpp
//   ThetaStepper              Dumont Sec. 2.1 and 3.2                theta_stepper.hpp
//   ImpulseVelocityStepper    Preclik et al. Sec. 3.1                impulse_velocity_stepper.hpp
//   DemStepper                explicit penalty DEM (velocity Verlet) dem/dem_stepper.hpp
//   ShakeStepper              Kleinert et al. eq. 14-21 (SHAKE, RATTLE) shake_stepper.hpp
//   VariationalStepper        Krabbenhoft/NURBS chapter eq. 4.4-4.15
//                             (variational/variational_stepper.hpp)
// The three contact-dynamics schemes share one step pipeline (ContactDynamicsStepper,
// contact_dynamics_stepper.hpp) and differ only in the hooks where their papers differ.
#include <any>
#include <functional>
#include <string>
#include <vector>

#include "moreau/collision/collision_detector.hpp"
#include "moreau/model/world.hpp"
#include "moreau/solver/solver.hpp"

namespace moreau {

struct StepReport {
  long step = 0;
  double time = 0.0;  // at the end of the step
  // Contacts of the step's problem; for the DEM, the touching pairs (see DemStepDetails).
  std::vector<Contact> contacts;
  // Per contact, rows_per_contact each, in the contact frame (n, t1, t2): the contact impulses
  // r = integral of the contact force over the step (N s); the DEM gives dt times its force.
  VecX impulses;
  int rows_per_contact = 1;
  long active_contacts = 0;  // contacts in the step (DEM: touching pairs, also when not filled)
  SolverStats solver_stats;  // termination not_run for a step without contacts and the DEM
  CollisionStats collision_stats;
  double solve_cpu_seconds = 0.0;  // process CPU time of the contact solve
  // What a scheme or its solver reports beyond these fields, one value per type: read through
  // the accessor next to the scheme (nlgs_stats(), compatible_solve(), theta_details(),
  // dem_details(), shake_details(), variational_details()), so that this interface knows no
  // scheme and no solver family.
  std::vector<std::any> details;
  template <class Details>
  const Details* find_details() const {
    for (const std::any& entry : details)
      if (const auto* found = std::any_cast<Details>(&entry)) return found;
    return nullptr;
  }
  template <class Details>
  void set_details(Details value) {
    for (std::any& entry : details)
      if (std::any_cast<Details>(&entry)) {
        entry = std::move(value);
        return;
      }
    details.emplace_back(std::move(value));
  }
  // Contact forces f = r / dt (Olsen & Kamrin eq. 13 with impulses over one step).
  VecX forces(double dt) const { return impulses / dt; }
};

// The contact problem of one step as a scheme built and solved it, in the form
// u = W r + q with W = H^T M^-1 H over the dynamic bodies and q = H^T v_free + offset, the
// offset being on the normal rows only (Phi/dt of Olsen & Kamrin eq. 16, e_n B v of their
// Sec. 4.3, or the error-reduced gap rate of Preclik et al. Sec. 3.1). Handed to a problem
// observer before the velocity update, so the world still holds the configuration at which the
// problem was built; the pointers live only during the call.
struct StepProblem {
  const World* world = nullptr;
  const std::vector<Contact>* contacts = nullptr;
  long step = 0;             // number of the step being taken (1 for the first)
  double time_step = 0.0;    // s
  int rows_per_contact = 1;  // of the solved problem: 1 (frictionless) or the dimension
  FrictionModel friction_model = FrictionModel::coulomb;
  const VecX* free_velocity = nullptr;  // 6 per body (kBodyDofs)
  const VecX* normal_offset = nullptr;  // one per contact
  const VecX* friction = nullptr;       // mu per contact
  const VecX* impulses = nullptr;       // the solution r (rows_per_contact per contact)
  const SolverStats* solver_stats = nullptr;
};

class Stepper {
 public:
  virtual ~Stepper() = default;
  Stepper(const Stepper&) = delete;
  Stepper& operator=(const Stepper&) = delete;

  // Advances the world by one step. Throws SimulationError naming step and body if a state
  // turns non-finite.
  virtual const StepReport& step() = 0;
  // The scheme's scene name: semi_implicit_euler, theta, impulse_velocity, dem.
  virtual std::string scheme() const = 0;
  virtual double time_step() const = 0;
  // Whether the scheme hands its contact problem to the problem observer (FCLIB export).
  virtual bool exports_problems() const { return false; }
  // Asks for StepReport::contacts of the following steps (only the DEM fills them on demand).
  void request_contacts(bool wanted) { contacts_requested_ = wanted; }

  // Called in every step with contacts after the solve, by the schemes that export_problems().
  // An empty function removes it.
  void set_problem_observer(std::function<void(const StepProblem&)> observer) {
    problem_observer_ = std::move(observer);
  }

  // Continues the step count from a checkpoint's step (moreau/io/checkpoint.hpp).
  void resume_at(long step) { step_count_ = step; }

  // After World::remove_bodies: renumbers what the stepper keeps across steps by body index
  // (the last report's contacts and impulses, the scheme's warm start) with its map, dropping
  // what refers to a removed body, so that the next step's warm start pairs the same bodies.
  // Bodies appended by World::add_body need no call: nothing refers to them yet.
  void renumber_bodies(const std::vector<int>& new_index);

  const StepReport& last_report() const { return report_; }
  World& world() { return world_; }
  const World& world() const { return world_; }
  long steps_taken() const { return step_count_; }

 protected:
  explicit Stepper(World& world) : world_(world) {}
  // The scheme's own state held by body index (renumber_bodies); nothing by default.
  virtual void on_bodies_renumbered(const std::vector<int>& /*new_index*/) {}
  // The end of every step: t += dt, the report's time and number, the finiteness check.
  const StepReport& finish_step(StepReport&& report);

  World& world_;
  StepReport report_;
  long step_count_ = 0;
  bool contacts_requested_ = true;
  std::function<void(const StepProblem&)> problem_observer_;
};

// Integrates positions over a time h with the velocities the bodies hold: x += h v,
// R <- exp(h omega) R, renormalized (Olsen & Kamrin eq. 13, first line; Dumont eq. 2 and 18).
void integrate_positions(World& world, double h);
// The same for one body (nothing for a fixed one), for steppers that fuse it into their own
// per-body loops.
void integrate_position(RigidBody& body, double h);

}  // namespace moreau
