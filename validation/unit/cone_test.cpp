#define BOOST_TEST_MODULE cone
// GCC 12 reports a false -Wrestrict in std::string, inlined into the names Boost.Test builds
// for data-driven test cases (a known GCC 12 false positive); no code of this file is involved.
#pragma GCC diagnostic ignored "-Wrestrict"
#include "moreau/solver/cone.hpp"

#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <random>

namespace bdata = boost::unit_test::data;
using moreau::de_saxce_velocity;
using moreau::project_onto_cone;
using moreau::project_onto_dual_cone;
using moreau::Vec3;

namespace {

// Round-off of a projection: a handful of flops on entries of order |x|, so a few ulps of
// |x| (inputs are O(1..10), products O(|x|^2)).
constexpr double kRoundOff = 1e-13;
constexpr int kSamples = 2000;
const double kFrictionCoefficients[] = {0.0, 0.1, 0.5, 1.0, 4.0};
const int kRows[] = {1, 2, 3};

// A random input whose entries past `rows` are zero, with a mix of scales so that the
// interior, the polar cone and the boundary region are all visited.
Vec3 random_point(std::mt19937& generator, int rows) {
  std::uniform_real_distribution<double> entry(-1.0, 1.0);
  std::uniform_int_distribution<int> decade(-2, 1);
  Vec3 x = Vec3::Zero();
  for (int k = 0; k < rows; ++k) x[k] = entry(generator) * std::pow(10.0, decade(generator));
  return x;
}

double tangent_norm(const Vec3& x, int rows) {
  return rows > 1 ? x.segment(1, rows - 1).norm() : 0.0;
}

// x in K_mu = {|x_t| <= mu x_n} (R+ for one row), up to round-off relative to `scale`.
bool in_cone(const Vec3& x, double mu, int rows, double scale) {
  return x[0] >= -kRoundOff * scale && tangent_norm(x, rows) <= mu * x[0] + kRoundOff * scale;
}

// x in K* = {mu |x_t| <= x_n}.
bool in_dual_cone(const Vec3& x, double mu, int rows, double scale) {
  return mu * tangent_norm(x, rows) <= x[0] + kRoundOff * scale;
}

}  // namespace

// Moreau's theorem: for a closed convex cone C, p = P_C(x) if and only if p in C,
// x - p in C° and p . (x - p) = 0. These three properties (checked with K° = -K*) therefore
// pin the projection down completely; idempotence follows but is checked on its own.
BOOST_DATA_TEST_CASE(projection_onto_friction_cone_satisfies_moreau_characterisation,
                     bdata::make(kRows) * bdata::make(kFrictionCoefficients), rows, mu) {
  std::mt19937 generator(20240501u + rows);
  for (int sample = 0; sample < kSamples; ++sample) {
    const Vec3 x = random_point(generator, rows);
    const double scale = 1.0 + x.norm();
    const Vec3 p = project_onto_cone(x, mu, rows);
    const Vec3 polar_part = x - p;
    BOOST_TEST(in_cone(p, mu, rows, scale), "P_K(x) not in K for x = " << x.transpose());
    BOOST_TEST(in_dual_cone(-polar_part, mu, rows, scale),
               "x - P_K(x) not in the polar cone for x = " << x.transpose());
    BOOST_TEST(std::abs(p.dot(polar_part)) <= kRoundOff * scale * scale,
               "P_K(x) not orthogonal to x - P_K(x) for x = " << x.transpose());
    BOOST_TEST((project_onto_cone(p, mu, rows) - p).norm() <= kRoundOff * scale,
               "P_K not idempotent at x = " << x.transpose());
  }
}

