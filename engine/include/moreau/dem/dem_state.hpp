#pragma once
// The state a DEM run carries from step to step beside the bodies' own, which a checkpoint
// holds (moreau/io/checkpoint.hpp) so that a restarted DEM run is the uninterrupted one:
//  - per touching pair the Cundall-Strack spring, the accumulated tangential displacement s_t of
//    contact_law.hpp (its force is -k_t s_t, capped by Coulomb); without it a restart drops
//    every contact's static friction;
//  - per body the force and torque of the last step, which the next step's first half kick of
//    velocity Verlet applies; made anew from the restored state instead, their damping would
//    read the velocity after the step instead of the half step's.
#include <vector>

#include "moreau/core/types.hpp"

namespace moreau {

struct TangentialSpring {
  int body_a = 0;  // the pair as the DEM orders it (body_a < body_b)
  int body_b = 0;
  Vec3 displacement = Vec3::Zero();  // s_t, m, in the world frame
};

struct DemState {
  std::vector<TangentialSpring> springs;  // the touching pairs' springs that are not zero
  std::vector<Vec6> forces;               // per body force (N) and torque (N m); empty: made anew
};

}  // namespace moreau
