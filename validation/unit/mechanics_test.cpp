#define BOOST_TEST_MODULE mechanics
#include <boost/test/unit_test.hpp>
// Analytic-mechanics tests of the time stepper (Olsen & Kamrin Sec. 4: semi-implicit Euler with
// impulses r = dt f). Every expected value comes from the mechanics of the scene (weights,
// Coulomb friction, rolling, Euler's equations, Newton's restitution law), never from an
// earlier run of the code. Each tolerance is named and justified where it is defined.
#include <omp.h>

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <cmath>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "moreau/collision/collision_detector.hpp"
#include "moreau/contact/contact_system.hpp"
#include "moreau/integrator/semi_implicit_euler.hpp"
#include "test_support.hpp"
#include "moreau/model/shape.hpp"
#include "moreau/model/world.hpp"

namespace bdata = boost::unit_test::data;
using namespace moreau;

namespace {

constexpr double kGravity = 9.81;   // m/s^2
constexpr double kTimeStep = 1e-3;  // s

// Stopping tolerance of the contact solvers on the dimensionless merit (merit.hpp: the
// natural-map residual in velocity units over |q|). Every scene below has |q| ~ g dt or
// |q| ~ v, so an impulse or velocity is off by ~1e-10 of its scale after one solve.
constexpr double kSolverTolerance = 1e-10;
// Relative tolerance on forces and accelerations that the discrete scheme reproduces
// exactly (constant loads: weight, sliding friction, rolling). Only the solver residual
// enters, kSolverTolerance per step and accumulated over at most ~1e3 steps; the extra
// factor covers the conversion of a velocity residual into an impulse through W_ii^-1
// (condition number <= 10 for the scenes here).
constexpr double kExactInSchemeTolerance = 1e-6;
// Margin of the collision detection for resting contacts: the narrow phase keeps pairs whose
// gap is strictly below it, so a body resting at gap 0 keeps its contact from step to step
// (with margin 0 a touching body would lose the contact every other step and the force would
// alternate). Small against every body size here.
constexpr double kRestingMargin = 1e-3;  // m

const std::vector<std::string> kSolvers{"pgs", "pgj", "apgd"};

// The analytic scenes have 1 to 13 bodies, where OpenMP regions only add fork/join cost (and,
// on a loaded machine, stalls of milliseconds per region, since ContactSystem opens its regions
// whatever the size). They run on one thread; RunsAreBitwiseReproducible sets 1 and 2 threads
// itself and checks that the thread count does not change the results.
struct OneThreadForSmallScenes {
  OneThreadForSmallScenes() { omp_set_num_threads(1); }
};
BOOST_TEST_GLOBAL_FIXTURE(OneThreadForSmallScenes);

// Options that let every solver converge to kSolverTolerance. PGJ needs a relaxation below
// 2 / lambda_max(G W) (projected_gauss_jacobi.hpp) and many more iterations than PGS/APGD.
test::EulerSetup step_options(const std::string& solver, bool frictional, double margin) {
  test::EulerSetup options;
  options.time_step = kTimeStep;
  options.frictional = frictional;
  options.friction_model = FrictionModel::coulomb;
  options.collision.margin = margin;
  options.solver = solver;
  options.solver_options.tolerance = kSolverTolerance;
  options.solver_options.record_history = false;
  options.solver_options.max_iterations = solver == "pgj" ? 200000 : 20000;
  if (solver == "pgj") options.relaxation = 0.4;
  return options;
}

World make_world(Dimension dimension) {
  World world;
  world.dimension = dimension;
  world.gravity = Vec3(0.0, -kGravity, 0.0);
  return world;
}

// Fixed half-space {x : normal . x <= normal . point} (floor or incline).
int add_half_space(World& world, const Vec3& normal, const Vec3& point = Vec3::Zero()) {
  RigidBody body;
  body.name = "ground";
  body.motion = Motion::fixed;
  body.position = point;
  body.shape.geometry = HalfSpace{normal.normalized()};
  return world.add_body(body);
}

// Homogeneous body of density 1000 kg/m^3 (a disk or rectangle of unit thickness in 2D).
RigidBody solid(const ShapeGeometry& geometry, Dimension dimension, const Vec3& position) {
  const MassProperties mass = mass_properties(geometry, 1000.0, dimension);
  RigidBody body;
  body.shape.geometry = geometry;
  body.mass = mass.mass;
  body.inertia_body = mass.inertia;
  body.position = position;
  return body;
}

// Runs one step and counts solves that did not reach the tolerance.
const StepReport& step_checked(SemiImplicitEulerStepper& stepper, int& unconverged) {
  const StepReport& report = stepper.step();
  if (!report.contacts.empty() && !report.solver_stats.converged) ++unconverged;
  return report;
}

// Index of the contact between bodies a and b (either order), -1 if absent.
int find_contact(const StepReport& report, int a, int b) {
  for (int i = 0; i < static_cast<int>(report.contacts.size()); ++i) {
    const Contact& c = report.contacts[i];
    if ((c.body_a == a && c.body_b == b) || (c.body_a == b && c.body_b == a)) return i;
  }
  return -1;
}

}  // namespace

