// The normal row of the contact Jacobian is the time derivative of the gap: for body velocities
// (v, omega), u_n = J_a v_a + J_b v_b must equal d/dt gap(q(t)) where positions move with v and
// orientations with the exponential map of omega (world frame).
#define BOOST_TEST_MODULE contact_jacobian
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <functional>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "moreau/collision/collision_detector.hpp"
#include "moreau/contact/contact_system.hpp"
#include "moreau/model/world.hpp"

namespace moreau {
namespace {

// Central difference step. Its truncation error is h^2/6 |d^3 gap/dt^3|; with speeds of order
// 1 and radii of curvature >= 0.3 the third derivative stays below about 1e3, so truncation is
// below 2e-8, and rounding adds about eps |x| / h ~ 1e-10. The tolerance sits above both.
constexpr double kStep = 1e-5;
constexpr double kTolerance = 1e-7;
// Large enough that every contact of these scenes is reported, whatever its gap.
constexpr double kMargin = 1e3;
constexpr int kSamples = 25;

class Sampler {
 public:
  Sampler(unsigned seed, Dimension dimension) : rng_(seed), planar_(dimension == Dimension::two) {}

  double uniform(double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng_);
  }
  int index(int count) { return std::uniform_int_distribution<int>(0, count - 1)(rng_); }
  Vec3 vector(double scale) {
    std::normal_distribution<double> g(0.0, scale);
    return Vec3(g(rng_), g(rng_), planar_ ? 0.0 : g(rng_));
  }
  Vec3 direction() {
    Vec3 d;
    do d = vector(1.0);
    while (d.norm() < 1e-3);
    return d.normalized();
  }
  Quat orientation() {
    if (planar_)
      return Quat(Eigen::AngleAxisd(uniform(-std::numbers::pi, std::numbers::pi), Vec3::UnitZ()));
    std::normal_distribution<double> g;
    return Quat(g(rng_), g(rng_), g(rng_), g(rng_)).normalized();
  }
  Vec3 angular_velocity(double scale) {
    if (planar_) return Vec3(0, 0, std::normal_distribution<double>(0.0, scale)(rng_));
    return vector(scale);
  }
  bool planar() const { return planar_; }

