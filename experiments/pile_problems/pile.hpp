#pragma once
// The piles of Kleinert Sec. 5's test problems (README.md, "Piles"): non-rotating spheres of the
// paper's trench material settled in a square box, and the world of a settled pile.
#include <vector>

#include "moreau/model/world.hpp"

namespace pile_problems {

using moreau::Vec3;
using moreau::World;

// Material of Kleinert Sec. 5 (the trench of the blade test, the only particles the paper
// describes): radii uniform in [8, 16] mm, mu = 0.25. The bulk density 1,382 kg/m^3 over a
// random packing fraction of about 0.6 gives the particle density.
constexpr double kRadiusMin = 0.008, kRadiusMax = 0.016;  // m
constexpr double kMeanRadius = 0.5 * (kRadiusMin + kRadiusMax);
constexpr double kDensity = 1382.0 / 0.6;  // kg/m^3
constexpr double kMu = 0.25;
constexpr double kGravity = 9.81;
// Kleinert Sec. 5: "potentially in contact if the minimum distance between them is less than
// half of the mean radius".
constexpr double kPotentialContactDistance = 0.5 * kMeanRadius;
// Time step of the measured SHAKE step: Kleinert's simulations use h = 1e-2 s (Sec. 5).
constexpr double kMeasureStep = 1e-2;
struct Sphere3 {
  Vec3 position;
  Vec3 velocity;
  double radius;
};

struct Pile {
  int spheres = 0;
  double side = 0.0;  // container side, m
  std::vector<Sphere3> grains;
  long settle_steps = 0;
  double settle_seconds = 0.0;  // wall time of the settling (from the cache: when it was built)
  double final_max_speed = 0.0;
  bool from_cache = false;
};

World pile_world(const Pile& pile);

// The settled pile of `spheres` spheres: read from the cache (MOREAU_PILE_CACHE) when it holds
// it, else generated, settled and cached. The cache's file is an engine checkpoint
// (moreau/io/checkpoint.hpp); one that cannot be read or is of another pile is an InputError
// naming it.
Pile settled_pile(int spheres);

}  // namespace pile_problems
