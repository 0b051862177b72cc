#pragma once
// The quasi-static driver of the variational contact dynamics: the static limit of the
// Krabbenhoft/NURBS chapter (eq. 4.16, "valid in the limit of dt tending to infinity"), one
// problem per load step of a pseudo-time, with walls driven by prescribed displacements or
// prescribed forces (the biaxial test of Sec. 4.4.1: a confining stress sigma_3 on the lateral
// walls, an axial displacement on the others).
//
// One load step from the configuration x0:
//   contacts at x0 within the collision margin (gaps g0, frames n0, t0, shear history q0);
//   minimize   g^T p + 1/2 p^T C_N p + 1/2 (q - q0)^T C_T (q - q0)
//   subject to N0 p + N0^ q (+ moments R0^p p + R0^q q) = -f_ext   for every particle (x, y, rot)
//              d_w^T (contact force on wall w) = -F_w              for every force-driven wall
//              |q| <= mu p, p >= 0                                                  (eq. 4.16)
//   where g = g0 + (relative displacement of the contact from the prescribed wall
//   displacements): the displacement-driven walls enter the gap (eq. 4.16's g0 at the walls'
//   new positions, to first order), the particles' and force-driven walls' displacements are
//   minus the multipliers z of the equilibrium rows (the mixed problem eq. 4.8 without the
//   inertia terms), and the configuration is updated by them.
// Solved by the conic QP core with equality constraints (force_problem.hpp), CHOLMOD back-end.
// The direct back-end factors the sparse quasi-definite KKT matrix of the equality rows, 3 per
// particle (docs/variational.md): the cost per Newton step grows about linearly with the contacts.
//
// Particles that cannot be in equilibrium with the contacts they have are taken out of the
// step, as granular mechanics treats rattlers: an unloaded particle that some rigid motion
// (u_x, u_y, omega) moves away from all its contacts, each strictly opening within its friction
// cone (rigid_escape.hpp), carries no force (its contacts drop out, iteratively), and so does an
// unloaded cluster of particles that touch only each other (its rigid motion is free); a loaded
// particle without contacts has no static solution (error). The test holds a force-driven wall
// too; where that wall would then touch only rattlers, those carry its load and stay in the
// step (eq. 4.16 has no equilibrium for them; eq. 4.15 with a pseudo-time step moves them aside).
// Equilibrium rows that no force reaches (the rotation of a frictionless disk) are dropped when
// their load is zero. A particle whose contacts all end the step without force (below the solver's
// resolution, tolerance x force scale) keeps its position: eq. 4.16 leaves its displacement
// undetermined, and the dynamic problem eq. 4.15, of which it is the limit, moves a particle only
// by the forces on it; unless held it would overlap a neighbour that eq. 4.16 moved towards it (the
// room was made by its own displacement): then it moves by that, which its gaps bound (it is no
// rattler). A particle moving by more than the collision margin in one step is counted in the
// report.
//
// The pseudo-time step (QuasiStaticOptions::pseudo_time_step). Eq. 4.16 determines the
// displacements only up to the mechanisms that cost nothing: a particle that rolls or slides
// along its loaded neighbours at the friction limit without changing the dissipation, a chain
// that turns about its ends. The interior point method then returns a point deep inside that
// set: in a 1,520-particle biaxial sample a load step moves a loaded particle by 38 m
// (README of experiments/biaxial_compression). Eq. 4.16 is the limit dt -> infinity of the
// dynamic problem eq. 4.15; with a finite pseudo-time step dt each load step is eq. 4.15
// started from rest (v0 = 0, so that only theta dt^2 enters: theta = 1): the equilibrium rows
// become N0 p + N0^ q + r = f_ext with the dynamic forces r = M_bar dx, M_bar = M / dt^2
// (eq. 4.5, J / dt^2 for the rotation rows), which the core solves as relaxed equality rows
// (conic_qp.hpp). A mechanism that costs nothing in eq. 4.16 then costs its kinetic energy
// and stays at rest; the loaded motion of the sample differs from eq. 4.16 by the dynamic
// forces, reported per step (largest_dynamic_force), which a dt long against the step's motion
// keeps small. Force-driven walls have no mass: their rows stay exact. No particle is idle then
// (eq. 4.15 moves a particle by the net force on it, so one without force stays), none is
// held, and none is taken out as a rattler (its dynamic force bounds its displacement; a
// neighbour moving into it pushes it aside). Infinite dt (the default) is eq. 4.16 itself.
#include <limits>
#include <string>
#include <vector>

