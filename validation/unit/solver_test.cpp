#define BOOST_TEST_MODULE solver
// GCC 12 reports a false -Wrestrict in std::string, inlined into the names Boost.Test builds
// for data-driven test cases (a known GCC 12 false positive); no code of this file is involved.
#pragma GCC diagnostic ignored "-Wrestrict"
#include "moreau/solver/solver.hpp"

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "moreau/contact/delassus.hpp"
#include "moreau/core/error.hpp"
#include "moreau/solver/cone.hpp"
#include "moreau/solver/merit.hpp"
#include "moreau/solver/solver_registry.hpp"

namespace bdata = boost::unit_test::data;
using namespace moreau;

namespace moreau {
std::ostream& operator<<(std::ostream& stream, FrictionModel model) {
  return stream << (model == FrictionModel::coulomb ? "coulomb" : "convex_relaxation");
}
}  // namespace moreau

namespace {

const std::vector<std::string> kSolvers = {"pgs", "pgj", "apgd"};

// The settings these tests vary, for pgs, pgj and apgd: their common options and merit check,
// and what only some of them read (relaxation: pgs, pgj; order: pgs; initial_lipschitz:
// apgd). options_of puts them into the solver's own struct and fails the test when a setting
// is given to a solver that has no such field.
struct Knobs : IterativeSolverOptions, ContactOrderOptions {
  double relaxation = 1.0;
  double initial_lipschitz = 0.0;
};

AnySolverOptions options_of(const std::string& solver, const Knobs& knobs) {
  AnySolverOptions any = default_solver_options(solver);
  any.common() = knobs;
  const auto set = [&](const std::string& key, double value, double unset) {
    if (has_solver_option(solver, key))
      set_solver_option(solver, any, key, value);
    else
      BOOST_TEST(value == unset, solver << " has no " << key);
  };
  set("check_every", knobs.check_every, 1);
  set("divergence_factor", knobs.divergence_factor, 1e8);
  set("relaxation", knobs.relaxation, 1.0);
  set("initial_lipschitz", knobs.initial_lipschitz, 0.0);
  if (ContactOrderOptions* order = any.contact_order())
    *order = knobs;
  else
    BOOST_TEST((knobs.order == ContactOrder::natural && knobs.custom_order.empty()),
               solver << " has no visiting order");
  return any;
}

// A problem that owns its Delassus operator (ConeProblem only points to it).
struct TestProblem {
  MatX dense;
  std::unique_ptr<SparseDelassus> delassus;
  ConeProblem problem;
};

TestProblem make_problem(const MatX& w, int rows, const VecX& q, const VecX& mu,
                         FrictionModel model) {
  TestProblem test;
  test.dense = w;
  test.delassus = std::make_unique<SparseDelassus>(SparseMatrix(w.sparseView()), rows);
  test.problem.delassus = test.delassus.get();
  test.problem.q = q;
  test.problem.mu = mu;
  test.problem.friction_model = model;
  return test;
}

// Feasible LCP with a known solution: W = A A^T (+ shift I), r* >= 0 and u* >= 0 drawn with
// complementary supports, q = u* - W r*. A is n x k: k > n with a shift gives an SPD W,
// k = n / 2 without shift a positive semi-definite W of rank n / 2 (A tall and thin), whose
// LCP still has the solution r* by construction.
TestProblem random_lcp(int n, bool rank_deficient, unsigned seed) {
  std::mt19937 generator(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const int k = rank_deficient ? std::max(1, n / 2) : n + 3;
  MatX a(n, k);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < k; ++j) a(i, j) = normal(generator);
  }
  MatX w = a * a.transpose();
  if (!rank_deficient) w += 0.01 * MatX::Identity(n, n);
  VecX r_star = VecX::Zero(n), u_star = VecX::Zero(n);
  for (int i = 0; i < n; ++i) {
    if (uniform(generator) < 0.5) {
      r_star[i] = 0.1 + uniform(generator);
    } else {
      u_star[i] = 0.1 + uniform(generator);
    }
  }
  return make_problem(w, 1, u_star - w * r_star, VecX(), FrictionModel::convex_relaxation);
}

