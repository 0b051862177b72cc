#define BOOST_TEST_MODULE dem
#include <omp.h>

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <filesystem>
#include <vector>

#include "moreau/core/error.hpp"
#include "moreau/dem/dem_stepper.hpp"
#include "moreau/io/checkpoint.hpp"

using namespace moreau;

namespace {

constexpr double kRadius = 0.01, kDensity = 2500.0, kModulus = 1e8, kPoisson = 0.3;

World sphere_above_floor(double height, double mu) {
  World world;
  world.gravity = Vec3(0.0, -9.81, 0.0);
  world.materials.clear();
  world.add_material({"glass", kDensity, kModulus, kPoisson, 1.0, 0.0});
  world.friction = FrictionTable(mu);
  RigidBody floor;
  floor.motion = Motion::fixed;
  floor.shape.geometry = HalfSpace{Vec3::UnitY()};
  world.add_body(floor);
  RigidBody s;
  s.mass = kDensity * 4.0 / 3.0 * M_PI * std::pow(kRadius, 3);
  s.inertia_body = Mat3::Identity() * 0.4 * s.mass * kRadius * kRadius;
  s.shape.geometry = Sphere{kRadius};
  s.position = Vec3(0.0, kRadius + height, 0.0);
  world.add_body(s);
  return world;
}

DemOptions options_for(World& world, NormalLaw law, bool tangential) {
  DemOptions options;
  options.law.law = law;
  options.law.tangential = tangential;
  options.time_step = 1.0;
  options.time_step = 0.5 * estimate_stable_time_step(world, options);
  return options;
}

// A frictional pile of 3,000 rotating spheres of mixed radii, some overlapping at the start,
// between a floor and two walls: more bodies and pairs than the stepper's serial grain.
World frictional_pile() {
  World world = sphere_above_floor(0.0, 0.5);
  world.bodies.pop_back();
  for (const Vec3& normal : {Vec3(1.0, 0.0, 0.0), Vec3(-1.0, 0.0, 0.0)}) {
    RigidBody wall;
    wall.motion = Motion::fixed;
    wall.shape.geometry = HalfSpace{normal};
    wall.position = normal.x() > 0.0 ? Vec3::Zero() : Vec3(0.3, 0.0, 0.0);
    world.add_body(wall);
  }
  for (int i = 0; i < 3000; ++i) {
    const double r = kRadius * (0.8 + 0.2 * ((i * 7) % 5) / 4.0);
    RigidBody s;
    s.mass = kDensity * 4.0 / 3.0 * M_PI * std::pow(r, 3);
    s.inertia_body = Mat3::Identity() * 0.4 * s.mass * r * r;
    s.shape.geometry = Sphere{r};
    s.position =
        Vec3(0.0105 + 0.0185 * (i % 15), 0.0105 + 0.0185 * (i / 300), 0.0185 * ((i / 15) % 20));
    s.linear_velocity = Vec3(0.01 * ((i % 3) - 1), 0.0, 0.0);
    world.add_body(s);
  }
  return world;
}

}  // namespace

// Hertz: F = 4/3 E* sqrt(R*) delta^(3/2), E* = E / (1 - nu^2) against a rigid... here the
// floor has the same material, so 1/E* = 2 (1 - nu^2) / E and R* = R. At rest F = m g.
BOOST_AUTO_TEST_CASE(RestingSphereOverlapFollowsHertz) {
  World world = sphere_above_floor(0.0, 0.0);
  DemStepper dem(world, options_for(world, NormalLaw::hertzian, false));
  while (world.time < 0.05) dem.step();
  const auto contacts = dem.contacts();
  BOOST_TEST_REQUIRE(contacts.size() == 1u);
  const double weight = world.bodies[1].mass * 9.81;
  const double effective_modulus = kModulus / (2.0 * (1.0 - kPoisson * kPoisson));
  const double overlap =
      std::pow(weight / (4.0 / 3.0 * effective_modulus * std::sqrt(kRadius)), 2.0 / 3.0);
  // Static to rounding after 0.05 s of critically damped settling.
  BOOST_TEST(std::abs(contacts[0].elastic_force - weight) <= 1e-9 * weight);
  BOOST_TEST(std::abs(contacts[0].overlap - overlap) <= 1e-9 * overlap);
}

// Hookean: k_n = 4/3 E* sqrt(R* d) with d = 2R for a sphere on a wall; overlap m g / k_n.
BOOST_AUTO_TEST_CASE(RestingSphereOverlapFollowsHooke) {
  World world = sphere_above_floor(0.0, 0.0);
  DemStepper dem(world, options_for(world, NormalLaw::hookean, false));
  while (world.time < 0.05) dem.step();
  const auto contacts = dem.contacts();
  BOOST_TEST_REQUIRE(contacts.size() == 1u);
  const double weight = world.bodies[1].mass * 9.81;
  const double effective_modulus = kModulus / (2.0 * (1.0 - kPoisson * kPoisson));
  const double stiffness = 4.0 / 3.0 * effective_modulus * std::sqrt(kRadius * 2.0 * kRadius);
  BOOST_TEST(std::abs(contacts[0].overlap - weight / stiffness) <= 1e-9 * weight / stiffness);
}

