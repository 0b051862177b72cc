#pragma once
// Compatible CD (Olsen & Kamrin Sec. 6.4 and Algorithm 1, step 2): after any classic CD solve, the
// unique end-of-step velocities give the generalized body force F~ of eq. 37, and the
// no-tension truss (eq. 36) under that load gives the contact forces a stiff elastic system
// would carry. The dynamics are unchanged; only the force distribution is resolved.
#include "moreau/compatible/no_tension_truss.hpp"
#include "moreau/contact/contact_system.hpp"

namespace moreau {

struct CompatibleOptions {
  bool enabled = false;
  ContactLaw law = ContactLaw::hookean;
  NoTensionTrussOptions truss;
  // enabled, law and the truss solver's keys (integrator.compatible of a scene).
  static const OptionTable<CompatibleOptions>& fields();
};

// Relative stiffness k~ of a contact between two materials: the two bodies act as springs in
// series, k~ = k_a k_b / (k_a + k_b); an infinite (rigid) partner leaves the other's value.
// With k_a = E_a this gives the ratios 1/5 : 1/3 : 1 of Olsen & Kamrin Sec. 8.2 for E1 = 5 E0.
double pair_relative_stiffness(double k_a, double k_b);

// Builds eq. 36 for one step. `world` holds the state at the start of the step (positions,
// orientations: M is evaluated there, as in eq. 13), `velocity_start` and `velocity_end` are
// the generalized velocities (6 per body) before and after the classic solve. Gamma_D are
// the degrees of freedom with zero inverse mass (fixed and prescribed bodies, locked
// rotations, the out-of-plane dofs of a 2D world); Gamma_N the rest that some contact moves.
// The system must be frictionless (one row per contact): Olsen & Kamrin defines compatible CD for
// frictionless contact; throws InputError otherwise.
NoTensionTrussProblem compatibility_problem(const World& world, const ContactSystem& system,
                                            const std::vector<Contact>& contacts,
                                            const VecX& velocity_start, const VecX& velocity_end,
                                            double dt, ContactLaw law);

}  // namespace moreau
