#define BOOST_TEST_MODULE shake_rattle
#include <boost/test/unit_test.hpp>
// Nonsmooth SHAKE (Kleinert, Simeon & Dressler eq. 14-20) and RATTLE (Kleinert eq. 21):
// the point mass hitting the ground of Kleinert Sec. 3.2 / Fig. 3, a resting sphere, and the
// energy and penetration of a small pile. Every expected value follows from the scheme's
// equations for the scene (worked out beside each test), never from an earlier run.
#include <omp.h>

#include <algorithm>
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "moreau/collision/collision_detector.hpp"
#include "moreau/core/error.hpp"
#include "moreau/integrator/shake_stepper.hpp"
#include "moreau/io/scene.hpp"
#include "moreau/model/shape.hpp"
#include "moreau/model/world.hpp"
#include "moreau/solver/projected_gauss_jacobi.hpp"
#include "moreau/solver/solver_registry.hpp"

namespace bdata = boost::unit_test::data;
using namespace moreau;

namespace {

constexpr double kGravity = 9.81;  // m/s^2
// Solver stop on the suite's merit (merit.hpp, relative to |q|): the one-contact problems below
// are solved to round-off, the pile's impulses to 1e-10 of their scale.
constexpr double kSolverTolerance = 1e-12;
// Relative tolerance on impulses the scheme gives in closed form (one contact, one row): the
// solver residual and the round-off of g / h with g ~ 1e-1 m, h >= 1e-4 s.
constexpr double kClosedFormTolerance = 1e-8;

const std::vector<std::string> kSchemes{"shake", "rattle"};
ShakeScheme scheme_named(const std::string& name) {
  return name == "shake" ? ShakeScheme::shake : ShakeScheme::rattle;
}

struct OneThread {
  OneThread() { omp_set_num_threads(1); }  // scenes of 1 to 27 bodies: no parallel work
};
BOOST_TEST_GLOBAL_FIXTURE(OneThread);

std::unique_ptr<ContactSolver> make(const std::string& name, bool warm_start = false) {
  SolverOptions common;
  common.tolerance = kSolverTolerance;
  common.record_history = false;
  common.warm_start = warm_start;
  common.max_iterations = name == "pgj" ? 200000 : 20000;
  AnySolverOptions options = default_solver_options(name, common);
  // Jacobi splitting needs omega < 2 / lambda.
  if (auto* pgj = options.get_if<PgjOptions>()) pgj->relaxation = 0.3;
  return make_solver(name, options);
}

// A rotation-locked sphere of density 1000 kg/m^3 (the paper's non-rotating particle) above a
// fixed floor y = 0.
World ground_and_ball(double radius, double height, double speed, double gravity) {
  World world;
  world.gravity = Vec3(0.0, -gravity, 0.0);
  RigidBody floor;
  floor.name = "floor";
  floor.motion = Motion::fixed;
  floor.shape.geometry = HalfSpace{Vec3::UnitY()};
  world.add_body(floor);
  const MassProperties mass = mass_properties(Sphere{radius}, 1000.0, Dimension::three);
  RigidBody ball;
  ball.name = "ball";
  ball.rotation_locked = true;
  ball.shape.geometry = Sphere{radius};
  ball.mass = mass.mass;
  ball.inertia_body = mass.inertia;
  ball.position = Vec3(0.0, radius + height, 0.0);
  ball.linear_velocity = Vec3(0.0, -speed, 0.0);
  world.add_body(ball);
  return world;
}

ShakeOptions options(ShakeScheme scheme, double h, bool frictional, double margin) {
  ShakeOptions o;
  o.scheme = scheme;
  o.time_step = h;
  o.frictional = frictional;
  o.collision.margin = margin;
  return o;
}

// Normal impulses of the ball against the floor, one per step (0 without contact).
std::vector<double> normal_impulses(World world, ShakeScheme scheme, double h, long steps,
                                    const std::string& solver = "pgs") {
  // Margin 0.2 m: more than the ball travels in a step (|v| h <= 2e-2 m), so the floor
  // enters the CCP before the step that would cross it.
  ShakeStepper stepper(world, options(scheme, h, false, 0.2), make(solver));
  std::vector<double> impulses;
  for (long k = 0; k < steps; ++k) {
    const StepReport& report = stepper.step();
    const ShakeStepDetails& shake = shake_details(report);
    BOOST_REQUIRE(report.solver_stats.converged);
    BOOST_REQUIRE(shake.velocity_solver_stats.converged);
    impulses.push_back(report.contacts.empty() ? 0.0 : report.impulses(0));
  }
  return impulses;
}

// Index of the first step with a positive impulse (the impact step j), -1 if none.
int impact_step(const std::vector<double>& impulses) {
  for (int k = 0; k < static_cast<int>(impulses.size()); ++k)
    if (impulses[k] > 0.0) return k;
  return -1;
}

}  // namespace