// (a) A sphere (3D) or disk (2D) resting on a floor: the contact force r / dt equals the
// weight m g, the friction force is zero and the body does not move.
BOOST_DATA_TEST_CASE(RestingSphereCarriesItsWeight, bdata::make(kSolvers) * bdata::make({3, 2}),
                     solver, dimensions) {
  const auto dimension = static_cast<Dimension>(dimensions);
  const double radius = 0.5;
  World world = make_world(dimension);
  add_half_space(world, Vec3::UnitY());
  const int ball = world.add_body(solid(Sphere{radius}, dimension, Vec3(0.0, radius, 0.0)));
  const double weight = world.bodies[ball].mass * kGravity;
  auto stepper = test::euler_stepper(world, step_options(solver, true, kRestingMargin));
  int unconverged = 0;
  const int rows = static_cast<int>(dimension);
  for (int step = 0; step < 200; ++step) {
    const StepReport& report = step_checked(stepper, unconverged);
    BOOST_REQUIRE_EQUAL(report.contacts.size(), 1u);
    const VecX force = report.forces(kTimeStep);
    BOOST_TEST(force(0) == weight, boost::test_tools::tolerance(kExactInSchemeTolerance));
    BOOST_TEST(force.tail(rows - 1).norm() <= kExactInSchemeTolerance * weight);
  }
  BOOST_TEST(unconverged == 0);
  // At rest: the velocity error per step is the solver residual (<= kSolverTolerance g dt),
  // so after 200 steps |v| < 200 * 1e-10 * 1e-2 m/s and |dy| < 200 dt |v|; 1e-9 bounds both.
  const RigidBody& b = world.bodies[ball];
  BOOST_TEST(std::abs(b.position.y() - radius) <= 1e-9);
  BOOST_TEST(b.linear_velocity.norm() <= 1e-9);
  BOOST_TEST(b.angular_velocity.norm() <= 1e-9);
}

// (b) A column of N equal spheres on a floor, frictionless LCP: the contact below sphere k
// (k = 0 at the bottom) carries the weight of the N - k spheres at and above it.
BOOST_DATA_TEST_CASE(ColumnOfSpheresCarriesCumulativeWeight, bdata::make(kSolvers), solver) {
  constexpr int kSpheres = 5;
  const double radius = 0.25;
  World world = make_world(Dimension::three);
  const int floor = add_half_space(world, Vec3::UnitY());
  std::vector<int> ball;
  for (int k = 0; k < kSpheres; ++k)
    ball.push_back(world.add_body(
        solid(Sphere{radius}, Dimension::three, Vec3(0.0, radius + 2.0 * radius * k, 0.0))));
  const double weight = world.bodies[ball[0]].mass * kGravity;
  auto stepper = test::euler_stepper(world, step_options(solver, false, kRestingMargin));
  int unconverged = 0;
  for (int step = 0; step < 50; ++step) {
    const StepReport& report = step_checked(stepper, unconverged);
    BOOST_REQUIRE_EQUAL(report.contacts.size(), static_cast<std::size_t>(kSpheres));
    const VecX force = report.forces(kTimeStep);
    for (int k = 0; k < kSpheres; ++k) {
      const int below = find_contact(report, k == 0 ? floor : ball[k - 1], ball[k]);
      BOOST_REQUIRE(below >= 0);
      BOOST_TEST_CONTEXT("step " << step << ", contact below sphere " << k) {
        BOOST_TEST(force(below) == (kSpheres - k) * weight,
                   boost::test_tools::tolerance(kExactInSchemeTolerance));
      }
    }
  }
  BOOST_TEST(unconverged == 0);
  for (int k = 0; k < kSpheres; ++k) {
    // Same bound as in RestingSphereCarriesItsWeight.
    BOOST_TEST(std::abs(world.bodies[ball[k]].position.y() - (radius + 2.0 * radius * k)) <= 1e-9);
    BOOST_TEST(world.bodies[ball[k]].linear_velocity.norm() <= 1e-9);
  }
}

