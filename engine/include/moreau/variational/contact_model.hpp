#pragma once
// The contact model of the variational contact dynamics (Krabbenhoft/NURBS chapter Sec. 4.2-4.3)
// and the part of the force problems eq. 4.15 and 4.16 that both share: friction, compliances,
// the gaps and the shear history of the contacts found at x0.
#include <vector>

#include "moreau/collision/contact.hpp"
#include "moreau/model/world.hpp"
#include "moreau/variational/force_problem.hpp"
#include "moreau/variational/shear_history.hpp"

namespace moreau::variational {

struct ContactModel {
  // k_N, k_T of every contact (Sec. 4.4: one value for all contacts); inf: rigid.
  ContactStiffness stiffness;
  // Optional, one per World::materials entry: a contact's compliance is then the sum of its two
  // bodies' materials' compliances (two springs in series, C = 1/k_a + 1/k_b; a rigid material
  // adds nothing), which gives contacts of unequal stiffness (the indeterminate beam with
  // supports 1:3:1). Empty: `stiffness` everywhere.
  std::vector<ContactStiffness> material_stiffness;
  bool frictional = true;  // mu from the world's friction table; false: mu = 0
  // Rigid model only: a contact that overlaps at the start of the step (g0 < 0) enters with
  // g0 = 0, so that the step may not deepen the overlap but need not open it, as Moreau's
  // contact dynamics constrains a closed contact's relative motion only (the velocity-level
  // Signorini condition). For a state reached with elastic contacts (overlaps F / k_N) the
  // gaps as they are would ask every overlap to open within the step, which an interlocked
  // non-convex pair overlapping on opposite sides cannot do by any rigid motion: eq. 4.16 then
  // has no solution (experiments/biaxial_compression/README.md). False: g0 as computed.
  bool keep_rigid_overlaps = false;
  // Throws InputError naming k_n, k_t or material_stiffness[i].
  void validate(const World& world) const;
  bool rigid() const;             // no contact has a compliance
  bool rigid_tangential() const;  // no contact has a tangential compliance (no history kept)
};

// The force problem's friction, compliance (empty when rigid), shear history (from `history`
// by `keys`, none when rigid_tangential) and linear term c = g0 e_n + H^T dx_known with the
// known displacements dx_known of the bodies (6 per body) over the step; its length_scale is
// the mean particle radius. The hessian and equality constraints are the caller's.
ForceProblem contact_force_problem(const World& world, const std::vector<Contact>& contacts,
                                   const VecX& known_displacement, const ContactModel& model,
                                   const ShearHistory& history,
                                   const std::vector<ContactKey>& keys);

// The tangential forces q of a solution (one per contact), for ShearHistory::store.
VecX tangential_forces(const ForceSolution& solution, int contact_count);

}  // namespace moreau::variational
