#define BOOST_TEST_MODULE newton_admm
// Semismooth Newton (Alart-Curnier) and ADMM (De Saxce fixed point, residual balancing) on
// problems with known solutions: single contacts in stick, slip and take-off, and random
// problems built from a chosen solution; Newton's local quadratic convergence; both against
// APGD at 1e-10; options validation and non-convergence as a status.
#include <Eigen/Eigenvalues>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "moreau/contact/delassus.hpp"
#include "moreau/core/error.hpp"
#include "moreau/solver/admm.hpp"
#include "moreau/solver/apgd.hpp"
#include "moreau/solver/merit.hpp"
#include "moreau/solver/semismooth_newton.hpp"
#include "moreau/solver/solver_registry.hpp"

using namespace moreau;

namespace {

constexpr double kTight = 1e-10;  // the tolerance both solvers are held to

struct TestProblem {
  std::unique_ptr<SparseDelassus> delassus;
  ConeProblem problem;
  VecX solution;  // the chosen r*
};

TestProblem make_problem(const MatX& w, const VecX& q, const VecX& mu, const VecX& solution) {
  TestProblem test;
  test.delassus = std::make_unique<SparseDelassus>(SparseMatrix(w.sparseView()), 3);
  test.problem.delassus = test.delassus.get();
  test.problem.q = q;
  test.problem.mu = mu;
  test.problem.friction_model = FrictionModel::coulomb;
  test.solution = solution;
  return test;
}

enum class State { stick, slip, take_off };

// Contact i's chosen (r*, u*) in a state of Coulomb's law: stick r* inside the cone, u* = 0;
// slip r* on the cone's boundary, u* = (0, -a r*_t / |r*_t|), a > 0 (the velocity opposes the
// friction impulse); take-off r* = 0, u*_n > 0.
void chosen_state(State state, double mu, std::mt19937& random, Eigen::Ref<VecX> r,
                  Eigen::Ref<VecX> u) {
  std::uniform_real_distribution<double> unit(0.2, 1.0);
  std::uniform_real_distribution<double> angle(0.0, 2.0 * M_PI);
  const double phase = angle(random);
  const Eigen::Vector2d direction(std::cos(phase), std::sin(phase));
  r.setZero();
  u.setZero();
  switch (state) {
    case State::stick:
      r[0] = unit(random);
      r.tail(2) = 0.5 * mu * r[0] * direction;
      break;
    case State::slip:
      r[0] = unit(random);
      r.tail(2) = mu * r[0] * direction;
      u.tail(2) = -unit(random) * direction;
      break;
    case State::take_off:
      u[0] = unit(random);
      u.tail(2) = unit(random) * direction;
      break;
  }
}

// A random SPD W = A A^T / k + 0.1 I (n = 3 contacts rows), contacts in the given states:
// q = u* - W r* makes r* a solution, and the only one since W is positive definite.
TestProblem chosen_solution_problem(const std::vector<State>& states, unsigned seed) {
  std::mt19937 random(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  const int contacts = static_cast<int>(states.size());
  const int n = 3 * contacts;
  const int k = n + 6;
  MatX a(n, k);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < k; ++j) a(i, j) = normal(random);
  }
  const MatX w = a * a.transpose() / k + 0.1 * MatX::Identity(n, n);
  VecX mu(contacts), r(n), u(n);
  for (int i = 0; i < contacts; ++i) {
    mu[i] = 0.3;
    chosen_state(states[i], mu[i], random, r.segment(3 * i, 3), u.segment(3 * i, 3));
  }
  return make_problem(w, u - w * r, mu, r);
}

std::vector<State> random_states(int contacts, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> pick(0, 2);
  std::vector<State> states(contacts);
  for (State& state : states) state = static_cast<State>(pick(random));
  return states;
}

SemismoothNewtonOptions newton_options() {
  SemismoothNewtonOptions options;
  options.tolerance = kTight;
  return options;
}

AdmmOptions tight_admm_options() {
  AdmmOptions options;
  options.tolerance = kTight;
  options.max_iterations = 100000;
  return options;
}

