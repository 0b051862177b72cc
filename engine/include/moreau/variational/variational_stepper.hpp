#pragma once
// Variational contact dynamics with contact elasticity (Krabbenhoft/NURBS chapter Sec. 4.2,
// 2D), the dynamic problem: scene scheme `variational_theta`.
//
// One step from (x0, alpha0, v0, omega0) with the theta-method (eq. 4.4-4.6):
//   M_bar = M / (theta dt^2), J_bar = J / (theta dt^2)                          (eq. 4.5)
//   contacts at x0 within the collision margin: gaps g0, normals n0, tangents t0 (eq. 4.2)
//   forces (p, q) from the force-based problem (eq. 4.15), with the dynamic forces
//   r = f_bar0 - N0 p - N0^ q and t eliminated:
//     minimize 1/2 f^T (theta dt^2 H^T M^-1 H) f + f^T (g0 e_n + H^T dx_free)
//              + 1/2 p^T C_N p + 1/2 (q - q0)^T C_T (q - q0)
//     subject to |q| <= mu p, p >= 0
//   with dx_free = dt v0 + theta dt^2 M^-1 f_ext the displacement without contacts (M_bar^-1
//   f_bar0 of eq. 4.4) and H the suite's contact Jacobian (contact_system.hpp), which holds the
//   normals N0, the tangents N0^ and the moment arms R0^p, R0^q of eq. 4.8;
//   dx = dx_free + theta dt^2 M^-1 H f                                           (eq. 4.9, 4.10)
//   v  = ((dx / dt) - (1 - theta) v0) / theta = v0 + dt M^-1 (f_ext + H f)       (eq. 4.6)
// The end-of-step relative displacement then satisfies eq. 4.13-4.14: the normal gap
// g0 + dn = -C_N p on a closed contact (a Hookean overlap p / k_N), and a sticking contact
// carries q = q0 - k_T dt (tangential displacement), the shear history Delta q of eq. 4.8
// (shear_history.hpp). Friction is the associated sliding rule of eq. 4.11-4.14 (the
// convex, De Saxce-relaxed cone complementarity; its dilation is the chapter's Appendix A.3).
// The rigid limit k = inf is exact: C_N, C_T = 0 and no history is kept (Sec. 4.3). With
// theta = 1 and k = inf the step is the semi-implicit Euler CD step (Olsen & Kamrin eq. 13-20)
// with the convex friction model.
//
// theta is in [1/2, 1]; the binary-collision restitution it produces is e = (1 - theta) /
// theta (eq. 4.7). Bodies: disks, convex polygons and non-convex particles (polygon.hpp),
// boxes and half-spaces as walls, in a 2D world. Solver: the conic QP interior point core with
// the direct (CHOLMOD) back-end (force_problem.hpp); a step whose solve does not converge is
// reported through StepReport::solver_stats (converged = false), as for the other schemes.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "moreau/collision/collision_detector.hpp"
#include "moreau/conic/interior_point.hpp"
#include "moreau/integrator/step_settings.hpp"
#include "moreau/integrator/stepper.hpp"
#include "moreau/variational/contact_model.hpp"

namespace moreau {

// What only the variational theta scheme reports (Krabbenhoft/NURBS chapter eq. 4.15).
struct VariationalStepDetails {
  VecX forces;  // (p, q) per contact, N (StepReport::impulses = dt forces)
  // Per contact, the end-of-step normal gap g0 + dn (negative: the elastic overlap p / k_N)
  // and the tangential displacement of the step dt, m.
  VecX displacements;
  VecX shear_history;            // q0 per contact, N (zero where none was carried)
  long persistent_contacts = 0;  // contacts that carried a history from the last step
  // Contact screening (VariationalOptions::screen_contacts): the detected contacts left out of
  // the solve, each shown to stay open with zero force, and the solves the step took (1 unless
  // a left-out contact was found closing and the step was solved again with it).
  long screened_contacts = 0;
  int screening_rounds = 0;
  conic::InteriorPointStats interior_point;  // of the conic QP core
};

// The time step is the chapter's dt. Pairs closer than collision.margin enter the problem with
// their gap g0 (the chapter needs only g0, Sec. 4.3); the margin must cover the relative motion
// of one step (and the overlap p / k_N).
struct VariationalOptions : StepSettings {
  double theta = 1.0;  // in [1/2, 1] (eq. 4.6-4.7)
  // k_N, k_T (inf: rigid), optional per-material stiffnesses; its `frictional` is taken from
  // StepSettings::frictional by the stepper.
  variational::ContactModel contact;
  conic::InteriorPointOptions interior_point = variational::default_interior_point_options();
  // Solve with the contacts a step can close (gap within twice the step's motion at the pair's
  // speeds, or carrying a shear history) and prove the others open: the problem is convex, so
  // zero force on a left-out contact whose end-of-step displacement satisfies d_n >= mu |d_t|
  // is the whole problem's solution; a left-out contact that fails this joins, with the other
  // left-out contacts of its bodies, and the step is solved again. Same solution as all
  // contacts within the margin, at the cost of the contacts that can act.
  bool screen_contacts = true;
  // Restitution of a binary collision under this theta (eq. 4.7).
  double restitution() const { return (1.0 - theta) / theta; }
  static const OptionTable<VariationalOptions>& fields();  // integrator keys
  // Throws InputError naming the field (theta, k_n, k_t, time_step, material_stiffness).
  void validate(const World& world) const;
};

class VariationalStepper final : public Stepper {
 public:
  // Throws InputError for a 3D world, invalid options or an invalid world.
  VariationalStepper(World& world, VariationalOptions options);

  const StepReport& step() override;
  std::string scheme() const override { return "variational_theta"; }
  double time_step() const override { return options_.time_step; }
  const VariationalOptions& options() const { return options_; }
  // The dt of the following steps (eq. 4.4-4.6 need only the state at a step's start, so the
  // step may change between steps, e.g. to keep a step's motion within the collision margin).
  // Throws InputError unless dt is finite and positive.
  void set_time_step(double dt);
  // The tangential forces carried to the next step (empty for a rigid tangential contact).
  const variational::ShearHistory& shear_history() const { return history_; }
  // Continues from a checkpoint (with Stepper::resume_at for the step count and the world's
  // state from moreau/io/checkpoint.hpp): the history is the stepper's only state of its own.
  void resume_shear_history(variational::ShearHistory history) { history_ = std::move(history); }

 private:
  VariationalOptions options_;
  variational::ShearHistory history_;
  // Kept between steps with the detected contacts' vector: a fresh vector of tens of thousands
  // of contacts is new memory whose pages the kernel maps and zeroes at every step.
  CollisionDetector detector_;
  std::vector<Contact> detected_;
  void on_bodies_renumbered(const std::vector<int>& new_index) override {
    history_.renumber(new_index);
  }
};

// The variational part of a report of VariationalStepper; throws InputError for another
// scheme's report.
const VariationalStepDetails& variational_details(const StepReport& report);

}  // namespace moreau
