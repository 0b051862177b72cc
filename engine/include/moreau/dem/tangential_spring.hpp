#pragma once
// The state a DEM run carries from step to step beside the bodies' own: per touching pair the
// Cundall-Strack spring, the accumulated tangential displacement s_t of contact_law.hpp (its
// force is -k_t s_t, capped by Coulomb). A checkpoint holds it (moreau/io/checkpoint.hpp), so
// that a restarted DEM run keeps its contacts' friction instead of starting every spring from
// zero.
#include "moreau/core/types.hpp"

namespace moreau {

struct TangentialSpring {
  int body_a = 0;  // the pair as the DEM orders it (body_a < body_b)
  int body_b = 0;
  Vec3 displacement = Vec3::Zero();  // s_t, m, in the world frame
};

}  // namespace moreau
