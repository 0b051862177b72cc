#define BOOST_TEST_MODULE ipm_body_space
// The interior point method's Newton system in the body space (conic/body_space_system.cpp,
// the Woodbury form of N + W^2 with N = F^T F, F = M^-1/2 H S), the CG warm start of the
// corrector and the stop on the paper's error(gamma, u): on a heap of balls whose Delassus
// matrix is singular (more contact rows than body degrees of freedom), the forms agree with
// each other and with the direct back-end. The heap is built with every other ball
// rotation-locked (6 rows per body in the body space), with all of them locked (3 rows, and
// the proportional form of body_space_operator.hpp: the two sides of a contact differ by the
// balls' masses, which differ) and with none locked.
#include <omp.h>

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <ostream>
#include <string>
#include <vector>

#include "moreau/collision/collision_detector.hpp"
#include "moreau/contact/contact_system.hpp"
#include "moreau/solver/interior_point_solver.hpp"
#include "moreau/solver/merit.hpp"
#include "test_support.hpp"

using namespace moreau;

namespace {

constexpr double kGravity = 9.81;
constexpr double kTimeStep = 1e-2;
constexpr double kRadius = 0.1;

// A 3 x 3 layer of touching balls on the floor and four balls in its hollows, of densities
// 1,000-4,600 kg/m^3, rotation-locked as `locking` says (Kleinert's piles have only locked
// ones): 25+ contacts on 13 balls.
enum class Locking { every_other, all, none };
std::ostream& operator<<(std::ostream& out, Locking locking) {
  return out << (locking == Locking::all    ? "all locked"
                 : locking == Locking::none ? "none locked"
                                            : "every other locked");
}
struct Heap {
  World world;
  std::vector<Contact> contacts;
  std::unique_ptr<ContactSystem> system;
  ConeProblem problem;
};

Heap make_heap(Locking locking = Locking::every_other) {
  Heap heap;
  heap.world = test::floor_world(0.4, kGravity);
  std::vector<Vec3> centres;
  for (int i = -1; i <= 1; ++i)
    for (int k = -1; k <= 1; ++k) centres.emplace_back(2 * kRadius * i, kRadius, 2 * kRadius * k);
  const double upper = kRadius + std::sqrt(2.0) * kRadius;
  for (const double i : {-1.0, 1.0})
    for (const double k : {-1.0, 1.0}) centres.emplace_back(kRadius * i, upper, kRadius * k);
  for (std::size_t b = 0; b < centres.size(); ++b) {
    const int body = test::add_ball(heap.world, kRadius, 1000.0 + 300.0 * b, centres[b]);
    heap.world.bodies[body].rotation_locked =
        locking == Locking::all || (locking == Locking::every_other && b % 2 == 0);
  }
  CollisionOptions collision;
  collision.margin = 0.5 * kRadius;
  heap.contacts = detect_contacts(heap.world, collision);
  heap.system = std::make_unique<ContactSystem>(heap.world, heap.contacts, 3);
  // One time step under gravity from rest: q = J v_free + gap / h on the normal rows.
  VecX free_velocity = VecX::Zero(6 * static_cast<int>(heap.world.bodies.size()));
  for (std::size_t b = 1; b < heap.world.bodies.size(); ++b) {
    free_velocity[6 * b + 1] = -kGravity * kTimeStep;
  }
  heap.problem.delassus = heap.system.get();
  heap.problem.q = local_velocities(heap.world, heap.contacts, free_velocity, 3);
  for (std::size_t i = 0; i < heap.contacts.size(); ++i) {
    heap.problem.q[3 * i] += heap.contacts[i].gap / kTimeStep;
  }
  heap.problem.mu = friction_coefficients(heap.world, heap.contacts);
  heap.problem.friction_model = FrictionModel::convex_relaxation;
  return heap;
}

// The interior point solver to `tolerance` from zero, with the core method's `core` options.
InteriorPointSolver tight(double tolerance, const conic::InteriorPointOptions& core = {},
                          IpmStopping stopping = IpmStopping::merit) {
  IpmOptions options;
  options.tolerance = tolerance;
  options.warm_start = false;
  options.core = core;
  options.stopping = stopping;
  return InteriorPointSolver(options);
}

struct Variant {
  std::string name;
  conic::InteriorPointOptions options;
};

std::vector<Variant> variants() {
  std::vector<Variant> out(6);
  out[0].name = "body space";
  out[1].name = "cone variables";
  out[1].options.body_space = false;
  out[2].name = "body space, corrector from zero";
  out[2].options.warm_start_corrector = false;
  out[3].name = "direct";
  out[3].options.backend = conic::LinearBackend::cholmod;
  out[4].name = "body space, matrix-free product";
  out[4].options.assemble_body_space = false;
  out[5].name = "body space, body-block preconditioner";
  out[5].options.body_space_preconditioner = conic::BodySpacePreconditioner::body_blocks;
  return out;
}

}  // namespace

