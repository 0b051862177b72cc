#pragma once
// Per-contact cone operations shared by the projected methods (APGD, ADMM; private to the
// engine): the projection onto the product of friction cones and the De Saxce shift.
#include "moreau/solver/cone.hpp"
#include "moreau/solver/cone_problem.hpp"

namespace moreau::detail {

// Below this many contacts the per-iteration projections cost less than an OpenMP fork/join.
inline constexpr int kParallelContacts = 2048;

// x <- P_K(x), contact by contact (in parallel for large problems; the result does not depend
// on the thread count).
inline void project_onto_cones(const ConeProblem& problem, VecX& x) {
  const int contacts = problem.contact_count();
  const int rows = problem.rows();
#pragma omp parallel for schedule(static) if (contacts > kParallelContacts)
  for (int i = 0; i < contacts; ++i) {
    Vec3 x_i = Vec3::Zero();
    x_i.head(rows) = x.segment(i * rows, rows);
    x.segment(i * rows, rows) =
        project_onto_cone(x_i, rows > 1 ? problem.mu[i] : 0.0, rows).head(rows);
  }
}

// s_i = mu_i |u_t,i| e_n: the De Saxce term that turns Coulomb's law into the cone
// complementarity problem of the QP with q + s (frictional rows only).
inline void de_saxce_shift(const ConeProblem& problem, const VecX& u, VecX& s) {
  const int rows = problem.rows();
  s.setZero();
  if (rows == 1) return;
  for (int i = 0; i < problem.contact_count(); ++i) {
    s[i * rows] = problem.mu[i] * u.segment(i * rows + 1, rows - 1).norm();
  }
}

}  // namespace moreau::detail