// Kleinert Sec. 3.2, Fig. 3: a point mass without external forces moves at speed v0 toward the
// ground and would reach it at t_c = t_j + theta h inside step j. SHAKE (eq. 14) ends step j on
// the ground, q^{j+1} = 0, so v^{j+1/2} = -q^j / h = -theta v0 and gamma^j = m v0 (1 - theta);
// step j + 1 stops it: gamma^{j+1} = m v0 theta. The split depends on theta, whatever h.
// RATTLE (eq. 21) adds gamma_r^j = m theta v0 in step j (nu^{j+1} = 0 on the closed contact),
// so its total impulse is m v0 = m (v_before - v_after) in the impact step and 0 afterwards,
// for every theta and h.
BOOST_DATA_TEST_CASE(ImpulseSplitOfAnImpactDependsOnThePhaseForShakeOnly,
                     bdata::make({1e-2, 1e-3, 1e-4}) * bdata::make({0.1, 0.5, 0.9}), h, theta) {
  const double v0 = 1.0, radius = 0.05;
  const int steps_before = 5;
  const double height = v0 * (steps_before + theta) * h;  // impact at t_c = (5 + theta) h
  const World world = ground_and_ball(radius, height, v0, 0.0);
  const double m = world.bodies[1].mass;
  const long steps = steps_before + 4;

  const std::vector<double> shake = normal_impulses(world, ShakeScheme::shake, h, steps);
  BOOST_REQUIRE_EQUAL(impact_step(shake), steps_before);
  BOOST_TEST(shake[steps_before] == m * v0 * (1.0 - theta),
             boost::test_tools::tolerance(kClosedFormTolerance));
  BOOST_TEST(shake[steps_before + 1] == m * v0 * theta,
             boost::test_tools::tolerance(kClosedFormTolerance));
  for (long k = steps_before + 2; k < steps; ++k) BOOST_TEST(std::abs(shake[k]) <= 1e-12 * m * v0);

  World rattle_world = world;
  ShakeStepper rattle(rattle_world, options(ShakeScheme::rattle, h, false, 0.2), make("pgs"));
  for (long k = 0; k < steps; ++k) {
    const StepReport& report = rattle.step();
    const ShakeStepDetails& details = shake_details(report);
    const double total = report.contacts.empty() ? 0.0 : report.impulses(0);
    if (k == steps_before) {
      BOOST_TEST(total == m * v0, boost::test_tools::tolerance(kClosedFormTolerance));
      BOOST_TEST(details.position_impulses(0) == m * v0 * (1.0 - theta),
                 boost::test_tools::tolerance(kClosedFormTolerance));
      BOOST_TEST(details.velocity_impulses(0) == m * v0 * theta,
                 boost::test_tools::tolerance(kClosedFormTolerance));
      BOOST_TEST(details.closed_contacts == 1);
      // nu^{j+1} = 0: the world carries the post-impact velocity; v^{j+1/2} = -theta v0.
      BOOST_TEST(std::abs(rattle_world.bodies[1].linear_velocity.y()) <= 1e-12 * v0);
      BOOST_TEST(details.mean_velocities(kBodyDofs + 1) == -theta * v0,
                 boost::test_tools::tolerance(kClosedFormTolerance));
    } else {
      BOOST_TEST(std::abs(total) <= 1e-12 * m * v0);
    }
  }
  // Both schemes give the same positions (Kleinert Sec. 3.2: "the same solution ... for the
  // positions"): the ball ends on the ground.
  World shake_world = world;
  ShakeStepper shake_stepper(shake_world, options(ShakeScheme::shake, h, false, 0.2), make("pgs"));
  for (long k = 0; k < steps; ++k) shake_stepper.step();
  BOOST_TEST(std::abs(shake_world.bodies[1].position.y() - radius) <= 1e-12);
  BOOST_TEST(std::abs(rattle_world.bodies[1].position.y() - radius) <= 1e-12);
}