BOOST_AUTO_TEST_CASE(jacobian_halves_compose_the_delassus_product) {
  const Heap heap = make_heap();
  // More contact rows than the 13 balls' 3 translations (+ 3 rotations for half of them):
  // W is singular.
  BOOST_TEST_MESSAGE(heap.problem.contact_count() << " contacts");
  BOOST_REQUIRE(3 * heap.problem.contact_count() > 3 * 13 + 3 * 6);
  const ContactSystem& system = *heap.system;
  VecX x = VecX::LinSpaced(heap.problem.size(), -1.0, 2.0);
  VecX product, impulse, y;
  system.apply(x, product);
  system.apply_jacobian_transpose(x, impulse);
  const VecX reference = system.assemble_jacobian().transpose() * x;
  BOOST_TEST((impulse - reference).norm() <= 1e-12 * reference.norm());
  for (int b = 0; b < system.body_count(); ++b) {
    impulse.segment<6>(6 * b) = system.inverse_mass(b).apply(impulse.segment<6>(6 * b));
  }
  system.apply_jacobian(impulse, y);
  BOOST_TEST((y - product).norm() <= 1e-12 * product.norm());
}

// The velocities u = W r + q of the solution set are unique (a convex QP's W r is), the
// impulses are not where W is singular: the variants are compared on u and each must meet
// the merit.
BOOST_AUTO_TEST_CASE(newton_system_forms_agree) {
  for (const Locking locking : {Locking::every_other, Locking::all, Locking::none}) {
    BOOST_TEST_CONTEXT(locking) {
      const Heap heap = make_heap(locking);
      std::vector<VecX> velocities;
      std::vector<int> krylov;
      for (const Variant& variant : variants()) {
        BOOST_TEST_CONTEXT(variant.name) {
          const InteriorPointSolver solver = tight(1e-9, variant.options);
          VecX r;
          const SolverStats stats = solver.solve(heap.problem, r);
          BOOST_TEST(stats.converged, stats.stop_reason);
          BOOST_TEST(stats.merit <= 1e-9);
          BOOST_TEST_MESSAGE(locking << ", " << variant.name << ": " << stats.iterations
                                     << " Newton steps, " << stats.krylov_iterations
                                     << " Krylov iterations");
          VecX u;
          heap.system->apply(r, u);
          velocities.push_back(u + heap.problem.q);
          krylov.push_back(stats.krylov_iterations);
          if (variant.options.backend == conic::LinearBackend::conjugate_gradient) {
            BOOST_TEST(stats.krylov_iterations > 0);
          }
        }
      }
      // The body space exists for piles of locked balls: there its CG needs a fraction of the
      // cone variables' Krylov iterations (386 against 3,936 with every ball locked, 1,718
      // against 5,476 with every other). The check also guards the body-space product
      // itself: a wrong one is hidden from the solution by the polish in the cone variables,
      // not from the count (a 10% error in one side's coefficient: 2,624). With no ball locked
      // the body space takes more (7,760 against 1,338: its capped solves are worse than zero
      // there and the cone variables take over), a known weakness, not checked.
      if (locking != Locking::none) BOOST_TEST(2 * krylov[0] < krylov[1]);
      // The assembled and the matrix-free product are the same K up to rounding (their
      // products agree to 1e-8 relative here): with every ball locked, the same CG to within
      // 15 %, while a wrong block changes the count severalfold (as above: 2,624). Measured:
      // 386 against 349 (11 %). The CG evaluates its stopping test where its estimate reaches
      // the tolerance, so two products that differ by rounding stop at different evaluations
      // and the Newton path follows. With rotating balls the counts differ by up
      // to 30 % either way (1,718 / 1,328 every other locked, 7,760 / 9,111 none): there the
      // late Newton steps' K spans many decades and the CG's path follows the rounding; the
      // velocities are compared below.
      // (Both with the body-block preconditioner, variant 5; the default's Gauss-Seidel took
      // 334 here.)
      if (locking == Locking::all) BOOST_TEST(std::abs(krylov[4] - krylov[5]) <= 0.15 * krylov[5]);
      const double scale = heap.problem.q.norm();
      for (std::size_t k = 1; k < velocities.size(); ++k) {
        BOOST_TEST((velocities[k] - velocities[0]).norm() <= 1e-6 * scale, "variant " << k);
      }
    }
  }
}

