#pragma once
// The mechanical system: bodies, materials, friction and loads.
#include <vector>

#include "moreau/core/types.hpp"
#include "moreau/model/body.hpp"
#include "moreau/model/material.hpp"

namespace moreau {

struct World {
  Dimension dimension = Dimension::three;
  Vec3 gravity = Vec3(0.0, -9.81, 0.0);  // m/s^2
  double time = 0.0;                     // s
  std::vector<RigidBody> bodies;
  std::vector<Material> materials{Material{}};
  FrictionTable friction{0.0};

  int add_body(const RigidBody& body);
  // Removes the bodies whose entry in `removed` (one per body) is non-zero, keeping the others
  // in their order, and returns each old index's new index (-1 for a removed body). Anything
  // that holds body indices across the call (contacts, warm starts, a stepper's report) must
  // be renumbered with the returned map (Stepper::renumber_bodies). Throws InputError when
  // `removed` does not have one entry per body.
  std::vector<int> remove_bodies(const std::vector<char>& removed);
  int add_material(const Material& material);

  // External generalized force on a body (gravity), F_ext of Olsen & Kamrin eq. 19.
  Vec6 external_force(int body) const;

  // Throws InputError naming the body and the field for a state or parameter that cannot be
  // simulated: NaN/inf, non-positive mass or inertia, negative radius, unknown material, a
  // 2D body out of the z = 0 plane, a non-unit quaternion.
  void validate() const;

  // Throws SimulationError naming the step and body when a state is not finite.
  void check_finite(long step) const;

  bool is_planar() const { return dimension == Dimension::two; }
};

// Body-frame inertia of a point-mass cluster about its centre of mass (e.g. the six-mass body
// of Preclik et al. Sec. 4.1).
struct PointMass {
  Vec3 position;  // body frame
  double mass;
};
struct RigidCluster {
  double mass;
  Vec3 centre;
  Mat3 inertia;  // about the centre
};
RigidCluster point_mass_cluster(const std::vector<PointMass>& masses);

}  // namespace moreau