// Delassus matrix W = J M^-1 J^T of `contacts` contacts between random pairs of `bodies`
// spheres (a body index -1 is the fixed ground): each contact row is d . (v + omega x arm)
// for the frame direction d, with u the velocity of b relative to a. rows = 2 is a planar
// world (3 dofs per body), rows = 3 a spatial one (6 dofs); rows = 1 keeps the normal only.
MatX random_contact_delassus(int contacts, int bodies, int rows, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::uniform_int_distribution<int> pick(-1, bodies - 1);
  const bool planar = rows == 2;
  const int dofs = planar ? 3 : 6;
  const int linear = planar ? 2 : 3;
  VecX inverse_mass(bodies * dofs);
  for (int b = 0; b < bodies; ++b) {
    const double mass = 1.0 + uniform(generator) * 0.5;  // kg
    const double radius = 0.5;                           // m
    const double inertia = 0.4 * mass * radius * radius;
    for (int k = 0; k < dofs; ++k) inverse_mass[b * dofs + k] = k < linear ? 1 / mass : 1 / inertia;
  }
  MatX jacobian = MatX::Zero(contacts * rows, bodies * dofs);
  for (int c = 0; c < contacts; ++c) {
    const int body_a = pick(generator);
    int body_b = pick(generator);
    while (body_b < 0 || body_b == body_a) body_b = pick(generator);
    const Vec3 normal =
        Vec3(uniform(generator), uniform(generator), planar ? 0.0 : uniform(generator))
            .normalized();
    const Vec3 tangent1 = planar ? Vec3(-normal.y(), normal.x(), 0.0) : normal.unitOrthogonal();
    const Vec3 frame[3] = {normal, tangent1, normal.cross(tangent1)};
    for (const int side : {0, 1}) {
      const int body = side == 0 ? body_a : body_b;
      if (body < 0) continue;
      const double sign = side == 0 ? -1.0 : 1.0;
      const Vec3 arm(0.5 * uniform(generator), 0.5 * uniform(generator),
                     planar ? 0.0 : 0.5 * uniform(generator));
      for (int k = 0; k < rows; ++k) {
        const Vec3 angular = arm.cross(frame[k]);
        auto row = jacobian.row(c * rows + k).segment(body * dofs, dofs);
        row.head(linear) += sign * frame[k].head(linear).transpose();
        if (planar) {
          row[2] += sign * angular.z();
        } else {
          row.tail<3>() += sign * angular.transpose();
        }
      }
    }
  }
  MatX w = jacobian * inverse_mass.asDiagonal() * jacobian.transpose();
  return 0.5 * (w + w.transpose());  // exact symmetry for SparseDelassus
}

// Frictional problem: approaching normal free velocities (q_n mostly < 0) and random slip.
TestProblem random_frictional_problem(int contacts, int rows, double mu, FrictionModel model,
                                      unsigned seed) {
  const MatX w = random_contact_delassus(contacts, contacts, rows, seed);
  std::mt19937 generator(seed + 1);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  VecX q(contacts * rows);
  for (int k = 0; k < q.size(); ++k)
    q[k] = k % rows == 0 ? uniform(generator) - 0.3 : uniform(generator);
  return make_problem(w, rows, q, VecX::Constant(contacts, mu), model);
}

// The relaxation of PGJ: the Jacobi splitting converges for omega < 2 / lambda_max(G W),
// G = diag(g_i) the local steps (Tasora & Anitescu 2011); half that bound is safe.
double safe_jacobi_relaxation(const TestProblem& test) {
  const int rows = test.problem.rows();
  VecX g_sqrt(test.dense.rows());
  for (int i = 0; i < test.problem.contact_count(); ++i) {
    const double step = rows / test.dense.block(i * rows, i * rows, rows, rows).trace();
    g_sqrt.segment(i * rows, rows).setConstant(std::sqrt(step));
  }
  const MatX scaled = g_sqrt.asDiagonal() * test.dense * g_sqrt.asDiagonal();
  const double largest = Eigen::SelfAdjointEigenSolver<MatX>(scaled).eigenvalues().maxCoeff();
  return std::min(1.0, 1.0 / largest);
}

Knobs options_for(const std::string& solver, const TestProblem& test) {
  Knobs options;
  options.warm_start = false;
  options.max_iterations = 200000;
  if (solver == "pgj") options.relaxation = safe_jacobi_relaxation(test);
  return options;
}

