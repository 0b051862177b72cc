#pragma once
// Contact screening of the variational force problems (private to the engine): the dynamic
// stepper (VariationalOptions::screen_contacts) and the quasi-static driver's steps of eq. 4.15
// from rest (QuasiStaticOptions::screen_contacts) solve with part of the detected contacts and
// prove the rest open.
//
// The force problem of the Krabbenhoft/NURBS chapter (eq. 4.15, and eq. 4.16 with its
// equilibrium rows) is convex. Zero force on a contact left out of the solve is the whole
// problem's optimum if that contact's end-of-step relative displacement d = g0 e_n + H^T dx
// lies in the dual cone of its force cone, d_n >= mu |d_t| (the dilated kinematic condition of
// eq. 4.11-4.14 with p = q = 0): the solution of the others is then the solution with every
// contact. A contact carrying a shear history is never left out (its q0 pulls on q at p = 0).
#include <vector>

#include "moreau/collision/contact.hpp"
#include "moreau/model/world.hpp"
#include "moreau/variational/force_problem.hpp"
#include "moreau/variational/shear_history.hpp"

namespace moreau::variational {

// The part of `whole` (friction, linear term, compliance, shear history and the scales; no
// hessian or equality rows) on the contacts `chosen`.
ForceProblem select_contacts(const ForceProblem& whole, const std::vector<int>& chosen);

template <class T>
std::vector<T> pick(const std::vector<T>& all, const std::vector<int>& chosen) {
  std::vector<T> picked;
  picked.reserve(chosen.size());
  for (int i : chosen) picked.push_back(all[i]);
  return picked;
}

// The carried tangential force below which a contact counts as carrying no shear history:
// the core's resolution of forces. An open contact's residual force is at most tolerance x
// max(|f|_inf, force_scale) (force_problem.cpp; the largest carried force stands in for
// |f|_inf); without it every contact once solved would keep itself in the solve.
double history_resolution(const ShearHistory& history, double tolerance, double force_scale);

// The contacts of `working` (one flag per detected contact) and the others.
void split_contacts(const std::vector<char>& working, std::vector<int>& chosen,
                    std::vector<int>& left_out);

// Checks the left-out contacts against the solve's body displacements `moved` (6 per body,
// beyond the known displacement already in whole.linear): d = whole.linear + H^T moved must
// satisfy d_n - mu |d_t| >= -allowance. A contact that fails joins `working`, and so do the
// other left-out contacts of its dynamic bodies (the next solve moves those bodies too).
// Returns whether any failed.
bool admit_closing_contacts(const World& world, const std::vector<Contact>& detected,
                            const ForceProblem& whole, const std::vector<int>& left_out,
                            const VecX& moved, double allowance, std::vector<char>& working);

}  // namespace moreau::variational