#include "moreau/collision/collision_detector.hpp"
#include "moreau/model/world.hpp"
#include "moreau/variational/contact_model.hpp"

namespace moreau {

enum class WallControl {
  displacement,  // the wall moves by `value` (m) along `direction` in the step
  force,         // an external force `value` (N) along `direction` acts on the wall
};

// A wall driven in one load step. The body must not be dynamic (a prescribed or fixed body,
// e.g. a half-space or a box); it translates along `direction` (unit, in the plane) only.
// Walls not listed in a LoadStep keep their position.
struct WallLoad {
  int body = -1;
  Vec3 direction = Vec3::UnitX();
  WallControl control = WallControl::displacement;
  double value = 0.0;
};

struct LoadStep {
  std::vector<WallLoad> walls;
};

// The four walls of a rectangular sample (body indices; -1: none), for its width, height and
// area in the report: width = x(right) - x(left), height = y(top) - y(bottom) of the walls'
// positions (a half-space wall's position is a point of its plane).
struct SampleBox {
  int left = -1, right = -1, bottom = -1, top = -1;
};

struct QuasiStaticOptions {
  variational::ContactModel contact;  // k_N, k_T (inf: rigid), per-material, friction
  bool gravity = false;               // f_ext = the world's gravity on the particles
  CollisionOptions collision;         // margin: must exceed the motion of one load step
  conic::InteriorPointOptions interior_point = variational::default_interior_point_options();
  // dt of eq. 4.15 started from rest each load step (above), s; > 0, infinity: eq. 4.16.
  double pseudo_time_step = std::numeric_limits<double>::infinity();
  // With a finite pseudo-time step: a step whose largest dynamic force exceeds this (N, N m for
  // rotation rows) found no static equilibrium near the start (eq. 4.16 would have none): it is
  // not applied and is reported as not converged. > 0; infinity: every step is applied.
  double dynamic_force_limit = std::numeric_limits<double>::infinity();
  // With relaxation on (> 0), a load step over the limit is applied in one step of eq. 4.15
  // and followed by at most this many kinetic relaxation steps (eq. 4.15 from rest with the
  // displacement-driven walls held and the force-driven ones loaded, the pseudo-time step
  // adapted to move no point by much more than half the collision margin: shortened after a
  // long motion, lengthened again up to this dt as the motion slows) until the dynamic forces
  // are below the limit; that step reports the equilibrium. No step that moves a point further
  // than the collision margin is applied; it is taken again shorter, and a solve that fails with
  // a quarter of the dt. A step of dt_k moves the displacement-driven walls by dt_k / dt of
  // their displacement (of what remains of it) until all of it is on: the walls keep the load
  // step's rate, and a shorter dt does not press their displacement into elastic contacts.
  // Where the steps run out, nothing of the load step is applied (the world returns to its
  // start) and it is reported as not converged. 0: a step over the limit is
  // reported as not converged at once, and every motion is applied.
  long max_relaxation_steps = 0;
  // With a finite pseudo-time step: solve with the contacts that carry a shear history or whose
  // gap the walls' displacement could close, and prove the others open (zero force and an
  // end-of-step displacement in the dual cone, the convex problem's optimality condition for
  // them), solving again with any that close. Same solution as every contact within the margin.
  bool screen_contacts = true;
  SampleBox box;
  void validate(const World& world) const;  // throws InputError naming the field
};

struct WallState {
  int body = -1;
  Vec3 position = Vec3::Zero();
  double displacement = 0.0;          // along the load's direction in this step, m
  Vec3 contact_force = Vec3::Zero();  // total force of the particles on the wall, N
};

struct QuasiStaticReport {
  long step = 0;
  std::vector<Contact> contacts;  // the contacts of the problem (rattlers' taken out), at x0
  VecX forces;                    // (p, q) per contact, N
  std::vector<WallState> walls;   // the walls of the load step, after the step
  double width = std::numeric_limits<double>::quiet_NaN();  // from SampleBox, m
  double height = std::numeric_limits<double>::quiet_NaN();
  double area = std::numeric_limits<double>::quiet_NaN();  // the sample "volume" in 2D, m^2
  long rattlers = 0;                                       // particles taken out of the step
  long idle_particles = 0;  // particles of the problem whose contacts carry no force: not moved
  // Idle particles moved after all: held, they would overlap a neighbour that eq. 4.16 moved
  // towards them (their own displacement, bounded by their gaps, made the room).
  long idle_released = 0;
  long persistent_contacts = 0;  // contacts that carried a shear history
  // Contact screening (QuasiStaticOptions::screen_contacts): the detected contacts left out of
  // the solve, each proven open, and the solves the step took.
  long screened_contacts = 0;
  int screening_rounds = 0;
  // The displacement guard: particles a point of which moved by more than the collision margin
  // in the step (applied, but the step may have crossed contacts outside its problem), and the
  // largest such motion (|u| + |omega| x reach, reach = the shape's offset plus, unless it is a
  // sphere/disk that turns about its centre without moving its outline, its bounding radius), m.
  long overshooting_particles = 0;
  double largest_motion = 0.0;
  // The largest dynamic force of eq. 4.15 (M_bar dx of a translation row, J_bar dalpha of a
  // rotation row: N, N m) with a finite pseudo-time step; 0 for eq. 4.16.
  double largest_dynamic_force = 0.0;
  conic::InteriorPointStats interior_point;
  double solve_seconds = 0.0;  // wall-clock of the conic solve
  // False when the dynamic forces exceeded QuasiStaticOptions::dynamic_force_limit.
  bool in_equilibrium = true;
  long relaxation_steps = 0;  // kinetic relaxation steps of the load step (options)
  std::string message;        // why the step was not applied (empty when it was)
  // The conic solve converged, or stopped at its numerical limit (rounding stalled the Newton
  // steps) with the core's relative residuals within the asked tolerance: the force problem's
  // per-contact stop test is the stricter one (force_problem.cpp), and in the rigid 1,520-disk
  // biaxial sample it was out of reach at residuals of 1e-9 to 1e-16.
  bool solved = false;
  // Solves of the load step (its relaxation steps included) that counted as solved at the
  // numerical limit.
  long numerical_limit_solves = 0;
  bool converged() const { return in_equilibrium && solved; }
};

class QuasiStaticDriver {
 public:
  // Throws InputError for a 3D or invalid world, invalid options.
  QuasiStaticDriver(World& world, QuasiStaticOptions options);