// What merit <= tol guarantees. With e_i = (r_i - P_K(r_i - D_i u^_i)) / D_i, |e_i| <= delta =
// tol * q_norm. Moreau's decomposition of r_i - D_i u^_i gives r_i - D_i e_i in K and
// D_i (e_i - u^_i) in K°, orthogonal to each other. Hence
//   dist(r_i, K) <= D_i delta,  dist(u^_i, K*) <= delta,
//   |r_i . u^_i| <= delta (|r_i| + D_i |u^_i|) + D_i delta^2.
// For one row these read r_i >= -D_i delta, u_i >= -delta and the bound on |r_i u_i| (the
// LCP's KKT conditions, Olsen & Kamrin eq. 23). kRoundOff covers the recomputation of u in double
// precision (relative to the magnitudes involved).
constexpr double kRoundOff = 1e-12;

void check_cone_complementarity(const ConeProblem& problem, const VecX& r, double tol) {
  const MeritScaling scaling = merit_scaling(problem);
  VecX u(problem.size());
  problem.delassus->apply(r, u);
  u += problem.q;
  const int rows = problem.rows();
  const double delta = tol * scaling.q_norm;
  double worst = 0.0;
  std::string worst_message = "none";
  const auto record = [&](double value, double bound, int contact, const char* what) {
    if (value / bound > worst) {
      worst = value / bound;
      std::ostringstream message;
      message << "contact " << contact << ": " << what << " = " << value << " > bound " << bound;
      worst_message = message.str();
    }
  };
  for (int i = 0; i < problem.contact_count(); ++i) {
    const double mu = rows > 1 ? problem.mu[i] : 0.0;
    Vec3 r_i = Vec3::Zero(), u_i = Vec3::Zero();
    r_i.head(rows) = r.segment(i * rows, rows);
    u_i.head(rows) = u.segment(i * rows, rows);
    if (rows > 1 && problem.friction_model == FrictionModel::coulomb) {
      u_i = de_saxce_velocity(u_i, mu, rows);
    }
    const double d = scaling.block_scale[i];
    const double slack = kRoundOff * (1.0 + r_i.norm() + d * u_i.norm());
    record((r_i - project_onto_cone(r_i, mu, rows)).norm(), d * delta + slack, i, "dist(r, K)");
    record((u_i - project_onto_dual_cone(u_i, mu, rows)).norm(), delta + slack, i, "dist(u^, K*)");
    record(std::abs(r_i.dot(u_i)),
           delta * (r_i.norm() + d * u_i.norm()) + d * delta * delta + slack * slack, i,
           "|r . u^|");
  }
  BOOST_TEST(worst <= 1.0, "worst violation " << worst << "x its bound: " << worst_message);
}

const int kLcpSizes[] = {2, 10, 40, 120};

}  // namespace

BOOST_AUTO_TEST_SUITE(lcp)

BOOST_DATA_TEST_CASE(solver_reaches_tolerance_on_spd_lcp_and_kkt_holds,
                     bdata::make(kSolvers) * bdata::make(kLcpSizes), solver, n) {
  const TestProblem test = random_lcp(n, false, 1000u + n);
  const Knobs options = options_for(solver, test);
  VecX r;
  const SolverStats stats =
      make_solver(solver, options_of(solver, options))->solve(test.problem, r);
  BOOST_TEST(stats.converged);
  BOOST_TEST(to_string(stats.termination) == "converged");
  BOOST_TEST(stats.merit <= options.tolerance);
  // PGS tracks W r incrementally: its merit differs from a fresh product by round-off of u
  // (relative to |q|, which normalises the merit).
  BOOST_TEST(std::abs(stats.merit - merit(test.problem, r)) <= 1e-13);
  check_cone_complementarity(test.problem, r, options.tolerance);
}

