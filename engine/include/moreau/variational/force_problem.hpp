#pragma once
// The force-based contact problems of the variational contact dynamics of the
// Krabbenhoft/NURBS chapter (Sec. 4.2, 2D), in one form for the dynamic problem (eq. 4.15) and
// its static limit (eq. 4.16):
//
//   minimize  1/2 f^T N f + c^T f + 1/2 p^T C_N p + 1/2 (q - q0)^T C_T (q - q0)
//   subject to  |q_i| <= mu_i p_i,  p_i >= 0,   A f = b
//
// with f = (p_1, q_1, ..., p_n, q_n) the normal and tangential contact forces, C_N = 1/k_N,
// C_T = 1/k_T per contact (0 for a rigid contact, k = inf: the quadratic term and the shear
// history q0 drop out exactly, Krabbenhoft/NURBS chapter Sec. 4.3), N >= 0 (eq. 4.15: the
// eliminated dynamic forces, N = theta dt^2 H^T M^-1 H; eq. 4.16: N = 0) and the equality
// constraints of the static equilibrium (eq. 4.16; none for the dynamic problem).
//
// Solved by the suite's conic QP interior point core (moreau/conic/interior_point.hpp) with the
// direct (CHOLMOD) back-end, through the change of variables
//
//   x_i = (p_i, q_i / mu_i):   |q_i| <= mu_i p_i  <=>  x_i in the 2D second-order cone
//                                                      {(x0, x1) : |x1| <= x0},
//
// f = S x with S = diag(1, mu_i) per contact, so that the core sees N' = S^T N S,
// C' = S^T C S (still diagonal), r = S^T (c - C_T q0 on the tangential rows) and A' = A S. A
// frictionless contact (mu = 0) has q = 0 and enters as a cone of dimension 1 (p >= 0).
// The core's optimality conditions give y = S^T ((N + C) f + c - C_T q0 - A^T z) in the cone:
// on the normal row the end-of-step gap plus C_N p (eq. 4.13), and -z the displacements of the
// equilibrium rows (the kinematic multipliers of eq. 4.16).
#include <cmath>
#include <limits>
#include <string>

#include "moreau/conic/interior_point.hpp"
#include "moreau/contact/delassus.hpp"

namespace moreau::variational {

// Linear contact elasticity (Krabbenhoft/NURBS chapter Fig. 4.2): p = k_N x overlap, and the
// tangential force grows by k_T per unit of tangential displacement while it sticks. Per unit
// thickness in 2D: N/m per m. Infinity (the default) is the rigid contact.
struct ContactStiffness {
  double normal = std::numeric_limits<double>::infinity();      // k_N, N/m
  double tangential = std::numeric_limits<double>::infinity();  // k_T, N/m
  bool rigid_normal() const { return std::isinf(normal); }
  bool rigid_tangential() const { return std::isinf(tangential); }
  // C_N = 1/k_N and C_T = 1/k_T (0 for k = inf), m/N.
  double normal_compliance() const { return rigid_normal() ? 0.0 : 1.0 / normal; }
  double tangential_compliance() const { return rigid_tangential() ? 0.0 : 1.0 / tangential; }
  // Throws InputError naming k_n or k_t: each must be > 0 (inf allowed), not NaN.
  void validate() const;
};

struct ForceProblem {
  SparseMatrix hessian;  // N, 2 rows per contact (n, t); 0 x 0 for N = 0
  // Optional, instead of `hessian`: N = F^T F given by F (factor_block_rows rows per body, 2
  // columns per contact), eq. 4.15's F = (theta dt^2)^1/2 M^-1/2 H. The core then solves its
  // Newton systems in the body space (conic_qp.hpp, QuadraticFactor) when
  // InteriorPointOptions::body_space is set, and N is never assembled unless a back-end asks.
  SparseMatrix hessian_factor;
  int factor_block_rows = 3;  // 2D bodies: x, y, rotation about z
  VecX linear;                // c, 2 per contact, m
  VecX compliance;            // diagonal of C: (C_N, C_T) per contact, m/N; empty: rigid
  VecX shear_history;         // q0 per contact (N); empty: none. Enters only where C_T > 0
  VecX friction;              // mu per contact (>= 0)
  SparseMatrix equality;      // A (rows x 2 per contact); 0 rows: none
  VecX equality_rhs;          // b, N (and N m for moment rows)
  // E per equality row (empty: 0): A f + E z = b, the equilibrium relaxed by the dynamic forces
  // of eq. 4.15 started from rest, E = M / (theta dt^2) (eq. 4.5; N/m, N m for rotation rows)
  // and -z the displacements; 0 is the static limit eq. 4.16.
  VecX equality_relaxation;
  // The scales of the stop test (force_problem.cpp): displacements are measured relative to
  // |r|_inf (length_scale when r = 0: a particle size), forces relative to
  // max(|f|_inf, force_scale) (force_scale: a particle weight; 0: |f| alone), so that a force
  // left on an opening contact is small against the loads, not against 1/compliance.
  double length_scale = 1.0;  // m, > 0
  double force_scale = 0.0;   // N, >= 0
  // The displacement scale d of the stop test instead of |r|_inf (0: |r|_inf), m. A problem
  // screened down to part of its contacts (VariationalOptions::screen_contacts) keeps the whole
  // problem's, so that its solve stops where the whole problem's would.
  double displacement_scale = 0.0;
  // The stop test's floor sqrt(tolerance) d F in the per-contact complementarity
  // (force_problem.cpp): a contact with neither force nor gap at the solution then passes once
  // its force and gap are both ~tolerance^0.75 of their scales, which double precision
  // reaches; without it such a contact needs mu ~ 1e-16 d F and the solve ends at the interior
  // point method's numerical limit. Off where a caller reads forces to tolerance x force_scale
  // (the quasi-static driver tells idle particles by it, and their displacements in the
  // static problem eq. 4.16 are not determined).
  bool degenerate_contact_floor = true;

  int contact_count() const { return static_cast<int>(friction.size()); }
  // Throws InputError naming the field for sizes that do not match, negative or non-finite
  // entries.
  void validate() const;
};

struct ForceSolution {
  VecX forces;       // f = (p, q) per contact, N
  VecX slack;        // (N + C) f + c - C_T q0 - A^T z per contact (n, t), m (y of the core)
  VecX multipliers;  // z, one per equality row (static problem: minus the displacement)
  conic::InteriorPointStats stats;
  double wall_seconds = 0.0;
  bool converged() const { return stats.status == conic::InteriorPointStatus::converged; }
};

// The displacement scale d of the stop test (force_problem.cpp): displacement_scale where set,
// else |r|_inf of the core's linear term r = S^T (c - C_T q0), else length_scale.
double stop_displacement_scale(const ForceProblem& problem);

// Options for the core with the direct back-end (the default here) and its tolerance.
conic::InteriorPointOptions default_interior_point_options();

// Solves the problem with the conic QP core. Non-convergence is a status in the stats; the
// forces are those of the last iterate then. Throws InputError for an invalid problem.
ForceSolution solve_force_problem(const ForceProblem& problem,
                                  const conic::InteriorPointOptions& options);

}  // namespace moreau::variational