void check_solved(const SolverStats& stats, const TestProblem& test, const VecX& r,
                  double distance) {
  BOOST_TEST_CONTEXT(stats.solver) {
    BOOST_TEST(stats.converged);
    BOOST_TEST((stats.termination == Termination::converged));
    BOOST_TEST(stats.merit <= kTight);
    // The reported merit is the merit of the returned r.
    BOOST_TEST(std::abs(merit(test.problem, r) - stats.merit) <= 1e-3 * kTight);
    BOOST_TEST((r - test.solution).norm() <= distance * test.solution.norm() + distance);
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE(single_contacts_in_each_state) {
  for (const State state : {State::stick, State::slip, State::take_off}) {
    for (unsigned seed = 1; seed <= 5; ++seed) {
      const TestProblem test = chosen_solution_problem({state}, seed);
      BOOST_TEST_CONTEXT("state " << static_cast<int>(state) << ", seed " << seed) {
        VecX r = VecX::Zero(3);
        const SolverStats newton = SemismoothNewton(newton_options()).solve(test.problem, r);
        check_solved(newton, test, r, 1e-8);
        // A single contact's Alart-Curnier function is piecewise smooth: Newton lands on the
        // solution within a few iterations.
        BOOST_TEST(newton.iterations <= 10);
        VecX z = VecX::Zero(3);
        const SolverStats admm = Admm(tight_admm_options()).solve(test.problem, z);
        check_solved(admm, test, z, 1e-7);
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(random_problems_with_chosen_solutions_against_apgd) {
  for (unsigned seed = 1; seed <= 6; ++seed) {
    const TestProblem test = chosen_solution_problem(random_states(20, seed), 100 + seed);
    BOOST_TEST_CONTEXT("seed " << seed) {
      VecX newton_r = VecX::Zero(test.problem.size());
      const SolverStats newton = SemismoothNewton(newton_options()).solve(test.problem, newton_r);
      check_solved(newton, test, newton_r, 1e-7);
      VecX admm_r = VecX::Zero(test.problem.size());
      const SolverStats admm = Admm(tight_admm_options()).solve(test.problem, admm_r);
      check_solved(admm, test, admm_r, 1e-6);
      ApgdOptions apgd_options;
      apgd_options.tolerance = kTight;
      apgd_options.max_iterations = 200000;
      VecX apgd_r = VecX::Zero(test.problem.size());
      const SolverStats apgd = Apgd(apgd_options).solve(test.problem, apgd_r);
      check_solved(apgd, test, apgd_r, 1e-6);
      // All three at 1e-10 agree on the (unique) solution.
      BOOST_TEST((newton_r - apgd_r).norm() <= 1e-6 * apgd_r.norm());
      BOOST_TEST((admm_r - apgd_r).norm() <= 1e-6 * apgd_r.norm());
    }
  }
}

// Near the solution Newton converges quadratically: once the merit is below 1e-3, each step
// at least squares it up to a constant (merit_{k+1} <= C merit_k^2 with C from the first such
// pair), checked by the ratio log(merit_{k+1}) / log(merit_k) >= 1.5 on the last step.
BOOST_AUTO_TEST_CASE(newton_converges_quadratically_near_the_solution) {
  for (unsigned seed = 1; seed <= 4; ++seed) {
    const TestProblem test = chosen_solution_problem(random_states(30, seed), 200 + seed);
    SemismoothNewtonOptions options = newton_options();
    options.tolerance = 1e-15;
    options.max_iterations = 60;
    VecX r = VecX::Zero(test.problem.size());
    const SemismoothNewtonStats details =
        SemismoothNewton(options).solve_with_details(test.problem, r);
    const std::vector<double>& history = details.stats.merit_history;
    BOOST_TEST_CONTEXT("seed " << seed << ", merits " << history.size()) {
      // The last step that starts below 1e-3 and ends above the rounding floor.
      int last = -1;
      for (int k = 0; k + 1 < static_cast<int>(history.size()); ++k) {
        if (history[k] < 1e-3 && history[k + 1] > 1e-14) last = k;
      }
      BOOST_TEST_REQUIRE(last >= 0);
      const double order = std::log(history[last + 1]) / std::log(history[last]);
      BOOST_TEST(order >= 1.5, "merit " << history[last] << " -> " << history[last + 1]);
      BOOST_TEST(details.fallback_steps == 0);
    }
  }
}

// A solver stopped by its iteration limit says so: not converged, iteration_limit, and a merit
// above the tolerance.
template <typename Solver, typename Options>
void check_stopped_at_limit(Options options, int limit, const ConeProblem& problem) {
  options.max_iterations = limit;
  VecX r = VecX::Zero(problem.size());
  const SolverStats stats = Solver(options).solve(problem, r);
  BOOST_TEST_CONTEXT(stats.solver) {
    BOOST_TEST(!stats.converged);
    BOOST_TEST((stats.termination == Termination::iteration_limit));
    BOOST_TEST(stats.iterations == limit);
    BOOST_TEST(stats.merit > kTight);
  }
}

BOOST_AUTO_TEST_CASE(non_convergence_is_a_status) {
  const TestProblem test = chosen_solution_problem(random_states(20, 7), 307);
  check_stopped_at_limit<SemismoothNewton>(newton_options(), 1, test.problem);
  check_stopped_at_limit<Admm>(tight_admm_options(), 2, test.problem);
}

// The InputError message of constructing a Solver with `options` (empty if none is thrown).
template <typename Solver, typename Options>
std::string construction_error(const Options& options) {
  try {
    const Solver solver(options);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

BOOST_AUTO_TEST_CASE(options_name_the_bad_field) {
  SemismoothNewtonOptions newton;
  newton.armijo = 2.0;
  BOOST_TEST(construction_error<SemismoothNewton>(newton).find("SemismoothNewtonOptions.armijo") !=
             std::string::npos);
  newton = {};
  newton.regularization = -1.0;
  BOOST_TEST(construction_error<SemismoothNewton>(newton).find(
                 "SemismoothNewtonOptions.regularization") != std::string::npos);
  AdmmOptions admm;
  admm.penalty_factor = 1.0;
  BOOST_TEST(construction_error<Admm>(admm).find("AdmmOptions.penalty_factor") !=
             std::string::npos);
  admm = {};
  admm.tolerance = -1.0;
  BOOST_TEST(construction_error<Admm>(admm).find("AdmmOptions.tolerance") != std::string::npos);
  BOOST_TEST(construction_error<Admm>(AdmmOptions{}).empty());
}

BOOST_AUTO_TEST_CASE(registry_makes_both) {
  BOOST_TEST(make_solver("newton")->name() == "newton");
  BOOST_TEST(make_solver("admm")->name() == "admm");
}