 private:
  std::mt19937 rng_;
  bool planar_;
};

// A dynamic body with a random offset shape whose centre is placed at `centre`.
RigidBody body_with_centre(Sampler& s, const ShapeGeometry& geometry, const Vec3& centre) {
  RigidBody body;
  body.shape.geometry = geometry;
  body.shape.offset = s.vector(0.3);
  body.orientation = s.orientation();
  body.position = centre - body.orientation * body.shape.offset;
  body.linear_velocity = s.vector(1.0);
  body.angular_velocity = s.angular_velocity(1.0);
  return body;
}

World sphere_sphere(Sampler& s, Dimension dimension) {
  World w;
  w.dimension = dimension;
  const double ra = s.uniform(0.3, 1.0);
  const double rb = s.uniform(0.3, 1.0);
  const Vec3 ca = s.vector(1.0);
  const Vec3 cb = ca + (ra + rb + s.uniform(-0.2, 0.2)) * s.direction();
  w.add_body(body_with_centre(s, Sphere{ra}, ca));
  w.add_body(body_with_centre(s, Sphere{rb}, cb));
  return w;
}

RigidBody random_halfspace(Sampler& s) {
  return body_with_centre(s, HalfSpace{s.direction()}, s.vector(1.0));
}

World sphere_halfspace(Sampler& s, Dimension dimension) {
  World w;
  w.dimension = dimension;
  w.add_body(body_with_centre(s, Sphere{s.uniform(0.3, 1.0)}, s.vector(1.0)));
  w.add_body(random_halfspace(s));
  return w;
}

// Sphere centre in the face region of a random face, from slightly inside to well outside.
World sphere_box_face(Sampler& s, Dimension dimension) {
  World w;
  w.dimension = dimension;
  const Vec3 e(s.uniform(0.5, 1.5), s.uniform(0.5, 1.5), s.uniform(0.5, 1.5));
  const RigidBody box = body_with_centre(s, Box{e}, s.vector(1.0));
  const int axis = s.index(s.planar() ? 2 : 3);
  const double side = s.index(2) == 0 ? -1.0 : 1.0;
  Vec3 local(s.uniform(-0.6, 0.6) * e.x(), s.uniform(-0.6, 0.6) * e.y(),
             s.planar() ? 0.0 : s.uniform(-0.6, 0.6) * e.z());
  local(axis) = side * (e(axis) + s.uniform(-0.05, 0.5));
  const Vec3 centre = box.position + box.orientation * (box.shape.offset + local);
  w.add_body(body_with_centre(s, Sphere{s.uniform(0.3, 1.0)}, centre));
  w.add_body(box);
  return w;
}

World capsule_halfspace(Sampler& s, Dimension dimension) {
  World w;
  w.dimension = dimension;
  w.add_body(body_with_centre(s, Capsule{s.uniform(0.3, 1.0), s.uniform(0.3, 0.6)}, s.vector(1.0)));
  w.add_body(random_halfspace(s));
  return w;
}

std::vector<Contact> contacts_of(const World& world) {
  std::vector<Contact> out;
  narrow_phase(world, 0, 1, kMargin, out);
  return out;
}

// The world after time t of motion at the current velocities.
World advanced(const World& world, double t) {
  World moved = world;
  for (RigidBody& b : moved.bodies) {
    b.position += t * b.linear_velocity;
    const double angle = t * b.angular_velocity.norm();
    if (angle != 0.0)
      b.orientation =
          (Quat(Eigen::AngleAxisd(angle, b.angular_velocity.normalized())) * b.orientation)
              .normalized();
  }
  return moved;
}

void check_normal_rows(const std::string& pair,
                       const std::function<World(Sampler&, Dimension)>& make, unsigned seed) {
  for (const Dimension dimension : {Dimension::three, Dimension::two}) {
    Sampler sampler(seed, dimension);
    double worst = 0.0;
    std::string worst_case = "none";
    for (int sample = 0; sample < kSamples; ++sample) {
      const World world = make(sampler, dimension);
      BOOST_REQUIRE_NO_THROW(world.validate());
      const std::vector<Contact> contacts = contacts_of(world);
      BOOST_TEST_REQUIRE(!contacts.empty());
      const ContactSystem system(world, contacts, 1);
      VecX velocities(kBodyDofs * 2);
      velocities << world.bodies[0].velocity(), world.bodies[1].velocity();
      const VecX u = system.contact_velocity(velocities);

      const std::vector<Contact> ahead = contacts_of(advanced(world, kStep));
      const std::vector<Contact> behind = contacts_of(advanced(world, -kStep));
      BOOST_TEST_REQUIRE(ahead.size() == contacts.size());
      BOOST_TEST_REQUIRE(behind.size() == contacts.size());
      for (std::size_t k = 0; k < contacts.size(); ++k) {
        const double rate = (ahead[k].gap - behind[k].gap) / (2.0 * kStep);
        const double error = std::abs(u(static_cast<int>(k)) - rate);
        if (error >= worst) {
          worst = error;
          worst_case = "sample " + std::to_string(sample) + " contact " + std::to_string(k) +
                       ": J v = " + std::to_string(u(static_cast<int>(k))) +
                       ", finite difference = " + std::to_string(rate);
        }
      }
    }
    BOOST_TEST(worst <= kTolerance, pair << (dimension == Dimension::two ? " 2D" : " 3D")
                                         << " worst error " << worst << " at " << worst_case);
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(sphere_sphere_normal_row_is_the_gap_rate) {
  check_normal_rows("sphere-sphere", sphere_sphere, 101);
}

BOOST_AUTO_TEST_CASE(sphere_halfspace_normal_row_is_the_gap_rate) {
  check_normal_rows("sphere-halfspace", sphere_halfspace, 202);
}

BOOST_AUTO_TEST_CASE(sphere_box_face_normal_row_is_the_gap_rate) {
  check_normal_rows("sphere-box", sphere_box_face, 303);
}

BOOST_AUTO_TEST_CASE(capsule_halfspace_normal_row_is_the_gap_rate) {
  check_normal_rows("capsule-halfspace", capsule_halfspace, 404);
}

}  // namespace moreau
