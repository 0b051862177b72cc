#pragma once
// Fixtures shared by the unit tests (each includes Boost.Test first, after BOOST_TEST_MODULE).
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <memory>
#include <string>

#include "moreau/integrator/semi_implicit_euler.hpp"
#include "moreau/model/shape.hpp"
#include "moreau/solver/solver.hpp"
#include "moreau/solver/solver_registry.hpp"

namespace moreau::test {

// Semi-implicit Euler options together with the contact solver the test runs them with: its
// common options, and the relaxation of the solvers that take one (pgs, pgj, md_*).
struct EulerSetup : SemiImplicitEulerOptions {
  std::string solver = "pgs";
  SolverOptions solver_options;
  double relaxation = 1.0;
};

inline std::unique_ptr<ContactSolver> solver_of(const EulerSetup& setup) {
  AnySolverOptions options = default_solver_options(setup.solver, setup.solver_options);
  if (has_solver_option(setup.solver, "relaxation"))
    set_solver_option(setup.solver, options, "relaxation", setup.relaxation);
  return make_solver(setup.solver, options);
}

// A world with gravity -g e_y, one friction coefficient for every pair and a fixed floor
// y <= 0 as body 0.
inline World floor_world(double mu, double gravity, Dimension dimension = Dimension::three) {
  World world;
  world.dimension = dimension;
  world.gravity = Vec3(0.0, -gravity, 0.0);
  world.friction = FrictionTable(mu);
  RigidBody floor;
  floor.name = "floor";
  floor.motion = Motion::fixed;
  floor.shape.geometry = HalfSpace{Vec3::UnitY()};
  world.add_body(floor);
  return world;
}

// Fixed vertical walls (half-spaces facing inwards) at x = -half_width and x = half_width: a
// box on floor_world's floor.
inline void add_side_walls(World& world, double half_width) {
  for (const double x : {-half_width, half_width}) {
    RigidBody wall;
    wall.motion = Motion::fixed;
    wall.shape.geometry = HalfSpace{Vec3(x < 0 ? 1.0 : -1.0, 0.0, 0.0)};
    wall.position = Vec3(x, 0.0, 0.0);
    world.add_body(wall);
  }
}

// A solid ball (disk in 2D) of the given density; returns its body index.
inline int add_ball(World& world, double radius, double density, const Vec3& position,
                    const Vec3& velocity = Vec3::Zero()) {
  const MassProperties mass = mass_properties(Sphere{radius}, density, world.dimension);
  RigidBody ball;
  ball.shape.geometry = Sphere{radius};
  ball.mass = mass.mass;
  ball.inertia_body = mass.inertia;
  ball.position = position;
  ball.linear_velocity = velocity;
  return world.add_body(ball);
}

// The stepper of `setup` (returned by guaranteed copy elision: steppers do not move).
inline SemiImplicitEulerStepper euler_stepper(World& world, const EulerSetup& setup) {
  return SemiImplicitEulerStepper(world, setup, solver_of(setup));
}

// The step of a column of three balls of mass `mass` resting on the floor: the contact under
// ball k carries the weight of the balls above it and itself, (4 - k) m g dt, and no friction
// (the floor is body 0, the balls 1, 2, 3 from the bottom: a contact's upper body is the
// larger index).
inline void check_resting_column(const StepReport& report, double mass, double gravity,
                                 double time_step) {
  BOOST_TEST(report.contacts.size() == 3u);
  if (report.contacts.size() != 3u) return;
  for (std::size_t i = 0; i < 3; ++i) {
    const Contact& c = report.contacts[i];
    const double expected = (4 - std::max(c.body_a, c.body_b)) * mass * gravity * time_step;
    BOOST_TEST(report.impulses(3 * i) == expected, boost::test_tools::tolerance(1e-6));
    BOOST_TEST(std::hypot(report.impulses(3 * i + 1), report.impulses(3 * i + 2)) <=
               1e-6 * expected);
  }
}

}  // namespace moreau::test