// (c) A block sliding on a floor with Coulomb friction mu and initial speed v0 decelerates at
// mu g, stops after v0 / (mu g) at the distance v0^2 / (2 mu g), and then stays at rest.
// 3D: a box with 4 corner contacts; 2D: a rectangle with 2 corner contacts.
BOOST_DATA_TEST_CASE(SlidingBlockStopsAtCoulombDistance,
                     bdata::make(kSolvers) * bdata::make({3, 2}), solver, dimensions) {
  const auto dimension = static_cast<Dimension>(dimensions);
  const double mu = 0.4;
  const double v0 = 2.0;                    // m/s
  const Vec3 half_extents(0.5, 0.25, 0.4);  // m; mu h < half length: the block cannot tip
  World world = make_world(dimension);
  world.friction = FrictionTable(mu);
  add_half_space(world, Vec3::UnitY());
  RigidBody block = solid(Box{half_extents}, dimension, Vec3(0.0, half_extents.y(), 0.0));
  block.linear_velocity = Vec3(v0, 0.0, 0.0);
  const int id = world.add_body(block);
  auto stepper = test::euler_stepper(world, step_options(solver, true, kRestingMargin));

  const double deceleration = mu * kGravity;
  const double stop_time = v0 / deceleration;
  const double stop_distance = v0 * v0 / (2.0 * deceleration);
  const std::vector<double> probes{0.1, 0.2, 0.3, 0.4, 0.5};  // s, all before stop_time
  std::size_t next_probe = 0;
  // A block at rest has |v| = 0 up to the solver residual; 1e-8 m/s separates it from the last
  // sliding step (|v| >= 0 and < mu g dt ~ 4e-3 m/s only at the very last step).
  const double rest_speed = 1e-8;
  double measured_stop_time = -1.0;
  double measured_stop_x = 0.0;
  int unconverged = 0;
  const int steps = static_cast<int>(1.4 * stop_time / kTimeStep);
  for (int step = 1; step <= steps; ++step) {
    const StepReport& report = step_checked(stepper, unconverged);
    BOOST_REQUIRE_EQUAL(report.contacts.size(), dimension == Dimension::three ? 4u : 2u);
    const RigidBody& b = world.bodies[id];
    const double t = step * kTimeStep;
    if (next_probe < probes.size() && std::abs(t - probes[next_probe]) < 0.5 * kTimeStep) {
      // The discrete velocity is v0 - mu g k dt exactly while sliding: only the solver
      // residual enters.
      BOOST_TEST_CONTEXT("t = " << t) {
        BOOST_TEST(std::abs(b.linear_velocity.x() - (v0 - deceleration * t)) <=
                   kExactInSchemeTolerance * v0);
      }
      ++next_probe;
    }
    if (measured_stop_time < 0.0 && std::abs(b.linear_velocity.x()) <= rest_speed) {
      measured_stop_time = t;
      measured_stop_x = b.position.x();
    }
    // No tipping, no lift-off, no drift sideways: zero up to the solver residual.
    BOOST_TEST(b.angular_velocity.norm() <= 1e-6);
    BOOST_TEST(std::abs(b.position.y() - half_extents.y()) <= 1e-6);
    BOOST_TEST(std::abs(b.linear_velocity.z()) <= 1e-9);
  }
  BOOST_TEST(unconverged == 0);
  BOOST_TEST(next_probe == probes.size());
  BOOST_REQUIRE(measured_stop_time > 0.0);
  // First-order scheme: the speed after step k is v0 - mu g k dt, so the block stops at the
  // first step with k dt >= v0 / (mu g): |t_stop - v0 / (mu g)| <= dt. Its position is the
  // sum dt sum_k v_k = v0^2 / (2 mu g) - v0 dt / 2 + O(mu g dt^2), within v0 dt + mu g dt^2.
  BOOST_TEST(std::abs(measured_stop_time - stop_time) <= kTimeStep + 1e-12);
  BOOST_TEST(std::abs(measured_stop_x - stop_distance) <=
             v0 * kTimeStep + deceleration * kTimeStep * kTimeStep);
  // At rest afterwards (static friction holds it, nothing pushes it).
  BOOST_TEST(std::abs(world.bodies[id].position.x() - measured_stop_x) <= 1e-9);
  BOOST_TEST(world.bodies[id].linear_velocity.norm() <= rest_speed);
}

