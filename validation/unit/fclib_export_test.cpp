#define BOOST_TEST_MODULE fclib_export
#include <boost/test/unit_test.hpp>
// Export of a time step's contact problem to FCLIB (moreau/fclib/step_export.hpp): the
// exported operators are checked against the mechanics of the scene (masses, inertias, the
// Delassus operator of a sphere on a floor) and against each other (the global form reduces
// to the local one), and the files round-trip.
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <optional>

#include "moreau/fclib/fclib.hpp"
#include "moreau/fclib/step_export.hpp"
#include "moreau/integrator/semi_implicit_euler.hpp"
#include "moreau/model/shape.hpp"
#include "moreau/model/world.hpp"
#include "test_support.hpp"

using namespace moreau;
namespace fs = std::filesystem;

namespace {

constexpr double kGravity = 9.81;
constexpr double kTimeStep = 1e-3;
// Exact formulas vs the exporter's products of a few double-precision numbers.
constexpr double kRoundoff = 1e-12;

World make_world(Dimension dimension) { return test::floor_world(0.4, kGravity, dimension); }

int add_ball(World& world, double radius, const Vec3& position) {
  return test::add_ball(world, radius, 1000.0, position);
}

test::EulerSetup options(bool frictional) {
  test::EulerSetup step;
  step.time_step = kTimeStep;
  step.frictional = frictional;
  step.collision.margin = 1e-3;  // keeps the resting contacts at gap 0
  step.solver = "pgs";
  step.solver_options.tolerance = 1e-12;
  step.solver_options.max_iterations = 10000;
  return step;
}

// Steps once and returns the export of that step.
fclib::StepExport export_one_step(World& world, bool frictional) {
  auto stepper = test::euler_stepper(world, options(frictional));
  std::optional<fclib::StepExport> exported;
  stepper.set_problem_observer(
      [&](const StepProblem& problem) { exported = fclib::export_step(problem, "test"); });
  stepper.step();
  BOOST_REQUIRE(exported.has_value());
  return *exported;
}

double relative_difference(const MatX& a, const MatX& b) { return (a - b).norm() / b.norm(); }

}  // namespace

// A solid sphere resting on a fixed floor (3D, Coulomb friction): the contact's Delassus block
// is diag(1/m, 1/m + R^2/I, 1/m + R^2/I) = diag(1, 3.5, 3.5)/m for I = 2/5 m R^2, q_n = -g dt,
// the impulse carries the weight, r_n = m g dt, and the global form has the six degrees of
// freedom of the sphere with M = diag(m, m, m, I, I, I).
BOOST_AUTO_TEST_CASE(sphere_on_floor_exports_its_mechanics) {
  const double radius = 0.5;
  World world = make_world(Dimension::three);
  const int ball = add_ball(world, radius, Vec3(0.0, radius, 0.0));
  const double m = world.bodies[ball].mass;
  const double inertia = 0.4 * m * radius * radius;
  const fclib::StepExport out = export_one_step(world, true);

  const fclib::LocalProblem& local = *out.local.local;
  BOOST_TEST(local.spacedim == 3);
  const Vec3 diagonal(1.0 / m, 3.5 / m, 3.5 / m);
  BOOST_TEST(relative_difference(MatX(local.W.matrix), MatX(diagonal.asDiagonal())) < kRoundoff);
  BOOST_TEST(std::abs(local.q[0] + kGravity * kTimeStep) < kRoundoff);
  BOOST_TEST(local.q.tail(2).norm() < kRoundoff);
  BOOST_TEST(local.mu.size() == 1);
  BOOST_TEST(local.mu[0] == 0.4);
  const fclib::Solution& solution = *out.local.solution;
  BOOST_TEST(std::abs(solution.r[0] - m * kGravity * kTimeStep) < 1e-10 * m * kGravity * kTimeStep);
  BOOST_TEST(fclib::natural_map_merit(local, solution.r) < 1e-10);

  const fclib::GlobalProblem& global = *out.global.global;
  BOOST_TEST(global.dofs() == 6);
  Eigen::Matrix<double, 6, 1> mass;
  mass << m, m, m, inertia, inertia, inertia;
  BOOST_TEST(relative_difference(MatX(global.M.matrix), MatX(mass.asDiagonal())) < kRoundoff);
  // The sphere stays at rest: v = 0 at the end of the step.
  BOOST_TEST(out.global.solution->v.norm() < 1e-10);
}

