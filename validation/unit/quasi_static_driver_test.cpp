// The quasi-static driver (Krabbenhoft/NURBS chapter eq. 4.16) on a particle that carries no
// force: its displacement is not determined by the static problem and must not be applied.
#define BOOST_TEST_MODULE quasi_static_driver
#include "moreau/variational/quasi_static_driver.hpp"

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>

#include "test_support.hpp"

using namespace moreau;
namespace tt = boost::test_tools;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct PressedPair {
  World world;
  int pressed = -1, idle = -1, right = -1;
};

// Gravity off, mu = 0.5. Disk A (radius 0.5) just above the fixed floor (gap 0.01), pressed
// against the fixed left wall by a force-driven right wall; disk B (radius 0.2) near the left
// wall and A's upper left side (gaps 0.01, within the margin). With `lid`, a fixed ceiling 0.01
// above B cages it: no rigid motion opens its three contacts (so B is no rattler), yet no force
// reaches it, and eq. 4.16 leaves its displacement free within the gaps. Without the lid B can
// move up and away from both its contacts: a rattler. (Gaps of 0.01 rather than 0: a contact
// with neither force nor gap is a degenerate complementarity pair, not the subject here.)
PressedPair pressed_pair(bool lid) {
  PressedPair p;
  p.world = test::floor_world(0.5, 0.0, Dimension::two);
  p.pressed = test::add_ball(p.world, 0.5, 1.0, Vec3(0.5, 0.51, 0.0));
  const double rise = std::sqrt(0.71 * 0.71 - 0.29 * 0.29);  // |B - A| = 0.5 + 0.2 + 0.01
  p.idle = test::add_ball(p.world, 0.2, 1.0, Vec3(0.21, 0.51 + rise, 0.0));
  auto wall = [&](const Vec3& normal, const Vec3& position, Motion motion) {
    RigidBody body;
    body.motion = motion;
    body.shape.geometry = HalfSpace{normal};
    body.position = position;
    return p.world.add_body(body);
  };
  wall(Vec3::UnitX(), Vec3::Zero(), Motion::fixed);
  p.right = wall(-Vec3::UnitX(), Vec3(1.0, 0.0, 0.0), Motion::prescribed);
  if (lid) wall(-Vec3::UnitY(), Vec3(0.0, 0.51 + rise + 0.21, 0.0), Motion::fixed);
  return p;
}

// A solid rectangle (a polygon of unit density) of half extents hx, hy; returns its index.
int add_rectangle(World& world, double hx, double hy, const Vec3& position) {
  RigidBody body;
  body.shape.geometry = make_polygon({Vec2(-hx, -hy), Vec2(hx, -hy), Vec2(hx, hy), Vec2(-hx, hy)});
  const MassProperties mass = mass_properties(body.shape.geometry, 1.0, Dimension::two);
  body.mass = mass.mass;
  body.inertia_body = mass.inertia;
  body.position = position;
  return world.add_body(body);
}

}  // namespace

BOOST_AUTO_TEST_CASE(particle_without_force_keeps_its_position) {
  // Before the driver kept such particles in place, B moved by the interior point method's
  // multipliers for it, a point inside its unbounded admissible set: 1.8 mm here, 25-1,100 m
  // in the 200-disk biaxial sample (experiments/biaxial_compression/README.md).
  for (const double k_n : {kInf, 1e6}) {
    BOOST_TEST_CONTEXT("k_N " << k_n) {
      PressedPair p = pressed_pair(true);
      const Vec3 idle_start = p.world.bodies[p.idle].position;
      QuasiStaticOptions options;
      options.contact.stiffness = {k_n, std::isinf(k_n) ? kInf : 2.0 * k_n / 3.0};
      options.collision.margin = 0.05;
      QuasiStaticDriver driver(p.world, options);
      const double force = 100.0;
      const QuasiStaticReport& r =
          driver.step({{{p.right, -Vec3::UnitX(), WallControl::force, force}}});
      BOOST_TEST_REQUIRE(r.converged(), r.interior_point.message);
      BOOST_TEST(r.rattlers == 0);
      BOOST_TEST_REQUIRE(r.contacts.size() == 6u);  // A: floor, left, right, B; B: left, lid
      BOOST_TEST(r.idle_particles == 1);
      BOOST_TEST(r.walls[0].contact_force.x() == force, tt::tolerance(1e-8));
      BOOST_TEST((p.world.bodies[p.idle].position - idle_start).norm() == 0.0);
      // A is squeezed by the two elastic overlaps 2 F / k_N (0 when rigid): the right wall comes
      // in by them, A by one.
      const double squeeze = std::isinf(k_n) ? 0.0 : 2.0 * force / k_n;
      BOOST_TEST(std::abs(r.walls[0].displacement - squeeze) <= 1e-8);
      BOOST_TEST(std::abs(p.world.bodies[p.pressed].position.x() - (0.5 - squeeze / 2.0)) <= 1e-8);
      BOOST_TEST(std::abs(p.world.bodies[p.pressed].position.y() - 0.51) <= 1e-8);
    }
  }
}