// A lattice of 8,820 locked balls on a floor: above the body count (8,192) from which the
// body-space loops run on several threads, where the assembled product splits its rows between
// the threads and hands the couplings that cross a split to their owner. On one and two
// threads, assembled and matrix-free, the velocities agree and the Krylov counts are those of
// one K.
BOOST_AUTO_TEST_CASE(assembled_product_on_threads_agrees_with_the_matrix_free_one) {
  World world = test::floor_world(0.25, kGravity);
  for (int i = 0; i < 21; ++i)
    for (int j = 0; j < 20; ++j)
      for (int k = 0; k < 21; ++k) {
        // Radii 0.095-0.1 (touching within the margin), densities varied: the two sides of
        // a contact differ.
        const double radius = kRadius * (0.95 + 0.05 * ((i + 2 * j + 3 * k) % 3) / 2.0);
        const int body =
            test::add_ball(world, radius, 1000.0 + 100.0 * ((i * 7 + k) % 5),
                           Vec3(2 * kRadius * i, kRadius + 2 * kRadius * j, 2 * kRadius * k));
        world.bodies[body].rotation_locked = true;
      }
  CollisionOptions collision;
  collision.margin = 0.1 * kRadius;
  const std::vector<Contact> contacts = detect_contacts(world, collision);
  const ContactSystem system(world, contacts, 3);
  VecX free_velocity = VecX::Zero(6 * static_cast<int>(world.bodies.size()));
  for (std::size_t b = 1; b < world.bodies.size(); ++b)
    free_velocity[6 * b + 1] = -kGravity * kTimeStep;
  ConeProblem problem;
  problem.delassus = &system;
  problem.q = local_velocities(world, contacts, free_velocity, 3);
  for (std::size_t i = 0; i < contacts.size(); ++i) problem.q[3 * i] += contacts[i].gap / kTimeStep;
  problem.mu = friction_coefficients(world, contacts);
  problem.friction_model = FrictionModel::convex_relaxation;
  BOOST_TEST_MESSAGE(world.bodies.size() - 1 << " balls, " << contacts.size() << " contacts");
  BOOST_REQUIRE(world.bodies.size() > 8193);

  // Runs: body blocks assembled and matrix-free on 1 and 2 threads (0-3), then symmetric
  // Gauss-Seidel on 1 and 2 threads (4-5; on two, its sweeps split the bodies in two ranges
  // and their separators).
  std::vector<VecX> velocities;
  std::vector<int> krylov;
  const int threads_before = omp_get_max_threads();
  auto run = [&](int threads, bool assembled, conic::BodySpacePreconditioner preconditioner) {
    omp_set_num_threads(threads);
    conic::InteriorPointOptions options;
    options.assemble_body_space = assembled;
    options.body_space_preconditioner = preconditioner;
    const InteriorPointSolver solver = tight(1e-4, options, IpmStopping::kleinert_error);
    VecX r;
    const SolverStats stats = solver.solve(problem, r);
    BOOST_TEST_MESSAGE(threads << " thread(s), " << (assembled ? "assembled" : "matrix-free")
                               << ", " << conic::to_string(preconditioner) << ": "
                               << stats.iterations << " Newton steps, " << stats.krylov_iterations
                               << " Krylov iterations");
    BOOST_TEST(stats.converged, stats.stop_reason);
    VecX u;
    system.apply(r, u);
    velocities.push_back(u + problem.q);
    krylov.push_back(stats.krylov_iterations);
  };
  for (const int threads : {1, 2}) {
    for (const bool assembled : {true, false})
      run(threads, assembled, conic::BodySpacePreconditioner::body_blocks);
  }
  for (const int threads : {1, 2})
    run(threads, true, conic::BodySpacePreconditioner::symmetric_gauss_seidel);
  omp_set_num_threads(threads_before);
  for (std::size_t k = 1; k < krylov.size(); ++k) {
    if (k < 4) BOOST_TEST(std::abs(krylov[k] - krylov[0]) <= 0.02 * krylov[0] + 2, "run " << k);
    // The paper's error at 1e-4 bounds the velocities' differences to about that, relative.
    BOOST_TEST((velocities[k] - velocities[0]).norm() <= 1e-3 * problem.q.norm(), "run " << k);
  }
  // Gauss-Seidel sees the couplings the body blocks leave to the Krylov space: measured 74
  // (one thread) and 94 (two: the separators, 5 % of this small lattice's bodies, go last)
  // against 215 Krylov iterations. A wrong sweep makes the preconditioner unsymmetric or not
  // K's, which CG shows in its count (or its curvature) long before the velocities.
  BOOST_TEST(krylov[4] < 0.5 * krylov[0]);
  BOOST_TEST(krylov[5] < 0.6 * krylov[0]);
}

