#pragma once
// The Jordan algebra of the second-order (Lorentz) cone C = {(x_0, x_1) : x_0 >= |x_1|} in
// dimension 1, 2 or 3 (1: C = R+), the self-dual cone of the transformed CCP (Kleinert,
// Simeon & Dressler eq. 23). An element is stored in a Vec3 whose entries past `dim` are 0.
//
//   Jordan product (Kleinert eq. 23ff): x o y = (x^T y, x_0 y_1 + y_0 x_1), identity e = (1, 0)
//   spectral values x_0 -+ |x_1|, determinant det x = x_0^2 - |x_1|^2, x in int C <=> both > 0
//   arrow matrix L(x) with L(x) y = x o y, quadratic representation P(x) = 2 L(x)^2 - L(x o x)
//
// Nesterov-Todd scaling of an interior pair (x, y): the symmetric positive definite W with
// W x = W^-1 y = lambda (Nesterov & Todd 1997; the closed form for the second-order cone of
// Vandenberghe's CVXOPT notes, W = beta (2 v v^T - J)), so that x o y = sigma mu e linearizes
// to a symmetric Newton matrix N + W^2.
#include "moreau/core/types.hpp"

namespace moreau::conic {

// The cone dimensions the algebra supports.
inline bool valid_cone_dimension(int dim) { return dim >= 1 && dim <= 3; }

Vec3 jordan_identity(int dim);
Vec3 jordan_product(const Vec3& x, const Vec3& y, int dim);
// Spectral values (x_0 - |x_1|, x_0 + |x_1|); for dim 1 both are x_0.
Eigen::Vector2d spectral_values(const Vec3& x, int dim);
double determinant(const Vec3& x, int dim);
// L(x): the linear map y -> x o y.
Mat3 arrow_matrix(const Vec3& x, int dim);
// P(x) = 2 L(x)^2 - L(x o x).
Mat3 quadratic_representation(const Vec3& x, int dim);
// x^-1 = (x_0, -x_1) / det x, the element with x o x^-1 = e (x with det x != 0).
Vec3 jordan_inverse(const Vec3& x, int dim);
// x^(1/2): the element of C with x^(1/2) o x^(1/2) = x (x in C).
Vec3 jordan_sqrt(const Vec3& x, int dim);
// z with x o z = v, i.e. L(x)^-1 v (x in int C).
Vec3 jordan_divide(const Vec3& x, const Vec3& v, int dim);
// Largest step t >= 0 with x + t dx in C, for x in int C; +infinity when dx keeps it inside.
double max_step_in_cone(const Vec3& x, const Vec3& dx, int dim);

struct NesterovToddScaling {
  Mat3 w = Mat3::Zero();          // W (dim x dim leading block), symmetric positive definite
  Mat3 w_inverse = Mat3::Zero();  // W^-1
  Vec3 lambda = Vec3::Zero();     // W x = W^-1 y
};
// For x, y in int C.
NesterovToddScaling nesterov_todd_scaling(const Vec3& x, const Vec3& y, int dim);

}  // namespace moreau::conic