// Same characterisation for K*, whose polar cone is -K; in addition the two projections
// split every x as x = P_K(x) + P_{K°}(x) with P_{K°}(x) = -P_{K*}(-x).
BOOST_DATA_TEST_CASE(projection_onto_dual_cone_satisfies_moreau_characterisation,
                     bdata::make(kRows) * bdata::make(kFrictionCoefficients), rows, mu) {
  std::mt19937 generator(20240502u + rows);
  for (int sample = 0; sample < kSamples; ++sample) {
    const Vec3 x = random_point(generator, rows);
    const double scale = 1.0 + x.norm();
    const Vec3 p = project_onto_dual_cone(x, mu, rows);
    const Vec3 polar_part = x - p;
    BOOST_TEST(in_dual_cone(p, mu, rows, scale), "P_K*(x) not in K* for x = " << x.transpose());
    BOOST_TEST(in_cone(-polar_part, mu, rows, scale),
               "x - P_K*(x) not in -K for x = " << x.transpose());
    BOOST_TEST(std::abs(p.dot(polar_part)) <= kRoundOff * scale * scale,
               "P_K*(x) not orthogonal to x - P_K*(x) for x = " << x.transpose());
    BOOST_TEST((project_onto_dual_cone(p, mu, rows) - p).norm() <= kRoundOff * scale,
               "P_K* not idempotent at x = " << x.transpose());
    const Vec3 split = project_onto_cone(x, mu, rows) - project_onto_dual_cone(-x, mu, rows);
    BOOST_TEST((split - x).norm() <= kRoundOff * scale,
               "x != P_K(x) + P_K°(x) for x = " << x.transpose());
  }
}

// The projection is the nearest point of K: no sampled cone point is closer.
BOOST_DATA_TEST_CASE(projection_is_nearest_point_of_cone,
                     bdata::make(kRows) * bdata::make(kFrictionCoefficients), rows, mu) {
  std::mt19937 generator(20240503u + rows);
  for (int sample = 0; sample < kSamples; ++sample) {
    const Vec3 x = random_point(generator, rows);
    const Vec3 other = project_onto_cone(random_point(generator, rows), mu, rows);
    const double distance = (x - project_onto_cone(x, mu, rows)).norm();
    BOOST_TEST(distance <= (x - other).norm() + kRoundOff * (1.0 + x.norm()),
               "a cone point is closer to x = " << x.transpose() << " than P_K(x)");
  }
}

BOOST_AUTO_TEST_CASE(unused_rows_are_returned_as_zero) {
  const Vec3 x(0.5, 0.2, 7.0);
  BOOST_TEST(project_onto_cone(x, 1.0, 2)[2] == 0.0);
  BOOST_TEST(project_onto_cone(x, 1.0, 1)[1] == 0.0);
  BOOST_TEST(project_onto_dual_cone(x, 1.0, 2)[2] == 0.0);
  BOOST_TEST(de_saxce_velocity(x, 1.0, 2)[2] == 0.0);
}

// Expected values by hand: outside K and K°, P_K(x) is the orthogonal projection of x on the
// boundary ray d = (1, mu x_t / |x_t|), i.e. (x . d / |d|^2) d.
BOOST_AUTO_TEST_CASE(projection_known_values) {
  const auto tol = boost::test_tools::tolerance(1e-14);
  // mu = 0.5, x = (1, -2, 0): d = (1, -0.5, 0), x . d / |d|^2 = 2 / 1.25 = 1.6.
  const Vec3 sliding = project_onto_cone(Vec3(1.0, -2.0, 0.0), 0.5, 3);
  BOOST_TEST(sliding[0] == 1.6, tol);
  BOOST_TEST(sliding[1] == -0.8, tol);
  BOOST_TEST(sliding[2] == 0.0, tol);
  // Inside the cone: unchanged.
  const Vec3 inside(2.0, 0.5, -0.5);
  BOOST_TEST((project_onto_cone(inside, 1.0, 3) - inside).norm() == 0.0);
  // In the polar cone (mu |x_t| <= -x_n): the apex.
  BOOST_TEST(project_onto_cone(Vec3(-1.0, 0.1, 0.2), 1.0, 3).norm() == 0.0);
  // 2D, mu = 1, x = (0, 1): d = (1, 1), x . d / |d|^2 = 1/2.
  const Vec3 planar = project_onto_cone(Vec3(0.0, 1.0, 0.0), 1.0, 2);
  BOOST_TEST(planar[0] == 0.5, tol);
  BOOST_TEST(planar[1] == 0.5, tol);
  // 1 row: R+.
  BOOST_TEST(project_onto_cone(Vec3(-2.0, 0.0, 0.0), 0.3, 1)[0] == 0.0);
  BOOST_TEST(project_onto_cone(Vec3(2.0, 0.0, 0.0), 0.3, 1)[0] == 2.0);
}

