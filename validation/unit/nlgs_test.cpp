#define BOOST_TEST_MODULE nlgs
#include <boost/test/unit_test.hpp>
// Tests of Dumont's local solvers (SBP, EBP, SAL, EAL), their NLGS driver and the theta-method
// stepper. Expected values come from the contact law (hand-solved single contacts), from
// mechanics (weights, Coulomb sliding, Newton's impact law, free fall under the scheme) or
// from finite differences of the functions whose derivatives are tested, never from an
// earlier run of the code. Tolerances are named and justified where they are defined.
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <boost/test/data/monomorphic.hpp>
#include <boost/test/data/test_case.hpp>
#include <cmath>
#include <memory>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "moreau/contact/delassus.hpp"
#include "moreau/core/error.hpp"
#include "moreau/integrator/theta_stepper.hpp"
#include "moreau/model/shape.hpp"
#include "moreau/model/world.hpp"
#include "moreau/nlgs/local_solver.hpp"
#include "moreau/nlgs/nlgs_solver.hpp"
#include "moreau/solver/cone.hpp"
#include "moreau/solver/merit.hpp"
#include "moreau/solver/solver_registry.hpp"
#include "test_support.hpp"

namespace bdata = boost::unit_test::data;
using namespace moreau;

namespace moreau {
// Names in test logs for the data-driven cases.
std::ostream& operator<<(std::ostream& os, LocalMethod method) { return os << to_string(method); }
std::ostream& operator<<(std::ostream& os, ContactStatus status) { return os << to_string(status); }
}  // namespace moreau