BOOST_AUTO_TEST_CASE(particle_that_can_move_away_is_a_rattler) {
  // Without the lid, B can move up and away from the wall and A within the friction cones: a
  // rattler (the rigid escape test), taken out of the step with its contacts and left in place.
  PressedPair p = pressed_pair(false);
  const Vec3 start = p.world.bodies[p.idle].position;
  QuasiStaticOptions options;
  options.collision.margin = 0.05;
  QuasiStaticDriver driver(p.world, options);
  const QuasiStaticReport& r =
      driver.step({{{p.right, -Vec3::UnitX(), WallControl::force, 100.0}}});
  BOOST_TEST_REQUIRE(r.converged(), r.interior_point.message);
  BOOST_TEST(r.rattlers == 1);
  BOOST_TEST(r.idle_particles == 0);
  BOOST_TEST(r.contacts.size() == 3u);  // A: floor, left, right
  BOOST_TEST((p.world.bodies[p.idle].position - start).norm() == 0.0);
}

BOOST_AUTO_TEST_CASE(motion_beyond_the_margin_is_reported) {
  // A unit square under gravity on the floor (gap 0.01, mu = 0.5) that a load step lifts by
  // 0.1 m: the square rises 0.09 m, more than a margin of 0.05 (its new contacts would not have
  // been in the problem) but not of 0.2. The step is applied either way; the guard counts it.
  for (const double margin : {0.05, 0.2}) {
    BOOST_TEST_CONTEXT("margin " << margin) {
      World world = test::floor_world(0.5, 10.0, Dimension::two);
      const int s = add_rectangle(world, 0.5, 0.5, Vec3(0.0, 0.51, 0.0));
      QuasiStaticOptions options;
      options.gravity = true;
      options.collision.margin = margin;
      QuasiStaticDriver driver(world, options);
      const QuasiStaticReport& r =
          driver.step({{{0, Vec3::UnitY(), WallControl::displacement, 0.1}}});
      BOOST_TEST_REQUIRE(r.converged(), r.interior_point.message);
      BOOST_TEST((world.bodies[s].position - Vec3(0.0, 0.6, 0.0)).norm() <= 1e-6);
      BOOST_TEST(r.largest_motion == 0.09, tt::tolerance(1e-4));
      BOOST_TEST(r.overshooting_particles == (margin < 0.09 ? 1 : 0));
    }
  }
}

