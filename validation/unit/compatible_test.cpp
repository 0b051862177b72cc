#define BOOST_TEST_MODULE compatible
// GCC 12 reports a false -Wrestrict in std::string, inlined into the names Boost.Test builds
// for data-driven test cases (a known GCC 12 false positive); no code of this file is involved.
#pragma GCC diagnostic ignored "-Wrestrict"
#include <algorithm>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>
#include <ostream>
#include <random>

#include "moreau/compatible/compatible_cd.hpp"
#include "moreau/compatible/no_tension_truss.hpp"
#include "moreau/core/error.hpp"
#include "moreau/integrator/semi_implicit_euler.hpp"
#include "test_support.hpp"

using namespace moreau;
namespace bdata = boost::unit_test::data;

namespace moreau {
std::ostream& operator<<(std::ostream& out, ContactLaw law) { return out << to_string(law); }
std::ostream& operator<<(std::ostream& out, TrussMethod method) { return out << to_string(method); }
}  // namespace moreau

namespace {

const auto kMethods = bdata::make({TrussMethod::augmented_lagrangian, TrussMethod::interior_point});

NoTensionTrussOptions with_method(TrussMethod method) {
  NoTensionTrussOptions options;
  options.method = method;
  return options;
}

// A rigid bar carrying load W at x_load on point supports at x_i: the truss of Olsen & Kamrin
// eq. 32 in two degrees of freedom (vertical u, rotation theta). Rows: force, moment.
NoTensionTrussProblem bar_on_supports(const std::vector<double>& x, const std::vector<double>& k,
                                      double weight, double x_load, ContactLaw law) {
  NoTensionTrussProblem p;
  p.law = law;
  std::vector<Eigen::Triplet<double>> t;
  for (std::size_t i = 0; i < x.size(); ++i) {
    t.emplace_back(0, static_cast<int>(i), 1.0);
    t.emplace_back(1, static_cast<int>(i), x[i]);
  }
  p.equilibrium.resize(2, static_cast<Eigen::Index>(x.size()));
  p.equilibrium.setFromTriplets(t.begin(), t.end());
  p.load = Eigen::Vector2d(weight, weight * x_load);
  p.relative_stiffness = Eigen::Map<const VecX>(k.data(), static_cast<Eigen::Index>(k.size()));
  return p;
}

}  // namespace

// Olsen & Kamrin Sec. 8.1.2: k~ = (1, 3, 1) under w = 10 gives (2, 6, 2) for Hookean contacts; for
// Hertzian ones the symmetric bar has equal overlaps too, so f ~ k~ c^(3/2) keeps the ratio.
BOOST_DATA_TEST_CASE(StiffMiddleSupportCarriesThreeTimesMore,
                     bdata::make({ContactLaw::hookean, ContactLaw::hertzian}) * kMethods, law,
                     method) {
  const NoTensionTrussProblem p = bar_on_supports({0.0, 1.0, 2.0}, {1.0, 3.0, 1.0}, 10.0, 1.0, law);
  VecX f;
  const NoTensionTrussStats stats = solve_no_tension_truss(p, with_method(method), f);
  BOOST_TEST(stats.converged);
  // Truss solved to 1e-10 equilibrium and optimality; 1e-8 allows for conditioning.
  BOOST_TEST(std::abs(f(0) - 2.0) <= 1e-8);
  BOOST_TEST(std::abs(f(1) - 6.0) <= 1e-8);
  BOOST_TEST(std::abs(f(2) - 2.0) <= 1e-8);
}