// With gravity: the impact step's total RATTLE impulse converges to m (v_before - v_after) =
// m v_c, v_c = sqrt(v0^2 + 2 g d0) the continuous impact speed, for every phase of the impact
// in the step; SHAKE's impact-step impulse does not (it keeps depending on the phase).
// RATTLE's impact step gives gamma = m (|nu^j| + g h) (gamma_l + gamma_r with nu^{j+1} = 0), and
// the semi-implicit (symplectic) Euler velocity nu^j lags the continuous one by at most one
// step of gravity, so |gamma - m v_c| <= 2 m g h: first order in h.
BOOST_AUTO_TEST_CASE(RattleImpactImpulseConvergesAsTheStepShrinks) {
  const double v0 = 1.0, radius = 0.05, base_height = 0.1;
  std::vector<double> rattle_spread, shake_spread;
  for (const double h : {1e-2, 1e-3, 1e-4}) {
    double rattle_low = 1e300, rattle_high = -1e300, shake_low = 1e300, shake_high = -1e300;
    for (const double phase : {0.0, 0.3, 0.6}) {
      // Shifting the start height by a fraction of one step's travel moves the impact within
      // the step.
      const double height = base_height + phase * v0 * h;
      const World world = ground_and_ball(radius, height, v0, kGravity);
      const double m = world.bodies[1].mass;
      const double impact_speed = std::sqrt(v0 * v0 + 2.0 * kGravity * height);
      const long steps = static_cast<long>(std::ceil(height / v0 / h)) + 3;
      const std::vector<double> rattle = normal_impulses(world, ShakeScheme::rattle, h, steps);
      const std::vector<double> shake = normal_impulses(world, ShakeScheme::shake, h, steps);
      const int j = impact_step(rattle);
      BOOST_REQUIRE_GE(j, 0);
      BOOST_REQUIRE_EQUAL(impact_step(shake), j);  // same positions, same impact step
      BOOST_TEST(std::abs(rattle[j] - m * impact_speed) <= 2.0 * m * kGravity * h);
      rattle_low = std::min(rattle_low, rattle[j] / (m * impact_speed));
      rattle_high = std::max(rattle_high, rattle[j] / (m * impact_speed));
      shake_low = std::min(shake_low, shake[j] / (m * impact_speed));
      shake_high = std::max(shake_high, shake[j] / (m * impact_speed));
    }
    rattle_spread.push_back(rattle_high - rattle_low);
    shake_spread.push_back(shake_high - shake_low);
  }
  // Relative spread over the phases. RATTLE: within the bound above, 4 g h / v_c <= 4 g h / v0,
  // so it shrinks with h. SHAKE: the start heights move the impact by 0.6 v0 h, i.e. by a
  // phase of about 0.6 v0 / v_c = 0.35 of a step (v_c = 1.7 m/s), and its impact-step impulse
  // is m v_c (1 - theta) + O(m g h): a spread of about 0.35 at every h (more where the phases
  // wrap into the next step), checked against 0.25 to leave room for the O(g h / v_c) terms.
  const double steps[] = {1e-2, 1e-3, 1e-4};
  for (std::size_t k = 0; k < rattle_spread.size(); ++k) {
    BOOST_TEST_MESSAGE("h = " << steps[k] << ": RATTLE spread " << rattle_spread[k]
                              << ", SHAKE spread " << shake_spread[k]);
    BOOST_TEST(rattle_spread[k] <= 4.0 * kGravity * steps[k] / v0);
    BOOST_TEST(shake_spread[k] >= 0.25);
  }
  BOOST_TEST(rattle_spread[2] < rattle_spread[1]);
  BOOST_TEST(rattle_spread[1] < rattle_spread[0]);
}

