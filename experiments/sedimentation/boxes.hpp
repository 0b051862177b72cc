#pragma once
// The scenes of Dumont Sec. 4.2-4.3 (README.md, "Scene"): glass balls in a box with an open top,
// four balls one above the other (a) and a column of n balls on a lattice (b).
#include <vector>

#include "moreau/model/world.hpp"

namespace sedimentation {

using moreau::Vec3;
using moreau::World;

constexpr double kGravity = 9.81;    // m/s^2
constexpr double kDensity = 2500.0;  // kg/m^3, glass beads (README.md)
constexpr double kMu = 0.3;          // ball-ball and ball-wall, Dumont Sec. 4.2-4.3
constexpr unsigned kSeed = 4;        // radii and positions (std::mt19937)
// Lattice pitch of the initial positions: larger than the largest diameter (1 mm), so that no
// two balls overlap at t = 0 (README.md).
constexpr double kPitch = 1.1e-3;  // m

struct Ball {
  Vec3 position;
  double radius;
};

// Box of inner size side x side (x, z) with an open top: five fixed half-spaces.
World box_world(double side);

void add_balls(World& world, const std::vector<Ball>& balls);

// (a): 4 balls, radii uniform in [4e-4, 5e-4] m, one above the other 1.5 mm apart (more than a
// diameter) at random (x, z) in the box, so that they land one after the other.
std::vector<Ball> four_balls(double side);

// (b): n balls, radii uniform in [2.5e-4, 5e-4] m, on a lattice of pitch 1.1 mm with
// `per_row` x `per_row` balls per layer, each moved by up to +-0.04 mm in x and z (the pitch
// leaves 0.1 mm between the largest balls), the lowest layer 0.05 mm above the floor.
std::vector<Ball> ball_column(int n, int per_row);

}  // namespace sedimentation