// FCLIB has no frictionless form: a frictionless 2D step is written with spacedim 2 and
// mu = 0. A disk keeps x, y and the rotation about z: M = diag(m, m, I) with I = m R^2 / 2,
// and its contact block is diag(1/m, 1/m + R^2/I) = diag(1, 3)/m.
BOOST_AUTO_TEST_CASE(frictionless_2d_step_is_written_with_zero_friction) {
  const double radius = 0.25;
  World world = make_world(Dimension::two);
  const int disk = add_ball(world, radius, Vec3(0.0, radius, 0.0));
  const double m = world.bodies[disk].mass;
  const fclib::StepExport out = export_one_step(world, false);
  const fclib::LocalProblem& local = *out.local.local;
  BOOST_TEST(local.spacedim == 2);
  BOOST_TEST(local.mu.size() == 1);
  BOOST_TEST(local.mu[0] == 0.0);
  BOOST_TEST(relative_difference(MatX(local.W.matrix),
                                 MatX(Eigen::Vector2d(1.0 / m, 3.0 / m).asDiagonal())) < kRoundoff);
  BOOST_TEST(out.local.solution->r[1] == 0.0);
  const fclib::GlobalProblem& global = *out.global.global;
  BOOST_TEST(global.dofs() == 3);
  BOOST_TEST(relative_difference(
                 MatX(global.M.matrix),
                 MatX(Eigen::Vector3d(m, m, 0.5 * m * radius * radius).asDiagonal())) < kRoundoff);
}

// A leaning column of three spheres on the floor: the global form reduces (W = H^T M^-1 H,
// q = H^T M^-1 f + w) to the local form, the stored solution satisfies both, and both files
// read back as written.
BOOST_AUTO_TEST_CASE(global_form_reduces_to_local_form_and_files_round_trip) {
  const double radius = 0.1;
  World world = make_world(Dimension::three);
  add_ball(world, radius, Vec3(0.0, radius, 0.0));
  add_ball(world, radius, Vec3(0.02, 3.0 * radius - 0.002, 0.01));
  add_ball(world, radius, Vec3(0.03, 5.0 * radius - 0.004, -0.01));
  const fclib::StepExport out = export_one_step(world, true);
  const fclib::LocalProblem& local = *out.local.local;
  BOOST_TEST(local.contact_count() == 3);
  const fclib::GlobalReduction reduction(*out.global.global);
  BOOST_TEST(relative_difference(MatX(reduction.local().W.matrix), MatX(local.W.matrix)) <
             kRoundoff);
  BOOST_TEST((reduction.local().q - local.q).norm() < kRoundoff * local.q.norm());
  const VecX& r = out.local.solution->r;
  BOOST_TEST((reduction.velocity(r) - out.global.solution->v).norm() <
             kRoundoff * (1.0 + out.global.solution->v.norm()));
  BOOST_TEST(fclib::natural_map_merit(local, r) < 1e-8);

  const fs::path directory =
      fs::temp_directory_path() / ("moreau_fclib_export_" + std::to_string(::getpid()));
  fs::create_directories(directory);
  fclib::write_file(directory / "local.hdf5", out.local);
  fclib::write_file(directory / "global.hdf5", out.global);
  const fclib::File local_back = fclib::read_file(directory / "local.hdf5");
  const fclib::File global_back = fclib::read_file(directory / "global.hdf5");
  fs::remove_all(directory);
  BOOST_TEST((MatX(local_back.local->W.matrix) == MatX(local.W.matrix)));
  BOOST_TEST((local_back.local->q == local.q));
  BOOST_TEST((local_back.solution->r == r));
  BOOST_TEST((MatX(global_back.global->H.matrix) == MatX(out.global.global->H.matrix)));
  BOOST_TEST((global_back.global->f == out.global.global->f));
  BOOST_TEST((global_back.solution->v == out.global.solution->v));
}