// (d) A sphere released at rest on an incline of angle alpha. Rolling without slipping needs
// a friction force 2/7 m g sin(alpha) <= mu m g cos(alpha), i.e. mu >= 2/7 tan(alpha); then
// a = 5/7 g sin(alpha) and omega r = v. Below that threshold it slides with
// a = g (sin(alpha) - mu cos(alpha)) and the friction torque mu m g cos(alpha) r spins it up
// at 5 mu g cos(alpha) / (2 r) (J = 2/5 m r^2). mu is given as a multiple of the threshold:
// 0.5 and 0.9 slide, 1.1 and 2 roll (both sides of the boundary, 10% away).
BOOST_DATA_TEST_CASE(SphereOnInclineRollsOrSlides,
                     bdata::make(kSolvers) * bdata::make({0.5, 0.9, 1.1, 2.0}), solver,
                     mu_over_threshold) {
  const double alpha = std::numbers::pi / 6.0;
  const double radius = 0.2;
  const double threshold = 2.0 / 7.0 * std::tan(alpha);
  const double mu = mu_over_threshold * threshold;
  const Vec3 normal(std::sin(alpha), std::cos(alpha), 0.0);
  const Vec3 downhill(std::cos(alpha), -std::sin(alpha), 0.0);
  World world = make_world(Dimension::three);
  world.friction = FrictionTable(mu);
  add_half_space(world, normal);
  const int id = world.add_body(solid(Sphere{radius}, Dimension::three, radius * normal));
  const double mass = world.bodies[id].mass;
  auto stepper = test::euler_stepper(world, step_options(solver, true, kRestingMargin));

  const bool rolls = mu >= threshold;
  const double acceleration = rolls ? 5.0 / 7.0 * kGravity * std::sin(alpha)
                                    : kGravity * (std::sin(alpha) - mu * std::cos(alpha));
  // Spin about -z (normal x downhill = -e_z) for a ball going downhill.
  const double angular_acceleration =
      rolls ? acceleration / radius : 2.5 * mu * kGravity * std::cos(alpha) / radius;
  const double friction = rolls ? 2.0 / 7.0 * mass * kGravity * std::sin(alpha)
                                : mu * mass * kGravity * std::cos(alpha);
  int unconverged = 0;
  const int steps = 500;
  for (int step = 1; step <= steps; ++step) {
    const StepReport& report = step_checked(stepper, unconverged);
    BOOST_REQUIRE_EQUAL(report.contacts.size(), 1u);
    if (step % 100 != 0) continue;
    const double t = step * kTimeStep;
    const RigidBody& b = world.bodies[id];
    const VecX force = report.forces(kTimeStep);
    BOOST_TEST_CONTEXT("mu = " << mu << " (" << (rolls ? "rolling" : "sliding") << "), t = " << t) {
      // Constant accelerations are exact in the discrete scheme (kExactInSchemeTolerance).
      BOOST_TEST(b.linear_velocity.dot(downhill) == acceleration * t,
                 boost::test_tools::tolerance(kExactInSchemeTolerance));
      BOOST_TEST(-b.angular_velocity.z() == angular_acceleration * t,
                 boost::test_tools::tolerance(kExactInSchemeTolerance));
      BOOST_TEST(b.angular_velocity.head<2>().norm() <= 1e-9);
      BOOST_TEST(std::abs(b.linear_velocity.dot(normal)) <= 1e-9);
      BOOST_TEST(force(0) == mass * kGravity * std::cos(alpha),
                 boost::test_tools::tolerance(kExactInSchemeTolerance));
      BOOST_TEST(force.tail<2>().norm() == friction,
                 boost::test_tools::tolerance(kExactInSchemeTolerance));
      const double slip = b.linear_velocity.dot(downhill) + b.angular_velocity.z() * radius;
      if (rolls) {
        BOOST_TEST(std::abs(slip) <= kExactInSchemeTolerance * acceleration * t);
      } else {
        // Slip speed grows at g sin(alpha) - 7/2 mu g cos(alpha) > 0.
        BOOST_TEST(slip > 0.0);
      }
    }
  }
  BOOST_TEST(unconverged == 0);
}

// (e) Torque-free rotation of an asymmetric body (principal inertias 1, 2, 3 kg m^2, omega
// off the principal axes). The stepper keeps the world-frame angular momentum J omega across
// the rotation update, so it is conserved to rounding. The kinetic energy is not: in the body
// frame the update is l+ = exp(-dt omega x) l, whose first- and second-order energy changes
// omega . (omega x l) and omega . (omega x (omega x l)) vanish, leaving per step
//   dE = dt^2 / 2 (omega x l)^T J^-1 (omega x l) + O(dt^3) <= dt^2 |l|^4 / (2 J_min^3),
// so after n steps |E - E0| <= n dt^2 |l|^4 / (2 J_min^3) (a factor 2 is allowed below for the
// O(dt^3) terms). The bound is ~3% of E here; the drift is O(dt) per unit time.
BOOST_AUTO_TEST_CASE(TorqueFreeAsymmetricBodyConservesAngularMomentum) {
  World world = make_world(Dimension::three);
  world.gravity.setZero();
  RigidBody body;
  body.shape.geometry = Sphere{0.1};
  body.mass = 1.0;
  body.inertia_body = Vec3(1.0, 2.0, 3.0).asDiagonal();
  body.orientation = Quat(Eigen::AngleAxisd(0.7, Vec3(1.0, 2.0, -1.0).normalized()));
  body.angular_velocity = Vec3(1.0, 0.3, -0.8);
  const int id = world.add_body(body);
  auto stepper = test::euler_stepper(world, step_options("pgs", true, 0.0));

  const Vec3 momentum0 = world.bodies[id].inertia_world() * world.bodies[id].angular_velocity;
  const double energy0 = 0.5 * world.bodies[id].angular_velocity.dot(momentum0);
  const double j_min = 1.0;
  const int steps = 4000;
  const double energy_bound = 2.0 * steps * kTimeStep * kTimeStep * std::pow(momentum0.norm(), 4) /
                              (2.0 * std::pow(j_min, 3));
  // Rounding: each step solves J omega = L (condition number 3) and rotates J: a few eps per
  // step, accumulating as a random walk to ~sqrt(n) 1e-15 ~ 1e-13; 1e-12 keeps a margin.
  const double momentum_tolerance = 1e-12;
  double worst_momentum = 0.0;
  double worst_energy = 0.0;
  for (int step = 0; step < steps; ++step) {
    stepper.step();
    const RigidBody& b = world.bodies[id];
    const Vec3 momentum = b.inertia_world() * b.angular_velocity;
    worst_momentum = std::max(worst_momentum, (momentum - momentum0).norm() / momentum0.norm());
    worst_energy =
        std::max(worst_energy, std::abs(0.5 * b.angular_velocity.dot(momentum) - energy0));
  }
  BOOST_TEST(worst_momentum <= momentum_tolerance);
  BOOST_TEST(worst_energy <= energy_bound);
  BOOST_TEST(energy_bound <= 0.1 * energy0);  // the bound itself is meaningful
  // The body really tumbles: omega has moved well away from its initial direction.
  BOOST_TEST((world.bodies[id].angular_velocity - body.angular_velocity).norm() >= 0.1);
  BOOST_TEST(world.bodies[id].linear_velocity.norm() == 0.0);
}

