#include "boxes.hpp"

#include <random>
#include <string>

#include "moreau/model/shape.hpp"

namespace sedimentation {

using namespace moreau;

World box_world(double side) {
  World world;
  world.gravity = Vec3(0.0, -kGravity, 0.0);
  world.friction = FrictionTable(kMu);
  const auto wall = [&](const std::string& name, const Vec3& normal, const Vec3& point) {
    RigidBody body;
    body.name = name;
    body.motion = Motion::fixed;
    body.position = point;
    body.shape.geometry = HalfSpace{normal};
    world.add_body(body);
  };
  wall("floor", Vec3::UnitY(), Vec3::Zero());
  wall("wall x-", Vec3::UnitX(), Vec3::Zero());
  wall("wall x+", -Vec3::UnitX(), Vec3(side, 0.0, 0.0));
  wall("wall z-", Vec3::UnitZ(), Vec3::Zero());
  wall("wall z+", -Vec3::UnitZ(), Vec3(0.0, 0.0, side));
  return world;
}

void add_balls(World& world, const std::vector<Ball>& balls) {
  for (const Ball& b : balls) {
    const MassProperties mass = mass_properties(Sphere{b.radius}, kDensity, Dimension::three);
    RigidBody body;
    body.name = "ball";
    body.shape.geometry = Sphere{b.radius};
    body.mass = mass.mass;
    body.inertia_body = mass.inertia;
    body.position = b.position;
    world.add_body(body);
  }
}

std::vector<Ball> four_balls(double side) {
  std::mt19937 generator(kSeed);
  std::uniform_real_distribution<double> radius(4e-4, 5e-4);
  std::vector<Ball> balls;
  for (int k = 0; k < 4; ++k) {
    const double r = radius(generator);
    std::uniform_real_distribution<double> across(r, side - r);
    const double x = across(generator), z = across(generator);
    balls.push_back({Vec3(x, 1.5e-3 * (k + 1), z), r});
  }
  return balls;
}

std::vector<Ball> ball_column(int n, int per_row) {
  std::mt19937 generator(kSeed + 1);
  std::uniform_real_distribution<double> radius(2.5e-4, 5e-4);
  std::uniform_real_distribution<double> jitter(-4e-5, 4e-5);
  std::vector<Ball> balls;
  for (int k = 0; k < n; ++k) {
    const int layer = k / (per_row * per_row), i = (k / per_row) % per_row, j = k % per_row;
    const double r = radius(generator);
    const double x = (i + 0.5) * kPitch + jitter(generator);
    const double z = (j + 0.5) * kPitch + jitter(generator);
    balls.push_back({Vec3(x, 5.5e-4 + layer * kPitch, z), r});
  }
  return balls;
}

}  // namespace sedimentation
