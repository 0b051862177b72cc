#define BOOST_TEST_MODULE variational_body_space
// The dynamic variational force problem (Krabbenhoft/NURBS chapter eq. 4.15) with N = F^T F
// passed as its factor F (3 rows per 2D body, conic::SparseFactorOperator) and its Newton
// systems solved in the body space (conic/body_space_system.cpp) or through the augmented
// quasi-definite KKT matrix (conic/quasi_definite_system.cpp, the default), each against the
// same problem with N assembled and solved in the cone variables: the same forces to the
// solver's tolerance, on random problems and on the steps of a small 2D pile.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "moreau/conic/conic_qp.hpp"
#include "moreau/core/error.hpp"
#include "moreau/variational/force_problem.hpp"
#include "moreau/variational/variational_stepper.hpp"
#include "test_support.hpp"

using namespace moreau;
using namespace moreau::variational;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// F of `contacts` contacts on `bodies` 2D bodies (3 rows each): contact i touches two distinct
// random bodies, or one (a wall) for every fourth; a random 3 x 2 block per side.
SparseMatrix random_factor(std::mt19937& rng, int bodies, int contacts) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_int_distribution<int> body(0, bodies - 1);
  std::vector<Eigen::Triplet<double>> triplets;
  for (int i = 0; i < contacts; ++i) {
    const int a = body(rng);
    int b = body(rng);
    while (b == a) b = body(rng);
    for (const int side : {a, b}) {
      if (side == b && i % 4 == 0) continue;
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 2; ++k) triplets.emplace_back(3 * side + j, 2 * i + k, u(rng));
    }
  }
  SparseMatrix f(3 * bodies, 2 * contacts);
  f.setFromTriplets(triplets.begin(), triplets.end());
  return f;
}

// A dynamic force problem: more contacts than body degrees of freedom (N singular, as in a
// pile), mu in [0.2, 1] with every fifth contact frictionless, compliances (or rigid) and a
// shear history.
ForceProblem random_problem(unsigned seed, int bodies, int contacts, bool rigid) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  ForceProblem p;
  p.hessian_factor = random_factor(rng, bodies, contacts);
  p.friction = VecX::NullaryExpr(contacts, [&] { return 0.6 + 0.4 * u(rng); });
  for (int i = 0; i < contacts; i += 5) p.friction(i) = 0.0;
  p.linear = VecX::NullaryExpr(2 * contacts, [&] { return u(rng); });
  if (!rigid) {
    p.compliance = VecX::NullaryExpr(2 * contacts, [&] { return 0.055 + 0.045 * u(rng); });
    p.shear_history = VecX::NullaryExpr(contacts, [&] { return u(rng); });
  }
  return p;
}

// The two forms that use the factor; the reference, N assembled, uses neither.
enum class FactorForm { body_space, augmented_kkt };

conic::InteriorPointOptions factor_options(FactorForm form) {
  conic::InteriorPointOptions options = default_interior_point_options();
  options.body_space = form == FactorForm::body_space;
  options.augmented_kkt = form == FactorForm::augmented_kkt;
  return options;
}

conic::InteriorPointOptions assembled_options() {
  conic::InteriorPointOptions options = default_interior_point_options();
  options.body_space = false;
  options.augmented_kkt = false;
  return options;
}

ForceProblem assembled(ForceProblem p) {
  const SparseMatrix ft = p.hessian_factor.transpose();
  p.hessian = SparseMatrix(ft * p.hessian_factor);
  p.hessian_factor = SparseMatrix();
  return p;
}

}  // namespace

BOOST_AUTO_TEST_CASE(sparse_factor_operator_is_f_transpose_f) {
  std::mt19937 rng(3);
  const SparseMatrix f = random_factor(rng, 5, 8);
  const conic::SparseFactorOperator op(f, 3);
  const MatX n = MatX(f).transpose() * MatX(f);
  const VecX x = VecX::LinSpaced(16, -1.0, 2.0);
  VecX y;
  op.apply(x, y);
  BOOST_TEST((y - n * x).norm() <= 1e-13 * (n * x).norm());
  BOOST_TEST((MatX(op.assemble()) - n).norm() <= 1e-13 * n.norm());
  const Mat3 block = op.diagonal_block(4, 2);
  BOOST_TEST((block.topLeftCorner(2, 2) - n.block(4, 4, 2, 2)).norm() <= 1e-13 * n.norm());
  BOOST_TEST(op.factor()->blocks() == 5);
  BOOST_TEST(op.factor()->block_rows() == 3);
  VecX w, back;
  op.factor()->apply(x, w);
  op.factor()->apply_transpose(w, back);
  BOOST_TEST((back - y).norm() <= 1e-13 * y.norm());
}