// (e, continued) Spin about a principal axis of the minor or major moment: the world inertia
// is invariant under rotations about that axis, so J^-1 L, the angular velocity, is constant.
// Tolerance: rounding of ~10 eps per step over 2000 steps, 2000 * 10 * 2.2e-16 ~ 5e-12.
BOOST_DATA_TEST_CASE(SpinAboutPrincipalAxisIsSteady, bdata::make({0, 2}), axis) {
  World world = make_world(Dimension::three);
  world.gravity.setZero();
  RigidBody body;
  body.shape.geometry = Sphere{0.1};
  body.inertia_body = Vec3(1.0, 2.0, 3.0).asDiagonal();
  body.orientation = Quat(Eigen::AngleAxisd(1.1, Vec3(-1.0, 0.5, 2.0).normalized()));
  const Vec3 omega0 = 3.0 * (body.orientation * Vec3::Unit(axis));
  body.angular_velocity = omega0;
  const int id = world.add_body(body);
  auto stepper = test::euler_stepper(world, step_options("pgs", true, 0.0));
  const int steps = 2000;
  for (int step = 0; step < steps; ++step) stepper.step();
  const double tolerance = steps * 10 * 2.2e-16;
  BOOST_TEST((world.bodies[id].angular_velocity - omega0).norm() <= tolerance * omega0.norm());
  // The body turned by |omega| t = 6 rad about the axis, which itself stays put.
  const Vec3 axis_now = world.bodies[id].orientation * Vec3::Unit(axis);
  BOOST_TEST((axis_now - omega0.normalized()).norm() <= 1e-9);
}

namespace {

// Random seeded pile for the Delassus tests: spheres (disks) on a jittered lattice with
// radii such that neighbours overlap or nearly touch, with random orientations and random
// anisotropic body inertias (so that the world-frame J^-1 is a full matrix), a floor, one
// fixed, one prescribed and one rotation-locked sphere.
World random_pile(Dimension dimension, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::uniform_real_distribution<double> radius_draw(0.45, 0.55);
  World world = make_world(dimension);
  add_half_space(world, Vec3(0.1, 1.0, dimension == Dimension::two ? 0.0 : -0.05));
  const bool planar = dimension == Dimension::two;
  const int nz = planar ? 1 : 3;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < nz; ++k) {
        RigidBody b;
        const double r = radius_draw(rng);
        b.shape.geometry = Sphere{r};
        b.position = Vec3(1.0 * i + 0.03 * unit(rng), 0.5 + 1.0 * j + 0.03 * unit(rng),
                          planar ? 0.0 : 1.0 * k + 0.03 * unit(rng));
        b.mass = 1.0 + 0.5 * unit(rng);
        if (planar) {
          b.orientation = Quat(Eigen::AngleAxisd(3.0 * unit(rng), Vec3::UnitZ()));
          b.inertia_body = (0.6 + 0.3 * unit(rng)) * Mat3::Identity();
        } else {
          b.orientation = Quat(Eigen::AngleAxisd(
              3.0 * unit(rng), Vec3(unit(rng), unit(rng), unit(rng)).normalized()));
          const Mat3 rotation =
              Quat(Eigen::AngleAxisd(unit(rng), Vec3(unit(rng), unit(rng), 1.0).normalized()))
                  .toRotationMatrix();
          const Vec3 moments(0.5 + 0.2 * unit(rng), 0.8 + 0.2 * unit(rng), 1.1 + 0.2 * unit(rng));
          b.inertia_body = rotation * moments.asDiagonal() * rotation.transpose();
        }
        world.add_body(b);
      }
  world.bodies[3].motion = Motion::fixed;
  world.bodies[7].motion = Motion::prescribed;
  world.bodies[7].linear_velocity = Vec3(0.1, 0.0, 0.0);
  world.bodies[10].rotation_locked = true;
  return world;
}

