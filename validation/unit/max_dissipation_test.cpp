#define BOOST_TEST_MODULE max_dissipation
#include <boost/test/unit_test.hpp>
// Maximum-dissipation impact model of Preclik et al.: the analytic single-contact solver against
// mechanics, the paper's closed forms and an independent brute-force minimizer; the
// Coulomb-like solution enumeration; the block solvers; the impulse-velocity time stepping.
#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numbers>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "moreau/collision/collision_detector.hpp"
#include "moreau/contact/contact_system.hpp"
#include "moreau/contact/delassus.hpp"
#include "moreau/core/error.hpp"
#include "moreau/impact/block_solvers.hpp"
#include "moreau/impact/coulomb_enumeration.hpp"
#include "moreau/impact/reference_minimizer.hpp"
#include "moreau/impact/single_contact.hpp"
#include "moreau/solver/merit.hpp"
#include "moreau/impact/trigonometric_polynomial.hpp"
#include "moreau/integrator/impulse_velocity_stepper.hpp"

using namespace moreau;
namespace tt = boost::test_tools;

namespace {

constexpr double kPi = std::numbers::pi;

std::string describe(const SingleContactProblem& p) {
  std::ostringstream out;
  out.precision(17);
  out << "A = [" << p.a.row(0) << "; " << p.a.row(1) << "; " << p.a.row(2) << "], b = ["
      << p.b.transpose() << "], mu = " << p.mu;
  return out.str();
}

// -E = min of the unconstrained objective, E = b^T A^-1 b / 2 >= 0: every feasible objective
// lies in [-E, 0] (x = lift(0) is feasible with objective <= 0 when b_n >= 0), so E is the
// natural scale of objective errors.
double energy_scale(const SingleContactProblem& p) { return 0.5 * p.b.dot(p.a.ldlt().solve(p.b)); }

// |x - x0|_A <= sqrt(2E) for every x with objective <= 0: the scale of impulse errors.
double impulse_scale(const SingleContactProblem& p) {
  const double lambda_min = Eigen::SelfAdjointEigenSolver<Mat3>(p.a).eigenvalues().minCoeff();
  return p.a.ldlt().solve(p.b).norm() + std::sqrt(2.0 * energy_scale(p) / lambda_min);
}

Mat3 random_rotation(std::mt19937& gen) {
  std::normal_distribution<double> normal;
  Eigen::Vector4d q(normal(gen), normal(gen), normal(gen), normal(gen));
  return Quat(q.normalized()).toRotationMatrix();
}

double log_uniform(std::mt19937& gen, double lo, double hi) {
  return std::pow(10.0,
                  std::uniform_real_distribution<double>(std::log10(lo), std::log10(hi))(gen));
}

// A = R diag(lambda) R^T with eigenvalues over four decades, b of random size and direction,
// mu over three decades: the generic family.
SingleContactProblem random_problem(std::mt19937& gen) {
  std::normal_distribution<double> normal;
  const Mat3 r = random_rotation(gen);
  const Vec3 lambda(log_uniform(gen, 1e-2, 1e2), log_uniform(gen, 1e-2, 1e2),
                    log_uniform(gen, 1e-2, 1e2));
  SingleContactProblem p;
  p.a = r * lambda.asDiagonal() * r.transpose();
  p.a = 0.5 * (p.a + p.a.transpose()).eval();
  p.b = log_uniform(gen, 1e-3, 1e3) * Vec3(normal(gen), normal(gen), normal(gen));
  if (std::bernoulli_distribution(0.8)(gen)) p.b.x() = std::abs(p.b.x());
  p.mu = log_uniform(gen, 1e-2, 1e1);
  return p;
}

enum class Family { generic, zero_normal, tiny_normal, near_parabola, tiny_mu, near_cone };

SingleContactProblem random_problem(std::mt19937& gen, Family family) {
  SingleContactProblem p = random_problem(gen);
  std::uniform_real_distribution<double> unit;
  const double sign = unit(gen) < 0.5 ? -1.0 : 1.0;
  switch (family) {
    case Family::generic:
      break;
    case Family::zero_normal:
      p.b.x() = 0.0;
      break;
    case Family::tiny_normal:
      p.b.x() = log_uniform(gen, 1e-16, 1e-5) * p.b.norm();
      break;
    case Family::near_parabola: {
      // A_nn = mu |(A_nt, A_no)| (1 + delta), b_n > 0: the conic section switches between a long
      // ellipse and a hyperbola whose branches nearly meet at infinity.
      p.b.x() = std::abs(p.b.x());
      const double s = std::hypot(p.a(0, 1), p.a(0, 2));
      p.mu = p.a(0, 0) / s * (1.0 + sign * log_uniform(gen, 1e-15, 1e-4));
      break;
    }
    case Family::tiny_mu:
      p.b.x() = std::abs(p.b.x());
      p.mu = log_uniform(gen, 1e-12, 1e-4);
      break;
    case Family::near_cone: {
      // x0 = A^-1 b within a relative distance delta of the cone boundary, either side.
      const double angle = kPi * (2.0 * unit(gen) - 1.0);
      const double stretch = 1.0 + sign * log_uniform(gen, 1e-13, 1e-3);
      const Vec3 x0(1.0, p.mu * stretch * std::cos(angle), p.mu * stretch * std::sin(angle));
      p.b = p.a * x0 * log_uniform(gen, 1e-3, 1e3);
      break;
    }
  }
  return p;
}

// The feasible set of eq. (5) for a closed contact, as a residual in impulse units.
double infeasibility(const SingleContactProblem& p, const Vec3& x) {
  const double cone = std::max(0.0, std::hypot(x.y(), x.z()) - p.mu * x.x());
  const double u_n = p.relative_velocity(x).x();
  // x_n > 0 requires u_n = 0 (Signorini) and u_n >= 0 always; the pressure condition
  // a_n^T x >= 0 then holds for b_n >= 0.
  const double scale = p.a.norm();
  const double signorini = x.x() > 0.0 ? std::abs(u_n) / scale : std::max(0.0, -u_n) / scale;
  return std::max({cone, std::max(0.0, -x.x()), signorini});
}

// Preclik et al. Appendix A: the constants of eq. (8), transcribed as printed.
TrigonometricPolynomial appendix_a(const SingleContactProblem& p) {
  const double ann = p.a(0, 0), ant = p.a(0, 1), ano = p.a(0, 2);
  const double att = p.a(1, 1), ato = p.a(1, 2), aoo = p.a(2, 2);
  const double bn = p.b.x(), bt = p.b.y(), bo = p.b.z(), mu = p.mu;
  const double c0 = 1.5 * mu * ann * (ano * bt - ant * bo);
  const double c1 = std::sqrt(
      std::pow(mu, 4) * ((ano * ano * (att * att + ato * ato) - 2 * ant * ano * ato * (att + aoo) +
                          ant * ant * (ato * ato + aoo * aoo)) *
                             bn * bn +
                         2 * (ant * bo - ano * bt) *
                             (ano * ano * ato + ant * ano * (att - aoo) - ant * ant * ato) * bn +
                         (ant * ant + ano * ano) * std::pow(ant * bo - ano * bt, 2)) +
      2 * mu * mu * ann *
          ((2 * ant * ano * ato - ano * ano * att - ant * ant * aoo) * bn * bn +
           ann * (ano * (att * bo - ato * bt) - ant * (ato * bo - aoo * bt)) * bn +
           ann * std::pow(ant * bo - ano * bt, 2)) +
      ann * ann *
          ((ant * ant + ano * ano) * bn * bn - 2 * ann * (ant * bt + ano * bo) * bn +
           ann * ann * (bt * bt + bo * bo)));
  const double c2 =
      mu * ann *
      std::sqrt(
          (0.25 * (att * att + aoo * aoo) + ato * ato - 0.5 * att * aoo) * bn * bn +
          (ano * (0.5 * (att - aoo) * bo - ato * bt) - ant * (ato * bo + 0.5 * (att - aoo) * bt)) *
              bn +
          0.25 * ((ant * ant + ano * ano) * bo * bo + (ant * ant + ano * ano) * bt * bt));
  const double phi1 =
      std::atan2(mu * mu * ((ano * ato - ant * aoo) * bn - ano * ano * bt + ant * ano * bo) -
                     ann * ann * bt + ann * ant * bn,
                 mu * mu * ((ant * ato - ano * att) * bn + ant * ano * bt - ant * ant * bo) -
                     ann * ann * bo + ann * ano * bn);
  const double phi2 =
      std::atan2((att - aoo) * bn - ant * bt + ano * bo, 2 * ato * bn - ano * bt - ant * bo);
  TrigonometricPolynomial s;
  s.constant = c0;
  s.cos1 = c1 * std::cos(phi1);
  s.sin1 = -c1 * std::sin(phi1);
  s.cos2 = c2 * std::cos(phi2);
  s.sin2 = -c2 * std::sin(phi2);
  return s;
}

// The academic six-mass problem of Preclik et al. Sec. 4.1 with the contact frame exactly as
// written (t = n x e_x, o = n x t, not normalized: only then do Table 1's numbers come out).
SingleContactProblem academic_problem(bool normalized_frame) {
  const double dx = 10.0, dy = 1.0, dz = 1.0, mx = 0.03, my = 65.0, mz = 50.0;
  const Mat3 inertia = 2.0 * Vec3(my * dy * dy + mz * dz * dz, mx * dx * dx + mz * dz * dz,
                                  mx * dx * dx + my * dy * dy)
                                 .asDiagonal();
  Mat3 ex_cross;
  ex_cross << 0, 0, 0, 0, 0, -1, 0, 1, 0;
  const Mat3 a_world =
      Mat3::Identity() / (2.0 * (mx + my + mz)) - dx * dx * ex_cross * inertia.inverse() * ex_cross;
  const Vec3 n = Vec3(0.25, 0.36, -0.9).normalized();
  Vec3 t = n.cross(Vec3::UnitX());
  Vec3 o = n.cross(t);
  if (normalized_frame) {
    t.normalize();
    o.normalize();
  }
  Mat3 q;
  q << n, t, o;
  SingleContactProblem p;
  p.a = q.transpose() * a_world * q;
  p.b = q.transpose() * Vec3(0.06, 0.7, 0.23);
  p.mu = 3.7;
  return p;
}

// The Painleve rod of Preclik et al. Sec. 4.2 at t0 through the engine: half-space (body 0, normal
// e_y) and rod (body 1, length l, mass m, lower tip on the plane at angle theta, sliding with
// -v0 e_x). Returns the impact problem (b = -u^-, no gravity impulse) and the contact frame.
struct RodImpact {
  SingleContactProblem problem;
  Mat3 frame;  // columns n, t1, t2 of the contact
};

World rod_world(double theta, double mu, double v0) {
  constexpr double kMass = 1.0, kLength = 1.0;
  World world;
  world.gravity = Vec3(0.0, -9.81, 0.0);
  world.friction = FrictionTable(mu);
  RigidBody plane;
  plane.motion = Motion::fixed;
  plane.shape.geometry = HalfSpace{Vec3::UnitY()};
  world.add_body(plane);
  RigidBody rod;
  rod.mass = kMass;
  // Slender rod: m l^2 / 12 about transverse axes; the axial moment never enters (contact
  // forces act on the axis), any positive value does.
  rod.inertia_body = Vec3(1e-3, 1.0, 1.0).asDiagonal() * (kMass * kLength * kLength / 12.0);
  rod.shape.geometry = Capsule{0.5 * kLength, 0.0};
  rod.position = 0.5 * kLength * Vec3(std::cos(theta), std::sin(theta), 0.0);
  rod.orientation = Quat(Eigen::AngleAxisd(theta, Vec3::UnitZ()));
  rod.linear_velocity = Vec3(-v0, 0.0, 0.0);
  world.add_body(rod);
  return world;
}

RodImpact rod_impact(double theta, double mu, double v0) {
  const World world = rod_world(theta, mu, v0);
  CollisionOptions collision;
  collision.margin = 1e-9;  // the tip touches exactly: gap 0 must count as a contact
  const std::vector<Contact> contacts = detect_contacts(world, collision);
  BOOST_REQUIRE_EQUAL(contacts.size(), 1u);
  const ContactSystem system(world, contacts, 3);
  VecX velocities(12);
  velocities << world.bodies[0].velocity(), world.bodies[1].velocity();
  RodImpact impact;
  impact.problem.a = system.diagonal_block(0);
  impact.problem.b = -system.contact_velocity(velocities).head<3>();
  impact.problem.mu = mu;
  impact.frame << contacts[0].normal, contacts[0].tangent1, contacts[0].tangent2;
  return impact;
}

double mu_star(double theta) {
  return (std::cos(theta) + 1.0 / (3.0 * std::cos(theta))) / std::sin(theta);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(trigonometric_equation)

BOOST_AUTO_TEST_CASE(roots_of_cos_two_alpha_are_the_four_diagonals) {
  TrigonometricPolynomial s;
  s.cos2 = 1.0;
  const std::vector<double> roots = real_roots(s, 1e-12, 1e-9);
  BOOST_TEST_REQUIRE(roots.size() == 4u);
  const double expected[4] = {-0.75 * kPi, -0.25 * kPi, 0.25 * kPi, 0.75 * kPi};
  for (int k = 0; k < 4; ++k) BOOST_TEST(roots[k] == expected[k], tt::tolerance(1e-14));
}

BOOST_AUTO_TEST_CASE(first_degree_equation_has_the_two_roots_of_cos_alpha_minus_phi) {
  // cos(alpha - 0.3) = 1/2: alpha = 0.3 +- pi/3 (the quartic's degree drops to two).
  TrigonometricPolynomial s;
  s.constant = -0.5;
  s.cos1 = std::cos(0.3);
  s.sin1 = std::sin(0.3);
  const std::vector<double> roots = real_roots(s, 1e-12, 1e-9);
  BOOST_TEST_REQUIRE(roots.size() == 2u);
  BOOST_TEST(roots[0] == 0.3 - kPi / 3.0, tt::tolerance(1e-14));
  BOOST_TEST(roots[1] == 0.3 + kPi / 3.0, tt::tolerance(1e-14));
}

BOOST_AUTO_TEST_CASE(double_root_at_pi_is_found_once) {
  // 1 + cos alpha touches zero at alpha = pi only (a tangency: the root pair leaves the unit
  // circle by ~sqrt(eps) under rounding).
  TrigonometricPolynomial s;
  s.constant = 1.0;
  s.cos1 = 1.0;
  const std::vector<double> roots = real_roots(s, 1e-10, 1e-6);
  BOOST_TEST_REQUIRE(roots.size() == 1u);
  BOOST_TEST(std::abs(std::abs(roots[0]) - kPi) < 1e-7);
}

BOOST_AUTO_TEST_CASE(stationarity_equation_is_eq8_with_the_constants_of_appendix_a) {
  std::mt19937 gen(3);
  double worst = 0.0;
  for (int k = 0; k < 500; ++k) {
    SingleContactProblem p = random_problem(gen);
    p.b.x() = std::abs(p.b.x());
    const TrigonometricPolynomial ours = stationarity_equation(p);
    const TrigonometricPolynomial paper = appendix_a(p);
    for (int j = 0; j < 16; ++j) {
      const double alpha = -kPi + 2.0 * kPi * j / 16.0;
      worst = std::max(worst, std::abs(ours(alpha) - paper(alpha)) / ours.scale());
    }
  }
  // Rounding of the square roots in c1, c2 (sums of squares of size ~scale^2).
  BOOST_TEST(worst < 1e-10);
}

BOOST_AUTO_TEST_CASE(sign_of_eq8_is_the_sign_of_the_objective_slope_in_I) {
  std::mt19937 gen(4);
  int compared = 0, disagreeing = 0;
  for (int k = 0; k < 200; ++k) {
    SingleContactProblem p = random_problem(gen);
    p.b.x() = std::abs(p.b.x()) + 0.1 * p.b.norm();
    const ReducedProblem reduced(p);
    const TrigonometricPolynomial s = stationarity_equation(p);
    auto f_obj = [&](double alpha) {
      const Eigen::Vector2d d(std::cos(alpha), std::sin(alpha));
      const double f_r = reduced.a_nn + p.mu * reduced.a_tn.dot(d);
      const Eigen::Vector2d y = p.mu * reduced.b_n / f_r * d;
      return 0.5 * y.dot(reduced.a_hat * y) - y.dot(reduced.b_hat);
    };
    for (int j = 0; j < 32; ++j) {
      const double alpha = -kPi + 2.0 * kPi * (j + 0.5) / 32.0;
      const Eigen::Vector2d d(std::cos(alpha), std::sin(alpha));
      if (reduced.a_nn + p.mu * reduced.a_tn.dot(d) < 0.1 * reduced.a_nn)
        continue;  // near/out of I
      const double h = 1e-6;
      const double slope = (f_obj(alpha + h) - f_obj(alpha - h)) / (2.0 * h);
      if (std::abs(s(alpha)) < 1e-6 * s.scale()) continue;  // too close to a root to tell
      ++compared;
      if ((slope > 0.0) != (s(alpha) > 0.0)) ++disagreeing;
    }
  }
  BOOST_TEST(compared > 1000);
  BOOST_TEST(disagreeing == 0);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(single_contact)

BOOST_AUTO_TEST_CASE(separating_contact_gets_no_impulse) {
  SingleContactProblem p;
  p.a << 2.0, 0.3, 0.1, 0.3, 1.0, 0.2, 0.1, 0.2, 1.5;
  p.b = Vec3(-1e-3, 5.0, -2.0);
  p.mu = 0.8;
  const MaxDissipationSolution s = solve_max_dissipation(p);
  BOOST_TEST(s.x.norm() == 0.0);
  BOOST_TEST(to_string(s.kind) == "separating");
}

BOOST_AUTO_TEST_CASE(frictionless_contact_stops_the_normal_approach_only) {
  SingleContactProblem p;
  p.a << 2.0, 0.3, 0.1, 0.3, 1.0, 0.2, 0.1, 0.2, 1.5;
  p.b = Vec3(0.7, 5.0, -2.0);
  const MaxDissipationSolution s = solve_max_dissipation(p);
  BOOST_TEST(s.x.x() == 0.7 / 2.0, tt::tolerance(1e-15));
  BOOST_TEST(s.x.tail<2>().norm() == 0.0);
  BOOST_TEST(p.relative_velocity(s.x).x() == 0.0, tt::tolerance(1e-15));
}

BOOST_AUTO_TEST_CASE(point_mass_friction_impulse_saturates_at_mu_times_normal) {
  // A particle of mass m: A = I / m, no coupling. Stopping the normal approach v_n takes
  // m v_n; the tangential impulse stops the slip v_t if m |v_t| <= mu m v_n, else it is
  // mu m v_n against the slip (Coulomb's law, which maximum dissipation reproduces here).
  const double m = 2.5, v_n = 0.4, mu = 0.3;
  SingleContactProblem p;
  p.a = Mat3::Identity() / m;
  p.mu = mu;
  for (const double v_t : {0.05, 0.1, 0.5, 3.0}) {
    const Eigen::Vector2d slip_direction(0.6, -0.8);
    p.b << v_n, v_t * slip_direction;
    const Vec3 x = solve_max_dissipation(p).x;
    BOOST_TEST(x.x() == m * v_n, tt::tolerance(1e-13));
    const double expected = std::min(m * v_t, mu * m * v_n);
    BOOST_TEST(x.tail<2>().norm() == expected, tt::tolerance(1e-12));
    BOOST_TEST(x.tail<2>().normalized().dot(slip_direction) == 1.0, tt::tolerance(1e-12));
  }
}

BOOST_AUTO_TEST_CASE(zero_normal_velocity_inside_ellipse_case_gives_no_impulse) {
  // b_n = 0, A_nn > mu |(A_nt, A_no)| (P2): the conic section is the origin alone.
  SingleContactProblem p;
  p.a << 2.0, 0.3, 0.1, 0.3, 1.0, 0.2, 0.1, 0.2, 1.5;
  p.b = Vec3(0.0, 1.0, 0.5);
  p.mu = 0.5;  // 2 > 0.5 * 0.316
  BOOST_TEST(solve_max_dissipation(p).x.norm() == 0.0);
}

BOOST_AUTO_TEST_CASE(zero_normal_velocity_parabola_minimum_lies_on_the_ray_minus_a_tn) {
  // b_n = 0, A_nn = mu |a_tn|: the feasible set is the ray r (-A_nt, -A_no), r >= 0 (eq. 9 with
  // delta alpha = pi); minimum at r = max(0, d^T b^ / d^T A^ d).
  SingleContactProblem p;
  p.a << 1.0, -0.6, 0.2, -0.6, 2.0, 0.3, 0.2, 0.3, 1.5;
  const Eigen::Vector2d a_tn(-0.6, 0.2);
  p.mu = 1.0 / a_tn.norm();
  p.b = Vec3(0.0, 1.0, -0.2);
  const ReducedProblem reduced(p);
  const Eigen::Vector2d d = -a_tn.normalized();
  const double r = d.dot(reduced.b_hat) / d.dot(reduced.a_hat * d);
  BOOST_TEST_REQUIRE(r > 0.0);
  const Vec3 expected = reduced.lift(r * d);
  const Vec3 x = solve_max_dissipation(p).x;
  BOOST_TEST((x - expected).norm() <= 1e-12 * expected.norm());
  BOOST_TEST(std::hypot(x.y(), x.z()) == p.mu * x.x(), tt::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(zero_normal_velocity_solution_is_continuous_as_the_wedge_closes) {
  // b_n = 0 and A_nn -> mu |a_tn| from below: the wedge of two rays closes onto the parabola's
  // ray and the minimum converges to the parabola's; from above the feasible set is the origin.
  SingleContactProblem p;
  p.a << 1.0, -0.6, 0.2, -0.6, 2.0, 0.3, 0.2, 0.3, 1.5;
  p.b = Vec3(0.0, 1.0, -0.2);
  const double mu_parabola = 1.0 / std::hypot(0.6, 0.2);
  p.mu = mu_parabola;
  const Vec3 parabola = solve_max_dissipation(p).x;
  BOOST_TEST_REQUIRE(parabola.norm() > 0.0);
  for (const double delta : {1e-4, 1e-8, 1e-12, 1e-15}) {
    p.mu = mu_parabola * (1.0 + delta);
    BOOST_TEST((solve_max_dissipation(p).x - parabola).norm() <=
               10.0 * std::sqrt(delta) * parabola.norm());
    p.mu = mu_parabola * (1.0 - delta);
    BOOST_TEST(solve_max_dissipation(p).x.norm() == 0.0);
  }
}

BOOST_AUTO_TEST_CASE(paper_rule_for_the_degenerate_hyperbola_can_pick_the_wrong_ray) {
  // Eq. (9) chooses the ray alpha0 - delta alpha when (A_no, -A_nt) . x0_to >= 0. Search a
  // seeded family for a problem where that ray is worse than the other one, and check that
  // the solver (which tries both) matches the brute-force minimum there.
  std::mt19937 gen(11);
  int found = 0;
  for (int k = 0; k < 20000 && found < 20; ++k) {
    SingleContactProblem p = random_problem(gen, Family::zero_normal);
    const ReducedProblem reduced(p);
    const double s = reduced.a_tn.norm();
    if (reduced.a_nn >= p.mu * s) continue;
    const Vec3 x0 = p.a.ldlt().solve(p.b);
    if (x0.x() >= 0.0 && x0.tail<2>().norm() <= p.mu * x0.x()) continue;
    const double alpha0 = std::atan2(reduced.a_tn.y(), reduced.a_tn.x());
    const double delta = std::acos(-reduced.a_nn / (p.mu * s));
    double value[2];
    for (int side = 0; side < 2; ++side) {
      const double alpha = side == 0 ? alpha0 - delta : alpha0 + delta;
      const Eigen::Vector2d d(std::cos(alpha), std::sin(alpha));
      const double r = std::max(0.0, d.dot(reduced.b_hat) / d.dot(reduced.a_hat * d));
      value[side] = p.objective(reduced.lift(r * d));
    }
    const int rule =
        Eigen::Vector2d(reduced.a_tn.y(), -reduced.a_tn.x()).dot(x0.tail<2>()) >= 0.0 ? 0 : 1;
    if (value[rule] <= std::min(value[0], value[1]) + 1e-6 * energy_scale(p)) continue;
    ++found;
    const double analytic = p.objective(solve_max_dissipation(p).x);
    const double brute = minimize_by_sampling(p, 4096).objective;
    BOOST_TEST(analytic == std::min(value[0], value[1]), tt::tolerance(1e-12));
    BOOST_TEST(analytic <= brute + 1e-12 * energy_scale(p), describe(p));
  }
  BOOST_TEST(found == 20);
}

BOOST_AUTO_TEST_CASE(analytic_solver_agrees_with_brute_force_on_random_spd_problems) {
  // 1000 problems in each of six families (seeded): generic, b_n = 0, b_n tiny, near the
  // ellipse/hyperbola switch, tiny mu, x0 near the cone boundary. Agreement is measured on the
  // objective relative to E (the unconstrained energy drop) and on the impulse relative to its
  // scale; the analytic solution must also be feasible.
  std::mt19937 gen(20240);
  const Family families[] = {Family::generic,       Family::zero_normal, Family::tiny_normal,
                             Family::near_parabola, Family::tiny_mu,     Family::near_cone};
  const char* names[] = {"generic",       "zero_normal", "tiny_normal",
                         "near_parabola", "tiny_mu",     "near_cone"};
  // Objective: the brute force refines each minimum by golden section to ~eps in the
  // objective; 1e-9 of E leaves room for its sampled bracket on very flat boundaries.
  constexpr double kObjectiveTolerance = 1e-9;
  // Impulse: a smooth minimum fixes the angle only to ~sqrt(eps / curvature); 1e-5 of the
  // impulse scale covers the flattest cases of these families.
  constexpr double kImpulseTolerance = 1e-5;
  // Feasibility of the analytic solution, in impulse scale: rounding of a 3x3 solve.
  constexpr double kFeasibilityTolerance = 1e-10;
  for (int f = 0; f < 6; ++f) {
    double worst_objective = 0.0, worst_impulse = 0.0, worst_feasibility = 0.0;
    double worst_excess = 0.0;  // analytic objective above the brute force's, relative to E
    std::string worst_objective_problem, worst_impulse_problem;
    for (int k = 0; k < 1000; ++k) {
      const SingleContactProblem p = random_problem(gen, families[f]);
      const Vec3 x = solve_max_dissipation(p).x;
      const SamplingResult brute = minimize_by_sampling(p, 2048);
      const double e = std::max(energy_scale(p), 1e-300);
      const double scale = std::max(impulse_scale(p), 1e-300);
      const double objective_error = std::abs(p.objective(x) - brute.objective) / e;
      worst_excess = std::max(worst_excess, (p.objective(x) - brute.objective) / e);
      const double impulse_error = (x - brute.x).norm() / scale;
      if (objective_error > worst_objective) {
        worst_objective = objective_error;
        worst_objective_problem = describe(p);
      }
      if (impulse_error > worst_impulse) {
        worst_impulse = impulse_error;
        worst_impulse_problem = describe(p);
      }
      worst_feasibility = std::max(worst_feasibility, infeasibility(p, x) / scale);
    }
    BOOST_TEST_MESSAGE(names[f] << ": worst objective error " << worst_objective
                                << " (analytic above brute force by at most " << worst_excess
                                << "), worst impulse error " << worst_impulse
                                << ", worst infeasibility " << worst_feasibility);
    BOOST_TEST(worst_objective <= kObjectiveTolerance, names[f] << ": " << worst_objective_problem);
    BOOST_TEST(worst_impulse <= kImpulseTolerance, names[f] << ": " << worst_impulse_problem);
    BOOST_TEST(worst_feasibility <= kFeasibilityTolerance, names[f]);
  }
}

BOOST_AUTO_TEST_CASE(academic_problem_reproduces_table_1_maximum_dissipation_row) {
  // Preclik et al. Table 1, printed to two significant digits: x* = (1.6, -1.1, -5.8),
  // A x* - b = (0, -0.057, 0.034), objective -0.634.
  const SingleContactProblem p = academic_problem(false);
  const Vec3 x = solve_max_dissipation(p).x;
  const Vec3 u = p.relative_velocity(x);
  BOOST_TEST(x.x() == 1.6, tt::tolerance(0.05 / 1.6));
  BOOST_TEST(x.y() == -1.1, tt::tolerance(0.05 / 1.1));
  BOOST_TEST(x.z() == -5.8, tt::tolerance(0.05 / 5.8));
  BOOST_TEST(std::abs(u.x()) < 1e-12);
  BOOST_TEST(std::abs(u.y() - -0.057) <= 0.0005);
  BOOST_TEST(std::abs(u.z() - 0.034) <= 0.0005);
  BOOST_TEST(std::abs(p.objective(x) - -0.634) <= 0.0005);
}

BOOST_AUTO_TEST_CASE(painleve_rod_impact_is_lambda0_for_mu_at_least_mu_star) {
  // Preclik et al. Sec. 4.2: Lambda0 = (m v0 / 8) (5 + 3 cos 2 theta, 3 sin 2 theta, 0) in (x, y, z)
  // for mu >= mu*(theta), and 0 for mu < mu*; m = 1, v0 = 1.3.
  const double v0 = 1.3;
  double worst = 0.0;
  for (const double theta : {0.2, 0.6, 0.5 * std::acos(-0.6), 1.2, 1.5}) {
    const Vec3 lambda0 =
        v0 / 8.0 * Vec3(5.0 + 3.0 * std::cos(2 * theta), 3.0 * std::sin(2 * theta), 0.0);
    for (const double factor : {1.0, 1.0 + 1e-9, 1.5, 4.0}) {
      const RodImpact impact = rod_impact(theta, factor * mu_star(theta), v0);
      const Vec3 world_impulse = impact.frame * solve_max_dissipation(impact.problem).x;
      worst = std::max(worst, (world_impulse - lambda0).norm() / lambda0.norm());
    }
    const RodImpact below = rod_impact(theta, (1.0 - 1e-9) * mu_star(theta), v0);
    BOOST_TEST(solve_max_dissipation(below.problem).x.norm() == 0.0);
  }
  BOOST_TEST(worst <= 1e-12);
}

BOOST_AUTO_TEST_CASE(painleve_rod_delassus_block_matches_the_paper_in_plane) {
  // Preclik et al. Sec. 4.2: A(t0) = m^-1 [1 + 3 sin^2, -3 sin cos; -3 sin cos, 1 + 3 cos^2] in
  // (x, y); out of plane a slender rod gives 1/m + (l/2)^2 / (m l^2 / 12) = 4/m (the paper
  // prints 1 + 3 cos^2(2 theta), which does not enter Lambda0).
  const double theta = 0.7;
  const RodImpact impact = rod_impact(theta, 1.0, 1.0);
  const Mat3 world = impact.frame * impact.problem.a * impact.frame.transpose();
  const double s = std::sin(theta), c = std::cos(theta);
  BOOST_TEST(world(0, 0) == 1.0 + 3.0 * s * s, tt::tolerance(1e-13));
  BOOST_TEST(world(1, 1) == 1.0 + 3.0 * c * c, tt::tolerance(1e-13));
  BOOST_TEST(world(0, 1) == -3.0 * s * c, tt::tolerance(1e-13));
  BOOST_TEST(world(2, 2) == 4.0, tt::tolerance(1e-13));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(coulomb_enumeration)

BOOST_AUTO_TEST_CASE(academic_problem_has_the_three_sliding_solutions_of_table_1) {
  const SingleContactProblem p = academic_problem(false);
  const CoulombSolutionSet set = enumerate_coulomb_solutions(p);
  BOOST_TEST_REQUIRE(set.isolated.size() == 3u);
  BOOST_TEST(set.continua.empty());
  // Table 1, in decreasing objective; each value to half a unit of its last printed digit.
  const double x[3][3] = {{0.12, -0.44, -0.065}, {0.29, -0.89, -0.62}, {1.56, -0.99, -5.7}};
  const double x_digits[3][3] = {
      {0.005, 0.005, 0.0005}, {0.005, 0.005, 0.005}, {0.005, 0.005, 0.05}};
  const double u[3][2] = {{0.40, 0.060}, {0.082, 0.057}, {0.0061, 0.035}};
  const double u_digits[3][2] = {{0.005, 0.0005}, {0.0005, 0.0005}, {0.00005, 0.0005}};
  const double objective[3] = {-0.252, -0.393, -0.631};
  for (int k = 0; k < 3; ++k) {
    const Vec3 xk = set.isolated[k].x;
    const Vec3 uk = p.relative_velocity(xk);
    BOOST_TEST(to_string(set.isolated[k].kind) == "sliding");
    for (int j = 0; j < 3; ++j) BOOST_TEST(std::abs(xk[j] - x[k][j]) <= x_digits[k][j]);
    BOOST_TEST(std::abs(uk.x()) < 1e-12);
    for (int j = 0; j < 2; ++j) BOOST_TEST(std::abs(uk[j + 1] - u[k][j]) <= u_digits[k][j]);
    BOOST_TEST(std::abs(p.objective(xk) - objective[k]) <= 0.0005);
    BOOST_TEST(coulomb_residual(p, xk) < 1e-12);
  }
  // Maximum dissipation dissipates more than every Coulomb solution (Table 1: -0.634).
  BOOST_TEST(p.objective(solve_max_dissipation(p).x) < p.objective(set.isolated[2].x));
}

BOOST_AUTO_TEST_CASE(academic_problem_in_an_orthonormal_frame_also_has_three_solutions) {
  // Not published: the same masses with t, o normalized give a different problem (an
  // elliptic friction cone in the world frame); it is as non-unique.
  const SingleContactProblem p = academic_problem(true);
  const CoulombSolutionSet set = enumerate_coulomb_solutions(p);
  BOOST_TEST(set.isolated.size() == 3u);
  for (const CoulombSolution& s : set.isolated) BOOST_TEST(coulomb_residual(p, s.x) < 1e-12);
  const double md = p.objective(solve_max_dissipation(p).x);
  for (const CoulombSolution& s : set.isolated) BOOST_TEST(md <= p.objective(s.x));
}

BOOST_AUTO_TEST_CASE(point_mass_has_one_coulomb_solution_equal_to_maximum_dissipation) {
  const double m = 2.5;
  SingleContactProblem p;
  p.a = Mat3::Identity() / m;
  p.mu = 0.3;
  for (const double v_t : {0.05, 3.0}) {
    p.b = Vec3(0.4, 0.6 * v_t, -0.8 * v_t);
    const CoulombSolutionSet set = enumerate_coulomb_solutions(p);
    BOOST_TEST_REQUIRE(set.isolated.size() == 1u);
    BOOST_TEST((set.isolated[0].x - solve_max_dissipation(p).x).norm() < 1e-12);
  }
}

BOOST_AUTO_TEST_CASE(painleve_rod_coulomb_solutions_are_zero_and_lambda0) {
  // Preclik et al. Sec. 4.2: for mu > mu* the Coulomb-like model admits 0 and Lambda0, at mu = mu*
  // every convex combination of them, for mu < mu* only 0.
  const double v0 = 1.0;
  for (const double theta : {0.4, 0.5 * std::acos(-0.6), 1.3}) {
    const Vec3 lambda0 =
        v0 / 8.0 * Vec3(5.0 + 3.0 * std::cos(2 * theta), 3.0 * std::sin(2 * theta), 0.0);
    {
      const RodImpact impact = rod_impact(theta, 2.0 * mu_star(theta), v0);
      const CoulombSolutionSet set = enumerate_coulomb_solutions(impact.problem);
      BOOST_TEST_REQUIRE(set.isolated.size() == 2u);
      BOOST_TEST(set.continua.empty());
      BOOST_TEST(to_string(set.isolated[0].kind) == "no_impulse");
      BOOST_TEST(to_string(set.isolated[1].kind) == "sticking");
      BOOST_TEST((impact.frame * set.isolated[1].x - lambda0).norm() <= 1e-12 * lambda0.norm());
    }
    {
      const RodImpact impact = rod_impact(theta, mu_star(theta), v0);
      const CoulombSolutionSet set = enumerate_coulomb_solutions(impact.problem);
      BOOST_TEST_REQUIRE(set.continua.size() == 1u);
      const CoulombContinuum& segment = set.continua[0];
      BOOST_TEST(segment.start.norm() == 0.0);
      const Vec3 end = impact.frame * (segment.start + segment.length * segment.direction);
      BOOST_TEST((end - lambda0).norm() <= 1e-9 * lambda0.norm());
      const Vec3 middle = segment.start + 0.5 * segment.length * segment.direction;
      BOOST_TEST(coulomb_residual(impact.problem, middle) < 1e-9);
    }
    {
      const RodImpact impact = rod_impact(theta, 0.5 * mu_star(theta), v0);
      const CoulombSolutionSet set = enumerate_coulomb_solutions(impact.problem);
      BOOST_TEST_REQUIRE(set.isolated.size() == 1u);
      BOOST_TEST(set.isolated[0].x.norm() == 0.0);
      BOOST_TEST(set.continua.empty());
    }
  }
}

BOOST_AUTO_TEST_CASE(enumeration_matches_a_dense_scan_and_every_solution_satisfies_coulomb) {
  // Independent count: sign changes of u_to x d over 20000 directions (valid where x_n > 0 and
  // u_to opposes d). Problems with two roots closer than 10 scan steps are skipped: the scan
  // cannot separate them.
  std::mt19937 gen(77);
  int compared = 0, mismatched = 0, residual_failures = 0, md_not_lowest = 0;
  for (int k = 0; k < 1500; ++k) {
    SingleContactProblem p = random_problem(gen);
    p.b.x() = std::abs(p.b.x()) + 0.05 * p.b.norm();
    const CoulombSolutionSet set = enumerate_coulomb_solutions(p);
    const ReducedProblem reduced(p);
    constexpr int kScan = 20000;
    int scanned = 0;
    double previous_cross = 0.0;
    std::vector<double> crossings;
    for (int j = 0; j <= kScan; ++j) {
      const double alpha = -kPi + 2.0 * kPi * j / kScan;
      const Eigen::Vector2d d(std::cos(alpha), std::sin(alpha));
      const double f_r = reduced.a_nn + p.mu * reduced.a_tn.dot(d);
      const double x_n = p.b.x() / f_r;
      const Vec3 x(x_n, p.mu * x_n * d.x(), p.mu * x_n * d.y());
      const Eigen::Vector2d slip = p.relative_velocity(x).tail<2>();
      const double cross = f_r * (slip.x() * d.y() - slip.y() * d.x());
      if (j > 0 && (cross > 0.0) != (previous_cross > 0.0)) {
        crossings.push_back(alpha);
        if (x_n > 0.0 && slip.dot(d) < 0.0) ++scanned;
      }
      previous_cross = cross;
    }
    bool close = false;
    for (std::size_t j = 1; j < crossings.size(); ++j) {
      close = close || crossings[j] - crossings[j - 1] < 10 * 2.0 * kPi / kScan;
    }
    int sliding = 0;
    for (const CoulombSolution& s : set.isolated) {
      if (s.kind == CoulombKind::sliding) ++sliding;
      if (coulomb_residual(p, s.x) > 1e-9) ++residual_failures;
      if (p.objective(solve_max_dissipation(p).x) > p.objective(s.x) + 1e-12 * energy_scale(p)) {
        ++md_not_lowest;
      }
    }
    if (close) continue;
    ++compared;
    if (sliding != scanned) ++mismatched;
  }
  BOOST_TEST(compared > 1000);
  BOOST_TEST(mismatched == 0);
  BOOST_TEST(residual_failures == 0);
  BOOST_TEST(md_not_lowest == 0);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(block_solvers)

// md_gs (no relaxation), md_jacobi (relaxation omega) and md_blend with two ranges
// (relaxation omega).
std::unique_ptr<ContactSolver> make_block_solver(int which, double omega) {
  const auto limits = [](auto options, double relaxation) {
    options.tolerance = 1e-12;
    options.max_iterations = 5000;
    options.relaxation = relaxation;
    return options;
  };
  if (which == 0)
    return std::make_unique<MaxDissipationGaussSeidel>(limits(MdGaussSeidelOptions{}, 1.0));
  if (which == 1) return std::make_unique<MaxDissipationJacobi>(limits(MdJacobiOptions{}, omega));
  return std::make_unique<MaxDissipationBlend>(limits(MdBlendOptions{}, omega), 2);
}

BOOST_AUTO_TEST_CASE(one_contact_is_solved_exactly_in_one_iteration) {
  const SingleContactProblem p = academic_problem(false);
  const SparseDelassus delassus(SparseMatrix(MatX(p.a).sparseView()), 3);
  ConeProblem problem;
  problem.delassus = &delassus;
  problem.q = -p.b;
  problem.mu = VecX::Constant(1, p.mu);
  const Vec3 expected = solve_max_dissipation(p).x;
  for (int which = 0; which < 3; ++which) {
    const std::unique_ptr<ContactSolver> solver = make_block_solver(which, 1.0);
    VecX r = VecX::Zero(3);
    const SolverStats stats = solver->solve(problem, r);
    BOOST_TEST(stats.converged, solver->name());
    BOOST_TEST(stats.iterations == 1, solver->name());
    BOOST_TEST((Vec3(r) - expected).norm() <= 1e-14 * expected.norm(), solver->name());
    // The residual decided the stop; the merit is the suite's, which the academic problem's
    // maximum-dissipation solution does not zero (Preclik et al. Table 1: it is not a Coulomb
    // solution).
    BOOST_TEST(stats.criterion == "max_dissipation_residual", solver->name());
    BOOST_TEST(stats.criterion_value <= 1e-12, solver->name());
    BOOST_TEST(stats.merit == merit(problem, r), solver->name());
    BOOST_TEST(stats.merit > 1e-6, solver->name());
  }
}

BOOST_AUTO_TEST_CASE(column_of_resting_spheres_carries_the_weight_above_each_contact) {
  // Three spheres (m = 1, R = 0.1) stacked on the ground at rest: statics gives the normal
  // impulse over one step below sphere k (from the top, k = 1..3) as k m g dt, no friction.
  const double m = 1.0, radius = 0.1, g = 9.81, dt = 1e-3;
  for (int which = 0; which < 3; ++which) {
    World world;
    world.gravity = Vec3(0.0, -g, 0.0);
    world.friction = FrictionTable(0.5);
    RigidBody ground;
    ground.motion = Motion::fixed;
    ground.shape.geometry = HalfSpace{Vec3::UnitY()};
    world.add_body(ground);
    for (int k = 0; k < 3; ++k) {
      RigidBody ball;
      ball.mass = m;
      ball.inertia_body = Mat3::Identity() * 0.4 * m * radius * radius;
      ball.shape.geometry = Sphere{radius};
      ball.position = Vec3(0.0, radius * (2 * k + 1), 0.0);
      world.add_body(ball);
    }
    ImpulseVelocityOptions options;
    options.time_step = dt;
    options.collision.margin = 1e-6;
    ImpulseVelocityStepper stepper(world, options, make_block_solver(which, 0.5));
    const std::string name = stepper.solver().name();
    const StepReport& report = stepper.step();
    BOOST_TEST_REQUIRE(report.contacts.size() == 3u);
    BOOST_TEST(report.solver_stats.converged, name);
    for (std::size_t i = 0; i < 3; ++i) {
      const Contact& c = report.contacts[i];
      // Spheres above the contact: the upper body's index counts from the ground (1..3).
      const int upper = std::max(c.body_a, c.body_b);
      const double expected = (4 - upper) * m * g * dt;
      BOOST_TEST(report.impulses(3 * i) == expected, tt::tolerance(1e-9));
      BOOST_TEST(report.impulses.segment<2>(3 * i + 1).norm() <= 1e-12 * expected, name);
    }
  }
}

BOOST_AUTO_TEST_CASE(sliding_sphere_gets_mu_times_its_weight_against_the_slip) {
  // A sphere sliding at v0 on the ground: no normal/tangential coupling at its lowest point, so
  // one step carries normal impulse m g dt and friction impulse mu m g dt opposing the slip.
  const double m = 2.0, radius = 0.1, g = 9.81, dt = 1e-3, mu = 0.3, v0 = 1.0;
  World world;
  world.gravity = Vec3(0.0, -g, 0.0);
  world.friction = FrictionTable(mu);
  RigidBody ground;
  ground.motion = Motion::fixed;
  ground.shape.geometry = HalfSpace{Vec3::UnitY()};
  world.add_body(ground);
  RigidBody ball;
  ball.mass = m;
  ball.inertia_body = Mat3::Identity() * 0.4 * m * radius * radius;
  ball.shape.geometry = Sphere{radius};
  ball.position = Vec3(0.0, radius, 0.0);
  ball.linear_velocity = Vec3(v0, 0.0, 0.0);
  world.add_body(ball);
  ImpulseVelocityOptions options;
  options.time_step = dt;
  options.collision.margin = 1e-6;
  ImpulseVelocityStepper stepper(world, options, std::make_unique<MaxDissipationGaussSeidel>());
  const StepReport& report = stepper.step();
  BOOST_TEST_REQUIRE(report.contacts.size() == 1u);
  const Contact& c = report.contacts[0];
  const Vec3 impulse_on_ball = (c.body_b == 1 ? 1.0 : -1.0) *
                               (c.normal * report.impulses(0) + c.tangent1 * report.impulses(1) +
                                c.tangent2 * report.impulses(2));
  BOOST_TEST(impulse_on_ball.y() == m * g * dt, tt::tolerance(1e-12));
  BOOST_TEST(impulse_on_ball.x() == -mu * m * g * dt, tt::tolerance(1e-12));
  BOOST_TEST(std::abs(impulse_on_ball.z()) <= 1e-15);
}

BOOST_AUTO_TEST_CASE(residual_is_zero_at_the_solution_and_positive_away_from_it) {
  const SingleContactProblem p = academic_problem(false);
  const SparseDelassus delassus(SparseMatrix(MatX(p.a).sparseView()), 3);
  ConeProblem problem;
  problem.delassus = &delassus;
  problem.q = -p.b;
  problem.mu = VecX::Constant(1, p.mu);
  VecX r = solve_max_dissipation(p).x;
  VecX u(3);
  delassus.apply(r, u);
  u += problem.q;
  BOOST_TEST(max_dissipation_residual(problem, r, u) < 1e-14);
  r(0) *= 1.01;
  delassus.apply(r, u);
  u += problem.q;
  BOOST_TEST(max_dissipation_residual(problem, r, u) > 1e-4);
}

BOOST_AUTO_TEST_CASE(over_relaxation_and_empty_partitions_are_rejected) {
  MdGaussSeidelOptions gauss_seidel;
  gauss_seidel.relaxation = 1.5;
  BOOST_CHECK_THROW(MaxDissipationGaussSeidel{gauss_seidel}, InputError);
  MdJacobiOptions jacobi;
  jacobi.relaxation = 1.5;
  BOOST_CHECK_THROW(MaxDissipationJacobi{jacobi}, InputError);
  MdBlendOptions blend;
  blend.relaxation = 1.5;
  BOOST_CHECK_THROW(MaxDissipationBlend(blend, 2), InputError);
  BOOST_CHECK_THROW(MaxDissipationBlend(MdBlendOptions{}, 0), InputError);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(impulse_velocity_stepper)

BOOST_AUTO_TEST_CASE(free_fall_is_semi_implicit_euler) {
  // v_k = v0 + k g dt, x_k = x0 + sum_j dt v_j = x0 + k dt v0 + g dt^2 k (k + 1) / 2.
  World world;
  world.gravity = Vec3(0.0, -9.81, 0.0);
  RigidBody ball;
  ball.shape.geometry = Sphere{0.1};
  ball.position = Vec3(0.0, 10.0, 0.0);
  ball.linear_velocity = Vec3(0.5, 1.0, 0.0);
  world.add_body(ball);
  ImpulseVelocityOptions options;
  options.time_step = 0.01;
  ImpulseVelocityStepper stepper(world, options, std::make_unique<MaxDissipationGaussSeidel>());
  for (int k = 0; k < 50; ++k) stepper.step();
  const double t = 0.5, dt = 0.01;
  BOOST_TEST(world.bodies[0].position.y() == 10.0 + t - 9.81 * dt * dt * 50 * 51 / 2,
             tt::tolerance(1e-13));
  BOOST_TEST(world.bodies[0].position.x() == 0.5 * t, tt::tolerance(1e-13));
  BOOST_TEST(world.bodies[0].linear_velocity.y() == 1.0 - 9.81 * t, tt::tolerance(1e-13));
}

BOOST_AUTO_TEST_CASE(normalized_quaternion_update_turns_by_two_atan_of_half_omega_dt) {
  // phi' = (phi + dt/2 (0, omega) phi) / |.| for a spin about a principal axis is a rotation by
  // 2 atan(omega dt / 2) per step (and the gyroscopic term vanishes).
  World world;
  world.gravity = Vec3::Zero();
  RigidBody body;
  body.inertia_body = Vec3(1.0, 2.0, 3.0).asDiagonal();
  body.angular_velocity = Vec3(0.0, 0.0, 4.0);
  world.add_body(body);
  ImpulseVelocityOptions options;
  options.time_step = 0.01;
  ImpulseVelocityStepper stepper(world, options, std::make_unique<MaxDissipationGaussSeidel>());
  for (int k = 0; k < 100; ++k) stepper.step();
  const double angle = 100 * 2.0 * std::atan(4.0 * 0.01 / 2.0);
  const Quat expected(Eigen::AngleAxisd(angle, Vec3::UnitZ()));
  BOOST_TEST(world.bodies[0].orientation.angularDistance(expected) < 1e-12);
  BOOST_TEST(world.bodies[0].orientation.norm() == 1.0, tt::tolerance(1e-15));
}

BOOST_AUTO_TEST_CASE(error_reduction_sets_the_separation_speed_of_a_penetration) {
  // A resting sphere sunk by delta: xi/dt + u_n >= 0 with xi/dt scaled by epsilon makes the
  // contact active with u_n = epsilon delta / dt after the step.
  const double delta = 1e-4, dt = 1e-3;
  for (const double epsilon : {0.0, 0.3, 1.0}) {
    World world;
    RigidBody ground;
    ground.motion = Motion::fixed;
    ground.shape.geometry = HalfSpace{Vec3::UnitY()};
    world.add_body(ground);
    RigidBody ball;
    ball.inertia_body = Mat3::Identity() * 0.004;
    ball.shape.geometry = Sphere{0.1};
    ball.position = Vec3(0.0, 0.1 - delta, 0.0);
    world.add_body(ball);
    ImpulseVelocityOptions options;
    options.time_step = dt;
    options.error_reduction = epsilon;
    ImpulseVelocityStepper stepper(world, options, std::make_unique<MaxDissipationGaussSeidel>());
    stepper.step();
    BOOST_TEST(std::abs(world.bodies[1].linear_velocity.y() - epsilon * delta / dt) <= 1e-12);
  }
}

BOOST_AUTO_TEST_CASE(invalid_options_are_rejected) {
  World world;
  ImpulseVelocityOptions options;
  options.error_reduction = 1.5;
  BOOST_CHECK_THROW(
      ImpulseVelocityStepper(world, options, std::make_unique<MaxDissipationGaussSeidel>()),
      InputError);
  BOOST_CHECK_THROW(ImpulseVelocityStepper(world, ImpulseVelocityOptions{}, nullptr), InputError);
}

BOOST_AUTO_TEST_SUITE_END()