BOOST_AUTO_TEST_CASE(sparse_factor_operator_rejects_bad_factors) {
  SparseMatrix f(6, 2);
  f.insert(0, 0) = 1.0;
  BOOST_CHECK_THROW(conic::SparseFactorOperator(f, 4), InputError);  // 6 rows, blocks of 4
  BOOST_CHECK_THROW(conic::SparseFactorOperator(f, 0), InputError);
  SparseMatrix three(9, 1);  // one column in three blocks
  three.insert(0, 0) = 1.0;
  three.insert(3, 0) = 1.0;
  three.insert(6, 0) = 1.0;
  BOOST_CHECK_THROW(conic::SparseFactorOperator(three, 3), InputError);
  f.coeffRef(1, 1) = std::nan("");
  BOOST_CHECK_THROW(conic::SparseFactorOperator(f, 3), InputError);
  ForceProblem p = random_problem(1, 4, 6, false);
  p.hessian = assembled(p).hessian;  // both given
  BOOST_CHECK_THROW(p.validate(), InputError);
}

BOOST_AUTO_TEST_CASE(factored_forces_match_the_assembled_problem) {
  struct Case {
    unsigned seed;
    int bodies, contacts;
    bool rigid;
  };
  for (const FactorForm form : {FactorForm::body_space, FactorForm::augmented_kkt})
    for (const Case c : {Case{11, 4, 9, false}, Case{12, 6, 14, false}, Case{13, 10, 25, false},
                         Case{14, 4, 9, true}, Case{15, 8, 20, true}, Case{16, 12, 30, false}}) {
      BOOST_TEST_CONTEXT("augmented " << (form == FactorForm::augmented_kkt) << ", seed " << c.seed
                                      << ", rigid " << c.rigid) {
        const ForceProblem factored = random_problem(c.seed, c.bodies, c.contacts, c.rigid);
        const ForceSolution a = solve_force_problem(factored, factor_options(form));
        const ForceSolution b = solve_force_problem(assembled(factored), assembled_options());
        BOOST_TEST_REQUIRE(a.converged());
        BOOST_TEST_REQUIRE(b.converged());
        // Each solve stops at tolerance 1e-8 (relative measures of force_problem.cpp); the forces
        // are unique (N + C > 0 on the active set here), so the two agree to a small multiple.
        const double scale = std::max(b.forces.cwiseAbs().maxCoeff(), 1.0);
        BOOST_TEST((a.forces - b.forces).cwiseAbs().maxCoeff() <= 1e-6 * scale,
                   "max difference " << (a.forces - b.forces).cwiseAbs().maxCoeff() / scale);
        BOOST_TEST((a.slack - b.slack).cwiseAbs().maxCoeff() <=
                   1e-6 * std::max(b.slack.cwiseAbs().maxCoeff(), 1.0));
      }
    }
}

BOOST_AUTO_TEST_CASE(factored_steps_match_the_assembled_steps) {
  // Twelve disks of two sizes dropped in a box, with contact elasticity and rigid: the same
  // trajectory with the body-space or augmented and the assembled Newton systems.
  for (const FactorForm form : {FactorForm::body_space, FactorForm::augmented_kkt})
    for (const double k : {1e6, kInf}) {
      World world = test::floor_world(0.5, 9.81, Dimension::two);
      test::add_side_walls(world, 0.2);
      for (int i = 0; i < 12; ++i) {
        const double r = i % 2 == 0 ? 0.05 : 0.035;
        test::add_ball(world, r, 1000.0,
                       Vec3(-0.14 + 0.1 * (i % 3) + 0.003 * i, 0.06 + 0.1 * (i / 3), 0.0));
      }
      World copy = world;
      VariationalOptions options;
      options.time_step = 5e-3;
      options.theta = 0.7;
      options.contact.stiffness = {k, 2.0 * k / 3.0};
      options.collision.margin = 0.02;
      options.interior_point = factor_options(form);
      VariationalStepper factored(world, options);
      options.interior_point = assembled_options();
      VariationalStepper cone_space(copy, options);
      for (int s = 1; s <= 60; ++s) {
        const StepReport& a = factored.step();
        const StepReport& b = cone_space.step();
        BOOST_TEST_CONTEXT("augmented " << (form == FactorForm::augmented_kkt) << ", k " << k
                                        << ", step " << s) {
          BOOST_TEST_REQUIRE(a.contacts.size() == b.contacts.size());
          BOOST_TEST(a.solver_stats.converged);
          BOOST_TEST(b.solver_stats.converged);
          if (b.impulses.size() == 0) continue;  // every detected contact screened out
          const double scale = std::max(b.impulses.cwiseAbs().maxCoeff(), 1e-3 * 9.81 * 5e-3);
          BOOST_TEST((a.impulses - b.impulses).cwiseAbs().maxCoeff() <= 1e-6 * scale);
        }
      }
      for (std::size_t i = 3; i < world.bodies.size(); ++i)
        BOOST_TEST((world.bodies[i].position - copy.bodies[i].position).norm() <= 1e-8);
    }
}