// W = H^T M^-1 H built here from the contact frames and the bodies' masses, independently of
// ContactSystem: the row of frame direction e on body k is sign (e^T, ((p - x_k) x e)^T)
// (velocity of the material point p along e, u = velocity of b relative to a), and M^-1 is
// 1/m on the free translations and R J_body^-1 R^T on the free rotations (only x, y and the
// rotation about z in 2D, none for locked rotation, nothing for fixed or prescribed bodies).
MatX reference_delassus(const World& world, const std::vector<Contact>& contacts, int rows) {
  const int n = static_cast<int>(world.bodies.size());
  MatX jacobian = MatX::Zero(rows * contacts.size(), 6 * n);
  for (std::size_t i = 0; i < contacts.size(); ++i) {
    const Contact& c = contacts[i];
    const Vec3 frame[3] = {c.normal, c.tangent1, c.tangent2};
    for (const auto& [body, sign] : {std::pair{c.body_a, -1.0}, std::pair{c.body_b, 1.0}}) {
      const Vec3 lever = c.point - world.bodies[body].position;
      for (int k = 0; k < rows; ++k) {
        jacobian.block<1, 3>(rows * i + k, 6 * body) += sign * frame[k].transpose();
        jacobian.block<1, 3>(rows * i + k, 6 * body + 3) +=
            sign * lever.cross(frame[k]).transpose();
      }
    }
  }
  MatX inverse_mass = MatX::Zero(6 * n, 6 * n);
  for (int b = 0; b < n; ++b) {
    const RigidBody& body = world.bodies[b];
    if (body.motion != Motion::dynamic) continue;
    const bool planar = world.dimension == Dimension::two;
    for (int d = 0; d < (planar ? 2 : 3); ++d) inverse_mass(6 * b + d, 6 * b + d) = 1.0 / body.mass;
    if (body.rotation_locked) continue;
    if (planar) {
      inverse_mass(6 * b + 5, 6 * b + 5) = 1.0 / body.inertia_body(2, 2);
    } else {
      const Mat3 rotation = body.orientation.toRotationMatrix();
      inverse_mass.block<3, 3>(6 * b + 3, 6 * b + 3) =
          rotation * body.inertia_body.inverse() * rotation.transpose();
    }
  }
  return jacobian * inverse_mass * jacobian.transpose();
}

}  // namespace