// mu = 0: K is the ray {x_t = 0, x_n >= 0} and K* the half-space {x_n >= 0}.
BOOST_AUTO_TEST_CASE(frictionless_cone_is_a_ray_and_its_dual_a_half_space) {
  const Vec3 ray = project_onto_cone(Vec3(3.0, 4.0, -1.0), 0.0, 3);
  BOOST_TEST(ray[0] == 3.0);
  BOOST_TEST(ray.tail<2>().norm() == 0.0);
  BOOST_TEST(project_onto_cone(Vec3(-3.0, 4.0, -1.0), 0.0, 3).norm() == 0.0);
  // A pure negative normal with no slip is on the ray's extension, not in it: the apex.
  BOOST_TEST(project_onto_cone(Vec3(-1.0, 0.0, 0.0), 0.0, 3).norm() == 0.0);
  BOOST_TEST(project_onto_cone(Vec3(-1.0, 0.0, 0.0), 0.0, 2).norm() == 0.0);
  // And the dual of that ray is the half-space u_n >= 0.
  BOOST_TEST((project_onto_dual_cone(Vec3(1.0, 0.0, 0.0), 0.0, 3) - Vec3(1.0, 0.0, 0.0)).norm() ==
             0.0);
  const Vec3 half_space = project_onto_dual_cone(Vec3(-1.0, 3.0, 2.0), 0.0, 3);
  BOOST_TEST((half_space - Vec3(0.0, 3.0, 2.0)).norm() == 0.0);
  const Vec3 kept(0.5, 3.0, 2.0);
  BOOST_TEST((project_onto_dual_cone(kept, 0.0, 3) - kept).norm() == 0.0);
}

// K* for mu = 0.5 is {|u_t| <= 2 u_n}, boundary ray d = (1, 2 t / |t|): x = (0, 1, 0) goes to
// (x . d / |d|^2) d = (2/5) (1, 2, 0).
BOOST_AUTO_TEST_CASE(dual_projection_known_values) {
  const auto tol = boost::test_tools::tolerance(1e-14);
  const Vec3 p = project_onto_dual_cone(Vec3(0.0, 1.0, 0.0), 0.5, 3);
  BOOST_TEST(p[0] == 0.4, tol);
  BOOST_TEST(p[1] == 0.8, tol);
  BOOST_TEST(p[2] == 0.0, tol);
  // -K projects to the apex of K*.
  BOOST_TEST(project_onto_dual_cone(Vec3(-1.0, 0.2, 0.0), 0.5, 3).norm() == 0.0);
  BOOST_TEST(project_onto_dual_cone(Vec3(-2.0, 0.0, 0.0), 0.5, 1)[0] == 0.0);
}

// u^ = u + mu |u_t| e_n: only the normal entry moves, by mu times the slip speed.
BOOST_AUTO_TEST_CASE(de_saxce_velocity_adds_mu_times_slip_speed_to_normal) {
  const auto tol = boost::test_tools::tolerance(1e-15);
  const Vec3 spatial = de_saxce_velocity(Vec3(-0.2, 3.0, 4.0), 0.5, 3);  // |u_t| = 5
  BOOST_TEST(spatial[0] == 2.3, tol);
  BOOST_TEST(spatial[1] == 3.0);
  BOOST_TEST(spatial[2] == 4.0);
  const Vec3 planar = de_saxce_velocity(Vec3(1.0, -2.0, 0.0), 0.5, 2);
  BOOST_TEST(planar[0] == 2.0, tol);
  BOOST_TEST(planar[1] == -2.0);
  BOOST_TEST(de_saxce_velocity(Vec3(-1.5, 0.0, 0.0), 0.5, 1)[0] == -1.5);
  BOOST_TEST(de_saxce_velocity(Vec3(-1.5, 3.0, 4.0), 0.0, 3)[0] == -1.5);
}