BOOST_AUTO_TEST_CASE(stops_on_the_paper_error) {
  const Heap heap = make_heap();
  const InteriorPointSolver solver = tight(1e-7, {}, IpmStopping::kleinert_error);
  VecX r;
  const SolverStats stats = solver.solve(heap.problem, r);
  BOOST_TEST(stats.converged, stats.stop_reason);
  BOOST_TEST(stats.criterion == "kleinert_error");
  BOOST_TEST(stats.criterion_value <= 1e-7);
  BOOST_TEST(stats.criterion_value == stats.kleinert_error);
  BOOST_REQUIRE(!stats.merit_history.empty());
  // The history is the paper's error: its last entry is the returned iterate's (the best one).
  BOOST_TEST(stats.merit_history.back() <= 1e-7);
  BOOST_TEST(stats.merit == merit(heap.problem, r), boost::test_tools::tolerance(1e-12));
}

// The predictor's CG to a relative residual of its own right-hand side (the blade trench's
// setting, conic::InteriorPointOptions::predictor_relative_residual): on the locked heap at the
// trench's stopping rule it converges to the impulses of the residual-scaled predictor, within
// what the tolerance allows, in no more Krylov iterations (its predictor solves are looser).
BOOST_AUTO_TEST_CASE(relative_predictor_residual_converges) {
  const Heap heap = make_heap(Locking::all);
  conic::InteriorPointOptions relative;
  relative.predictor_relative_residual = 0.1;
  VecX r_default, r_relative;
  const SolverStats by_default =
      tight(1e-5, {}, IpmStopping::kleinert_error).solve(heap.problem, r_default);
  const SolverStats by_relative =
      tight(1e-5, relative, IpmStopping::kleinert_error).solve(heap.problem, r_relative);
  BOOST_TEST_MESSAGE("residual-scaled predictor: "
                     << by_default.iterations << " Newton steps, " << by_default.krylov_iterations
                     << " Krylov; relative: " << by_relative.iterations << ", "
                     << by_relative.krylov_iterations);
  BOOST_TEST(by_default.converged, by_default.stop_reason);
  BOOST_TEST(by_relative.converged, by_relative.stop_reason);
  BOOST_TEST(by_relative.kleinert_error <= 1e-5);
  // Both stop at an error of 1e-5 on the same CCP: the normal impulses agree to 1e-3 of the
  // largest impulse (the tangential ones of a heap with more contact rows than body degrees of
  // freedom need not be unique).
  const double scale = r_default.cwiseAbs().maxCoeff();
  for (Eigen::Index i = 0; i < r_default.size(); i += 3) {
    BOOST_TEST(std::abs(r_default[i] - r_relative[i]) <= 1e-3 * scale, "normal row " << i);
  }
  BOOST_TEST(by_relative.krylov_iterations <= by_default.krylov_iterations);
}