// A sphere resting on the floor carries its weight: gamma = m g h per step, no friction
// impulse, and it does not move (no drift: the CCP keeps u = g/h + G v >= 0 with g = 0, so
// v = 0 exactly up to the solver residual). RATTLE's velocity CCP has nothing to do
// (gamma_r = 0): the weight enters only the first CCP through k^j. Every solver of the suite,
// the interior point method included, plugs in.
BOOST_DATA_TEST_CASE(RestingSphereStaysAtRest,
                     bdata::make(kSchemes) * bdata::make(std::vector<std::string>{
                                                 "pgs", "pgj", "apgd", "ipm", "ipm-direct"}),
                     scheme_name, solver) {
  const ShakeScheme scheme = scheme_named(scheme_name);
  const double radius = 0.1, h = 1e-3;
  World world = ground_and_ball(radius, 0.0, 0.0, kGravity);
  world.friction = FrictionTable(0.5);
  const double m = world.bodies[1].mass;
  // Margin: half the radius, the paper's potential-contact distance (Kleinert Sec. 5).
  ShakeStepper stepper(world, options(scheme, h, true, 0.5 * radius), make(solver));
  for (int k = 0; k < 1000; ++k) {
    const StepReport& report = stepper.step();
    const ShakeStepDetails& shake = shake_details(report);
    BOOST_REQUIRE_EQUAL(report.contacts.size(), 1u);
    BOOST_REQUIRE(report.solver_stats.converged);
    BOOST_TEST(report.impulses(0) == m * kGravity * h,
               boost::test_tools::tolerance(kClosedFormTolerance));
    BOOST_TEST(report.impulses.tail(2).norm() <= 1e-12 * m * kGravity * h);
    // gamma_r of an unloaded velocity CCP (q = 0 up to round-off): zero within the solver's
    // residual, 1e-12 of |q| ~ g h in velocity, i.e. ~1e-12 m g h in impulse; 10x for the
    // merit's block scaling. An interior point method stops strictly inside the cone, at this
    // level rather than at 0.
    BOOST_TEST(std::abs(shake.velocity_impulses(0)) <= 1e-11 * m * kGravity * h);
  }
  // Drift bound: the solver residual (1e-12 of |q| = g h) per step over 1000 steps.
  BOOST_TEST(std::abs(world.bodies[1].position.y() - radius) <= 1e-12);
  BOOST_TEST(world.bodies[1].linear_velocity.norm() <= 1e-12);
}