// W = A A^T with A tall and thin: singular, impulses not unique, velocities u = W r + q
// unique (the QP of Olsen & Kamrin eq. 22 is strictly convex in W^1/2 r); a solution exists by
// construction.
BOOST_DATA_TEST_CASE(solver_reaches_tolerance_on_rank_deficient_lcp_and_kkt_holds,
                     bdata::make(kSolvers) * bdata::make(kLcpSizes), solver, n) {
  const TestProblem test = random_lcp(n, true, 2000u + n);
  const Knobs options = options_for(solver, test);
  VecX r;
  const SolverStats stats =
      make_solver(solver, options_of(solver, options))->solve(test.problem, r);
  BOOST_TEST(stats.converged);
  BOOST_TEST(stats.merit <= options.tolerance);
  check_cone_complementarity(test.problem, r, options.tolerance);
}

// W = [[2, 1], [1, 2]], q = (-1, 1). Contact 0 pushed together, contact 1 separating: try
// r_1 = 0, then u_0 = 2 r_0 - 1 = 0 gives r_0 = 1/2 and u_1 = r_0 + 1 = 3/2 >= 0: the
// solution r = (1/2, 0), u = (0, 3/2) (unique, W is SPD).
BOOST_DATA_TEST_CASE(two_contact_lcp_matches_hand_solution, bdata::make(kSolvers), solver) {
  MatX w(2, 2);
  w << 2.0, 1.0, 1.0, 2.0;
  const TestProblem test =
      make_problem(w, 1, (VecX(2) << -1.0, 1.0).finished(), VecX(), FrictionModel::coulomb);
  Knobs options;
  options.warm_start = false;
  options.tolerance = 1e-13;
  if (solver == "pgj") options.relaxation = 0.3;
  VecX r;
  const SolverStats stats =
      make_solver(solver, options_of(solver, options))->solve(test.problem, r);
  BOOST_TEST(stats.converged);
  // merit <= 1e-13 bounds |min(r_i / D_i, u_i)| by 1e-13 |q| with D = 1/2; near the strictly
  // complementary solution that is the error of r itself (times W^-1 < 1), so 1e-12 holds.
  BOOST_TEST(r[0] == 0.5, boost::test_tools::tolerance(1e-12));
  BOOST_TEST(std::abs(r[1]) <= 1e-12);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(frictional)

const int kFrictionalRows[] = {2, 3};
const FrictionModel kModels[] = {FrictionModel::convex_relaxation, FrictionModel::coulomb};

// 60 contacts among 60 bodies: J has full row rank, W is SPD (asserted below), so the
// convex relaxation has a unique solution; mu = 0.3 keeps the Coulomb problem in the range
// where the solvers' fixed points converge.
BOOST_DATA_TEST_CASE(solver_reaches_tolerance_on_cone_problem_and_complementarity_holds,
                     bdata::make(kSolvers) * bdata::make(kFrictionalRows) * bdata::make(kModels),
                     solver, rows, model) {
  const TestProblem test = random_frictional_problem(60, rows, 0.3, model, 3000u + rows);
  const double smallest = Eigen::SelfAdjointEigenSolver<MatX>(test.dense).eigenvalues().minCoeff();
  BOOST_TEST_REQUIRE(smallest > 0.0);
  const Knobs options = options_for(solver, test);
  VecX r;
  const SolverStats stats =
      make_solver(solver, options_of(solver, options))->solve(test.problem, r);
  BOOST_TEST(stats.converged, "termination " << to_string(stats.termination) << " after "
                                             << stats.iterations << ", merit " << stats.merit);
  BOOST_TEST(stats.merit <= 1e-8);
  check_cone_complementarity(test.problem, r, options.tolerance);
}

// One 3D contact, W = I, q = (-1, 2, 0), mu = 0.5. Sliding along +t1 requires r_t = -mu r_n
// e_t1 and u_n = r_n - 1 = 0: r = (1, -0.5, 0), u = (0, 1.5, 0), and u_t is indeed along +t1.
// De Saxce: u^ = (0 + 0.5 * 1.5, 1.5, 0) lies on the boundary of K* and r . u^ = 0.
BOOST_DATA_TEST_CASE(coulomb_sliding_contact_matches_analytic_impulse, bdata::make(kSolvers),
                     solver) {
  const TestProblem test = make_problem(MatX::Identity(3, 3), 3, Vec3(-1.0, 2.0, 0.0),
                                        VecX::Constant(1, 0.5), FrictionModel::coulomb);
  BOOST_TEST(merit(test.problem, Vec3(1.0, -0.5, 0.0)) <= 1e-15);
  Knobs options;
  options.warm_start = false;
  options.tolerance = 1e-12;
  VecX r;
  const SolverStats stats =
      make_solver(solver, options_of(solver, options))->solve(test.problem, r);
  BOOST_TEST(stats.converged);
  // The local map r -> P_K(r - u^(r)) contracts here by 1/5 per step (derivation: the normal
  // error is multiplied by mu^2 / (1 + mu^2) = 0.2), so the error is of the order of the
  // residual, below 1e-12 |q|.
  const auto tol = boost::test_tools::tolerance(1e-10);
  BOOST_TEST(r[0] == 1.0, tol);
  BOOST_TEST(r[1] == -0.5, tol);
  BOOST_TEST(std::abs(r[2]) <= 1e-10);
}

// The same contact under the convex relaxation (Anitescu's cone complementarity): the
// solution is r = P_K(-q) = P_K((1, -2, 0)) = (1.6, -0.8, 0) (projection on the boundary ray
// (1, -0.5, 0): 2 / 1.25 = 1.6) and u = r + q = (0.6, 1.2, 0): the relaxation lifts the
// contact off with u_n = mu |u_t|, its known artefact.
BOOST_DATA_TEST_CASE(convex_relaxation_separates_sliding_contact_by_mu_times_slip,
                     bdata::make(kSolvers), solver) {
  const TestProblem test = make_problem(MatX::Identity(3, 3), 3, Vec3(-1.0, 2.0, 0.0),
                                        VecX::Constant(1, 0.5), FrictionModel::convex_relaxation);
  Knobs options;
  options.warm_start = false;
  options.tolerance = 1e-12;
  VecX r;
  const SolverStats stats =
      make_solver(solver, options_of(solver, options))->solve(test.problem, r);
  BOOST_TEST(stats.converged);
  const auto tol = boost::test_tools::tolerance(1e-10);
  BOOST_TEST(r[0] == 1.6, tol);
  BOOST_TEST(r[1] == -0.8, tol);
  BOOST_TEST(std::abs(r[2]) <= 1e-10);
}

// Sticking: W = I, q = (-1, 0.3, 0), mu = 0.5. r = -q = (1, -0.3, 0) makes u = 0 and
// |r_t| = 0.3 <= mu r_n = 0.5: both models agree on it.
BOOST_DATA_TEST_CASE(sticking_contact_cancels_free_velocity,
                     bdata::make(kSolvers) * bdata::make(kModels), solver, model) {
  const TestProblem test =
      make_problem(MatX::Identity(3, 3), 3, Vec3(-1.0, 0.3, 0.0), VecX::Constant(1, 0.5), model);
  Knobs options;
  options.warm_start = false;
  options.tolerance = 1e-12;
  VecX r;
  BOOST_TEST(make_solver(solver, options_of(solver, options))->solve(test.problem, r).converged);
  BOOST_TEST((r - Vec3(1.0, -0.3, 0.0)).norm() <= 1e-10);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(behaviour)

BOOST_AUTO_TEST_CASE(merit_is_zero_at_solution_and_positive_at_zero_impulse) {
  MatX w(2, 2);
  w << 2.0, 1.0, 1.0, 2.0;
  const TestProblem test =
      make_problem(w, 1, (VecX(2) << -1.0, 1.0).finished(), VecX(), FrictionModel::coulomb);
  BOOST_TEST(merit(test.problem, (VecX(2) << 0.5, 0.0).finished()) == 0.0);
  // r = 0: u = q, D_i = 1/2, the residual is min(r / D, u) = (-1, 0), divided by |q| = sqrt 2.
  BOOST_TEST(merit(test.problem, VecX::Zero(2)) == 1.0 / std::sqrt(2.0),
             boost::test_tools::tolerance(1e-15));
}

BOOST_DATA_TEST_CASE(iteration_limit_is_reported_as_not_converged, bdata::make(kSolvers), solver) {
  const TestProblem test =
      random_frictional_problem(40, 3, 0.3, FrictionModel::convex_relaxation, 77u);
  Knobs options = options_for(solver, test);
  options.max_iterations = 2;
  VecX r;
  const SolverStats stats =
      make_solver(solver, options_of(solver, options))->solve(test.problem, r);
  BOOST_TEST(to_string(stats.termination) == "iteration_limit");
  BOOST_TEST(!stats.converged);
  BOOST_TEST(stats.iterations == 2);
  BOOST_TEST(stats.merit > options.tolerance);
  BOOST_TEST(stats.merit_history.size() == 3u);  // the initial guess and two iterations
  BOOST_TEST(stats.solver == solver);
  BOOST_TEST(stats.tolerance == options.tolerance);
  BOOST_TEST(stats.threads >= 1);
  BOOST_TEST(stats.wall_seconds >= 0.0);
}

BOOST_DATA_TEST_CASE(history_is_recorded_every_check_every_iterations, bdata::make(kSolvers),
                     solver) {
  const TestProblem test =
      random_frictional_problem(40, 3, 0.3, FrictionModel::convex_relaxation, 78u);
  Knobs options = options_for(solver, test);
  options.max_iterations = 10;
  options.tolerance = 0.0;
  options.check_every = 4;
  VecX r;
  const SolverStats stats =
      make_solver(solver, options_of(solver, options))->solve(test.problem, r);
  BOOST_TEST(stats.merit_history.size() == 4u);  // iterations 0, 4, 8 and the last one, 10
}

// Jacobi with omega = 1.9 on W = [[1, -0.99], [-0.99, 1]], q = (-1, -1.2): the error along
// (1, -1) is multiplied by 1 - 1.9 * 1.99 = -2.78 per iteration, and once a component is
// clipped at 0 the other grows by 1.9 * 0.99 per iteration: the iterates blow up. (A
// symmetric q would keep the iterates on the stable direction (1, 1).)
BOOST_AUTO_TEST_CASE(jacobi_with_too_large_relaxation_reports_divergence) {
  MatX w(2, 2);
  w << 1.0, -0.99, -0.99, 1.0;
  const TestProblem test =
      make_problem(w, 1, (VecX(2) << -1.0, -1.2).finished(), VecX(), FrictionModel::coulomb);
  Knobs options;
  options.relaxation = 1.9;
  options.warm_start = false;
  VecX r;
  const SolverStats stats = make_solver("pgj", options_of("pgj", options))->solve(test.problem, r);
  BOOST_TEST(to_string(stats.termination) == "diverged");
  BOOST_TEST(!stats.converged);
  BOOST_TEST(stats.iterations < 1000);
}

BOOST_DATA_TEST_CASE(empty_problem_is_not_run_and_converged, bdata::make(kSolvers), solver) {
  const TestProblem test = make_problem(MatX(0, 0), 3, VecX(), VecX(), FrictionModel::coulomb);
  VecX r;
  const SolverStats stats = make_solver(solver)->solve(test.problem, r);
  BOOST_TEST(to_string(stats.termination) == "not_run");
  BOOST_TEST(stats.converged);
  BOOST_TEST(stats.merit == 0.0);
  BOOST_TEST(stats.iterations == 0);
}

BOOST_DATA_TEST_CASE(warm_start_from_solution_stops_at_once_and_cold_start_ignores_r,
                     bdata::make(kSolvers), solver) {
  const TestProblem test = random_lcp(30, false, 4242u);
  Knobs options = options_for(solver, test);
  VecX r;
  BOOST_TEST_REQUIRE(
      make_solver(solver, options_of(solver, options))->solve(test.problem, r).converged);
  options.warm_start = true;
  const SolverStats warm = make_solver(solver, options_of(solver, options))->solve(test.problem, r);
  BOOST_TEST(warm.converged);
  BOOST_TEST(warm.iterations == 0);
  options.warm_start = false;
  r.setConstant(std::numeric_limits<double>::quiet_NaN());
  BOOST_TEST(make_solver(solver, options_of(solver, options))->solve(test.problem, r).converged);
}

// The solution of an SPD problem is unique, so every visiting order must find the same r
// (to the accuracy the merit bounds, scaled by the conditioning of this small W).
BOOST_AUTO_TEST_CASE(gauss_seidel_orders_reach_the_same_solution) {
  const TestProblem test =
      random_frictional_problem(30, 3, 0.3, FrictionModel::convex_relaxation, 99u);
  Knobs options;
  options.warm_start = false;
  options.tolerance = 1e-12;
  VecX reference;
  BOOST_TEST_REQUIRE(
      make_solver("pgs", options_of("pgs", options))->solve(test.problem, reference).converged);
  std::vector<int> custom(30);
  std::iota(custom.begin(), custom.end(), 0);
  std::rotate(custom.begin(), custom.begin() + 11, custom.end());
  for (const ContactOrder order :
       {ContactOrder::reverse, ContactOrder::random, ContactOrder::custom}) {
    options.order = order;
    options.custom_order = order == ContactOrder::custom ? custom : std::vector<int>{};
    VecX r;
    BOOST_TEST(make_solver("pgs", options_of("pgs", options))->solve(test.problem, r).converged);
    BOOST_TEST((r - reference).norm() <= 1e-8 * reference.norm());
  }
}

// A contact whose diagonal block is zero has a zero column: nothing it does moves anything,
// so the projected solvers leave it alone and still solve the rest.
BOOST_DATA_TEST_CASE(contact_with_zero_diagonal_is_left_alone, bdata::make(kSolvers), solver) {
  MatX w = MatX::Zero(2, 2);
  w(0, 0) = 2.0;
  const TestProblem test =
      make_problem(w, 1, (VecX(2) << -1.0, 0.5).finished(), VecX(), FrictionModel::coulomb);
  Knobs options;
  options.warm_start = false;
  VecX r;
  BOOST_TEST(make_solver(solver, options_of(solver, options))->solve(test.problem, r).converged);
  BOOST_TEST(r[0] == 0.5, boost::test_tools::tolerance(1e-8));
  BOOST_TEST(r[1] == 0.0);
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(input_errors)

// True when the exception message contains every fragment (the field, its value, the bound).
auto message_has(std::vector<std::string> fragments) {
  return [fragments](const InputError& error) {
    const std::string message = error.what();
    return std::all_of(fragments.begin(), fragments.end(), [&](const std::string& fragment) {
      return message.find(fragment) != std::string::npos;
    });
  };
}

BOOST_AUTO_TEST_CASE(invalid_options_are_rejected_naming_the_field) {
  // Each setting is given to the solvers that have it.
  const auto rejects = [](const Knobs& options, std::vector<std::string> fragments,
                          const std::vector<std::string>& solvers = kSolvers) {
    for (const std::string& solver : solvers) {
      BOOST_CHECK_EXCEPTION(make_solver(solver, options_of(solver, options)), InputError,
                            message_has(fragments));
    }
  };
  Knobs options;
  options.relaxation = 2.0;
  rejects(options, {"relaxation", "2", "(0, 2)"}, {"pgs", "pgj"});
  options = {};
  options.relaxation = 0.0;
  rejects(options, {"relaxation", "(0, 2)"}, {"pgs", "pgj"});
  options = {};
  options.relaxation = std::numeric_limits<double>::quiet_NaN();
  rejects(options, {"relaxation"}, {"pgs", "pgj"});
  options = {};
  options.tolerance = -1e-3;
  rejects(options, {"tolerance", "-0.001", "[0, inf)"});
  options = {};
  options.max_iterations = -1;
  rejects(options, {"max_iterations", "-1"});
  options = {};
  options.check_every = 0;
  rejects(options, {"check_every", "[1, inf)"});
  options = {};
  options.divergence_factor = 0.5;
  rejects(options, {"divergence_factor", "(1, inf]"});
  options = {};
  options.initial_lipschitz = -2.0;
  rejects(options, {"initial_lipschitz"}, {"apgd"});
  options = {};
  options.order = ContactOrder::custom;
  options.custom_order = {0, 2, 2};
  rejects(options, {"custom_order[2]", "permutation"}, {"pgs"});
  options.custom_order = {0, 3, 1};
  rejects(options, {"custom_order[1]", "3", "permutation"}, {"pgs"});
  options = {};
  options.custom_order = {0, 1};
  rejects(options, {"custom_order", "order = custom"}, {"pgs"});
  BOOST_CHECK_EXCEPTION(make_solver("no_such_solver"), InputError,
                        message_has({"no_such_solver", "pgs", "pgj", "apgd", "newton", "admm"}));
}

BOOST_AUTO_TEST_CASE(custom_order_must_match_the_contact_count) {
  const TestProblem test = random_lcp(4, false, 5u);
  Knobs options;
  options.order = ContactOrder::custom;
  options.custom_order = {2, 0, 1};
  VecX r;
  BOOST_CHECK_EXCEPTION(make_solver("pgs", options_of("pgs", options))->solve(test.problem, r),
                        InputError, message_has({"custom_order", "3 entries", "0..3"}));
}

BOOST_AUTO_TEST_CASE(invalid_problems_are_rejected_naming_the_contact) {
  TestProblem test = random_frictional_problem(20, 3, 0.3, FrictionModel::coulomb, 6u);
  const auto solver = make_solver("pgs");
  VecX r = VecX::Zero(60);
  test.problem.mu[12] = -0.1;
  BOOST_CHECK_EXCEPTION(solver->solve(test.problem, r), InputError,
                        message_has({"contact 12: friction coefficient mu = -0.1 must be >= 0"}));
  test.problem.mu[12] = std::numeric_limits<double>::infinity();
  BOOST_CHECK_EXCEPTION(solver->solve(test.problem, r), InputError,
                        message_has({"contact 12", "mu = inf", "finite"}));
  test.problem.mu[12] = 0.3;
  test.problem.q[7] = std::numeric_limits<double>::quiet_NaN();
  BOOST_CHECK_EXCEPTION(solver->solve(test.problem, r), InputError,
                        message_has({"contact 2", "q[7]", "finite"}));
  test.problem.q = VecX::Zero(59);
  BOOST_CHECK_EXCEPTION(solver->solve(test.problem, r), InputError,
                        message_has({"q has 59 entries", "60"}));
  test.problem.q = VecX::Zero(60);
  test.problem.mu = VecX::Zero(19);
  BOOST_CHECK_EXCEPTION(solver->solve(test.problem, r), InputError,
                        message_has({"mu has 19 entries", "20"}));
  test.problem.mu = VecX::Zero(20);
  r = VecX::Zero(5);
  BOOST_CHECK_EXCEPTION(solver->solve(test.problem, r), InputError,
                        message_has({"initial guess", "5", "60"}));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(sparse_delassus)

// The sweep interface must track W r exactly as a full product does.
BOOST_AUTO_TEST_CASE(sweep_updates_match_full_products) {
  const MatX w = random_contact_delassus(25, 25, 3, 11u);
  const SparseDelassus delassus(SparseMatrix(w.sparseView()), 3);
  std::mt19937 generator(12u);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  VecX r = VecX::NullaryExpr(75, [&] { return uniform(generator); });
  VecX work;
  delassus.begin_sweep(r, work);
  for (const int contact : {3, 17, 3, 0, 24}) {
    const Vec3 dr(uniform(generator), uniform(generator), uniform(generator));
    delassus.update_sweep(contact, dr, work);
    r.segment(contact * 3, 3) += dr;
  }
  const VecX expected = w * r;
  VecX applied;
  delassus.apply(r, applied);
  BOOST_TEST((applied - expected).norm() <= 1e-12 * expected.norm());
  for (int contact = 0; contact < 25; ++contact) {
    BOOST_TEST((delassus.local_velocity(contact, work) - expected.segment(contact * 3, 3)).norm() <=
               1e-12 * expected.norm());
    BOOST_TEST(
        (delassus.diagonal_block(contact) - w.block(contact * 3, contact * 3, 3, 3)).norm() == 0.0);
  }
}

BOOST_AUTO_TEST_CASE(non_delassus_matrices_are_rejected) {
  MatX asymmetric = MatX::Identity(2, 2);
  asymmetric(0, 1) = 0.5;
  BOOST_CHECK_THROW(SparseDelassus(SparseMatrix(asymmetric.sparseView()), 1), InputError);
  BOOST_CHECK_THROW(SparseDelassus(SparseMatrix(MatX::Identity(4, 4).sparseView()), 3), InputError);
  BOOST_CHECK_THROW(SparseDelassus(SparseMatrix(MatX::Identity(3, 3).sparseView()), 4), InputError);
}

BOOST_AUTO_TEST_SUITE_END()
