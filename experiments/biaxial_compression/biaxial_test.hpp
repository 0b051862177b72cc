#pragma once
// One biaxial test of the Krabbenhoft/NURBS chapter Sec. 4.4.1 on a prepared sample: the static
// formulation (eq. 4.16) through the quasi-static driver, the confining stress sigma_3 held on
// the right wall, the top wall moved down step by step, left and bottom walls fixed.
#include <string>
#include <vector>

#include "sample.hpp"

namespace biaxial {

struct TestOptions {
  double k_normal = 0.0;             // k_N, N/m; +inf = rigid
  double friction = 0.5;             // interparticle mu (Sec. 4.4.1: 0.3 and 0.5)
  double wall_friction = 0.0;        // Sec. 4.4.1: "All walls are frictionless"
  double confining_stress = 125.0;   // sigma_3, N/m^2 (Sec. 4.4.1: "125 units")
  double final_axial_strain = 0.21;  // Sec. 4.4.1
  int load_steps = 150;              // Sec. 4.4.1: "about 150 steps"
  int consolidation_steps = 0;       // static steps at the reference state before step 0
  double mechanism_motion = 1.0;     // m (one mean diameter): a larger wall step stops the run
  double tolerance = 1e-6;           // of the interior point method's stop test (README.md)
  // The pseudo-time step of the load steps (eq. 4.15 from rest, quasi_static_driver.hpp) is
  // chosen so that the dynamic force of a particle moved from rest by one axial increment,
  // m u / dt^2, is this fraction of a contact force sigma_3 d (README.md); 0: eq. 4.16 exactly.
  double dynamic_force_fraction = 1e-3;
  // A load step whose largest dynamic force exceeds this fraction of sigma_3 d has no static
  // equilibrium near its start: not applied, and halved like a step that does not converge.
  double equilibrium_fraction = 1e-2;
  // Kinetic relaxation steps allowed after such a step before it is halved (driver option).
  long max_relaxation_steps = 50;
};

// State after one load step: the chapter's wall-based measures (Sec. 4.4.1).
struct TestPoint {
  int step = 0;                  // 0: end of the isotropic consolidation
  double axial_strain = 0.0;     // eps_a = 1 - H / H0
  double volumetric_strain = 0;  // eps_v = 1 - W H / (W0 H0), compaction positive
  double sigma1 = 0.0;           // top wall force / W, N/m^2
  double sigma3 = 0.0;           // right wall force / H
  int newton_steps = 0;          // of the last solve of the step
  int substeps = 1;              // solves of the step (halved after a failure)
  double solve_seconds = 0.0;
  double step_seconds = 0.0;
  long contacts = 0;
  long rattlers = 0;
  long idle_particles = 0;             // in the problem, without force: kept in place by the driver
  long idle_released = 0;              // idle, but moved to make room for a neighbour
  double deepest_overlap = 0.0;        // -(least gap) of the step's contacts at its start, m
  long overshooting_particles = 0;     // moved by more than the collision margin (driver's guard)
  double largest_motion = 0.0;         // of a particle's point in the step, m
  double largest_dynamic_force = 0.0;  // of eq. 4.15's M_bar dx (driver), N (N m rotation)
  long relaxation_steps = 0;           // kinetic relaxation steps of the load step (driver)
  long numerical_limit_solves = 0;     // solves accepted at the IPM's numerical limit (driver)
  bool converged = true;
  double deviatoric() const { return sigma1 - sigma3; }
};

struct TestRun {
  Family family = Family::disk;
  double k_normal = 0.0;
  double width0 = 0.0, height0 = 0.0;  // after consolidation
  double porosity0 = 0.0;              // 1 - particle area / (W0 H0)
  double pseudo_time_step = 0.0;       // s (infinity: eq. 4.16)
  double contact_force_scale = 0.0;    // sigma_3 d, N
  std::vector<TestPoint> points;       // converged load steps, from step 0
  std::string failure;  // non-empty: the load step that did not converge, where the run stopped
};

// Runs the test on a copy of the sample. Errors of the driver (a loaded particle without
// contacts, a wall touching nothing) propagate as moreau::SimulationError. With a persistence
// directory, checkpoints the test there (every_seconds, at an interruption and at the end of
// the curve) and, resuming, continues from its checkpoint or reads a finished curve back.
TestRun run_biaxial_test(const Sample& sample, const TestOptions& options,
                         const Persistence& persistence = {});

}  // namespace biaxial