// Compatibility from mechanics: the support overlaps of a rigid bar are affine in x,
// c_i = u + theta x_i, and each force is k_i c_i^(p-1) (zero where c_i < 0, no tension).
// So (f_i / k_i)^(1/(p-1)) must be affine in x over the loaded supports, and unloaded ones
// must lie where the affine overlap is <= 0.
BOOST_DATA_TEST_CASE(ForcesDeriveFromOneRigidDisplacement,
                     bdata::make({ContactLaw::hookean, ContactLaw::hertzian}) * bdata::xrange(6) *
                         kMethods,
                     law, seed, method) {
  std::mt19937 random(1000 + seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<double> x{0.0}, k;
  for (int i = 1; i < 5; ++i) x.push_back(x.back() + 0.3 + unit(random));
  for (int i = 0; i < 5; ++i) k.push_back(0.5 + 2.0 * unit(random));
  const double x_load = x.front() + (0.2 + 0.6 * unit(random)) * (x.back() - x.front());
  const NoTensionTrussProblem p = bar_on_supports(x, k, 7.0, x_load, law);
  VecX f;
  const NoTensionTrussStats stats = solve_no_tension_truss(p, with_method(method), f);
  BOOST_TEST(stats.converged);
  BOOST_TEST(stats.equilibrium_residual <= 1e-9);
  const double p_exponent = power_law_exponent(law);
  // Fit c = u + theta x through the two most loaded supports, then test all.
  std::vector<int> order{0, 1, 2, 3, 4};
  std::sort(order.begin(), order.end(), [&](int a, int b) { return f(a) > f(b); });
  auto overlap = [&](int i) {
    return std::pow(std::max(f(i), 0.0) / k[i], 1.0 / (p_exponent - 1.0));
  };
  const int i0 = order[0], i1 = order[1];
  const double theta = (overlap(i1) - overlap(i0)) / (x[i1] - x[i0]);
  const double u = overlap(i0) - theta * x[i0];
  const double scale = overlap(i0);
  for (int i = 0; i < 5; ++i) {
    BOOST_TEST(f(i) >= -1e-9);
    const double affine = u + theta * x[i];
    // Loaded supports: overlap matches the rigid displacement (1e-6 of the largest overlap,
    // well above the 1e-10 solver residual amplified by the 1/(p-1) power); unloaded ones
    // must be separating (affine overlap <= 0 up to the same tolerance).
    if (f(i) > 1e-7 * f(i0))
      BOOST_TEST(std::abs(overlap(i) - affine) <= 1e-6 * scale);
    else
      BOOST_TEST(affine <= 1e-6 * scale);
  }
}

BOOST_AUTO_TEST_CASE(SeriesStiffnessGivesPaperRatios) {
  // Olsen & Kamrin Sec. 8.2.2: E1 = 5 E0 gives even-even : even-odd : odd-odd = 1/5 : 1/3 : 1.
  const double ee = pair_relative_stiffness(1.0, 1.0), eo = pair_relative_stiffness(1.0, 5.0),
               oo = pair_relative_stiffness(5.0, 5.0);
  BOOST_TEST(std::abs(ee / oo - 0.2) <= 1e-15);
  BOOST_TEST(std::abs(eo / oo - 1.0 / 3.0) <= 1e-15);
  BOOST_TEST(pair_relative_stiffness(std::numeric_limits<double>::infinity(), 3.0) == 3.0);
}

BOOST_AUTO_TEST_CASE(InvalidTrussInputIsRejected) {
  NoTensionTrussProblem p = bar_on_supports({0.0, 1.0}, {1.0, -1.0}, 1.0, 0.5, ContactLaw::hookean);
  VecX f;
  BOOST_CHECK_THROW(solve_no_tension_truss(p, NoTensionTrussOptions{}, f), InputError);
  p = bar_on_supports({0.0, 1.0}, {1.0, 1.0}, 1.0, 0.5, ContactLaw::hookean);
  NoTensionTrussOptions options;
  options.penalty_growth = 1.0;
  BOOST_CHECK_THROW(solve_no_tension_truss(p, options, f), InputError);
}

// Alg. 1 end to end: a 3D sphere column on a fixed floor. The column is determinate, so
// compatible CD must return the classic forces: sphere k from the top carries k m g.
BOOST_DATA_TEST_CASE(DeterminateColumnKeepsClassicForces, kMethods, method) {
  World world;
  world.gravity = Vec3(0.0, -10.0, 0.0);
  RigidBody floor;
  floor.motion = Motion::fixed;
  floor.shape.geometry = HalfSpace{Vec3::UnitY()};
  world.add_body(floor);
  for (int k = 0; k < 4; ++k) {
    RigidBody s;
    s.mass = 2.0;
    s.inertia_body = Mat3::Identity() * 0.4 * 2.0 * 0.25;
    s.shape.geometry = Sphere{0.5};
    s.position = Vec3(0.0, 0.5 + k * 1.0, 0.0);
    world.add_body(s);
  }
  test::EulerSetup options;
  options.frictional = false;
  options.time_step = 1e-3;
  options.collision.margin = 0.05;
  options.solver = "apgd";
  options.solver_options.tolerance = 1e-12;
  options.compatible.enabled = true;
  options.compatible.truss.method = method;
  auto stepper = test::euler_stepper(world, options);
  for (int s = 0; s < 20; ++s) stepper.step();
  const StepReport& report = stepper.last_report();
  BOOST_TEST_REQUIRE(report.contacts.size() == 4u);
  BOOST_TEST(compatible_result(report).stats.converged);
  for (std::size_t i = 0; i < 4; ++i) {
    const Contact& c = report.contacts[i];
    const int lower = std::min(c.body_a, c.body_b);  // floor is body 0, spheres 1..4 bottom-up
    const double carried = (4 - lower) * 2.0 * 10.0;
    BOOST_TEST(std::abs(compatible_result(report).impulses(i) / options.time_step - carried) <=
               1e-6 * carried);
  }
}

// The two truss solvers minimize the same strictly convex energy, so they must return the
// same forces on an indeterminate network: a 2D pile of disks on a fixed row (each disk
// resting on two below), the case of the pyramid in miniature, Hookean and Hertzian with
// unequal relative stiffnesses.
BOOST_DATA_TEST_CASE(InteriorPointAgreesWithAugmentedLagrangian,
                     bdata::make({ContactLaw::hookean, ContactLaw::hertzian}), law) {
  World world;
  world.dimension = Dimension::two;
  world.gravity = Vec3(0.0, -10.0, 0.0);
  world.materials.clear();
  world.add_material({"soft", 1000.0, 1e9, 0.3, 1.0, 0.0});
  world.add_material({"stiff", 1000.0, 4e9, 0.3, 4.0, 0.0});
  const double radius = 0.5;
  const int base = 6;
  int index = 0;
  for (int layer = 0; layer < base; ++layer)
    for (int i = 0; i < base - layer; ++i, ++index) {
      RigidBody disk;
      disk.motion = layer == 0 ? Motion::fixed : Motion::dynamic;
      disk.mass = 1.0;
      disk.inertia_body = Mat3::Identity() * 0.5 * radius * radius;
      disk.shape.geometry = Sphere{radius};
      disk.position =
          Vec3((i + 0.5 * layer) * 2.0 * radius, radius + layer * std::sqrt(3.0) * radius, 0.0);
      disk.material = index % 3 == 0 ? 1 : 0;
      world.add_body(disk);
    }
  test::EulerSetup options;
  options.frictional = false;
  options.time_step = 1e-3;
  options.collision.margin = 0.01;
  options.solver = "apgd";
  options.solver_options.tolerance = 1e-12;
  auto stepper = test::euler_stepper(world, options);
  for (int s = 0; s < 10; ++s) stepper.step();
  std::vector<VecX> forces;
  for (TrussMethod method : {TrussMethod::augmented_lagrangian, TrussMethod::interior_point}) {
    CompatibleOptions compatible;
    compatible.enabled = true;
    compatible.law = law;
    compatible.truss.method = method;
    World copy = world;
    auto probe = test::euler_stepper(copy, options);
    probe.set_compatible(compatible);
    const StepReport& report = probe.step();
    BOOST_TEST(compatible_result(report).stats.converged);
    BOOST_TEST(report.contacts.size() > static_cast<std::size_t>(2 * (base - 1)));
    forces.push_back(compatible_result(report).impulses);
  }
  // Both stop at 1e-10 equilibrium and optimality on the scaled problem; 1e-8 relative
  // leaves room for the conditioning of the network (loads grow down the pile).
  BOOST_TEST((forces[0] - forces[1]).norm() <= 1e-8 * forces[0].norm());
}
