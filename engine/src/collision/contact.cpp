#include "moreau/collision/contact.hpp"

#include <cmath>

namespace moreau {

void complete_frame(Contact& contact, Dimension dimension) {
  Vec3& n = contact.normal;
  if (dimension == Dimension::two) {
    // Dropping a stray z component keeps the frame in the plane that the 2D solver works in.
    n.z() = 0.0;
    n.normalize();
    contact.tangent1 = Vec3(-n.y(), n.x(), 0.0);  // e_z x n
    contact.tangent2 = Vec3::UnitZ();
    return;
  }
  n.normalize();
  // Branchless orthonormal basis of Duff et al., "Building an Orthonormal Basis, Revisited"
  // (JCGT 6(1), 2017), exact for every unit vector and deterministic. Its one discontinuity is
  // the great circle m.z = 0; computing it for m = Q n moves that circle to the plane normal to
  // (1, 1, 1), away from the axis-aligned normals of floors and walls, so that their tangents
  // do not flip between steps when the normal wobbles.
  static const Mat3 q = (Mat3() << 1.0 / std::sqrt(2.0), -1.0 / std::sqrt(2.0), 0.0,
                         1.0 / std::sqrt(6.0), 1.0 / std::sqrt(6.0), -2.0 / std::sqrt(6.0),
                         1.0 / std::sqrt(3.0), 1.0 / std::sqrt(3.0), 1.0 / std::sqrt(3.0))
                            .finished();
  const Vec3 m = q * n;
  const double sign = std::copysign(1.0, m.z());
  const double a = -1.0 / (sign + m.z());
  const double b = m.x() * m.y() * a;
  contact.tangent1 = q.transpose() * Vec3(1.0 + sign * m.x() * m.x() * a, sign * b, -sign * m.x());
  contact.tangent2 = n.cross(contact.tangent1);
}

}  // namespace moreau