// Critical damping (gamma = 2 sqrt(k m), Olsen & Kamrin Sec. 8.2) means e_n = 0: a dropped sphere
// never leaves the floor again. (While it recovers its overlap it moves up at up to e^-2 of
// the impact speed, the critically damped x(t) = -v0 t e^(-w t), but stays in contact.)
BOOST_AUTO_TEST_CASE(CriticallyDampedImpactDoesNotRebound) {
  World world = sphere_above_floor(0.05, 0.0);
  World resting = sphere_above_floor(0.0, 0.0);
  DemStepper dem(world, options_for(resting, NormalLaw::hookean, false));
  bool touched = false, separated = false;
  while (world.time < 0.3) {
    dem.step();
    const bool touching = !dem.contacts().empty();
    separated = separated || (touched && !touching);
    touched = touched || touching;
  }
  BOOST_TEST(touched);
  BOOST_TEST(!separated);
}

// Cundall-Strack with Coulomb cap: a sphere launched sliding decelerates at mu g until it
// rolls, then rolls at 5/7 of its initial speed (v r omega = v), as in Dumont Sec. 4.1.
BOOST_AUTO_TEST_CASE(SlidingSphereRollsAtFiveSevenths) {
  const double mu = 0.4, v0 = 0.5;
  World world = sphere_above_floor(0.0, mu);
  DemOptions options = options_for(world, NormalLaw::hookean, true);
  // Critically damped tangential spring: an undamped Cundall-Strack spring keeps the rolling
  // contact point oscillating (elastic stick) at ~1e-3 v0 forever.
  options.law.tangential_damping_ratio = 1.0;
  DemStepper settle(world, options);
  while (world.time < 0.02) settle.step();
  world.bodies[1].linear_velocity = Vec3(v0, 0.0, 0.0);
  const double t_roll = 2.0 * v0 / (7.0 * mu * 9.81);
  const double start = world.time;
  while (world.time < start + 3.0 * t_roll) settle.step();
  const RigidBody& s = world.bodies[1];
  // The tangential spring adds an elastic stick phase of ~1e-5 m; 1e-3 relative covers it.
  BOOST_TEST(std::abs(s.linear_velocity.x() - 5.0 / 7.0 * v0) <= 1e-3 * v0);
  BOOST_TEST(std::abs(s.angular_velocity.z() * kRadius + s.linear_velocity.x()) <= 1e-3 * v0);
}

BOOST_AUTO_TEST_CASE(UnstableTimeStepIsRefused) {
  World world = sphere_above_floor(0.0, 0.0);
  DemOptions options = options_for(world, NormalLaw::hookean, false);
  options.time_step *= 10.0;
  BOOST_CHECK_THROW(DemStepper(world, options), SimulationError);
}

BOOST_AUTO_TEST_CASE(MissingModulusIsRefused) {
  World world = sphere_above_floor(0.0, 0.0);
  world.materials[0].youngs_modulus = 0.0;
  DemOptions options;
  options.time_step = 1e-7;
  BOOST_CHECK_THROW(DemStepper(world, options), InputError);
}

// The stepper caches M^-1: for a sphere with an anisotropic inertia rolling and turning on a
// frictional floor, the rotational block it applied in the last half kick is bit for bit the
// inverse_mass() of the orientation the body has now, and update_mass_properties() takes a
// changed mass into account.
BOOST_AUTO_TEST_CASE(CachedInverseMassFollowsOrientationAndMassChanges) {
  World world = sphere_above_floor(0.0, 0.5);
  RigidBody& ball = world.bodies[1];
  ball.inertia_body = Vec3(1.0, 2.0, 3.0).asDiagonal() * (0.4 * ball.mass * kRadius * kRadius);
  ball.linear_velocity = Vec3(0.3, 0.0, 0.1);
  ball.angular_velocity = Vec3(5.0, -20.0, 3.0);
  DemStepper dem(world, options_for(world, NormalLaw::hookean, true));
  for (int k = 0; k < 300; ++k) dem.step();
  const RigidBody& turned = world.bodies[1];
  BOOST_TEST(std::abs(turned.orientation.w()) < 0.999);  // it has turned
  const InverseMass expected = inverse_mass(turned, world.dimension);
  BOOST_TEST((dem.inverse_mass(1).angular.array() == expected.angular.array()).all());
  BOOST_TEST((dem.inverse_mass(1).linear.array() == expected.linear.array()).all());
  BOOST_TEST((dem.inverse_mass(0).linear.array() == 0.0).all());  // the fixed floor

  world.bodies[1].mass *= 2.0;
  dem.update_mass_properties();
  dem.step();
  BOOST_TEST(dem.inverse_mass(1).linear.x() == 1.0 / world.bodies[1].mass);
}

