#pragma once
// Basic numeric types shared by the whole engine.
#include <Eigen/Core>
#include <Eigen/Geometry>
#include <cstdint>

namespace moreau {

using Vec3 = Eigen::Vector3d;
using Mat3 = Eigen::Matrix3d;
using Quat = Eigen::Quaterniond;
using Vec6 = Eigen::Matrix<double, 6, 1>;
using VecX = Eigen::VectorXd;
using MatX = Eigen::MatrixXd;
// Jacobian block of one contact with respect to one body: rows (n, t1, t2) x body dofs
// (v, omega). Contacts with fewer rows (frictionless, 2D) use the leading rows only.
using JacobianBlock = Eigen::Matrix<double, 3, 6>;

// Spatial dimension of a world. A 2D world keeps every body in the z = 0 plane: only
// x, y translation and rotation about z are free, contact frames lie in the plane.
enum class Dimension { two = 2, three = 3 };

inline constexpr int kBodyDofs = 6;

}  // namespace moreau
