#pragma once
// The suite's one error measure. Every solver reports it, so that iteration counts and
// accuracies of all solvers compare on one scale.
//
//   merit(r) = || D^-1 (r - P_K(r - D u^)) ||_2 / max(||q||_2, q_floor)
//
// with u = W r + q, u^ the De Saxce velocity (u itself for the convex relaxation and for
// frictionless problems), P_K the projection onto the product of friction cones, and D the
// block-diagonal scaling D_i = rows / trace(W_ii) (a local "mass", impulse per velocity) so
// that the residual is the natural-map residual in velocity units, made dimensionless by
// the free velocity. It is zero exactly at a solution. For a frictionless problem with
// D = 1 it reduces to || min(r, u) ||.
//
// q_floor = kMeritVelocityFloor keeps the measure finite for q = 0 (whose solution is r = 0).
// A contact with trace(W_ii) = 0 (nothing moves it) takes the mean D of the other contacts
// (1 when every trace is zero), so that its residual still counts in the same units.
#include "moreau/solver/cone_problem.hpp"

namespace moreau {

inline constexpr double kMeritVelocityFloor = 1e-12;  // m/s

struct MeritScaling {
  VecX block_scale;     // D_i per contact
  double q_norm = 1.0;  // max(||q||_2, q_floor)
};

MeritScaling merit_scaling(const ConeProblem& problem);

// `u` must be W r + q.
double merit(const ConeProblem& problem, const MeritScaling& scaling, const VecX& r, const VecX& u);

// Convenience: computes u and the scaling.
double merit(const ConeProblem& problem, const VecX& r);

}  // namespace moreau
