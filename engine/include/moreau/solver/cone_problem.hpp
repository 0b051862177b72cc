#pragma once
// The discrete contact problem every solver of the suite takes (the FCLIB "local" problem):
// find impulses r and velocities u = W r + q with, per contact i,
//   frictionless (1 row):  0 <= r_i  _|_  u_i >= 0            (LCP, Olsen & Kamrin eq. 21)
//   frictional (2 or 3 rows): r_i in K_i = {|r_t| <= mu_i r_n},
//     coulomb:            u^_i = u_i + mu_i |u_t,i| e_n in K_i*,  r_i _|_ u^_i  (De Saxce)
//     convex_relaxation:  u_i in K_i*, r_i _|_ u_i  (the cone complementarity problem of
//                         Anitescu / Tasora / Mazhar et al. 2015, a QP over cones)
#include "moreau/contact/delassus.hpp"
#include "moreau/core/types.hpp"

namespace moreau {

enum class FrictionModel { coulomb, convex_relaxation };

struct ConeProblem {
  const DelassusOperator* delassus = nullptr;
  VecX q;   // free velocity term (Olsen & Kamrin eq. 20: p)
  VecX mu;  // friction coefficient per contact (ignored when rows_per_contact == 1)
  FrictionModel friction_model = FrictionModel::coulomb;

  int contact_count() const { return delassus->contact_count(); }
  int rows() const { return delassus->rows_per_contact(); }
  int size() const { return delassus->size(); }
  // Throws InputError for mismatched sizes, negative or non-finite mu, non-finite q.
  void validate() const;
};

}  // namespace moreau
