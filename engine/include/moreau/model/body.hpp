#pragma once
// Rigid body state and mass properties.
#include <string>

#include "moreau/core/types.hpp"
#include "moreau/model/shape.hpp"

namespace moreau {

enum class Motion {
  dynamic,     // integrated from forces and contact impulses
  fixed,       // never moves (infinite mass, zero velocity)
  prescribed,  // moves with its given velocity whatever the contacts do (moving wall, blade)
};

struct RigidBody {
  std::string name;
  Motion motion = Motion::dynamic;
  bool rotation_locked = false;  // translation only, e.g. the non-rotating spheres of Kleinert et al.

  Vec3 position = Vec3::Zero();          // centre of mass, world frame, m
  Quat orientation = Quat::Identity();   // body-to-world rotation (unit)
  Vec3 linear_velocity = Vec3::Zero();   // m/s
  Vec3 angular_velocity = Vec3::Zero();  // rad/s, world frame

  double mass = 1.0;                     // kg
  Mat3 inertia_body = Mat3::Identity();  // about the centre of mass, body axes, kg m^2

  Shape shape;
  int material = 0;  // index into World::materials

  // World-frame inertia J = R J_body R^T (Olsen & Kamrin eq. 9 stores it in the global frame).
  Mat3 inertia_world() const;
  Vec6 velocity() const;  // (v, omega)
  void set_velocity(const Vec6& v);
  bool is_dynamic() const { return motion == Motion::dynamic; }
};

// Inverse of the 6x6 generalized mass matrix of Olsen & Kamrin eq. 9, restricted to the free
// degrees of freedom: zero for fixed/prescribed bodies, zero rotation when locked, and only
// (x, y, rot z) in a 2D world. Block-diagonal: [m^-1 I_lin ; J^-1].
struct InverseMass {
  Vec3 linear = Vec3::Zero();   // diagonal of the translational block
  Mat3 angular = Mat3::Zero();  // world frame
  Vec6 apply(const Vec6& f) const {
    Vec6 out;
    out.head<3>() = linear.cwiseProduct(f.head<3>());
    out.tail<3>() = angular * f.tail<3>();
    return out;
  }
};

InverseMass inverse_mass(const RigidBody& body, Dimension dimension);

}  // namespace moreau
