// The deposit measures of column_drop (README.md "Measures") on deposits whose free surface,
// toe, slope and kinetic energy are known in closed form.
#define BOOST_TEST_MODULE column_drop_deposit
#include "deposit.hpp"

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <numbers>

using namespace moreau;
using namespace moreau::column_drop;

namespace {

// A disk of radius 0.45 centred in bin k with its top at height `top` (inside the bin: no rim
// point reaches a neighbouring bin).
void add_disk(World& world, int k, double top) {
  RigidBody disk;
  disk.shape.geometry = Sphere{0.45};
  disk.position = Vec3(k + 0.5, top - 0.45, 0.0);
  world.add_body(disk);
}

World ramp(double tan_angle, int bins) {
  World world;
  world.dimension = Dimension::two;
  for (int k = 0; k < bins; ++k) add_disk(world, k, 10.0 - tan_angle * k);
  return world;
}

}  // namespace

BOOST_AUTO_TEST_CASE(free_surface_and_slope_of_a_straight_ramp) {
  World world = ramp(0.3, 30);
  const std::vector<SurfaceBin> surface = free_surface(world, 1.0);
  BOOST_REQUIRE_EQUAL(surface.size(), 30u);
  BOOST_CHECK_CLOSE(surface[4].height, 10.0 - 1.2, 1e-9);
  BOOST_CHECK_EQUAL(toe(surface, 1.0), 30.0);
  const SlopeFit fit = surface_slope(surface, 1.0, 0.1, 0.9);
  BOOST_CHECK_CLOSE(fit.angle_deg, std::atan(0.3) * 180.0 / std::numbers::pi, 1e-9);
  BOOST_CHECK_CLOSE(fit.height, 10.0, 1e-12);
  // Heights 1 .. 9 of 10: bins 4 .. 30 minus those above 9 (k < 3.4) and below 1 (k > 30).
  BOOST_CHECK_EQUAL(fit.points, 26);
}

BOOST_AUTO_TEST_CASE(a_particle_beyond_an_empty_bin_is_not_part_of_the_spread) {
  World world = ramp(0.3, 20);
  add_disk(world, 25, 0.9);  // thrown ahead of the deposit
  const std::vector<SurfaceBin> surface = free_surface(world, 1.0);
  BOOST_CHECK_EQUAL(surface.size(), 26u);
  BOOST_CHECK(!surface[22].occupied);
  BOOST_CHECK_EQUAL(toe(surface, 1.0), 20.0);
  // The fit stops at the toe: the ramp's slope, not pulled down by the particle at 25.
  BOOST_CHECK_CLOSE(surface_slope(surface, 1.0, 0.0, 1.0).angle_deg,
                    std::atan(0.3) * 180.0 / std::numbers::pi, 1e-9);
}

BOOST_AUTO_TEST_CASE(outline_of_a_turned_square) {
  RigidBody body;
  body.shape.geometry = make_polygon({{-0.5, -0.5}, {0.5, -0.5}, {0.5, 0.5}, {-0.5, 0.5}});
  body.position = Vec3(5.0, 5.0, 0.0);
  body.orientation = Quat(Eigen::AngleAxisd(std::numbers::pi / 4, Vec3::UnitZ()));
  double top = 0.0;
  for (const Vec2& p : body_outline(body)) top = std::max(top, p.y());
  BOOST_CHECK_CLOSE(top, 5.0 + std::sqrt(0.5), 1e-9);
}

BOOST_AUTO_TEST_CASE(kinetic_energy_of_the_bodies_behind_a_line) {
  World world;
  world.dimension = Dimension::two;
  RigidBody a;
  a.mass = 2.0;
  a.inertia_body = Mat3::Identity() * 0.5;
  a.linear_velocity = Vec3(1.0, 0.0, 0.0);
  a.angular_velocity = Vec3(0.0, 0.0, 2.0);
  a.shape.geometry = Sphere{0.5};
  world.add_body(a);
  RigidBody b = a;
  b.position = Vec3(10.0, 0.0, 0.0);
  world.add_body(b);
  RigidBody wall;
  wall.motion = Motion::fixed;
  wall.shape.geometry = HalfSpace{Vec3::UnitY()};
  world.add_body(wall);
  const Energy behind = kinetic_energy(world, 5.0);
  BOOST_CHECK_EQUAL(behind.bodies, 1);
  BOOST_CHECK_CLOSE(behind.mass, 2.0, 1e-12);
  BOOST_CHECK_CLOSE(behind.kinetic, 0.5 * 2.0 * 1.0 + 0.5 * 0.5 * 4.0, 1e-12);
  BOOST_CHECK_CLOSE(kinetic_energy(world, 20.0).kinetic, 2.0 * 2.0, 1e-12);
}