// 27 non-rotating spheres dropped into a box (frictional, mu = 0.3): the scheme dissipates in
// impacts and friction and adds no energy, so E = sum 1/2 m v^2 + m g y never grows from one
// step to the next. For SHAKE's v^{j+1/2} in free flight E drops by 1/2 m g^2 h^2 per step (the
// symplectic Euler identity), so growth is bounded by the solver residual only. No penetration:
// the linearized gap of eq. 17 is exact for a plane and below the true gap between spheres
// (the distance |x_b - x_a| is convex), so g(q^{j+1}) >= h u_n >= -h * residual.
BOOST_DATA_TEST_CASE(DroppedSpheresLoseEnergyAndDoNotPenetrate, bdata::make(kSchemes),
                     scheme_name) {
  const ShakeScheme scheme = scheme_named(scheme_name);
  const double radius = 0.05, h = 1e-3, side = 0.4;
  World world;
  world.gravity = Vec3(0.0, -kGravity, 0.0);
  world.friction = FrictionTable(0.3);
  const auto wall = [&](const Vec3& normal, const Vec3& point) {
    RigidBody body;
    body.motion = Motion::fixed;
    body.position = point;
    body.shape.geometry = HalfSpace{normal};
    world.add_body(body);
  };
  wall(Vec3::UnitY(), Vec3::Zero());
  wall(Vec3::UnitX(), Vec3::Zero());
  wall(-Vec3::UnitX(), Vec3(side, 0.0, 0.0));
  wall(Vec3::UnitZ(), Vec3::Zero());
  wall(-Vec3::UnitZ(), Vec3(0.0, 0.0, side));
  const MassProperties mass = mass_properties(Sphere{radius}, 1000.0, Dimension::three);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 3; ++k) {
        RigidBody ball;
        ball.rotation_locked = true;
        ball.shape.geometry = Sphere{radius};
        ball.mass = mass.mass;
        ball.inertia_body = mass.inertia;
        // Layers offset by 1 cm per level so that the spheres do not stack exactly.
        ball.position =
            Vec3(0.08 + 0.12 * i + 0.01 * k, 0.1 + 0.12 * k, 0.08 + 0.12 * j + 0.01 * k);
        world.add_body(ball);
      }
  const auto energy = [&] {
    double e = 0.0;
    for (const RigidBody& b : world.bodies)
      if (b.is_dynamic())
        e += 0.5 * b.mass * b.linear_velocity.squaredNorm() + b.mass * kGravity * b.position.y();
    return e;
  };
  const double scale = energy();  // m g y summed: the energy scale of the scene
  ShakeStepper stepper(world, options(scheme, h, true, 0.5 * radius), make("apgd"));
  double previous = energy(), worst_growth = 0.0, worst_penetration = 0.0;
  long impacts = 0;
  for (int step = 0; step < 600; ++step) {
    const StepReport& report = stepper.step();
    BOOST_REQUIRE(report.solver_stats.converged);
    if (report.impulses.size() > 0 && report.impulses.maxCoeff() > 0.0) ++impacts;
    const double e = energy();
    worst_growth = std::max(worst_growth, e - previous);
    previous = e;
    for (const Contact& c : detect_contacts(world, CollisionOptions{}))
      worst_penetration = std::max(worst_penetration, -c.gap);
  }
  BOOST_TEST(impacts > 100);  // the spheres did land and interact
  BOOST_TEST(worst_growth <= 1e-9 * scale);
  BOOST_TEST(worst_penetration <= 1e-9);  // m, against radius 5e-2 m
}

BOOST_AUTO_TEST_CASE(BadOptionsAreRefusedByName) {
  World world = ground_and_ball(0.1, 0.0, 0.0, kGravity);
  ShakeOptions bad;
  bad.time_step = -1.0;
  BOOST_CHECK_EXCEPTION(ShakeStepper(world, bad, make("pgs")), InputError, [](const InputError& e) {
    return std::string(e.what()).find("time_step") != std::string::npos;
  });
  ShakeOptions nan_gap;
  nan_gap.closed_gap = std::nan("");
  BOOST_CHECK_THROW(ShakeStepper(world, nan_gap, make("pgs")), InputError);
  BOOST_CHECK_THROW(ShakeStepper(world, ShakeOptions{}, nullptr), InputError);
}