  // Solves eq. 4.16 (eq. 4.15 from rest with a pseudo-time step) for one load step and updates
  // the configuration (velocities stay zero). Throws InputError for a load naming a dynamic or
  // unknown body, a non-unit direction or a non-finite value, SimulationError for a loaded
  // particle without contacts or a force-driven wall with no particle within the collision
  // margin. A solve that does not converge, or dynamic forces over the limit (after the
  // relaxation steps, where they are on), is a status in the report with its message: the load
  // step is then not applied.
  const QuasiStaticReport& step(const LoadStep& load);

  const QuasiStaticReport& last_report() const { return report_; }
  const World& world() const { return world_; }
  const variational::ShearHistory& shear_history() const { return history_; }
  long steps_taken() const { return steps_; }
  // Continues from a checkpoint: the shear history Delta q of the persistent contacts and the
  // count of steps taken (the world's configuration is the caller's). With both restored, the
  // following steps give the numbers of an uninterrupted run.
  void resume(variational::ShearHistory history, long steps_taken);

 private:
  World& world_;
  QuasiStaticOptions options_;
  variational::ShearHistory history_;
  // One solve of eq. 4.15 (finite dt) or 4.16 from the current configuration; applied unless it
  // does not converge, its dynamic forces exceed the limit or a point moves by more than
  // `motion_limit` (m).
  QuasiStaticReport solve_step(const LoadStep& load, double pseudo_time_step,
                               double dynamic_force_limit, double motion_limit);
  // A load step with kinetic relaxation (QuasiStaticOptions::max_relaxation_steps).
  QuasiStaticReport relaxed_step(const LoadStep& load);

  QuasiStaticReport report_;
  long steps_ = 0;
};

}  // namespace moreau