namespace {

const LocalMethod kMethods[] = {LocalMethod::sbp, LocalMethod::ebp, LocalMethod::sal,
                                LocalMethod::eal};
const int kFrictionalRows[] = {2, 3};

// ---------------------------------------------------------------------------------------------
// Tangent matrices against finite differences.

enum class Law { bipotential, augmented_lagrangian };
const Law kLaws[] = {Law::bipotential, Law::augmented_lagrangian};
std::ostream& operator<<(std::ostream& os, Law law) {
  return os << (law == Law::bipotential ? "bipotential" : "augmented_lagrangian");
}
const ContactStatus kStatuses[] = {ContactStatus::sliding, ContactStatus::sticking,
                                   ContactStatus::no_contact};

LocalTangent tangent(Law law, const Vec3& r, const Vec3& v, double mu, double rho, int rows) {
  return law == Law::bipotential ? bipotential_tangent(r, v, mu, rho, rows)
                                 : augmented_lagrangian_tangent(r, v, mu, rho, rows);
}

// Central differences of Z with step h: truncation error ~ h^2 |Z'''|, round-off ~ eps / h.
// With |r|, |v| ~ 1 and the sample kept 1e-3 away from every kink (see below), Z is smooth on
// the stencil and h = 1e-6 gives errors ~ 1e-10; kDerivativeTolerance leaves a margin of 1e4.
constexpr double kFiniteDifferenceStep = 1e-6;
constexpr double kDerivativeTolerance = 1e-6;
constexpr double kKinkClearance = 1e-3;

struct Sample {
  Vec3 r = Vec3::Zero();
  Vec3 v = Vec3::Zero();
};

// Random (r, v) whose contact state is `status` and stays so within kKinkClearance in every
// coordinate of r and v, so that the finite-difference stencil does not straddle a kink.
std::vector<Sample> samples(Law law, ContactStatus status, int rows, double mu, double rho,
                            unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<Sample> out;
  for (int attempt = 0; attempt < 200000 && out.size() < 25; ++attempt) {
    Sample s;
    for (int k = 0; k < rows; ++k) {
      s.r[k] = uniform(generator);
      s.v[k] = uniform(generator);
    }
    if (tangent(law, s.r, s.v, mu, rho, rows).status != status) continue;
    bool stable = true;
    for (int k = 0; k < 2 * rows && stable; ++k) {
      for (const double sign : {-1.0, 1.0}) {
        Sample p = s;
        (k < rows ? p.r[k] : p.v[k - rows]) += sign * kKinkClearance;
        stable = stable && tangent(law, p.r, p.v, mu, rho, rows).status == status;
      }
    }
    if (stable) out.push_back(s);
  }
  return out;
}

BOOST_AUTO_TEST_SUITE(tangent_matrices)

BOOST_DATA_TEST_CASE(tangent_matrix_matches_finite_differences_in_every_contact_state,
                     bdata::make(kLaws) * bdata::make(kStatuses) * bdata::make(kFrictionalRows),
                     law, status, rows) {
  const double mu = 0.4, rho = 0.7;
  const std::vector<Sample> points = samples(law, status, rows, mu, rho, 11u + rows);
  BOOST_TEST_REQUIRE(points.size() == 25u, "found only " << points.size() << " samples");
  double worst = 0.0;
  std::string where = "none";
  for (const Sample& s : points) {
    const LocalTangent t = tangent(law, s.r, s.v, mu, rho, rows);
    for (int k = 0; k < rows; ++k) {
      for (const bool wrt_r : {true, false}) {
        Sample plus = s, minus = s;
        (wrt_r ? plus.r : plus.v)[k] += kFiniteDifferenceStep;
        (wrt_r ? minus.r : minus.v)[k] -= kFiniteDifferenceStep;
        const Vec3 column = (tangent(law, plus.r, plus.v, mu, rho, rows).z -
                             tangent(law, minus.r, minus.v, mu, rho, rows).z) /
                            (2 * kFiniteDifferenceStep);
        const Vec3 analytic = wrt_r ? Vec3(t.a.col(k)) : Vec3(t.b.col(k));
        const double error = (column - analytic).norm();
        if (error > worst) {
          worst = error;
          std::ostringstream message;
          message << (wrt_r ? "dZ/dr" : "dZ/dv") << " column " << k << " at r = " << s.r.transpose()
                  << ", v = " << s.v.transpose() << ": analytic " << analytic.transpose()
                  << ", finite differences " << column.transpose();
          where = message.str();
        }
      }
    }
    // Entries past `rows` belong to no unknown and must stay zero.
    BOOST_TEST(t.a.bottomRows(3 - rows).norm() + t.b.bottomRows(3 - rows).norm() == 0.0);
  }
  BOOST_TEST(worst <= kDerivativeTolerance, "worst " << worst << ": " << where);
}

// The closed forms Dumont prints (Sec. 3.3 and 3.5): no contact gives A = I, B = 0; sticking
// gives A = 0, and B = rho I for the augmented Lagrangian.
BOOST_DATA_TEST_CASE(no_contact_and_sticking_tangents_have_the_printed_closed_forms,
                     bdata::make(kLaws) * bdata::make(kFrictionalRows), law, rows) {
  const double mu = 0.3, rho = 2.0;
  Mat3 leading = Mat3::Zero();
  leading.topLeftCorner(rows, rows).setIdentity();
  // r = 0, v = (1, 0, 0): tau = -rho v is pushed out of the cone: no contact.
  const LocalTangent open = tangent(law, Vec3::Zero(), Vec3(1.0, 0.0, 0.0), mu, rho, rows);
  BOOST_TEST(open.status == ContactStatus::no_contact);
  BOOST_TEST((open.a - leading).norm() == 0.0);
  BOOST_TEST(open.b.norm() == 0.0);
  // r = (1, 0.1, 0), v = 0: tau = r inside the cone: sticking.
  const LocalTangent stick = tangent(law, Vec3(1.0, 0.1, 0.0), Vec3::Zero(), mu, rho, rows);
  BOOST_TEST(stick.status == ContactStatus::sticking);
  BOOST_TEST(stick.a.norm() == 0.0);
  if (law == Law::augmented_lagrangian) {
    BOOST_TEST((stick.b - rho * leading).norm() <= 1e-15 * rho);
  }
}

// Sliding, the normal column of A as printed: -mu / (1 + mu^2) (tau^ - mu n) for the
// bi-potential (Sec. 3.3) and -mu tau^ for the augmented Lagrangian (Sec. 3.5).
BOOST_DATA_TEST_CASE(sliding_normal_column_of_a_matches_the_printed_formula,
                     bdata::make(kFrictionalRows), rows) {
  const double mu = 0.5, rho = 1.0;
  const Vec3 r(1.0, 0.0, 0.0);
  const Vec3 v = rows == 3 ? Vec3(0.0, -3.0, 4.0) : Vec3(0.0, -5.0, 0.0);  // |v_t| = 5
  const LocalTangent bp = bipotential_tangent(r, v, mu, rho, rows);
  const LocalTangent al = augmented_lagrangian_tangent(r, v, mu, rho, rows);
  BOOST_TEST_REQUIRE(bp.status == ContactStatus::sliding);
  BOOST_TEST_REQUIRE(al.status == ContactStatus::sliding);
  // tau_t = -rho v_t in both laws, so tau^ = -v_t / |v_t|.
  const Vec3 unit = -Vec3(0.0, v[1], v[2]) / 5.0;
  const Vec3 n = Vec3::UnitX();
  const Vec3 bp_printed = -mu / (1 + mu * mu) * (unit - mu * n);
  const Vec3 al_printed = -mu * unit;
  BOOST_TEST((Vec3(bp.a.col(0)) - bp_printed).norm() <= 1e-15);
  BOOST_TEST((Vec3(al.a.col(0)) - al_printed).norm() <= 1e-15);
}

BOOST_AUTO_TEST_SUITE_END()

// ---------------------------------------------------------------------------------------------
// Conformance: every local solver on the same single-contact problems with known answers.

struct SingleContactCase {
  std::string name;
  int rows;
  Vec3 q;
  Vec3 r;  // the solution, from Coulomb's law with W = I (u = r + q)
};

// W = I, mu = 0.5. Sticking: r = -q when |q_t| <= mu |q_n| (u = 0). Sliding: u_n = 0 gives
// r_n = -q_n = 1, r_t = -mu r_n q_t / |q_t| and u_t = q_t (1 - mu / |q_t|) stays along q_t,
// opposite to r_t. Separating: q_n > 0, r = 0 leaves u = q in K* (u_n >= mu |u_t| is not
// needed: r = 0 with u_n > 0 is the "no contact" branch of eq. 8).
const std::vector<SingleContactCase> kSingleContact = {
    {"sticking 3D", 3, Vec3(-1.0, 0.3, -0.2), Vec3(1.0, -0.3, 0.2)},
    {"sliding 3D", 3, Vec3(-1.0, 1.2, -1.6), Vec3(1.0, -0.3, 0.4)},
    {"separating 3D", 3, Vec3(0.5, 1.0, -1.0), Vec3::Zero()},
    {"sticking 2D", 2, Vec3(-1.0, 0.3, 0.0), Vec3(1.0, -0.3, 0.0)},
    {"sliding 2D", 2, Vec3(-1.0, 2.0, 0.0), Vec3(1.0, -0.5, 0.0)},
    {"separating 2D", 2, Vec3(0.5, 1.0, 0.0), Vec3::Zero()},
};
constexpr double kSingleContactMu = 0.5;

// With W = I and rho = alpha, SBP and SAL contract the error by |1 - alpha| = 0.4 per step in
// the sticking and normal directions (less when sliding), so 200 steps reach round-off; the
// Newton methods solve a piecewise-linear problem (W = I) exactly once the state is right.
constexpr int kSingleContactSteps = 200;
constexpr double kSingleContactTolerance = 1e-12;

BOOST_DATA_TEST_CASE(every_local_solver_finds_the_known_single_contact_answer,
                     bdata::make(kMethods) * bdata::xrange(kSingleContact.size()), method, k) {
  const SingleContactCase& test = kSingleContact[k];
  const auto solver = make_local_solver(method);
  LocalProblem problem;
  problem.rows = test.rows;
  problem.w = Mat3::Zero();
  problem.w.topLeftCorner(test.rows, test.rows).setIdentity();
  problem.b = test.q;  // one contact: b is the free velocity
  problem.mu = kSingleContactMu;
  problem.rho = solver->default_rho_factor() / problem.w(0, 0);
  const LocalOptions options;
  // One contact: each NLGS iteration is one local solve from the previous impulse.
  LocalResult result;
  Vec3 r = Vec3::Zero();
  for (int step = 0; step < kSingleContactSteps; ++step) {
    result = solver->solve(problem, r, options);
    r = result.r;
  }
  BOOST_TEST((r - test.r).norm() <= kSingleContactTolerance,
             test.name << " with " << solver->name() << ": r = " << r.transpose() << ", expected "
                       << test.r.transpose());
  BOOST_TEST((result.v - (problem.w * r + problem.b)).norm() <= kSingleContactTolerance);
  const ContactStatus expected = test.name.starts_with("sticking")  ? ContactStatus::sticking
                                 : test.name.starts_with("sliding") ? ContactStatus::sliding
                                                                    : ContactStatus::no_contact;
  BOOST_TEST(result.status == expected, test.name << " with " << solver->name());
}

// The Newton methods need one NLGS iteration on a single contact (Dumont Table 1: EBP and
// EAL converge after the first iteration): from r = 0 the local Newton reaches the answer.
BOOST_DATA_TEST_CASE(newton_local_solvers_solve_a_single_contact_in_one_call,
                     bdata::make({LocalMethod::ebp, LocalMethod::eal}) *
                         bdata::xrange(kSingleContact.size()),
                     method, k) {
  const SingleContactCase& test = kSingleContact[k];
  const auto solver = make_local_solver(method);
  LocalProblem problem;
  problem.rows = test.rows;
  problem.w = Mat3::Zero();
  problem.w.topLeftCorner(test.rows, test.rows).setIdentity();
  problem.b = test.q;
  problem.mu = kSingleContactMu;
  problem.rho = 1.0;
  LocalOptions options;
  options.newton_tolerance = 1e-14;
  const LocalResult result = solver->solve(problem, Vec3::Zero(), options);
  BOOST_TEST(result.newton_converged);
  BOOST_TEST(result.newton_iterations <= 10);
  BOOST_TEST((result.r - test.r).norm() <= kSingleContactTolerance,
             test.name << ": r = " << result.r.transpose());
}

BOOST_AUTO_TEST_CASE(cylinder_projection_of_eq_35) {
  const double mu = 0.5;
  // tau_n <= 0: the apex.
  BOOST_TEST(project_onto_cylinder(Vec3(-1.0, 0.1, 0.0), mu, 3).norm() == 0.0);
  // Inside the disc of radius mu tau_n = 1: unchanged.
  BOOST_TEST((project_onto_cylinder(Vec3(2.0, 0.6, -0.8), mu, 3) - Vec3(2.0, 0.6, -0.8)).norm() ==
             0.0);
  // Outside: tau_t scaled to radius 1, tau_n kept (not the cone projection).
  BOOST_TEST((project_onto_cylinder(Vec3(2.0, 3.0, -4.0), mu, 3) - Vec3(2.0, 0.6, -0.8)).norm() <=
             1e-15);
}

BOOST_AUTO_TEST_CASE(coulomb_cone_projection_sends_a_negative_normal_to_the_apex_for_mu_zero) {
  BOOST_TEST(project_onto_coulomb_cone(Vec3(-1.0, 0.0, 0.0), 0.0, 3).norm() == 0.0);
  BOOST_TEST(
      (project_onto_coulomb_cone(Vec3(2.0, 1.0, 0.0), 0.0, 3) - Vec3(2.0, 0.0, 0.0)).norm() == 0.0);
  // mu = 0.5, x = (1, 0.6, 0): onto the ray (1, 0.5)/|.|: s = (0.6 - 0.5) / 1.25 = 0.08,
  // P = x - 0.08 (-0.5, 1, 0) = (1.04, 0.52, 0), which has |P_t| = mu P_n.
  BOOST_TEST(
      (project_onto_coulomb_cone(Vec3(1.0, 0.6, 0.0), 0.5, 3) - Vec3(1.04, 0.52, 0.0)).norm() <=
      1e-15);
}

// ---------------------------------------------------------------------------------------------
// eps_glob (eq. 37) terms.

BOOST_AUTO_TEST_CASE(error_terms_of_eq_37_for_a_hand_computed_contact) {
  // r = (1, 0.6, 0) is outside K_0.5 by 0.08 |(-0.5, 1, 0)| = 0.08 sqrt(1.25) (projection
  // above); v = (0.2, -0.3, 0.4): v . r = 0.2 - 0.18 = 0.02, mu r_n |v_t| = 0.5 * 0.5 = 0.25;
  // no penetration (v_n > 0); motion |v - u| with u = (0.2, -0.3, 0.1) is 0.3.
  const GlobalErrorTerms t =
      contact_error_terms(Vec3(1.0, 0.6, 0.0), Vec3(0.2, -0.3, 0.4), Vec3(0.2, -0.3, 0.1), 0.5, 3);
  const auto tol = boost::test_tools::tolerance(1e-14);
  BOOST_TEST(t.projection == 0.08 * std::sqrt(1.25), tol);
  BOOST_TEST(t.bipotential == 0.27, tol);
  BOOST_TEST(t.penetration == 0.0);
  BOOST_TEST(t.motion == 0.3, tol);
  // A penetrating velocity counts by its normal part.
  BOOST_TEST(
      contact_error_terms(Vec3::Zero(), Vec3(-0.25, 1.0, 0.0), Vec3::Zero(), 0.5, 3).penetration ==
      0.25);
}

// ---------------------------------------------------------------------------------------------
// NLGS on multi-contact problems.

struct TestProblem {
  MatX dense;
  std::unique_ptr<SparseDelassus> delassus;
  ConeProblem problem;
};

// W = J M^-1 J^T for `contacts` contacts among spheres of radius 0.5 m and mass 1 +- 0.5 kg:
// contact c touches sphere c and a random earlier sphere or the fixed ground (index -1), a tree,
// so the contact impulses are independent (J^T has full column rank) and W is SPD. Each row is
// d . (v + omega x arm) for the frame direction d, with u the velocity of b relative to a.
// Without rotation (rotating = false: point masses) every block W_cc is (1/m_a + 1/m_b) I;
// with rotation the tangential compliance exceeds the normal one (3.5 times for a sphere
// against the ground).
MatX random_delassus(int contacts, int rows, bool rotating, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  const bool planar = rows == 2;
  const int dofs = planar ? 3 : 6;
  const int linear = planar ? 2 : 3;
  const int bodies = contacts;
  VecX inverse_mass(bodies * dofs);
  for (int b = 0; b < bodies; ++b) {
    const double mass = 1.0 + 0.5 * uniform(generator);
    const double inertia = 0.4 * mass * 0.25;
    for (int k = 0; k < dofs; ++k) inverse_mass[b * dofs + k] = k < linear ? 1 / mass : 1 / inertia;
  }
  MatX jacobian = MatX::Zero(contacts * rows, bodies * dofs);
  for (int c = 0; c < contacts; ++c) {
    const int body_a = std::uniform_int_distribution<int>(-1, c - 1)(generator);
    const int body_b = c;
    const Vec3 normal =
        Vec3(uniform(generator), uniform(generator), planar ? 0.0 : uniform(generator))
            .normalized();
    const Vec3 tangent1 = planar ? Vec3(-normal.y(), normal.x(), 0.0) : normal.unitOrthogonal();
    const Vec3 frame[3] = {normal, tangent1, normal.cross(tangent1)};
    for (const int side : {0, 1}) {
      const int body = side == 0 ? body_a : body_b;
      if (body < 0) continue;
      // The contact point lies at +0.5 n from a's centre and at -0.5 n from b's.
      const Vec3 arm = (side == 0 ? 0.5 : -0.5) * normal;
      const double sign = side == 0 ? -1.0 : 1.0;
      for (int k = 0; k < rows; ++k) {
        auto row = jacobian.row(c * rows + k).segment(body * dofs, dofs);
        row.head(linear) += sign * frame[k].head(linear).transpose();
        if (!rotating) continue;
        const Vec3 angular = sign * arm.cross(frame[k]);
        if (planar) {
          row[2] += angular.z();
        } else {
          row.tail<3>() += angular.transpose();
        }
      }
    }
  }
  MatX w = jacobian * inverse_mass.asDiagonal() * jacobian.transpose();
  return 0.5 * (w + w.transpose());
}

TestProblem random_problem(int contacts, int rows, bool rotating, unsigned seed) {
  TestProblem test;
  test.dense = random_delassus(contacts, rows, rotating, seed);
  std::mt19937 generator(seed + 1);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  VecX q(contacts * rows);
  for (int k = 0; k < q.size(); ++k)
    q[k] = k % rows == 0 ? uniform(generator) - 0.3 : uniform(generator);
  test.delassus = std::make_unique<SparseDelassus>(SparseMatrix(test.dense.sparseView()), rows);
  test.problem.delassus = test.delassus.get();
  test.problem.q = q;
  test.problem.mu = VecX::Constant(contacts, 0.3);
  test.problem.friction_model = FrictionModel::coulomb;
  return test;
}

// What merit <= tol guarantees (derivation in solver_test.cpp, check_cone_complementarity):
// with delta = tol |q| and D_i = rows / trace(W_ii), dist(r_i, K) <= D_i delta,
// dist(u^_i, K*) <= delta and |r_i . u^_i| <= delta (|r_i| + D_i |u^_i|) + D_i delta^2;
// kRoundOff covers recomputing u in double precision.
constexpr double kRoundOff = 1e-12;

void check_coulomb_law(const ConeProblem& problem, const VecX& r, double tol) {
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
      message << "contact " << contact << ": " << what << " = " << value << " > " << bound;
      worst_message = message.str();
    }
  };
  for (int i = 0; i < problem.contact_count(); ++i) {
    const double mu = problem.mu[i];
    Vec3 r_i = Vec3::Zero(), u_i = Vec3::Zero();
    r_i.head(rows) = r.segment(i * rows, rows);
    u_i.head(rows) = u.segment(i * rows, rows);
    u_i = de_saxce_velocity(u_i, mu, rows);
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

// Point masses: rho_c W_cc = alpha I, within the (0, 2) range where a local Uzawa step
// contracts (Dumont Sec. 4: rho < 2 rho_bar), so every method applies with its default
// alpha. 30 contacts; W is SPD (asserted).
BOOST_DATA_TEST_CASE(nlgs_reaches_tolerance_and_coulomb_law_holds_on_point_mass_contacts,
                     bdata::make(kMethods) * bdata::make(kFrictionalRows), method, rows) {
  const TestProblem test = random_problem(30, rows, false, 500u + rows);
  BOOST_TEST_REQUIRE(Eigen::SelfAdjointEigenSolver<MatX>(test.dense).eigenvalues().minCoeff() >
                     0.0);
  NlgsOptions nlgs;
  nlgs.tolerance = 1e-10;
  nlgs.max_iterations = 20000;
  nlgs.warm_start = false;
  nlgs.method = method;
  const NlgsSolver solver(nlgs);
  VecX r;
  const NlgsStats stats = solver.solve_with_terms(test.problem, r);
  BOOST_TEST(stats.common.converged, to_string(stats.common.termination)
                                         << " after " << stats.common.iterations << ", merit "
                                         << stats.common.merit);
  BOOST_TEST(stats.common.solver == "nlgs-" + to_string(method));
  // The merit the solver reports is the suite's merit of its final r (up to the round-off of
  // tracking W r through the sweeps, relative to |q| which normalises it).
  BOOST_TEST(std::abs(stats.common.merit - merit(test.problem, r)) <= 1e-13);
  check_coulomb_law(test.problem, r, nlgs.tolerance);
  BOOST_TEST(stats.history.size() == static_cast<std::size_t>(stats.common.iterations) + 1);
}

// Rotating spheres: the tangential compliance reaches 3.5 times the normal one, so the Uzawa
// step of SBP and SAL with rho = 0.6 / W_nn would overshoot tangentially (rho W_tt up to 2.1);
// they run with alpha = 0.5 (rho W_tt <= 1.75). EBP and EAL solve each contact by Newton and
// keep their default alpha = 1.
BOOST_DATA_TEST_CASE(nlgs_reaches_tolerance_and_coulomb_law_holds_on_rotating_spheres,
                     bdata::make(kMethods) * bdata::make(kFrictionalRows), method, rows) {
  const TestProblem test = random_problem(30, rows, true, 700u + rows);
  BOOST_TEST_REQUIRE(Eigen::SelfAdjointEigenSolver<MatX>(test.dense).eigenvalues().minCoeff() >
                     0.0);
  NlgsOptions nlgs;
  nlgs.tolerance = 1e-10;
  nlgs.max_iterations = 50000;
  nlgs.warm_start = false;
  nlgs.record_history = false;
  nlgs.method = method;
  if (method == LocalMethod::sbp || method == LocalMethod::sal) nlgs.rho_factor = 0.5;
  const NlgsSolver solver(nlgs);
  VecX r;
  const SolverStats stats = solver.solve(test.problem, r);
  BOOST_TEST(stats.converged, to_string(stats.termination)
                                  << " after " << stats.iterations << ", merit " << stats.merit);
  check_coulomb_law(test.problem, r, nlgs.tolerance);
}

// Stopping on eps_glob (eq. 37): the final value is below the tolerance, is the sum of its four
// terms, and the motion term vanishes for SBP and SAL (their velocity is always the motion's).
BOOST_DATA_TEST_CASE(epsilon_glob_stop_reports_its_four_terms, bdata::make(kMethods), method) {
  const TestProblem test = random_problem(20, 3, false, 900u);
  NlgsOptions nlgs;
  nlgs.max_iterations = 20000;
  nlgs.warm_start = false;
  nlgs.method = method;
  nlgs.stopping = NlgsStopping::epsilon_glob;
  nlgs.epsilon_glob_tolerance = 1e-9;
  const NlgsSolver solver(nlgs);
  VecX r;
  const NlgsStats stats = solver.solve_with_terms(test.problem, r);
  BOOST_TEST_REQUIRE(stats.common.converged);
  BOOST_TEST(stats.epsilon_glob <= nlgs.epsilon_glob_tolerance);
  BOOST_TEST(stats.history.back().epsilon_glob == stats.epsilon_glob);
  BOOST_TEST(stats.terms.total() == stats.epsilon_glob);
  BOOST_TEST(stats.history.front().iteration == 0);
  if (method == LocalMethod::sbp || method == LocalMethod::sal) {
    for (const NlgsIterate& it : stats.history) BOOST_TEST(it.terms.motion == 0.0);
  }
  BOOST_TEST(stats.rho_factor ==
             (method == LocalMethod::sbp || method == LocalMethod::sal ? 0.6 : 1.0));
}

// Each registered NLGS name makes the NLGS with its local method, whatever method the options
// struct it is given names.
BOOST_AUTO_TEST_CASE(registered_names_and_option_validation) {
  for (const std::string name : {"nlgs-sbp", "nlgs-ebp", "nlgs-sal", "nlgs-eal"}) {
    BOOST_TEST(make_solver(name)->name() == name);
    NlgsOptions other;
    other.method = name == "nlgs-sbp" ? LocalMethod::eal : LocalMethod::sbp;
    BOOST_TEST(make_solver(name, other)->name() == name);
  }
  BOOST_CHECK_THROW(make_solver("nlgs-xyz"), InputError);
  NlgsOptions bad;
  bad.newton_max_iterations = 0;
  BOOST_CHECK_THROW(NlgsSolver{bad}, InputError);
  bad = NlgsOptions{};
  bad.rho_factor = -1.0;
  BOOST_CHECK_THROW(NlgsSolver{bad}, InputError);
  bad = NlgsOptions{};
  bad.check_every = 0;
  BOOST_CHECK_THROW(NlgsSolver{bad}, InputError);
  BOOST_CHECK_THROW(local_method_from_string("pgs"), InputError);
}

// ---------------------------------------------------------------------------------------------
// Theta-method stepper with NLGS (mechanics).

constexpr double kGravity = 9.81;

World sphere_world(double mu, double restitution) {
  World world = test::floor_world(mu, kGravity);
  world.materials.front().restitution = restitution;  // every body's material
  return world;
}

int add_sphere(World& world, double radius, const Vec3& position, const Vec3& velocity) {
  return test::add_ball(world, radius, 2500.0, position, velocity);  // glass
}

std::unique_ptr<ContactSolver> nlgs_solver(LocalMethod method, double dt) {
  NlgsOptions nlgs;
  nlgs.max_iterations = 5000;
  nlgs.record_history = false;
  nlgs.method = method;
  nlgs.stopping = NlgsStopping::epsilon_glob;
  nlgs.epsilon_glob_tolerance = 1e-12;
  nlgs.time_step = dt;
  return std::make_unique<NlgsSolver>(nlgs);
}

// With constant gravity the scheme gives v_k = v_0 - g k dt and
// y_{k+1} = y_k + dt ((1 - theta) v_k + theta v_{k+1}), so y_N = y_0 + v_0 N dt
// - g dt^2 (N (N - 1) / 2 + theta N): for theta = 1/2 the exact parabola.
BOOST_DATA_TEST_CASE(free_fall_follows_the_theta_scheme, bdata::make({0.5, 0.75, 1.0}), theta) {
  World world = sphere_world(0.3, 0.0);
  const double dt = 1e-3, v0 = 0.7;
  const int ball = add_sphere(world, 0.01, Vec3(0.0, 1.0, 0.0), Vec3(0.0, v0, 0.0));
  ThetaOptions options;
  options.time_step = dt;
  options.theta = theta;
  ThetaStepper stepper(world, options, nlgs_solver(LocalMethod::ebp, dt));
  const int steps = 200;
  for (int k = 0; k < steps; ++k) BOOST_TEST_REQUIRE(stepper.step().contacts.empty());
  const double expected =
      1.0 + v0 * steps * dt - kGravity * dt * dt * (steps * (steps - 1) / 2.0 + theta * steps);
  BOOST_TEST(world.bodies[ball].position.y() == expected, boost::test_tools::tolerance(1e-13));
  BOOST_TEST(world.bodies[ball].linear_velocity.y() == v0 - kGravity * steps * dt,
             boost::test_tools::tolerance(1e-13));
}

// eps_glob <= 1e-12 (m/s for the velocity terms) per step; velocities compared below are
// ~0.1-1 m/s, so 1e-9 relative is three orders above the solver's residual.
constexpr double kStepTolerance = 1e-9;

// Newton's law (eq. 20) with e_n: in the impact step the ball leaves with -e_n times the
// normal velocity it had at the start of the step (u~_n = 0 at the solution).
BOOST_DATA_TEST_CASE(dropped_ball_rebounds_with_normal_restitution,
                     bdata::make(kMethods) * bdata::make({0.0, 0.5, 0.9}), method, e_n) {
  World world = sphere_world(0.3, e_n);
  const double dt = 1e-4, radius = 0.005;
  const int ball = add_sphere(world, radius, Vec3(0.0, radius + 0.002, 0.0), Vec3::Zero());
  ThetaOptions options;
  options.time_step = dt;
  options.collision.margin = 1e-3;
  ThetaStepper stepper(world, options, nlgs_solver(method, dt));
  double before = 0.0;
  bool impact = false;
  for (int k = 0; k < 1000 && !impact; ++k) {
    before = world.bodies[ball].linear_velocity.y();
    impact = !stepper.step().contacts.empty();
  }
  BOOST_TEST_REQUIRE(impact);
  BOOST_TEST(before < -0.1);
  BOOST_TEST(stepper.last_report().solver_stats.converged);
  const double after = world.bodies[ball].linear_velocity.y();
  BOOST_TEST(std::abs(after + e_n * before) <= kStepTolerance * std::abs(before),
             "after " << after << ", before " << before);
}

// Tangential restitution: an oblique impact with enough friction to stick (|r_t| needed is
// (1 + e_t) m |u_t-| / 3.5 against mu r_n = mu m |v_y|, so mu = 1 suffices for v_x = v_y)
// reverses the slip of the contact point: u_t+ = -e_t u_t- (eq. 20 with u~_t = 0). The Newton
// methods only: with their default alpha = 0.6, SBP and SAL overshoot in the tangential
// direction of a sphere contact (rho W_tt = 0.6 * 3.5 = 2.1 > 2) and cannot settle on sticking.
BOOST_DATA_TEST_CASE(oblique_impact_reverses_slip_with_tangential_restitution,
                     bdata::make({LocalMethod::ebp, LocalMethod::eal}) * bdata::make({0.0, 0.4}),
                     method, e_t) {
  World world = sphere_world(1.0, 0.0);
  const double dt = 1e-4, radius = 0.005;
  const int ball = add_sphere(world, radius, Vec3(0.0, radius + 1e-5, 0.0), Vec3(0.5, -0.5, 0.0));
  ThetaOptions options;
  options.time_step = dt;
  options.tangential_restitution = e_t;
  options.collision.margin = 1e-3;
  ThetaStepper stepper(world, options, nlgs_solver(method, dt));
  // Slip of the contact point: Newton's law acts at the contact point found at mid-step, half
  // the overlap below the surface, so its lever arm (not R) enters u_t.
  const auto slip = [&](const Vec3& arm) {
    const RigidBody& b = world.bodies[ball];
    return (b.linear_velocity + b.angular_velocity.cross(arm)).x();
  };
  const RigidBody start = world.bodies[ball];
  const StepReport& report = stepper.step();
  BOOST_TEST_REQUIRE(report.contacts.size() == 1u);
  BOOST_TEST(report.solver_stats.converged);
  const Vec3 mid_step = start.position + (1 - options.theta) * dt * start.linear_velocity;
  const Vec3 arm = report.contacts[0].point - mid_step;
  const double before = (start.linear_velocity + start.angular_velocity.cross(arm)).x();
  BOOST_TEST(before == 0.5);
  BOOST_TEST(std::abs(slip(arm) + e_t * before) <= kStepTolerance * std::abs(before),
             "slip after " << slip(arm) << ", before " << before);
}

// The reason for the line search of the local Newton (local_solver.cpp): a sphere (m = 1,
// W = diag(1, 3.5, 3.5)) hitting a plane with u- = (-0.5, 0.5, 0) and mu = 1 must stick,
// r = (0.5, -0.5 / 3.5, 0) (u = 0; |r_t| = 0.143 <= mu r_n). The plain Newton step of the
// bi-potential from r = 0 overshoots to a "no contact" state and back, forever.
BOOST_AUTO_TEST_CASE(plain_newton_cycles_on_an_oblique_impact_and_the_line_search_fixes_it) {
  LocalProblem problem;
  problem.w = Vec3(1.0, 3.5, 3.5).asDiagonal();
  problem.b = Vec3(-0.5, 0.5, 0.0);
  problem.mu = 1.0;
  problem.rho = 1.0;
  const auto solver = make_local_solver(LocalMethod::ebp);
  LocalOptions options;
  options.line_search = false;
  const LocalResult plain = solver->solve(problem, Vec3::Zero(), options);
  BOOST_TEST(!plain.newton_converged);
  BOOST_TEST(plain.newton_iterations == options.newton_max_iterations);
  options.line_search = true;
  const LocalResult searched = solver->solve(problem, Vec3::Zero(), options);
  BOOST_TEST(searched.newton_converged);
  BOOST_TEST((searched.r - Vec3(0.5, -0.5 / 3.5, 0.0)).norm() <= 1e-9);
}

// A ball launched without spin on a plane slides with deceleration mu g while friction spins it
// up at 5 mu g / (2 R) (Dumont Sec. 4.1); the scheme reproduces the constant friction impulse
// mu m g dt exactly, so v(t) = v0 - mu g t and R omega = 5/2 mu g t before rolling starts at
// t* = 2 v0 / (7 mu g) ~ 0.062 s.
BOOST_DATA_TEST_CASE(sliding_ball_decelerates_at_mu_g, bdata::make(kMethods), method) {
  const double mu = 0.7, v0 = 1.5, radius = 0.005, dt = 1e-4;
  World world = sphere_world(mu, 0.0);
  const int ball = add_sphere(world, radius, Vec3(0.0, radius, 0.0), Vec3(v0, 0.0, 0.0));
  ThetaOptions options;
  options.time_step = dt;
  options.collision.margin = 1e-4;
  ThetaStepper stepper(world, options, nlgs_solver(method, dt));
  const int steps = 300;  // 0.03 s, half of t*
  for (int k = 0; k < steps; ++k) BOOST_TEST_REQUIRE(stepper.step().solver_stats.converged);
  const RigidBody& b = world.bodies[ball];
  const double t = steps * dt;
  BOOST_TEST(b.linear_velocity.x() == v0 - mu * kGravity * t, boost::test_tools::tolerance(1e-8));
  BOOST_TEST(-b.angular_velocity.z() * radius == 2.5 * mu * kGravity * t,
             boost::test_tools::tolerance(1e-8));
  BOOST_TEST(std::abs(b.position.y() - radius) <= 1e-12);
}

// Three spheres stacked on the floor at rest: the contact below sphere k carries the weight of
// the spheres above it and itself, (3 - k) m g dt per step, whatever the local solver.
BOOST_DATA_TEST_CASE(stacked_spheres_carry_cumulative_weight, bdata::make(kMethods), method) {
  const double radius = 0.01, dt = 1e-3;
  World world = sphere_world(0.5, 0.0);
  std::vector<int> balls;
  for (int k = 0; k < 3; ++k) {
    balls.push_back(add_sphere(world, radius, Vec3(0.0, radius * (1 + 2 * k), 0.0), Vec3::Zero()));
  }
  const double m = world.bodies[balls[0]].mass;
  ThetaOptions options;
  options.time_step = dt;
  options.collision.margin = 1e-3;
  ThetaStepper stepper(world, options, nlgs_solver(method, dt));
  for (int k = 0; k < 20; ++k) BOOST_TEST_REQUIRE(stepper.step().solver_stats.converged);
  const StepReport& report = stepper.last_report();
  BOOST_TEST_REQUIRE(report.contacts.size() == 3u);
  for (std::size_t i = 0; i < report.contacts.size(); ++i) {
    const Contact& c = report.contacts[i];
    const int above = c.body_b == balls[0] ? 3 : c.body_b == balls[1] ? 2 : 1;
    BOOST_TEST(report.impulses(3 * i) == above * m * kGravity * dt,
               boost::test_tools::tolerance(1e-8));
  }
}

BOOST_AUTO_TEST_CASE(theta_options_are_validated) {
  World world = sphere_world(0.3, 0.0);
  ThetaOptions options;
  options.theta = 0.4;
  BOOST_CHECK_THROW(ThetaStepper(world, options, nlgs_solver(LocalMethod::sbp, 1e-4)), InputError);
  options = ThetaOptions{};
  options.tangential_restitution = 1.5;
  BOOST_CHECK_THROW(ThetaStepper(world, options, nlgs_solver(LocalMethod::sbp, 1e-4)), InputError);
  BOOST_CHECK_THROW(ThetaStepper(world, ThetaOptions{}, nullptr), InputError);
}

}  // namespace