// Scene files select the scheme with integrator.scheme (docs/scene-format.md): the options
// reach the stepper, the CCP defaults to Kleinert eq. 22's convex cone, and keys the scheme
// does not use are refused by name.
BOOST_AUTO_TEST_CASE(SceneSelectsShakeOrRattle) {
  const auto scene_with = [](const nlohmann::json& integrator) {
    return nlohmann::json{{"time_step", 2e-3},
                          {"steps", 3},
                          {"collision", {{"margin", 0.01}}},
                          {"integrator", integrator},
                          {"bodies", nlohmann::json::array()}};
  };
  const Scene rattle = parse_scene(scene_with({{"scheme", "rattle"}, {"closed_gap", 1e-7}}), "t");
  BOOST_REQUIRE(rattle.scheme == "rattle");
  const auto o = rattle.options_of<ShakeOptions>("rattle");
  // The registration binds the scheme to the name when the stepper is made.
  Scene copy = rattle;
  BOOST_TEST(make_stepper(copy)->scheme() == "rattle");
  BOOST_TEST(o.time_step == 2e-3);
  BOOST_TEST(o.closed_gap == 1e-7);
  BOOST_TEST(o.collision.margin == 0.01);
  BOOST_TEST((o.friction_model == FrictionModel::convex_relaxation));
  const Scene shake =
      parse_scene(scene_with({{"scheme", "shake"}, {"friction_model", "coulomb"}}), "t");
  BOOST_TEST((shake.options_of<ShakeOptions>("shake").friction_model == FrictionModel::coulomb));
  BOOST_TEST(parse_scene(scene_with({{"scheme", "semi_implicit_euler"}}), "t").scheme ==
             "semi_implicit_euler");
  const auto refused = [&](const nlohmann::json& integrator, const std::string& word) {
    try {
      parse_scene(scene_with(integrator), "t");
    } catch (const InputError& e) {
      return std::string(e.what()).find(word) != std::string::npos;
    }
    return false;
  };
  BOOST_TEST(refused({{"scheme", "leapfrog"}}, "scheme"));
  BOOST_TEST(refused({{"scheme", "shake"}, {"impact_law", "plastic"}}, "impact_law"));
  BOOST_TEST(refused({{"scheme", "shake"}, {"closed_gap", 1e-9}}, "closed_gap"));
  // Kleinert's default: each CCP from zero.
  BOOST_TEST(!shake.options_of<ShakeOptions>("shake").warm_start);
  BOOST_TEST(parse_scene(scene_with({{"scheme", "shake"}, {"warm_start", true}}), "t")
                 .options_of<ShakeOptions>("shake")
                 .warm_start);
  BOOST_TEST(refused({{"scheme", "semi_implicit_euler"}, {"warm_start", true}}, "warm_start"));
}

// ShakeOptions::warm_start: a column of 5 non-rotating spheres resting on the floor carries,
// each step, the closed-form impulses (5 - k) m g h on its k-th contact from below (SHAKE with
// the gaps closed and the column at rest: r = -g h per sphere). Warm-started from the previous
// step's impulses, the solver starts at that solution and has nothing to iterate from the
// second step on; from zero it iterates every step. Both give the closed form.
BOOST_AUTO_TEST_CASE(WarmStartStartsFromThePreviousImpulses) {
  const double radius = 0.05, h = 1e-2;
  const int count = 5;
  const auto iterations_at_step_3 = [&](bool warm) {
    World world = ground_and_ball(radius, 0.0, 0.0, kGravity);
    for (int k = 1; k < count; ++k) {
      RigidBody ball = world.bodies[1];
      ball.name = "ball " + std::to_string(k);
      ball.position.y() = radius + 2.0 * radius * k;
      world.add_body(ball);
    }
    ShakeOptions o = options(ShakeScheme::shake, h, false, 0.5 * radius);
    o.warm_start = warm;
    ShakeStepper stepper(world, o, make("apgd", true));
    int iterations = 0;
    for (int step = 1; step <= 3; ++step) {
      const StepReport& report = stepper.step();
      BOOST_REQUIRE(report.solver_stats.converged);
      BOOST_REQUIRE_EQUAL(report.contacts.size(), static_cast<std::size_t>(count));
      const double weight_impulse = world.bodies[1].mass * kGravity * h;
      for (std::size_t c = 0; c < report.contacts.size(); ++c) {
        // The contact under the sphere of body index b (1 = the lowest) carries the weight of
        // the spheres from it up: count - (b - 1) of them.
        const int below = std::max(report.contacts[c].body_a, report.contacts[c].body_b) - 1;
        BOOST_TEST(report.impulses(c) / weight_impulse == count - below,
                   boost::test_tools::tolerance(kClosedFormTolerance));
      }
      iterations = report.solver_stats.iterations;
    }
    return iterations;
  };
  const int warm = iterations_at_step_3(true), cold = iterations_at_step_3(false);
  BOOST_TEST(warm <= 1);
  BOOST_TEST(cold > warm);
}