// Determinism across thread counts with the parallel passes engaged (more bodies and pairs
// than the stepper's serial grain): a frictional pile of 3,000 rotating spheres of mixed
// radii, some overlapping at the start, between a floor and two walls, stepped on one and on
// three threads, ends in the same state to the bit.
BOOST_AUTO_TEST_CASE(StateDoesNotDependOnTheThreadCount) {
  const int threads = omp_get_max_threads();
  std::vector<World> ends;
  for (const int count : {1, 3}) {
    omp_set_num_threads(count);
    World world = frictional_pile();
    DemStepper dem(world, options_for(world, NormalLaw::hookean, true));
    for (int k = 0; k < 40; ++k) dem.step();
    BOOST_TEST(dem.touching_count() > 2048u);
    ends.push_back(world);
  }
  omp_set_num_threads(threads);
  bool identical = true;
  for (std::size_t i = 0; i < ends[0].bodies.size(); ++i) {
    const RigidBody& a = ends[0].bodies[i];
    const RigidBody& b = ends[1].bodies[i];
    identical = identical && a.position == b.position && a.linear_velocity == b.linear_velocity &&
                a.angular_velocity == b.angular_velocity &&
                a.orientation.coeffs() == b.orientation.coeffs();
  }
  BOOST_TEST(identical);
}

// A restart repeats the uninterrupted run bit for bit: the pile stepped 40 steps straight and
// stepped 20, written to a checkpoint, read into a new world and stepper and stepped 20 more
// ends in the same state (springs and forces carried, the neighbour list built anew).
BOOST_AUTO_TEST_CASE(RestartRepeatsTheUninterruptedRun) {
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "moreau_dem_restart_pile.json";
  World straight = frictional_pile();
  const DemOptions options = options_for(straight, NormalLaw::hookean, true);
  DemStepper dem(straight, options);
  for (int k = 0; k < 20; ++k) dem.step();
  write_stepper_checkpoint(path, dem, CheckpointContents{20, "pile", std::nullopt, {}});
  for (int k = 0; k < 20; ++k) dem.step();
  BOOST_TEST(dem.state().springs.size() > 1000u);

  World again = frictional_pile();
  const CheckpointContents contents = read_checkpoint_contents(path, again);
  DemStepper resumed(again, options);
  resumed.resume_at(contents.step);
  restore_scheme_state(contents, resumed, path);
  for (int k = 0; k < 20; ++k) resumed.step();
  bool identical = true;
  for (std::size_t i = 0; i < straight.bodies.size(); ++i) {
    const RigidBody& a = straight.bodies[i];
    const RigidBody& b = again.bodies[i];
    identical = identical && a.position == b.position && a.linear_velocity == b.linear_velocity &&
                a.angular_velocity == b.angular_velocity &&
                a.orientation.coeffs() == b.orientation.coeffs();
  }
  BOOST_TEST(identical);
  std::filesystem::remove(path);
}

// What each part of the state is for: a rotation-locked sphere held by its Cundall-Strack
// spring on a floor tilted against gravity (tan 0.3 below mu = 0.5) rests. Restarted from a
// checkpoint without the forces (made anew at the restored state, their damping reading the
// velocity after the step instead of the half step's) it stays close to the uninterrupted run;
// without the spring it slips by about the spring's stretch, m g sin / k_t.
BOOST_AUTO_TEST_CASE(RestartWithoutTheSpringsSlips) {
  const auto tilted = [] {
    World world = sphere_above_floor(-1e-6, 0.5);
    world.gravity = Vec3(0.3 * 9.81, -9.81, 0.0);
    world.bodies[1].rotation_locked = true;
    return world;
  };
  World world = tilted();
  const DemOptions options = options_for(world, NormalLaw::hookean, true);
  DemStepper dem(world, options);
  for (int k = 0; k < 4000; ++k) dem.step();
  const std::vector<TangentialSpring> springs = dem.state().springs;
  BOOST_REQUIRE_EQUAL(springs.size(), 1u);
  BOOST_TEST((springs[0].body_a == 0 && springs[0].body_b == 1));
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "moreau_dem_restart_test.json";
  write_stepper_checkpoint(path, dem, CheckpointContents{4000, "tilted", std::nullopt, {}});
  for (int k = 0; k < 2000; ++k) dem.step();
  const double uninterrupted = world.bodies[1].position.x();

  const auto restarted = [&](bool keep_springs, bool keep_forces) {
    World again = tilted();
    CheckpointContents contents = read_checkpoint_contents(path, again);
    BOOST_REQUIRE(contents.dem_state.has_value());
    if (!keep_springs) contents.dem_state->springs.clear();
    if (!keep_forces) contents.dem_state->forces.clear();
    DemStepper resumed(again, options);
    resumed.resume_at(contents.step);
    restore_scheme_state(contents, resumed, path);
    for (int k = 0; k < 2000; ++k) resumed.step();
    return std::abs(again.bodies[1].position.x() - uninterrupted);
  };
  const double stretch = springs[0].displacement.norm();
  BOOST_TEST(restarted(true, true) == 0.0);
  // Measured: 1.4 % of the stretch without the forces (the contact still rings), 221 % without
  // the spring.
  BOOST_TEST(restarted(true, false) < 0.05 * stretch);
  BOOST_TEST(restarted(false, true) > 0.5 * stretch);
  std::filesystem::remove(path);
}