BOOST_AUTO_TEST_CASE(idle_particle_makes_room_for_a_neighbour) {
  // Gravity off, mu = 0.5, k_N = 1e6. A piston (prescribed half-space at x = 0) pushes disk
  // A (radius 0.5, gap 0.005) by 0.035 towards disk B (radius 0.2, gap 0.01), which fixed disks
  // above and below (gaps 0.01) and a fixed wall on its right (gap 0.05) cage: neither is a
  // rattler, and no force is needed, so both are idle. Eq. 4.16 moves A by at least 0.03 and B
  // by at least 0.02 to keep the gap A-B open; held in place, B would overlap A by up to 0.02.
  World world;
  world.dimension = Dimension::two;
  world.gravity = Vec3::Zero();
  world.friction = FrictionTable(0.5);
  auto fixed = [&](const ShapeGeometry& shape, const Vec3& position, Motion motion) {
    RigidBody body;
    body.motion = motion;
    body.shape.geometry = shape;
    body.position = position;
    return world.add_body(body);
  };
  const int piston = fixed(HalfSpace{Vec3::UnitX()}, Vec3::Zero(), Motion::prescribed);
  const int a = test::add_ball(world, 0.5, 1.0, Vec3(0.505, 0.0, 0.0));
  const int b = test::add_ball(world, 0.2, 1.0, Vec3(1.215, 0.0, 0.0));
  fixed(Sphere{0.2}, Vec3(1.215, 0.41, 0.0), Motion::fixed);
  fixed(Sphere{0.2}, Vec3(1.215, -0.41, 0.0), Motion::fixed);
  fixed(HalfSpace{-Vec3::UnitX()}, Vec3(1.465, 0.0, 0.0), Motion::fixed);
  QuasiStaticOptions options;
  options.contact.stiffness = {1e6, kInf};
  options.collision.margin = 0.06;
  QuasiStaticDriver driver(world, options);
  const QuasiStaticReport& r =
      driver.step({{{piston, Vec3::UnitX(), WallControl::displacement, 0.035}}});
  BOOST_TEST_REQUIRE(r.converged(), r.interior_point.message);
  BOOST_TEST(r.rattlers == 0);
  BOOST_TEST(r.idle_released == 2);
  BOOST_TEST(r.idle_particles == 0);
  const double xa = world.bodies[a].position.x(), xb = world.bodies[b].position.x();
  BOOST_TEST(xa - 0.505 >= 0.03 - 1e-6);    // A clear of the piston
  BOOST_TEST(xb - xa - 0.7 >= -1e-6);       // no overlap of A and B
  BOOST_TEST(1.465 - (xb + 0.2) >= -1e-6);  // B clear of the right wall
  BOOST_TEST(std::abs(world.bodies[b].position.y()) <= 0.01 + 1e-6);
}

BOOST_AUTO_TEST_CASE(rod_freed_by_a_turn_is_a_rattler) {
  // The pressed pair without its lid, and above it, between the side walls, an upright rod
  // (0.2 x 2) pinched by two fixed pins (radius 0.05): one 0.01 right of its upper end, one
  // 0.01 left of its lower end. No translation opens both (one asks for u_x < 0, the other for
  // u_x > 0: the translation-only test called it caged), but a counter-clockwise turn moves the
  // upper end left and the lower end right: a rattler, whose displacement eq. 4.16 would not
  // bound. It drops out with B (a rattler by translation) and stays where it is.
  PressedPair p = pressed_pair(false);
  const Vec3 start(0.5, 5.0, 0.0);
  const int r_index = add_rectangle(p.world, 0.1, 1.0, start);
  for (const double side : {1.0, -1.0}) {
    RigidBody pin;
    pin.motion = Motion::fixed;
    pin.shape.geometry = Sphere{0.05};
    pin.position = start + side * Vec3(0.16, 0.9, 0.0);
    p.world.add_body(pin);
  }
  QuasiStaticOptions options;
  options.collision.margin = 0.05;
  long rod_contacts = 0;  // the two pins' (gaps 0.01), so that no count makes it a rattler
  for (const Contact& c : detect_contacts(p.world, options.collision))
    rod_contacts += c.body_a == r_index || c.body_b == r_index ? 1 : 0;
  BOOST_TEST(rod_contacts == 2);
  QuasiStaticDriver driver(p.world, options);
  const QuasiStaticReport& r =
      driver.step({{{p.right, -Vec3::UnitX(), WallControl::force, 100.0}}});
  BOOST_TEST_REQUIRE(r.converged(), r.interior_point.message);
  BOOST_TEST(r.rattlers == 2);
  BOOST_TEST(r.contacts.size() == 3u);  // A: floor, left, right
  BOOST_TEST((p.world.bodies[r_index].position - start).norm() == 0.0);
}
