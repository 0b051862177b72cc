#pragma once
// Second-order cone K = {(r_n, r_t) : |r_t| <= mu r_n} in 1, 2 or 3 dimensions (1 = R+), its
// Euclidean projection and the De Saxce modified velocity.
#include "moreau/core/types.hpp"

namespace moreau {

// Euclidean projection of x (leading `rows` entries used) onto K_mu.
Vec3 project_onto_cone(const Vec3& x, double mu, int rows);

// Projection onto the dual cone K* = {|u_t| <= u_n / mu}.
Vec3 project_onto_dual_cone(const Vec3& x, double mu, int rows);

// u + mu |u_t| e_n (De Saxce & Feng): makes Coulomb's law a cone complementarity problem.
Vec3 de_saxce_velocity(const Vec3& u, double mu, int rows);

}  // namespace moreau
