// Every solver of the registry (solver_names()) on the same contact problems, with answers
// that do not depend on the law the solver implements: resting stacks, where every law gives
// the weight above each contact and no friction, and a sliding point mass, where Coulomb's law
// and the maximum-dissipation model of Preclik et al. both give mu times the normal impulse
// against the slip. A solver added to the registry runs here without further code.
#define BOOST_TEST_MODULE conformance
#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "moreau/core/error.hpp"
#include "moreau/io/scene.hpp"
#include "moreau/model/shape.hpp"
#include "moreau/solver/apgd.hpp"
#include "moreau/solver/projected_gauss_seidel.hpp"
#include "moreau/solver/solver_registry.hpp"
#include "test_support.hpp"

namespace moreau {
namespace {

constexpr double kGravity = 9.81;
constexpr double kTimeStep = 1e-3;
constexpr double kRadius = 0.1;

constexpr double kDensity = 1000.0;  // kg/m^3

// Options under which each solver converges on these small problems: the Jacobi-type ones
// need a relaxation below 2 / lambda_max of their splitting (Tasora, Anitescu) and more
// iterations.
test::EulerSetup setup(const std::string& solver) {
  test::EulerSetup s;
  s.time_step = kTimeStep;
  s.collision.margin = 1e-3;
  s.solver = solver;
  s.solver_options.tolerance = 1e-10;
  s.solver_options.max_iterations = 200000;
  s.solver_options.warm_start = false;
  s.solver_options.record_history = false;
  const bool jacobi = solver == "pgj" || solver == "md_jacobi" || solver == "md_blend";
  if (jacobi) s.relaxation = 0.3;
  return s;
}

// A column of three balls resting on the floor: the contact under ball k carries the weight
// of the balls above it and itself, (3 - k) m g dt, and no friction.
void resting_column_carries_the_weight_above_each_contact(const std::string& solver) {
  World world = test::floor_world(0.5, kGravity);
  for (int k = 0; k < 3; ++k)
    test::add_ball(world, kRadius, kDensity, Vec3(0.0, kRadius * (1 + 2 * k), 0.0));
  const double mass = world.bodies[1].mass;
  auto stepper = test::euler_stepper(world, setup(solver));
  const StepReport& report = stepper.step();
  BOOST_TEST(report.solver_stats.converged,
             solver << ": " << to_string(report.solver_stats.termination));
  test::check_resting_column(report, mass, kGravity, kTimeStep);
}

// A ball sliding on the floor at 1 m/s (too fast to stop in one step): the friction impulse is
// mu times the normal one, against the slip, for Coulomb's law and maximum dissipation alike.
void sliding_ball_gets_mu_times_the_normal_impulse_against_the_slip(const std::string& solver) {
  constexpr double kMu = 0.3;
  World world = test::floor_world(kMu, kGravity);
  const double mass =
      world.bodies[test::add_ball(world, kRadius, kDensity, Vec3(0.0, kRadius, 0.0), Vec3::UnitX())]
          .mass;
  auto stepper = test::euler_stepper(world, setup(solver));
  const StepReport& report = stepper.step();
  BOOST_TEST(report.solver_stats.converged, solver);
  BOOST_TEST(report.contacts.size() == 1u);
  if (report.contacts.size() != 1u) return;
  const Contact& c = report.contacts[0];
  const Vec3 r = report.impulses.head<3>();
  const double normal = mass * kGravity * kTimeStep;
  BOOST_TEST(r(0) == normal, boost::test_tools::tolerance(1e-6));
  const Vec3 friction = r(1) * c.tangent1 + r(2) * c.tangent2;  // on the ball (body b)
  const double sign = c.body_b == 1 ? 1.0 : -1.0;
  BOOST_TEST(sign * friction.x() == -kMu * normal, boost::test_tools::tolerance(1e-6));
  BOOST_TEST(std::abs(friction.z()) <= 1e-6 * normal);
}

// A solver the registry lists runs here with no code of its own (Gauss-Seidel and Jacobi
// solvers, APGD, the maximum-dissipation and NLGS families alike).
BOOST_AUTO_TEST_CASE(every_registered_solver_solves_the_shared_problems) {
  for (const std::string& solver : solver_names()) {
    BOOST_TEST_CONTEXT("solver " << solver) {
      resting_column_carries_the_weight_above_each_contact(solver);
      sliding_ball_gets_mu_times_the_normal_impulse_against_the_slip(solver);
    }
  }
}

// Every registered solver takes its own options struct: the registry's default one makes the
// solver, another solver's struct is refused naming the one it takes, and a scene naming the
// solver loads with the common keys into that struct.
BOOST_AUTO_TEST_CASE(every_registered_solver_takes_its_own_options_struct) {
  for (const std::string& solver : solver_names()) {
    BOOST_TEST_CONTEXT("solver " << solver) {
      const AnySolverOptions options = default_solver_options(solver);
      BOOST_TEST(make_solver(solver, options)->name() == solver);
      const AnySolverOptions other =
          solver == "pgs" ? AnySolverOptions(ApgdOptions{}) : AnySolverOptions(PgsOptions{});
      try {
        make_solver(solver, other);
        BOOST_ERROR("another solver's options were accepted");
      } catch (const InputError& e) {
        BOOST_TEST(std::string(e.what()).find("takes " + options_type_name(options)) !=
                   std::string::npos);
      }
      const nlohmann::json document = {
          {"time_step", 0.001},
          {"steps", 1},
          {"solver",
           {{"name", solver}, {"tolerance", 1e-9}, {"max_iterations", 50}, {"warm_start", false}}}};
      const Scene scene = parse_scene(document, "scene.json");
      BOOST_TEST(options_type_name(scene.solver_options) == options_type_name(options));
      BOOST_TEST(common_options(scene.solver_options).max_iterations == 50);
      BOOST_TEST(common_options(scene.solver_options).tolerance == 1e-9);
    }
  }
  BOOST_CHECK_THROW(default_solver_options("nlgs-xyz"), InputError);
  BOOST_CHECK_THROW(make_solver("no_such_solver"), InputError);
}

}  // namespace
}  // namespace moreau
