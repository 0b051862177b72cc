// The rattler test of the quasi-static driver (Krabbenhoft/NURBS chapter eq. 4.16): whether
// some rigid motion (u_x, u_y, omega) of a particle opens all its contacts strictly inside their
// friction cones.
#define BOOST_TEST_MODULE rigid_escape
#include "moreau/variational/rigid_escape.hpp"

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <numbers>
#include <vector>

#include "moreau/core/error.hpp"

using namespace moreau;
using variational::EscapeContact;
using variational::rigid_escape;

namespace {

Vec3 unit(double degrees) {
  const double a = degrees * std::numbers::pi / 180.0;
  return Vec3(std::cos(a), std::sin(a), 0.0);
}

// A disk of radius 1 touched at the points of its rim whose outward normals are at `degrees`:
// the particle opens a contact by moving away from it, along minus that normal.
std::vector<EscapeContact> disk(const std::vector<double>& degrees, double mu) {
  std::vector<EscapeContact> contacts;
  for (const double d : degrees) contacts.push_back({unit(d), -unit(d), mu});
  return contacts;
}

// The certificate: the motion found opens every contact by more than mu |slip|.
void check_motion(const std::vector<EscapeContact>& contacts, const variational::Escape& e) {
  const Vec3 u(e.motion.x(), e.motion.y(), 0.0);
  const double omega = e.motion.z() / e.reach;
  for (const EscapeContact& c : contacts) {
    const Vec3 velocity = u + Vec3(-c.lever.y(), c.lever.x(), 0.0) * omega;
    const Vec3 t(-c.opening.y(), c.opening.x(), 0.0);
    BOOST_TEST(c.opening.dot(velocity) > c.friction * std::abs(t.dot(velocity)));
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(translation_escape) {
  // Held from below and from the left (normals at 270 and 180 deg): moving up and right opens
  // both, with or without friction; so does a single contact, and no contact at all.
  for (const double mu : {0.0, 0.5}) {
    BOOST_TEST_CONTEXT("mu " << mu) {
      const std::vector<EscapeContact> contacts = disk({270.0, 180.0}, mu);
      const variational::Escape e = rigid_escape(contacts);
      BOOST_TEST(e.margin > variational::kEscapeMargin);
      check_motion(contacts, e);
      BOOST_TEST(variational::is_rattler(disk({30.0}, mu)));
    }
  }
  BOOST_TEST(rigid_escape({}).margin == 1.0);
  // Three contacts within 120 deg (normals at 200, 270, 320 deg): the friction cones of
  // mu = 0.5 (half-angle 63.4 deg about each opening) still share the direction up.
  BOOST_TEST(variational::is_rattler(disk({200.0, 270.0, 320.0}, 0.5)));
}

BOOST_AUTO_TEST_CASE(rotation_only_escape) {
  // A rod of half-length 1 along x, pressed down at its right end and up at its left end (a
  // couple): no translation opens both (one needs u_y < 0, the other u_y > 0), but a clockwise
  // turn lifts the right end off its contact and lowers the left end off its own. The test on
  // translations only (the previous rule) called it caged.
  for (const double mu : {0.0, 0.5}) {
    BOOST_TEST_CONTEXT("mu " << mu) {
      const std::vector<EscapeContact> contacts = {{Vec3(1.0, 0.0, 0.0), -Vec3::UnitY(), mu},
                                                   {Vec3(-1.0, 0.0, 0.0), Vec3::UnitY(), mu}};
      const variational::Escape e = rigid_escape(contacts);
      BOOST_TEST(e.margin > variational::kEscapeMargin);
      BOOST_TEST(e.motion.z() < 0.0);  // clockwise
      check_motion(contacts, e);
      // The same two contacts on a disk's axis (levers zero): nothing turns them, no escape.
      std::vector<EscapeContact> centred = contacts;
      for (EscapeContact& c : centred) c.lever.setZero();
      BOOST_TEST(rigid_escape(centred).margin <= variational::kEscapeMargin);
    }
  }
}

BOOST_AUTO_TEST_CASE(caged_particle_is_not_a_rattler) {
  // A disk touched at three points 120 deg apart: every motion closes one of them.
  BOOST_TEST(!variational::is_rattler(disk({90.0, 210.0, 330.0}, 0.0)));
  BOOST_TEST(!variational::is_rattler(disk({90.0, 210.0, 330.0}, 0.5)));
  // Frictionless between two parallel walls: sliding along them keeps both gaps, which is not
  // opening them strictly (the boundary case: the disk carries the walls' force).
  BOOST_TEST(!variational::is_rattler(disk({90.0, 270.0}, 0.0)));
  // The rod of rotation_only_escape held on both sides at both ends: neither a turn nor a
  // translation opens all four.
  std::vector<EscapeContact> rod;
  for (const double x : {1.0, -1.0})
    for (const double side : {1.0, -1.0})
      rod.push_back({Vec3(x, 0.0, 0.0), side * Vec3::UnitY(), 0.3});
  BOOST_TEST(!variational::is_rattler(rod));
}

BOOST_AUTO_TEST_CASE(bad_input_is_named) {
  BOOST_CHECK_THROW(rigid_escape({{Vec3::Zero(), Vec3(2.0, 0.0, 0.0), 0.0}}), InputError);
  BOOST_CHECK_THROW(rigid_escape({{Vec3::Zero(), Vec3::UnitX(), -1.0}}), InputError);
  BOOST_CHECK_THROW(rigid_escape({{Vec3(NAN, 0.0, 0.0), Vec3::UnitX(), 0.0}}), InputError);
}
