// Collision detection: narrow-phase gaps, normals and points against hand computations, the
// contact frame, the broad phase against brute force, and shape mass properties.
#define BOOST_TEST_MODULE collision
#include <omp.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <numbers>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "moreau/collision/collision_detector.hpp"
#include "moreau/core/error.hpp"
#include "moreau/model/shape.hpp"
#include "moreau/model/world.hpp"

namespace moreau {
namespace {

using std::numbers::pi;

// Hand-computed values are exact up to a few roundings of O(1) numbers.
constexpr double kTol = 1e-12;

int add(World& world, const ShapeGeometry& geometry, const Vec3& position,
        const Quat& orientation = Quat::Identity(), Motion motion = Motion::dynamic,
        const Vec3& offset = Vec3::Zero()) {
  RigidBody body;
  body.name = "b";
  body.name += std::to_string(world.bodies.size());
  body.motion = motion;
  body.position = position;
  body.orientation = orientation;
  body.shape.geometry = geometry;
  body.shape.offset = offset;
  return world.add_body(body);
}

Quat about_z(double angle) { return Quat(Eigen::AngleAxisd(angle, Vec3::UnitZ())); }

World world_of(Dimension dimension) {
  World world;
  world.dimension = dimension;
  return world;
}

std::vector<Contact> contacts_between(const World& world, int a, int b, double margin) {
  std::vector<Contact> out;
  narrow_phase(world, a, b, margin, out);
  return out;
}

void check_contact(const Contact& c, const Vec3& normal, const Vec3& point, double gap) {
  BOOST_TEST((c.normal - normal).norm() <= kTol,
             "normal " << c.normal.transpose() << ", expected " << normal.transpose());
  BOOST_TEST((c.point - point).norm() <= kTol,
             "point " << c.point.transpose() << ", expected " << point.transpose());
  BOOST_TEST(c.gap == gap, boost::test_tools::tolerance(kTol));
}

// Orthonormal, right-handed (n x t1 = t2), and for a 2D world t1 = e_z x n, t2 = e_z.
void check_frame(const Contact& c, Dimension dimension) {
  const double error =
      std::max({std::abs(c.normal.norm() - 1.0), std::abs(c.tangent1.norm() - 1.0),
                std::abs(c.tangent2.norm() - 1.0), std::abs(c.normal.dot(c.tangent1)),
                std::abs(c.normal.dot(c.tangent2)), std::abs(c.tangent1.dot(c.tangent2)),
                (c.normal.cross(c.tangent1) - c.tangent2).norm()});
  BOOST_TEST(error <= 1e-14, "frame of n = " << c.normal.transpose() << " off by " << error);
  if (dimension == Dimension::two) {
    BOOST_TEST((c.tangent1 - Vec3::UnitZ().cross(c.normal)).norm() <= 1e-15);
    BOOST_TEST((c.tangent2 - Vec3::UnitZ()).norm() == 0.0);
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(contact_frame)

BOOST_AUTO_TEST_CASE(frame_is_right_handed_orthonormal_for_any_normal) {
  std::mt19937 rng(20240611);
  std::normal_distribution<double> gauss;
  std::vector<Vec3> normals = {Vec3::UnitX(),
                               -Vec3::UnitX(),
                               Vec3::UnitY(),
                               -Vec3::UnitY(),
                               Vec3::UnitZ(),
                               -Vec3::UnitZ(),
                               Vec3(1, 1, 1).normalized(),
                               -Vec3(1, 1, 1).normalized(),
                               Vec3(1, -1, 1e-300).normalized()};
  for (int i = 0; i < 10000; ++i)
    normals.push_back(Vec3(gauss(rng), gauss(rng), gauss(rng)).normalized());
  for (const Vec3& n : normals) {
    Contact c;
    c.normal = n;
    complete_frame(c, Dimension::three);
    check_frame(c, Dimension::three);
  }
}

BOOST_AUTO_TEST_CASE(frame_of_a_wobbling_floor_normal_does_not_flip) {
  // Floors (normal +-y) and walls (+-x, +-z) sit away from the frame's discontinuity, so a
  // tiny change of the normal changes the tangents by about as much.
  for (const Vec3& axis : {Vec3(1, 0, 0), Vec3(0, 1, 0), Vec3(0, 0, 1), Vec3(0, -1, 0)}) {
    Contact reference;
    reference.normal = axis;
    complete_frame(reference, Dimension::three);
    for (const Vec3& wobble : {Vec3(1e-9, 0, 0), Vec3(-1e-9, 0, 0), Vec3(0, 1e-9, 0),
                               Vec3(0, -1e-9, 0), Vec3(0, 0, 1e-9), Vec3(0, 0, -1e-9)}) {
      Contact c;
      c.normal = (axis + wobble).normalized();
      complete_frame(c, Dimension::three);
      BOOST_TEST((c.tangent1 - reference.tangent1).norm() <= 1e-8,
                 "t1 jumps near n = " << axis.transpose());
    }
  }
}

BOOST_AUTO_TEST_CASE(planar_frame_keeps_tangent_in_the_plane) {
  for (double angle = 0.0; angle < 2.0 * pi; angle += 0.1) {
    Contact c;
    c.normal = Vec3(std::cos(angle), std::sin(angle), 0.0);
    complete_frame(c, Dimension::two);
    check_frame(c, Dimension::two);
  }
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(narrow_phase_pairs)

BOOST_AUTO_TEST_CASE(sphere_sphere_gap_normal_and_midpoint) {
  World world = world_of(Dimension::three);
  const int a = add(world, Sphere{1.0}, Vec3::Zero());
  const int b = add(world, Sphere{0.5}, Vec3(1, 2, 2));  // centre distance 3
  const Vec3 n = Vec3(1, 2, 2) / 3.0;
  auto c = contacts_between(world, a, b, 2.0);
  BOOST_TEST_REQUIRE(c.size() == 1u);
  check_contact(c[0], n, 0.5 * (1.0 + 2.5) * n, 1.5);
  BOOST_TEST(contacts_between(world, a, b, 1.5).empty(), "gap == margin is not a contact");

  // Shape offset: body at (1, 0, 0) turned by 90 deg about z puts the centre at (1, 1, 0).
  World shifted = world_of(Dimension::three);
  const int s =
      add(shifted, Sphere{1.0}, Vec3(1, 0, 0), about_z(pi / 2), Motion::dynamic, Vec3(1, 0, 0));
  const int t = add(shifted, Sphere{0.5}, Vec3(1, 2.2, 0));
  c = contacts_between(shifted, s, t, 0.0);
  BOOST_TEST_REQUIRE(c.size() == 1u);
  check_contact(c[0], Vec3::UnitY(), Vec3(1, 0.5 * (2.0 + 1.7), 0), -0.3);
}

BOOST_AUTO_TEST_CASE(disk_disk_in_a_planar_world) {
  World world = world_of(Dimension::two);
  const int a = add(world, Sphere{0.6}, Vec3(0, 0, 0));
  const int b = add(world, Sphere{0.6}, Vec3(0.6, 0.8, 0));  // centre distance 1
  const auto c = contacts_between(world, a, b, 0.0);
  BOOST_TEST_REQUIRE(c.size() == 1u);
  check_contact(c[0], Vec3(0.6, 0.8, 0), Vec3(0.3, 0.4, 0), -0.2);
  check_frame(c[0], Dimension::two);
}

BOOST_AUTO_TEST_CASE(sphere_halfspace_on_a_turned_halfspace) {
  // Half-space body at (0, -1, 0) turned by 30 deg: outward normal m = (-1/2, sqrt(3)/2, 0).
  World world = world_of(Dimension::three);
  const int ground =
      add(world, HalfSpace{Vec3::UnitY()}, Vec3(0, -1, 0), about_z(pi / 6), Motion::fixed);
  const int ball = add(world, Sphere{0.5}, Vec3(2, 1, 0.5));
  const Vec3 m(-0.5, std::sqrt(3.0) / 2, 0);
  const double height = m.dot(Vec3(2, 2, 0.5));  // sqrt(3) - 1
  const double gap = height - 0.5;
  const Vec3 point = Vec3(2, 1, 0.5) - 0.5 * (0.5 + height) * m;
  auto c = contacts_between(world, ball, ground, 1.0);
  BOOST_TEST_REQUIRE(c.size() == 1u);
  check_contact(c[0], -m, point, gap);
  c = contacts_between(world, ground, ball, 1.0);
  BOOST_TEST_REQUIRE(c.size() == 1u);
  check_contact(c[0], m, point, gap);
  BOOST_TEST(c[0].body_a == ground);
  BOOST_TEST(c[0].body_b == ball);

  World planar = world_of(Dimension::two);
  const int floor =
      add(planar, HalfSpace{Vec3::UnitY()}, Vec3::Zero(), Quat::Identity(), Motion::fixed);
  const int disk = add(planar, Sphere{0.25}, Vec3(3, 0.2, 0));
  c = contacts_between(planar, disk, floor, 0.0);
  BOOST_TEST_REQUIRE(c.size() == 1u);
  check_contact(c[0], -Vec3::UnitY(), Vec3(3, 0.5 * (-0.05 + 0.0), 0), -0.05);
  check_frame(c[0], Dimension::two);
}

BOOST_AUTO_TEST_CASE(sphere_box_face_edge_corner_and_inside) {
  World world = world_of(Dimension::three);
  const int box = add(world, Box{Vec3(1, 2, 3)}, Vec3::Zero());
  auto gap_to = [&](const Vec3& centre, double radius) {
    World w = world;
    const int s = add(w, Sphere{radius}, centre);
    const auto c = contacts_between(w, s, box, 10.0);
    BOOST_TEST_REQUIRE(c.size() == 1u);
    return c[0];
  };
  // Face region: closest box point (1, 0.5, 0.5).
  check_contact(gap_to(Vec3(3, 0.5, 0.5), 0.5), -Vec3::UnitX(), Vec3(1.75, 0.5, 0.5), 1.5);
  // Edge region: closest point (1, 2, 0) at distance 5.
  check_contact(gap_to(Vec3(4, 6, 0), 0.5), -Vec3(3, 4, 0) / 5,
                Vec3(1, 2, 0) + 0.5 * 4.5 * Vec3(3, 4, 0) / 5, 4.5);
  // Corner region: closest point (1, 2, 3) at distance sqrt(3).
  const Vec3 d = Vec3(1, 1, 1) / std::sqrt(3.0);
  check_contact(gap_to(Vec3(2, 3, 4), 0.5), -d, Vec3(1, 2, 3) + 0.5 * (std::sqrt(3.0) - 0.5) * d,
                std::sqrt(3.0) - 0.5);
  // Centre inside, 0.2 from the +x face (the nearest): pushed out through it.
  check_contact(gap_to(Vec3(0.8, 0, 0), 0.5), -Vec3::UnitX(), Vec3(1.15, 0, 0), -0.7);

  // Box turned by 90 deg about z: its world half extent along y is 1.
  World turned = world_of(Dimension::three);
  const int tb = add(turned, Box{Vec3(1, 2, 3)}, Vec3::Zero(), about_z(pi / 2));
  const int ts = add(turned, Sphere{0.5}, Vec3(0, 3, 0));
  const auto c = contacts_between(turned, tb, ts, 10.0);
  BOOST_TEST_REQUIRE(c.size() == 1u);
  check_contact(c[0], Vec3::UnitY(), Vec3(0, 1.75, 0), 1.5);
}

BOOST_AUTO_TEST_CASE(disk_against_a_turned_rectangle) {
  // Square of half side 1 turned by 45 deg: its corner is at (sqrt(2), 0).
  World world = world_of(Dimension::two);
  const int box = add(world, Box{Vec3(1, 1, 1)}, Vec3::Zero(), about_z(pi / 4));
  const int disk = add(world, Sphere{0.25}, Vec3(2, 0, 0));
  auto c = contacts_between(world, disk, box, 1.0);
  BOOST_TEST_REQUIRE(c.size() == 1u);
  const double gap = 2.0 - std::sqrt(2.0) - 0.25;
  check_contact(c[0], -Vec3::UnitX(), Vec3(0.5 * (std::sqrt(2.0) + 1.75), 0, 0), gap);
  check_frame(c[0], Dimension::two);

  // Centre inside a flat rectangle much thinner in z than in y: the z faces do not count in 2D.
  World flat = world_of(Dimension::two);
  const int slab = add(flat, Box{Vec3(2, 1, 0.1)}, Vec3::Zero());
  const int inside = add(flat, Sphere{0.1}, Vec3(0, 0.7, 0));
  c = contacts_between(flat, inside, slab, 0.0);
  BOOST_TEST_REQUIRE(c.size() == 1u);
  check_contact(c[0], -Vec3::UnitY(), Vec3(0, 0.5 * (0.8 + 1.0), 0), -0.4);
}

BOOST_AUTO_TEST_CASE(sphere_capsule_side_end_and_turned) {
  World world = world_of(Dimension::three);
  const int rod = add(world, Capsule{1.0, 0.2}, Vec3::Zero());
  const int side = add(world, Sphere{0.3}, Vec3(0.5, 1, 0));
  const int end = add(world, Sphere{0.3}, Vec3(2, 0, 0));
  auto c = contacts_between(world, side, rod, 1.0);
  BOOST_TEST_REQUIRE(c.size() == 1u);
  check_contact(c[0], -Vec3::UnitY(), Vec3(0.5, 0.5 * (0.7 + 0.2), 0), 0.5);
  c = contacts_between(world, rod, end, 1.0);
  BOOST_TEST_REQUIRE(c.size() == 1u);
  check_contact(c[0], Vec3::UnitX(), Vec3(0.5 * (1.2 + 1.7), 0, 0), 0.5);

  World turned = world_of(Dimension::three);
  const int upright = add(turned, Capsule{1.0, 0.2}, Vec3::Zero(), about_z(pi / 2));
  const int ball = add(turned, Sphere{0.3}, Vec3(1, 0.5, 0));
  c = contacts_between(turned, ball, upright, 1.0);
  BOOST_TEST_REQUIRE(c.size() == 1u);
  check_contact(c[0], -Vec3::UnitX(), Vec3(0.5 * (0.7 + 0.2), 0.5, 0), 0.5);
}

BOOST_AUTO_TEST_CASE(capsule_halfspace_gives_a_contact_per_endpoint_within_margin) {
  World world = world_of(Dimension::three);
  const int floor =
      add(world, HalfSpace{Vec3::UnitY()}, Vec3::Zero(), Quat::Identity(), Motion::fixed);
  const int flat = add(world, Capsule{1.0, 0.2}, Vec3(0, 0.15, 0));
  auto c = contacts_between(world, flat, floor, 0.0);
  BOOST_TEST_REQUIRE(c.size() == 2u);
  check_contact(c[0], -Vec3::UnitY(), Vec3(-1, -0.025, 0), -0.05);
  check_contact(c[1], -Vec3::UnitY(), Vec3(1, -0.025, 0), -0.05);

  // Tilted by 30 deg about z at height 0.6: endpoint heights 0.1 and 1.1.
  const int tilted = add(world, Capsule{1.0, 0.2}, Vec3(0, 0.6, 0), about_z(pi / 6));
  c = contacts_between(world, floor, tilted, 0.1);
  BOOST_TEST_REQUIRE(c.size() == 1u);
  const Vec3 tip(-std::cos(pi / 6), 0.1, 0);
  check_contact(c[0], Vec3::UnitY(), Vec3(tip.x(), 0.5 * (-0.1 + 0.0), 0), -0.1);

  // A bare segment (radius 0) in a 2D world touches with its tips.
  World planar = world_of(Dimension::two);
  const int ground =
      add(planar, HalfSpace{Vec3::UnitY()}, Vec3::Zero(), Quat::Identity(), Motion::fixed);
  const int segment = add(planar, Capsule{0.5, 0.0}, Vec3(1, -0.01, 0));
  c = contacts_between(planar, segment, ground, 0.0);
  BOOST_TEST_REQUIRE(c.size() == 2u);
  check_contact(c[0], -Vec3::UnitY(), Vec3(0.5, -0.005, 0), -0.01);
  check_contact(c[1], -Vec3::UnitY(), Vec3(1.5, -0.005, 0), -0.01);
  check_frame(c[1], Dimension::two);
}

BOOST_AUTO_TEST_CASE(capsule_capsule_crossing_skew_parallel_and_collinear) {
  // Rod b along -z (turned 90 deg about y) crossing above rod a along x.
  World world = world_of(Dimension::three);
  const Quat along_z(Eigen::AngleAxisd(pi / 2, Vec3::UnitY()));
  const int a = add(world, Capsule{1.0, 0.1}, Vec3::Zero());
  const int b = add(world, Capsule{1.0, 0.2}, Vec3(0.3, 0.5, 0.2), along_z);
  auto c = contacts_between(world, a, b, 1.0);
  BOOST_TEST_REQUIRE(c.size() == 1u);
  check_contact(c[0], Vec3::UnitY(), Vec3(0.3, 0.2, 0), 0.2);

  // Beyond the end of a: closest points (1, 0, 0) and (2, 0.5, 0).
  const int skew = add(world, Capsule{1.0, 0.2}, Vec3(2, 0.5, 0.2), along_z);
  c = contacts_between(world, a, skew, 2.0);
  BOOST_TEST_REQUIRE(c.size() == 1u);
  const Vec3 d = Vec3(1, 0.5, 0) / std::sqrt(1.25);
  check_contact(c[0], d, 0.5 * (Vec3(1, 0, 0) + 0.1 * d + Vec3(2, 0.5, 0) - 0.2 * d),
                std::sqrt(1.25) - 0.3);

  // Parallel rods in 2D, b's projection [0.1, 1.1] overlaps a's [-1, 1] on [0.1, 1]: two
  // contacts at the ends of the overlap, also when b points the other way.
  for (const double turn : {0.0, pi}) {
    World planar = world_of(Dimension::two);
    const int lower = add(planar, Capsule{1.0, 0.5}, Vec3::Zero());
    const int upper = add(planar, Capsule{0.5, 0.5}, Vec3(0.6, 0.9, 0), about_z(turn));
    c = contacts_between(planar, lower, upper, 0.0);
    BOOST_TEST_REQUIRE(c.size() == 2u);
    check_contact(c[0], Vec3::UnitY(), Vec3(0.1, 0.45, 0), -0.1);
    check_contact(c[1], Vec3::UnitY(), Vec3(1.0, 0.45, 0), -0.1);
  }

  // Collinear rods end to end: one contact between the facing tips (1, 0) and (1.5, 0).
  World line = world_of(Dimension::two);
  const int left = add(line, Capsule{1.0, 0.5}, Vec3::Zero());
  const int right = add(line, Capsule{1.0, 0.5}, Vec3(2.5, 0, 0));
  c = contacts_between(line, left, right, 0.0);
  BOOST_TEST_REQUIRE(c.size() == 1u);
  check_contact(c[0], Vec3::UnitX(), Vec3(1.25, 0, 0), -0.5);
}

BOOST_AUTO_TEST_CASE(resting_box_touches_a_halfspace_with_a_face_of_corners) {
  World world = world_of(Dimension::three);
  const int floor =
      add(world, HalfSpace{Vec3::UnitY()}, Vec3::Zero(), Quat::Identity(), Motion::fixed);
  const int box = add(world, Box{Vec3(1, 0.5, 2)}, Vec3(0, 0.49, 0));
  auto c = contacts_between(world, box, floor, 0.0);
  BOOST_TEST_REQUIRE(c.size() == 4u);
  const Vec3 expected[] = {{-1, -0.005, -2}, {1, -0.005, -2}, {-1, -0.005, 2}, {1, -0.005, 2}};
  for (int k = 0; k < 4; ++k) check_contact(c[k], -Vec3::UnitY(), expected[k], -0.01);

  // A thin plate with a margin larger than its thickness: all 8 corners lie within the
  // margin, the 4 of the lower face are kept.
  const int plate = add(world, Box{Vec3(1, 0.05, 1)}, Vec3(0, 0.1, 0));
  c = contacts_between(world, floor, plate, 1.0);
  BOOST_TEST_REQUIRE(c.size() == 4u);
  for (const Contact& k : c) {
    BOOST_TEST(k.gap == 0.05, boost::test_tools::tolerance(kTol));
    BOOST_TEST((k.normal - Vec3::UnitY()).norm() <= kTol);
  }

  // Tilted by 30 deg: only the lowest corner is within the margin.
  const double low = -std::sin(pi / 6) * 1.0 - std::cos(pi / 6) * 0.5;  // lowest corner height
  const int tilted = add(world, Box{Vec3(1, 0.5, 2)}, Vec3(5, -low - 0.02, 0), about_z(-pi / 6));
  c = contacts_between(world, tilted, floor, 0.0);
  BOOST_TEST_REQUIRE(c.size() == 2u);  // the two corners of the lowest edge (z = +-2)
  BOOST_TEST(c[0].gap == -0.02, boost::test_tools::tolerance(kTol));
  BOOST_TEST(c[1].gap == -0.02, boost::test_tools::tolerance(kTol));

  World planar = world_of(Dimension::two);
  const int ground =
      add(planar, HalfSpace{Vec3::UnitY()}, Vec3::Zero(), Quat::Identity(), Motion::fixed);
  const int square = add(planar, Box{Vec3(1, 0.5, 1)}, Vec3(0, 0.49, 0));
  c = contacts_between(planar, square, ground, 0.0);
  BOOST_TEST_REQUIRE(c.size() == 2u);
  check_contact(c[0], -Vec3::UnitY(), Vec3(-1, -0.005, 0), -0.01);
  check_contact(c[1], -Vec3::UnitY(), Vec3(1, -0.005, 0), -0.01);
}

BOOST_AUTO_TEST_CASE(normal_points_from_the_given_body_a_to_body_b_in_either_order) {
  World world = world_of(Dimension::three);
  const Quat tilt(Eigen::AngleAxisd(0.3, Vec3(1, 2, 3).normalized()));
  const int sphere = add(world, Sphere{0.4}, Vec3(0.1, 0.5, 0.2));
  const int other_sphere = add(world, Sphere{0.3}, Vec3(0.5, 0.9, 0.1));
  const int plane = add(world, HalfSpace{Vec3::UnitY()}, Vec3::Zero(), tilt, Motion::fixed);
  const int box = add(world, Box{Vec3(0.3, 0.2, 0.4)}, Vec3(-0.5, 0.6, 0.1), tilt);
  const int rod = add(world, Capsule{0.5, 0.1}, Vec3(0.2, 0.3, -0.4), tilt);
  const int rod2 = add(world, Capsule{0.4, 0.2}, Vec3(0.1, 0.9, -0.2), tilt.inverse());
  const std::pair<int, int> pairs[] = {
      {sphere, other_sphere}, {sphere, plane}, {sphere, box}, {sphere, rod},
      {rod, plane},           {rod, rod2},     {box, plane}};
  for (const auto& [a, b] : pairs) {
    const auto forward = contacts_between(world, a, b, 10.0);
    const auto backward = contacts_between(world, b, a, 10.0);
    BOOST_TEST_REQUIRE(!forward.empty());
    BOOST_TEST_REQUIRE(forward.size() == backward.size());
    for (std::size_t k = 0; k < forward.size(); ++k) {
      BOOST_TEST(forward[k].body_a == a);
      BOOST_TEST(backward[k].body_a == b);
      BOOST_TEST((forward[k].normal + backward[k].normal).norm() <= kTol,
                 shape_name(world.bodies[a].shape.geometry)
                     << "-" << shape_name(world.bodies[b].shape.geometry));
      BOOST_TEST((forward[k].point - backward[k].point).norm() <= kTol);
      BOOST_TEST(forward[k].gap == backward[k].gap, boost::test_tools::tolerance(kTol));
      check_frame(forward[k], Dimension::three);
      // The normal points from a to b: moving b along it opens the gap.
      World moved = world;
      moved.bodies[b].position += 1e-3 * forward[k].normal;
      const auto after = contacts_between(moved, a, b, 10.0);
      BOOST_TEST(after[k].gap > forward[k].gap);
    }
  }
}

BOOST_AUTO_TEST_CASE(unsupported_pair_names_both_shapes_and_bodies) {
  World world = world_of(Dimension::three);
  const int box = add(world, Box{}, Vec3::Zero());
  const int rod = add(world, Capsule{}, Vec3(0.5, 0, 0));
  const int other_box = add(world, Box{}, Vec3(0, 0.5, 0));
  std::vector<Contact> out;
  auto names = [](std::vector<std::string> words) {
    return [words](const InputError& e) {
      const std::string what = e.what();
      return std::all_of(words.begin(), words.end(),
                         [&](const std::string& w) { return what.find(w) != std::string::npos; });
    };
  };
  BOOST_CHECK_EXCEPTION(narrow_phase(world, rod, box, 0.0, out), InputError,
                        names({"capsule", "box", "body 0", "body 1", "'b0'", "'b1'"}));
  BOOST_CHECK_EXCEPTION(narrow_phase(world, box, other_box, 0.0, out), InputError,
                        names({"box", "body 0", "body 2"}));
  BOOST_CHECK_THROW(detect_contacts(world, CollisionOptions{}), InputError);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(broad_phase)

namespace {

// Random polydisperse spheres (radii in [0.5, 1], ratio 2) in a box, with a few fixed bodies
// and two fixed half-spaces.
World random_spheres(Dimension dimension, int count, unsigned seed, double extent,
                     const Vec3& shift) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> coordinate(0.0, extent);
  std::uniform_real_distribution<double> radius(0.5, 1.0);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  World world = world_of(dimension);
  const bool planar = dimension == Dimension::two;
  add(world, HalfSpace{Vec3::UnitY()}, shift, Quat::Identity(), Motion::fixed);
  for (int i = 0; i < count; ++i) {
    const Vec3 p(coordinate(rng), coordinate(rng), planar ? 0.0 : coordinate(rng));
    const Motion motion = unit(rng) < 0.1 ? Motion::fixed : Motion::dynamic;
    // Every fifth body has an offset shape centre, which the grid must use.
    const Vec3 offset = i % 5 == 0 ? Vec3(0.3, -0.2, 0) : Vec3::Zero();
    add(world, Sphere{radius(rng)}, p + shift, about_z(unit(rng)), motion, offset);
  }
  add(world, HalfSpace{Vec3::UnitX()}, shift, Quat::Identity(), Motion::prescribed);
  return world;
}

std::vector<std::pair<int, int>> brute_force_pairs(const World& world, double margin) {
  std::vector<std::pair<int, int>> pairs;
  const int n = static_cast<int>(world.bodies.size());
  for (int a = 0; a < n; ++a)
    for (int b = a + 1; b < n; ++b) {
      const RigidBody& ba = world.bodies[a];
      const RigidBody& bb = world.bodies[b];
      if (!ba.is_dynamic() && !bb.is_dynamic()) continue;
      const double ra = bounding_radius(ba.shape.geometry);
      const double rb = bounding_radius(bb.shape.geometry);
      const Vec3 ca = ba.position + ba.orientation * ba.shape.offset;
      const Vec3 cb = bb.position + bb.orientation * bb.shape.offset;
      // A half-space meets the bodies whose bounding sphere reaches within the margin of its
      // plane.
      auto reaches = [margin](const RigidBody& plane, const Vec3& p, const Vec3& c, double r) {
        const Vec3 m = plane.orientation * std::get<HalfSpace>(plane.shape.geometry).normal;
        return !std::isfinite(r) || m.dot(c - p) <= r + margin;
      };
      const bool close = !std::isfinite(ra)   ? reaches(ba, ca, cb, rb)
                         : !std::isfinite(rb) ? reaches(bb, cb, ca, ra)
                                              : (ca - cb).norm() <= ra + rb + margin;
      if (close) pairs.emplace_back(a, b);
    }
  return pairs;
}

}  // namespace

BOOST_AUTO_TEST_CASE(grid_finds_exactly_the_brute_force_pairs) {
  struct Case {
    Dimension dimension;
    int count;
    double extent;
    double cell_size;
    Vec3 shift;
  };
  // Cell size 0.7 searches 3 cells around each body. `wrapped` puts the 3D cells across the
  // 2^21 wrap of the packed key; the last case puts bodies 1e10 m away.
  const double wrap = std::ldexp(2.5, 21);
  const Vec3 wrapped(wrap - 10.0, -wrap - 10.0, 2.0 * wrap - 10.0);
  const Case cases[] = {
      {Dimension::three, 3000, 20.0, 0.0, Vec3::Zero()},
      {Dimension::two, 3000, 60.0, 0.0, Vec3::Zero()},
      {Dimension::three, 2000, 20.0, 0.7, Vec3::Zero()},
      {Dimension::three, 2000, 20.0, 2.5, wrapped},
      {Dimension::two, 2000, 40.0, 0.0, Vec3(-3.1e9, 7.7e9, 0)},
  };
  const unsigned seed = 1234567;
  for (const Case& k : cases) {
    const World world = random_spheres(k.dimension, k.count, seed, k.extent, k.shift);
    CollisionOptions options;
    options.margin = 0.05;
    options.cell_size = k.cell_size;
    const auto grid = broad_phase_pairs(world, options);
    const auto brute = brute_force_pairs(world, options.margin);
    BOOST_TEST(std::is_sorted(grid.begin(), grid.end()));
    BOOST_TEST(grid.size() == brute.size(),
               "grid " << grid.size() << " pairs, brute force " << brute.size());
    BOOST_TEST((grid == brute));
  }
}

BOOST_AUTO_TEST_CASE(bodies_far_apart_on_every_axis_are_still_paired) {
  // Cells ~1e15 apart on all three axes do not pack into one 64-bit key: the grid clamps them to
  // its border cells and packs 128-bit keys, and must still find the close pair far out and
  // nothing else.
  World world = random_spheres(Dimension::three, 500, 777, 10.0, Vec3::Zero());
  const int far = add(world, Sphere{0.5}, Vec3(1e15, -1e15, 1e15));
  const int partner = add(world, Sphere{0.5}, Vec3(1e15 + 0.75, -1e15, 1e15));
  add(world, Sphere{0.5}, Vec3(-1e15, 1e15, -1e15));
  add(world, Sphere{0.5}, Vec3(0, 0, 1e300));
  CollisionOptions options;
  options.margin = 0.05;
  const auto grid = broad_phase_pairs(world, options);
  BOOST_TEST((grid == brute_force_pairs(world, options.margin)));
  BOOST_TEST((std::find(grid.begin(), grid.end(), std::make_pair(far, partner)) != grid.end()));
}

BOOST_AUTO_TEST_CASE(a_single_layer_of_a_3d_world_finds_the_brute_force_pairs) {
  // All centres at z = 0: the grid's cells span one layer, yet its stencil rows above and below
  // must stay distinct from the layer's own rows (no pair found twice, none missed).
  World world = world_of(Dimension::three);
  std::mt19937 rng(2468);
  std::uniform_real_distribution<double> coordinate(0.0, 30.0);
  std::uniform_real_distribution<double> radius(0.5, 1.0);
  for (int i = 0; i < 1500; ++i)
    add(world, Sphere{radius(rng)}, Vec3(coordinate(rng), coordinate(rng), 0.0));
  CollisionOptions options;
  options.margin = 0.05;
  BOOST_TEST((broad_phase_pairs(world, options) == brute_force_pairs(world, options.margin)));
}

BOOST_AUTO_TEST_CASE(contacts_do_not_depend_on_the_thread_count) {
  World world = random_spheres(Dimension::three, 4000, 99, 16.0, Vec3::Zero());
  CollisionOptions options;
  options.margin = 0.01;
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  CollisionStats serial_stats;
  const auto serial = detect_contacts(world, options, &serial_stats);
  omp_set_num_threads(std::max(threads, 4));
  CollisionStats stats;
  const auto parallel = detect_contacts(world, options, &stats);
  omp_set_num_threads(threads);
  BOOST_TEST(serial_stats.contacts > 1000);
  BOOST_TEST(stats.contacts == static_cast<long>(parallel.size()));
  BOOST_TEST(stats.candidate_pairs == serial_stats.candidate_pairs);
  BOOST_TEST_REQUIRE(serial.size() == parallel.size());
  bool identical = true;
  for (std::size_t i = 0; i < serial.size(); ++i)
    identical = identical && serial[i].body_a == parallel[i].body_a &&
                serial[i].body_b == parallel[i].body_b && serial[i].gap == parallel[i].gap &&
                serial[i].normal == parallel[i].normal && serial[i].point == parallel[i].point;
  BOOST_TEST(identical);
}

BOOST_AUTO_TEST_CASE(a_detector_reused_across_worlds_and_threads_gives_fresh_results) {
  // One CollisionDetector and one output vector over worlds that grow, shrink, change dimension
  // and thread count: every call gives detect_contacts's contacts, in the same order, and keeps
  // the output's capacity.
  CollisionDetector detector;
  std::vector<Contact> out;
  const int threads = omp_get_max_threads();
  const struct {
    Dimension dimension;
    int count;
    double extent;
    int threads;
  } cases[] = {{Dimension::three, 5000, 17.0, 2}, {Dimension::three, 300, 6.0, 1},
               {Dimension::two, 3000, 50.0, 3}, {Dimension::three, 6000, 19.0, 1}};
  unsigned seed = 31;
  for (const auto& k : cases) {
    const World world = random_spheres(k.dimension, k.count, ++seed, k.extent, Vec3::Zero());
    CollisionOptions options;
    options.margin = 0.02;
    omp_set_num_threads(k.threads);
    const std::size_t capacity = out.capacity();
    CollisionStats stats;
    detector.detect(world, options, out, &stats);
    omp_set_num_threads(threads);
    const std::vector<Contact> fresh = detect_contacts(world, options);
    BOOST_TEST(out.capacity() >= capacity);
    BOOST_TEST(stats.contacts == static_cast<long>(out.size()));
    BOOST_TEST(out.size() > 100u);
    BOOST_TEST_REQUIRE(out.size() == fresh.size());
    bool identical = true;
    for (std::size_t i = 0; i < out.size(); ++i)
      identical = identical && out[i].body_a == fresh[i].body_a &&
                  out[i].body_b == fresh[i].body_b && out[i].gap == fresh[i].gap &&
                  out[i].normal == fresh[i].normal && out[i].point == fresh[i].point;
    BOOST_TEST(identical);
  }
}

BOOST_AUTO_TEST_CASE(detect_contacts_equals_the_narrow_phase_of_every_pair_bit_for_bit) {
  // detect_contacts evaluates sphere pairs from its own table of shape centres; the contacts
  // must be those of narrow_phase on the broad phase's pairs, in the same order, to the bit,
  // with offset shape centres, turned bodies, half-spaces and boxes among the spheres.
  World world = random_spheres(Dimension::three, 3000, 8642, 18.0, Vec3::Zero());
  for (int i = 0; i < 36; ++i)  // 2 m apart: no box-box pair, which has no contact model
    add(world, Box{Vec3(0.4, 0.3, 0.5)}, Vec3(1.0 + 2.0 * (i % 9), 9.0, 1.0 + 2.0 * (i / 9)),
        about_z(0.1 * i));
  CollisionOptions options;
  options.margin = 0.02;
  std::vector<Contact> expected;
  for (const auto& [a, b] : broad_phase_pairs(world, options))
    narrow_phase(world, a, b, options.margin, expected);
  const std::vector<Contact> contacts = detect_contacts(world, options);
  BOOST_TEST_REQUIRE(contacts.size() == expected.size());
  BOOST_TEST(contacts.size() > 1000);
  bool identical = true;
  for (std::size_t i = 0; i < contacts.size(); ++i)
    identical = identical && contacts[i].body_a == expected[i].body_a &&
                contacts[i].body_b == expected[i].body_b && contacts[i].gap == expected[i].gap &&
                contacts[i].normal == expected[i].normal &&
                contacts[i].tangent1 == expected[i].tangent1 &&
                contacts[i].point == expected[i].point;
  BOOST_TEST(identical);
}

BOOST_AUTO_TEST_CASE(half_spaces_are_paired_only_with_bodies_near_their_plane) {
  // The broad phase drops a half-space's partners whose bounding sphere lies beyond the margin
  // above its plane. No pair it drops may have a contact: the narrow phase of every pair with a
  // half-space (turned and offset ones among them, spheres, boxes and capsules, some straddling
  // the planes) finds contacts only on the listed pairs, and most bodies are not listed.
  World world = random_spheres(Dimension::three, 2000, 2468, 16.0, Vec3::Zero());
  add(world, HalfSpace{Vec3(0.6, 0.8, 0.0)}, Vec3(8.0, 2.0, 0.0), about_z(0.3), Motion::fixed,
      Vec3(0.1, 0.2, 0.3));
  for (int i = 0; i < 30; ++i) {
    const Vec3 p(0.5 * i, 0.3 * (i % 7) - 0.5, 1.0 + 0.4 * i);
    add(world, i % 2 ? ShapeGeometry{Box{Vec3(0.4, 0.3, 0.5)}} : ShapeGeometry{Capsule{0.3, 0.5}},
        p, about_z(0.2 * i));
  }
  CollisionOptions options;
  options.margin = 0.05;
  const auto pairs = broad_phase_pairs(world, options);
  const int n = static_cast<int>(world.bodies.size());
  long listed = 0, touching = 0;
  for (int h = 0; h < n; ++h) {
    if (!std::holds_alternative<HalfSpace>(world.bodies[h].shape.geometry)) continue;
    for (int b = 0; b < n; ++b) {
      if (b == h || (!world.bodies[b].is_dynamic() && !world.bodies[h].is_dynamic())) continue;
      if (std::holds_alternative<HalfSpace>(world.bodies[b].shape.geometry)) continue;
      const std::pair<int, int> pair(std::min(h, b), std::max(h, b));
      const bool in_list = std::binary_search(pairs.begin(), pairs.end(), pair);
      std::vector<Contact> out;
      narrow_phase(world, pair.first, pair.second, options.margin, out);
      listed += in_list;
      touching += !out.empty();
      BOOST_TEST((in_list || out.empty()), "pair " << pair.first << ", " << pair.second);
    }
  }
  BOOST_TEST(touching > 50);
  BOOST_TEST(listed < 3 * n / 4);  // three half-spaces, each near a fraction of the bodies
}

BOOST_AUTO_TEST_CASE(large_non_dynamic_bodies_off_the_grid_find_the_same_pairs) {
  // A blade (prescribed box) and a fixed slab, both far larger than the grains, are tested
  // against every body instead of sizing the grid's cells: the pairs are those of the brute
  // force, in the same order.
  World world = random_spheres(Dimension::three, 3000, 4321, 20.0, Vec3::Zero());
  const int blade = add(world, Box{Vec3(0.2, 4.0, 3.0)}, Vec3(10.0, 10.0, 10.0), about_z(0.3),
                        Motion::prescribed);
  add(world, Box{Vec3(6.0, 0.5, 6.0)}, Vec3(5.0, 2.0, 15.0), Quat::Identity(), Motion::fixed);
  CollisionOptions options;
  options.margin = 0.05;
  const auto grid = broad_phase_pairs(world, options);
  BOOST_TEST((grid == brute_force_pairs(world, options.margin)));
  BOOST_TEST(std::count_if(grid.begin(), grid.end(), [&](const auto& p) {
               return p.first == blade || p.second == blade;
             }) > 10);
}

BOOST_AUTO_TEST_CASE(two_non_dynamic_bodies_are_never_paired) {
  World world = world_of(Dimension::three);
  add(world, HalfSpace{}, Vec3::Zero(), Quat::Identity(), Motion::fixed);
  add(world, Sphere{1.0}, Vec3::Zero(), Quat::Identity(), Motion::fixed);
  add(world, Sphere{1.0}, Vec3(0.5, 0, 0), Quat::Identity(), Motion::prescribed);
  add(world, Sphere{1.0}, Vec3(1.0, 0, 0));
  const auto pairs = broad_phase_pairs(world, CollisionOptions{});
  const std::vector<std::pair<int, int>> expected = {{0, 3}, {1, 3}, {2, 3}};
  BOOST_TEST((pairs == expected));
}

BOOST_AUTO_TEST_CASE(options_are_validated) {
  CollisionOptions options;
  options.margin = -1.0;
  BOOST_CHECK_THROW(options.validate(), InputError);
  options.margin = 0.0;
  options.cell_size = std::nan("");
  BOOST_CHECK_THROW(options.validate(), InputError);
  options.cell_size = 0.0;
  BOOST_CHECK_NO_THROW(options.validate());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(mass_properties_of_shapes)

BOOST_AUTO_TEST_CASE(sphere_disk_and_box_match_the_textbook_formulas) {
  const double rho = 2000.0;
  MassProperties p = mass_properties(Sphere{0.5}, rho, Dimension::three);
  const double m_sphere = rho * 4.0 / 3.0 * pi * 0.125;
  BOOST_TEST(p.mass == m_sphere, boost::test_tools::tolerance(1e-14));
  BOOST_TEST((p.inertia - 0.4 * m_sphere * 0.25 * Mat3::Identity()).norm() <= 1e-12 * m_sphere);

  p = mass_properties(Sphere{0.5}, rho, Dimension::two);
  const double m_disk = rho * pi * 0.25;  // unit thickness
  BOOST_TEST(p.mass == m_disk, boost::test_tools::tolerance(1e-14));
  BOOST_TEST(p.inertia(2, 2) == 0.5 * m_disk * 0.25, boost::test_tools::tolerance(1e-14));
  BOOST_TEST((p.inertia - p.inertia(2, 2) * Mat3::Identity()).norm() == 0.0);

  // Edges 2, 4, 6: I_xx = m (4^2 + 6^2) / 12 and so on.
  p = mass_properties(Box{Vec3(1, 2, 3)}, rho, Dimension::three);
  const double m_box = rho * 48.0;
  BOOST_TEST(p.mass == m_box, boost::test_tools::tolerance(1e-14));
  const Vec3 expected(m_box * 52.0 / 12.0, m_box * 40.0 / 12.0, m_box * 20.0 / 12.0);
  BOOST_TEST((p.inertia.diagonal() - expected).norm() <= 1e-12 * m_box);
  BOOST_TEST((p.inertia - Mat3(p.inertia.diagonal().asDiagonal())).norm() == 0.0);

  p = mass_properties(Box{Vec3(1, 2, 3)}, rho, Dimension::two);
  const double m_rect = rho * 8.0;
  BOOST_TEST(p.mass == m_rect, boost::test_tools::tolerance(1e-14));
  BOOST_TEST(p.inertia(2, 2) == m_rect * 20.0 / 12.0, boost::test_tools::tolerance(1e-14));
}

BOOST_AUTO_TEST_CASE(capsule_matches_numerical_integration) {
  // Midpoint-rule integration over a grid of the bounding box; its error at the curved
  // boundary is O(cell / size), about 0.1% at this resolution, so 0.5% is the tolerance.
  const double rho = 700.0;
  const Capsule capsule{0.6, 0.25};
  const int cells = 240;
  auto inside = [&](const Vec3& x) {
    const double t = std::clamp(x.x(), -capsule.half_length, capsule.half_length);
    return (x - Vec3(t, 0, 0)).norm() <= capsule.radius;
  };
  const Vec3 half(capsule.half_length + capsule.radius, capsule.radius, capsule.radius);
  for (const Dimension dimension : {Dimension::three, Dimension::two}) {
    const bool planar = dimension == Dimension::two;
    const Vec3 step = 2.0 * half / cells;
    const double dv = step.x() * step.y() * (planar ? 1.0 : step.z());
    double mass = 0.0;
    Vec3 second_moment = Vec3::Zero();  // integrals of x^2, y^2, z^2
    for (int i = 0; i < cells; ++i)
      for (int j = 0; j < cells; ++j)
        for (int k = 0; k < (planar ? 1 : cells); ++k) {
          const Vec3 x = -half + step.cwiseProduct(Vec3(i + 0.5, j + 0.5, k + 0.5));
          const Vec3 p(x.x(), x.y(), planar ? 0.0 : x.z());
          if (!inside(p)) continue;
          mass += rho * dv;
          second_moment += rho * dv * p.cwiseAbs2();
        }
    const MassProperties p = mass_properties(capsule, rho, dimension);
    BOOST_TEST(p.mass == mass, boost::test_tools::tolerance(5e-3));
    const double izz = second_moment.x() + second_moment.y();
    BOOST_TEST(p.inertia(2, 2) == izz, boost::test_tools::tolerance(5e-3));
    if (!planar) {
      BOOST_TEST(p.inertia(0, 0) == second_moment.y() + second_moment.z(),
                 boost::test_tools::tolerance(5e-3));
      BOOST_TEST(p.inertia(1, 1) == second_moment.x() + second_moment.z(),
                 boost::test_tools::tolerance(5e-3));
    }
  }
  // A capsule of zero length is a sphere.
  const MassProperties ball = mass_properties(Capsule{0.0, 0.3}, rho, Dimension::three);
  const MassProperties sphere = mass_properties(Sphere{0.3}, rho, Dimension::three);
  BOOST_TEST(ball.mass == sphere.mass, boost::test_tools::tolerance(1e-14));
  BOOST_TEST((ball.inertia - sphere.inertia).norm() <= 1e-14 * sphere.mass);
}

BOOST_AUTO_TEST_CASE(shapes_without_volume_are_rejected) {
  BOOST_CHECK_THROW(mass_properties(HalfSpace{}, 1000.0, Dimension::three), InputError);
  BOOST_CHECK_EXCEPTION(mass_properties(Capsule{1.0, 0.0}, 1000.0, Dimension::three), InputError,
                        [](const InputError& e) {
                          return std::string(e.what()).find("no volume") != std::string::npos;
                        });
  BOOST_CHECK_THROW(mass_properties(Sphere{0.0}, 1000.0, Dimension::two), InputError);
  BOOST_CHECK_THROW(mass_properties(Sphere{1.0}, -1.0, Dimension::two), InputError);
}

BOOST_AUTO_TEST_CASE(bounding_radius_is_about_the_shape_centre) {
  BOOST_TEST(bounding_radius(Sphere{0.7}) == 0.7);
  BOOST_TEST(bounding_radius(Capsule{1.0, 0.25}) == 1.25);
  BOOST_TEST(bounding_radius(Box{Vec3(1, 2, 2)}) == 3.0, boost::test_tools::tolerance(1e-15));
  BOOST_TEST(std::isinf(bounding_radius(HalfSpace{})));
  BOOST_TEST(shape_name(HalfSpace{}) == "half-space");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace moreau