// (f) The matrix-free Delassus operator, its diagonal blocks and its Gauss-Seidel sweep
// interface agree with the assembled W, which agrees with H^T M^-1 H built from the contact
// geometry; W is symmetric positive semi-definite. 3D frictional (3 rows), 2D frictional
// (2 rows) and frictionless (1 row). Tolerance 1e-12 relative: all paths sum the same few
// O(1) products in different orders, so they differ by a few eps times the number of terms.
BOOST_DATA_TEST_CASE(DelassusOperatorMatchesAssembledMatrix,
                     bdata::make({3, 2}) * bdata::make({1, 0}), dimensions, frictionless) {
  const auto dimension = static_cast<Dimension>(dimensions);
  constexpr unsigned kSeed = 20240611;
  constexpr double kRelative = 1e-12;
  const World world = random_pile(dimension, kSeed);
  CollisionOptions collision;
  collision.margin = 0.05;
  const std::vector<Contact> contacts = detect_contacts(world, collision);
  // Enough contacts to couple many bodies, including the floor and the special bodies.
  BOOST_REQUIRE(contacts.size() >= (dimension == Dimension::two ? 15u : 60u));
  const int rows = frictionless ? 1 : static_cast<int>(dimension);
  const ContactSystem system(world, contacts, rows);
  BOOST_REQUIRE_EQUAL(system.contact_count(), static_cast<int>(contacts.size()));
  BOOST_REQUIRE_EQUAL(system.rows_per_contact(), rows);
  const int n = system.size();

  const MatX w = MatX(system.assemble());
  const MatX reference = reference_delassus(world, contacts, rows);
  const double scale = w.cwiseAbs().maxCoeff();
  BOOST_REQUIRE(scale > 0.0);
  BOOST_TEST((w - reference).cwiseAbs().maxCoeff() <= kRelative * scale);
  BOOST_TEST((w - w.transpose()).cwiseAbs().maxCoeff() <= kRelative * scale);
  const Eigen::SelfAdjointEigenSolver<MatX> eigen(0.5 * (w + w.transpose()));
  BOOST_TEST(eigen.eigenvalues().minCoeff() >= -kRelative * eigen.eigenvalues().maxCoeff());

  std::mt19937 rng(kSeed + 1);
  std::normal_distribution<double> normal(0.0, 1.0);
  auto random_vector = [&](int size) {
    VecX v(size);
    for (int k = 0; k < size; ++k) v(k) = normal(rng);
    return v;
  };
  const VecX x = random_vector(n);
  VecX y;
  system.apply(x, y);
  const VecX expected = w * x;
  const double product_scale = w.cwiseAbs().rowwise().sum().maxCoeff() * x.cwiseAbs().maxCoeff();
  BOOST_REQUIRE_EQUAL(y.size(), n);
  BOOST_TEST((y - expected).cwiseAbs().maxCoeff() <= kRelative * product_scale);

  for (int i = 0; i < system.contact_count(); ++i) {
    const Mat3 block = system.diagonal_block(i);
    BOOST_TEST((block.topLeftCorner(rows, rows) - w.block(rows * i, rows * i, rows, rows))
                   .cwiseAbs()
                   .maxCoeff() <= kRelative * scale);
    // Unused rows and columns of the 3x3 are zero.
    for (int j = 0; j < 3; ++j)
      for (int k = rows; k < 3; ++k) BOOST_TEST((block(j, k) == 0.0 && block(k, j) == 0.0));
  }

  // Sweep: begin at r, then change contacts one at a time in a shuffled order; after each
  // change local_velocity must give W r for the current r.
  VecX r = random_vector(n);
  VecX work;
  system.begin_sweep(r, work);
  std::vector<int> order(system.contact_count());
  for (int i = 0; i < system.contact_count(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  double worst = 0.0;
  auto check_all = [&]() {
    const VecX wr = w * r;
    const double s = w.cwiseAbs().rowwise().sum().maxCoeff() * r.cwiseAbs().maxCoeff();
    for (int i = 0; i < system.contact_count(); ++i) {
      const Vec3 u = system.local_velocity(i, work);
      for (int k = 0; k < 3; ++k) {
        const double expected_k = k < rows ? wr(rows * i + k) : 0.0;  // unused rows are zero
        worst = std::max(worst, std::abs(u(k) - expected_k) / s);
      }
    }
  };
  check_all();
  for (std::size_t k = 0; k < order.size(); ++k) {
    const int i = order[k];
    Vec3 dr = Vec3::Zero();
    dr.head(rows) = random_vector(rows);
    system.update_sweep(i, dr, work);
    r.segment(rows * i, rows) += dr.head(rows);
    if (k % 7 == 0) check_all();
  }
  check_all();
  BOOST_TEST(worst <= kRelative);
}

// (g) Newton restitution (Olsen & Kamrin Sec. 4.3): a sphere dropped from height h hits the floor
// at sqrt(2 g h) and leaves it at e_n times that speed; with the plastic law it stays down.
// Discrete impact speed: the last free-flight step ends with |v| = k g dt for the first k with
// k (k + 1) g dt^2 / 2 >= h, which is sqrt(2 g h) within g dt; the contact step then sets
// u_n+ = e_n |v|, so the rebound speed is e_n sqrt(2 g h) within e_n g dt <= g dt.
BOOST_DATA_TEST_CASE(DroppedSphereReboundsWithRestitution,
                     bdata::make(kSolvers) * bdata::make({0.5, 0.0}), solver, restitution) {
  const double radius = 0.25;
  const double height = 0.5;  // m, of the lowest point above the floor
  World world = make_world(Dimension::three);
  world.materials[0].restitution = restitution;
  world.friction = FrictionTable(0.3);
  add_half_space(world, Vec3::UnitY());
  const int id =
      world.add_body(solid(Sphere{radius}, Dimension::three, Vec3(0.0, radius + height, 0.0)));
  test::EulerSetup options = step_options(solver, true, 0.0);
  const double impact_speed = std::sqrt(2.0 * kGravity * height);
  if (restitution > 0.0) {
    // The restitution law acts on closed contacts (gap <= 0); with margin 0 the sphere is first
    // seen after it has crossed the floor, with its full impact velocity.
    options.impact_law = ImpactLaw::restitution;
    options.collision.margin = 0.0;
  } else {
    // Plastic: a margin larger than one step of travel (|v| dt ~ 3e-3 m) catches the sphere
    // before it penetrates, so the Phi/dt term does not push it back out.
    options.impact_law = ImpactLaw::plastic;
    options.collision.margin = 0.02;
  }
  auto stepper = test::euler_stepper(world, options);
  int unconverged = 0;
  bool impacted = false;
  double rebound_speed = 0.0;
  const int steps = static_cast<int>((std::sqrt(2.0 * height / kGravity) + 0.15) / kTimeStep);
  for (int step = 0; step < steps; ++step) {
    const StepReport& report = step_checked(stepper, unconverged);
    if (report.impulses.size() > 0 && report.impulses(0) > 0.0) impacted = true;
    if (impacted) rebound_speed = std::max(rebound_speed, world.bodies[id].linear_velocity.y());
  }
  BOOST_TEST(unconverged == 0);
  BOOST_REQUIRE(impacted);
  if (restitution > 0.0) {
    BOOST_TEST(std::abs(rebound_speed - restitution * impact_speed) <= kGravity * kTimeStep);
    BOOST_TEST(world.bodies[id].position.y() > radius);  // in flight again after 0.15 s
  } else {
    // No rebound: the upward speed is the solver residual at most.
    BOOST_TEST(rebound_speed <= 1e-8);
    BOOST_TEST(std::abs(world.bodies[id].position.y() - radius) <= 1e-9);
  }
}

// (h) 2D: bodies stay in the z = 0 plane and rotate about z only, exactly (the z rows of the
// 2D mass matrix are zero). Checked on a pile of disks falling into a V-shaped container, plus
// one disk rolling down an incline, which must roll at a = 2/3 g sin(alpha) (J = m r^2 / 2).
BOOST_DATA_TEST_CASE(PlanarBodiesStayInPlane, bdata::make(kSolvers), solver) {
  const double alpha = std::numbers::pi / 9.0;
  World world = make_world(Dimension::two);
  world.friction = FrictionTable(0.5);
  add_half_space(world, Vec3(0.6, 1.0, 0.0));
  add_half_space(world, Vec3(-0.6, 1.0, 0.0));
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> jitter(-0.04, 0.04);
  for (int k = 0; k < 12; ++k) {
    // Radii 0.3, 0.4, 0.5 on a 1.1 m grid: no initial overlap, clear of both walls.
    RigidBody disk = solid(Sphere{0.3 + 0.1 * (k % 3)}, Dimension::two,
                           Vec3(-1.65 + 1.1 * (k % 4) + jitter(rng), 1.7 + 1.1 * (k / 4), 0.0));
    disk.angular_velocity = Vec3(0.0, 0.0, 50.0 * jitter(rng));
    world.add_body(disk);
  }
  // The incline, in a world of its own (a half-space fills all space on one side).
  World incline = make_world(Dimension::two);
  incline.friction = FrictionTable(0.5);  // > tan(alpha) / 3: the disk rolls
  const Vec3 normal(std::sin(alpha), std::cos(alpha), 0.0);
  const Vec3 downhill(std::cos(alpha), -std::sin(alpha), 0.0);
  const double radius = 0.4;
  add_half_space(incline, normal);
  const int roller = incline.add_body(solid(Sphere{radius}, Dimension::two, radius * normal));

  auto stepper = test::euler_stepper(world, step_options(solver, true, kRestingMargin));
  auto incline_stepper = test::euler_stepper(incline, step_options(solver, true, kRestingMargin));
  int unconverged = 0;
  int incline_unconverged = 0;
  bool exact_plane = true;
  const int steps = 400;
  for (int step = 0; step < steps; ++step) {
    step_checked(stepper, unconverged);
    step_checked(incline_stepper, incline_unconverged);
    for (const RigidBody& b : world.bodies) {
      exact_plane = exact_plane && b.position.z() == 0.0 && b.linear_velocity.z() == 0.0 &&
                    b.angular_velocity.x() == 0.0 && b.angular_velocity.y() == 0.0 &&
                    b.orientation.x() == 0.0 && b.orientation.y() == 0.0;
    }
  }
  BOOST_TEST(exact_plane);
  BOOST_TEST(unconverged == 0);
  BOOST_TEST(incline_unconverged == 0);
  // Rolling at constant acceleration is exact in the scheme: solver residual only.
  const double t = steps * kTimeStep;
  const RigidBody& b = incline.bodies[roller];
  BOOST_TEST(b.linear_velocity.dot(downhill) == 2.0 / 3.0 * kGravity * std::sin(alpha) * t,
             boost::test_tools::tolerance(kExactInSchemeTolerance));
  BOOST_TEST(-b.angular_velocity.z() * radius == b.linear_velocity.dot(downhill),
             boost::test_tools::tolerance(kExactInSchemeTolerance));
  BOOST_TEST(b.position.z() == 0.0);
  // The pile has fallen and spun: the test is not vacuous.
  double spin = 0.0;
  for (const RigidBody& body : world.bodies)
    spin = std::max(spin, std::abs(body.angular_velocity.z()));
  BOOST_TEST(spin > 0.1);
}

// (i) Determinism: the same scene gives bitwise-identical states when run twice and with 1 or
// 2 OpenMP threads. The scene has > 4096 bodies and > 2048 contacts, so that the parallel
// paths of the broad phase, narrow phase, Delassus product and PGJ/APGD projections run. A
// fixed iteration count (tolerance 0) keeps the run short; convergence is not needed here.
BOOST_DATA_TEST_CASE(RunsAreBitwiseReproducible, bdata::make(kSolvers), solver) {
  auto run = [&](int threads) {
    omp_set_num_threads(threads);
    World world = make_world(Dimension::three);
    world.friction = FrictionTable(0.4);
    add_half_space(world, Vec3::UnitY());
    std::mt19937 rng(1234);
    // Radii and jitter chosen so that about half the lattice neighbours are within the margin
    // while overlaps stay below 0.01 m (no violent push-out).
    std::uniform_real_distribution<double> radius_draw(0.47, 0.5);
    std::uniform_real_distribution<double> jitter(-0.005, 0.005);
    for (int i = 0; i < 18; ++i)
      for (int j = 0; j < 16; ++j)
        for (int k = 0; k < 16; ++k)
          world.add_body(solid(Sphere{radius_draw(rng)}, Dimension::three,
                               Vec3(i + jitter(rng), 0.5 + j + jitter(rng), k + jitter(rng))));
    test::EulerSetup options = step_options(solver, true, 0.03);
    options.solver_options.tolerance = 0.0;
    options.solver_options.max_iterations = 10;
    auto stepper = test::euler_stepper(world, options);
    std::size_t contacts = 0;
    for (int step = 0; step < 3; ++step) contacts = stepper.step().contacts.size();
    BOOST_TEST(contacts > 2048u);
    std::vector<double> state;
    for (const RigidBody& b : world.bodies) {
      state.insert(state.end(), b.position.data(), b.position.data() + 3);
      state.insert(state.end(), b.orientation.coeffs().data(), b.orientation.coeffs().data() + 4);
      state.insert(state.end(), b.linear_velocity.data(), b.linear_velocity.data() + 3);
      state.insert(state.end(), b.angular_velocity.data(), b.angular_velocity.data() + 3);
    }
    return state;
  };
  const int default_threads = omp_get_max_threads();
  const std::vector<double> first = run(2);
  const std::vector<double> second = run(2);
  const std::vector<double> serial = run(1);
  omp_set_num_threads(default_threads);
  BOOST_REQUIRE_EQUAL(first.size(), serial.size());
  std::size_t differ_repeat = 0;
  std::size_t differ_threads = 0;
  for (std::size_t k = 0; k < first.size(); ++k) {
    differ_repeat += first[k] != second[k];
    differ_threads += first[k] != serial[k];
  }
  BOOST_TEST(differ_repeat == 0u);
  BOOST_TEST(differ_threads == 0u);
}
