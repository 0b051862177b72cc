#pragma once
// The theta-method of seed 004 (Dumont) Sec. 2.1 and 3.2, with Newton's impact law:
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
// Which contacts enter (seed 004 gives no rule): those found at q_m whose gap predicted at the
// end of the step under free motion, g(q_m) + theta dt u_free,n, is <= 0. A resting contact
// (gap ~ 0, gravity pressing it) always enters, so it does not chatter open and shut on
// round-off; a falling body enters the step in which it would reach the obstacle, and Newton's
// law then acts on the velocity it had before the step (Moreau 1999, seed 004 ref. [13]).
// The NLGS starts each step from r = 0 (seed 004 Sec. 3.2: "initialization of the contact
// forces with R = 0").
#include <memory>
#include <optional>
#include <vector>

#include "moreau/collision/collision_detector.hpp"
#include "moreau/nlgs/nlgs_solver.hpp"
#include "moreau/solver/solver.hpp"

namespace moreau {

struct ThetaOptions {
  double time_step = 1e-4;  // s
  // theta in [1/2, 1]; 1/2 is seed 004's algorithm (eq. 18 and q_{k+1} = q_{k+1/2} + dt/2 v_{k+1}).
  double theta = 0.5;
  double tangential_restitution = 0.0;  // e_t of eq. 20, in [0, 1]
  bool frictional = true;               // cone problem (rows = dimension) or frictionless (1 row)
  // Pairs closer than the margin are candidates; it must cover the relative motion of one step.
  CollisionOptions collision;
  void validate() const;  // throws InputError naming the field
};

struct ThetaStepReport {
  long step = 0;
  double time = 0.0;              // at the end of the step
  std::vector<Contact> contacts;  // contacts in the problem, geometry at q_m
  VecX impulses;                  // r per contact (rows each), N s
  int rows_per_contact = 1;
  long candidate_contacts = 0;  // found at q_m within the margin
  SolverStats solver_stats;
  std::optional<NlgsStats> nlgs;  // when the solver is an NlgsSolver
  CollisionStats collision_stats;
  double solve_cpu_seconds = 0.0;  // process CPU time of the contact solve
};

class ThetaStepper {
 public:
  // Any ContactSolver; an NlgsSolver also reports its eps_glob terms (ThetaStepReport::nlgs).
  ThetaStepper(World& world, ThetaOptions options, std::unique_ptr<ContactSolver> solver);

  // Advances the world by one step. Throws SimulationError naming step and body if a state
  // turns non-finite.
  const ThetaStepReport& step();

  const ThetaStepReport& last_report() const { return report_; }
  const ThetaOptions& options() const { return options_; }
  const ContactSolver& solver() const { return *solver_; }
  World& world() { return world_; }
  long steps_taken() const { return step_count_; }

 private:
  World& world_;
  ThetaOptions options_;
  std::unique_ptr<ContactSolver> solver_;
  ThetaStepReport report_;
  long step_count_ = 0;
};

}  // namespace moreau
