#pragma once
// A contact found by the narrow phase (Olsen & Kamrin Sec. 3: a pair of bodies, the contact
// point, the unit normal and the signed gap Phi).
#include "moreau/core/types.hpp"

namespace moreau {

struct Contact {
  int body_a = -1;
  int body_b = -1;
  // Unit normal pointing from body a to body b; t1, t2 complete an orthonormal frame
  // (in a 2D world t1 lies in the plane and t2 = e_z is not used).
  Vec3 normal = Vec3::UnitY();
  Vec3 tangent1 = Vec3::UnitX();
  Vec3 tangent2 = Vec3::UnitZ();
  Vec3 point = Vec3::Zero();  // midpoint between the two closest points, world frame
  double gap = 0.0;           // signed distance Phi; negative when the shapes overlap, m
  // The feature of the pair that produced the contact, fixed while that feature is within the
  // margin (the polygon narrow phase: the outline vertex of side a or b, docs/polygons.md);
  // -1 where the pair type has none, and the contact's order within the pair identifies it.
  int feature = -1;
};

// Completes n to a right-handed orthonormal frame (n, t1, t2). In a 2D world n must lie in
// the xy plane and t1 = e_z x n stays in it.
void complete_frame(Contact& contact, Dimension dimension);

}  // namespace moreau
