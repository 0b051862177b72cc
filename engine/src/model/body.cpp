#include "moreau/model/body.hpp"

namespace moreau {

Mat3 RigidBody::inertia_world() const {
  const Mat3 rotation = orientation.toRotationMatrix();
  return rotation * inertia_body * rotation.transpose();
}

Vec6 RigidBody::velocity() const {
  Vec6 v;
  v << linear_velocity, angular_velocity;
  return v;
}

void RigidBody::set_velocity(const Vec6& v) {
  linear_velocity = v.head<3>();
  angular_velocity = v.tail<3>();
}

InverseMass inverse_mass(const RigidBody& body, Dimension dimension) {
  InverseMass out;
  if (!body.is_dynamic()) return out;  // fixed and prescribed bodies take no impulse
  out.linear.setConstant(1.0 / body.mass);
  if (dimension == Dimension::two) out.linear.z() = 0.0;
  if (body.rotation_locked) return out;
  if (dimension == Dimension::two) {
    // Only rotation about z is free; the planar inertia is the zz moment in world axes,
    // which a rotation about z leaves unchanged.
    out.angular(2, 2) = 1.0 / body.inertia_body(2, 2);
  } else {
    const Mat3 rotation = body.orientation.toRotationMatrix();
    out.angular = rotation * body.inertia_body.inverse() * rotation.transpose();
  }
  return out;
}

}  // namespace moreau
