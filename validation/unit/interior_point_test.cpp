#define BOOST_TEST_MODULE interior_point
// The interior point method of Kleinert, Simeon & Dressler: Jordan-algebra identities, the
// conic QP core against CVXOPT (an independent conic solver, run as /usr/bin/python3 on
// validation/unit/cvxopt_coneqp.py), the ContactSolver against CVXOPT and APGD, the two
// linear-algebra back-ends against each other, and bad input.
#include "moreau/conic/interior_point.hpp"

#include <Eigen/Eigenvalues>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "moreau/conic/conic_qp.hpp"
#include "moreau/conic/jordan_algebra.hpp"
#include "moreau/core/error.hpp"
#include "moreau/model/shape.hpp"
#include "moreau/solver/apgd.hpp"
#include "moreau/solver/cone.hpp"
#include "moreau/solver/interior_point_solver.hpp"
#include "moreau/solver/merit.hpp"
#include "moreau/solver/solver_registry.hpp"
#include "test_support.hpp"

using namespace moreau;
using namespace moreau::conic;

namespace moreau::conic {
std::ostream& operator<<(std::ostream& stream, InteriorPointStatus status) {
  return stream << to_string(status);
}
}  // namespace moreau::conic

namespace {

// Agreement of two solutions of a problem with a unique solution. Interior point methods on
// second-order cones (ours and CVXOPT alike) reach a natural-map residual of ~1e-8..1e-9
// relative where a contact slides (x and y both on the cone boundary: the angle between them
// converges like the square root of the gap); the solutions are therefore compared through
// the error bound of a strongly monotone VI, |x - x*| <= (1 + L) / m |F_nat(x)| (Facchinei &
// Pang Prop. 2.3.12 style, L = lambda_max(Q), m = lambda_min(Q)), applied to both, and
// directly where both are that accurate (kSolutionAgreement, relative to |x|).
constexpr double kSolutionAgreement = 1e-8;
// Tolerance of the conic QP core (its complementarity measure |x o y| / (|x| |r|), primal and
// equality residuals): on second-order cones rounding stops the method near sqrt(epsilon)
// ~ 1.5e-8 (the angle of a sliding pair converges like the square root of the gap), so the
// tests ask for 1e-7; with it the natural-map residual is below kNaturalResidual |r|.
constexpr double kCoreTolerance = 1e-7;
constexpr double kNaturalResidual = 1e-6;
// Rounding in the Jordan identities (entries of order 1, a few flops each).
constexpr double kRounding = 1e-12;

// A random point of int C (dim 1..3).
Vec3 interior_point(std::mt19937& generator, int dim) {
  std::normal_distribution<double> normal(0.0, 1.0);
  Vec3 x = Vec3::Zero();
  for (int k = 1; k < dim; ++k) x[k] = normal(generator);
  x[0] = (dim > 1 ? x.tail(2).norm() : 0.0) + 0.1 + std::abs(normal(generator));
  return x;
}

Vec3 random_element(std::mt19937& generator, int dim) {
  std::normal_distribution<double> normal(0.0, 1.0);
  Vec3 x = Vec3::Zero();
  for (int k = 0; k < dim; ++k) x[k] = normal(generator);
  return x;
}

double distance(const Vec3& a, const Vec3& b) { return (a - b).norm(); }

// Natural map x - P_K(x - (Q x + r)) of the VI over the cones {diag(scale) x in C} (scale:
// the paper's T_x, e.g. (mu, 1, 1) for a friction cone K_mu).
double natural_residual(const MatX& q, const VecX& r, const std::vector<int>& dims,
                        const VecX& scale, const VecX& x) {
  const VecX gradient = q * x + r;
  const std::vector<int> offsets = cone_offsets(dims);
  double sum = 0.0;
  for (std::size_t k = 0; k < dims.size(); ++k) {
    const int dim = dims[k];
    const int o = offsets[k];
    Vec3 v = Vec3::Zero();
    for (int a = 0; a < dim; ++a) v[a] = x[o + a] - gradient[o + a];
    // K = {diag(scale) v in C} is the friction cone with mu = scale_0 / scale_1 (scale_1 = 1).
    const double mu = dim > 1 ? scale[o] / scale[o + 1] : 0.0;
    const Vec3 projected = project_onto_cone(v, mu, dim);
    for (int a = 0; a < dim; ++a) sum += std::pow(x[o + a] - projected[a], 2);
  }
  return std::sqrt(sum);
}

// |x - y| <= (1 + L) / m (|F_nat(x)| + |F_nat(y)|) for two approximate solutions x, y of the
// VI with Q positive definite (its solution x* is unique; the bound is applied to each).
void check_against_reference(const MatX& q, const VecX& r, const std::vector<int>& dims,
                             const VecX& scale, const VecX& x, const VecX& reference) {
  const Eigen::SelfAdjointEigenSolver<MatX> eigen(q);
  const double m = eigen.eigenvalues().minCoeff();
  const double l = eigen.eigenvalues().maxCoeff();
  const double ours = natural_residual(q, r, dims, scale, x);
  const double theirs = natural_residual(q, r, dims, scale, reference);
  BOOST_TEST_MESSAGE("natural residual: ours " << ours << ", reference " << theirs << ", distance "
                                               << (x - reference).norm());
  BOOST_TEST(ours <= kNaturalResidual * r.norm());
  BOOST_TEST((x - reference).norm() <= (1.0 + l) / m * (ours + theirs) + 1e-14);
  // Where both are that accurate they agree directly.
  if ((1.0 + l) / m * (ours + theirs) <= 0.1 * kSolutionAgreement * reference.norm()) {
    BOOST_TEST((x - reference).norm() <= kSolutionAgreement * reference.norm());
  }
}

BOOST_AUTO_TEST_CASE(jordan_algebra_identities) {
  std::mt19937 generator(11);
  for (int dim = 1; dim <= 3; ++dim) {
    for (int trial = 0; trial < 50; ++trial) {
      const Vec3 x = interior_point(generator, dim);
      const Vec3 y = interior_point(generator, dim);
      const Vec3 v = random_element(generator, dim);
      const Vec3 e = jordan_identity(dim);
      BOOST_TEST(distance(jordan_product(x, e, dim), x) < kRounding);
      BOOST_TEST(distance(jordan_product(x, y, dim), jordan_product(y, x, dim)) < kRounding);
      BOOST_TEST(distance(arrow_matrix(x, dim) * y, jordan_product(x, y, dim)) < kRounding);
      BOOST_TEST(distance(jordan_product(x, jordan_inverse(x, dim), dim), e) < kRounding);
      const Vec3 root = jordan_sqrt(x, dim);
      BOOST_TEST(distance(jordan_product(root, root, dim), x) < kRounding);
      BOOST_TEST(spectral_values(root, dim).minCoeff() > 0.0);
      // Jordan identity (x^2 o y) o x = x^2 o (y o x) of a Jordan algebra.
      const Vec3 x2 = jordan_product(x, x, dim);
      BOOST_TEST(distance(jordan_product(jordan_product(x2, v, dim), x, dim),
                          jordan_product(x2, jordan_product(v, x, dim), dim)) < 1e-10);
      const Mat3 lx = arrow_matrix(x, dim);
      BOOST_TEST(
          (quadratic_representation(x, dim) - (2.0 * lx * lx - arrow_matrix(x2, dim))).norm() <
          1e-10);
      BOOST_TEST(distance(jordan_product(x, jordan_divide(x, v, dim), dim), v) < 1e-10);
      BOOST_TEST(std::abs(determinant(x, dim) - spectral_values(x, dim).prod()) <
                 kRounding * x.squaredNorm());

      // Nesterov-Todd scaling: W x = W^-1 y = lambda, W symmetric positive definite, and
      // lambda o lambda has the same trace (x^T y) as x o y.
      const NesterovToddScaling nt = nesterov_todd_scaling(x, y, dim);
      BOOST_TEST(distance(nt.w * x, nt.lambda) < 1e-10 * nt.lambda.norm());
      BOOST_TEST(distance(nt.w_inverse * y, nt.lambda) < 1e-10 * nt.lambda.norm());
      BOOST_TEST((nt.w * nt.w_inverse).topLeftCorner(dim, dim).isIdentity(1e-10));
      BOOST_TEST((nt.w - nt.w.transpose()).norm() < kRounding);
      BOOST_TEST(Eigen::MatrixXd(nt.w.topLeftCorner(dim, dim)).llt().info() == Eigen::Success);
      BOOST_TEST(std::abs(nt.lambda.squaredNorm() - x.dot(y)) < 1e-10 * x.dot(y));

      // The largest step lands on the boundary: det(x + t dx) = 0 with x + t dx in C.
      const double step = max_step_in_cone(x, v, dim);
      if (std::isfinite(step)) {
        const Vec3 boundary = x + step * v;
        BOOST_TEST(std::abs(spectral_values(boundary, dim)[0]) <=
                   1e-9 * (x.norm() + step * v.norm()));
        BOOST_TEST(spectral_values(x + 0.99 * step * v, dim)[0] > 0.0);
      } else {
        BOOST_TEST(spectral_values(x + 1e6 * v, dim)[0] >= 0.0);
      }
    }
  }
}

// A random conic QP min 1/2 x^T Q x + r^T x over a product of cones of mixed dimensions,
// Q = B B^T + 0.1 I (positive definite), optionally with `equality_rows` equalities A x = b
// whose b = A x0 for an interior x0 (feasible).
struct RandomQp {
  MatX q;
  std::unique_ptr<SparseQuadraticOperator> hessian;
  ConicQp problem;
};

RandomQp random_qp(unsigned seed, int cones, int equality_rows) {
  std::mt19937 generator(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  RandomQp qp;
  for (int k = 0; k < cones; ++k) qp.problem.cone_dimensions.push_back(1 + k % 3);
  const std::vector<int> offsets = cone_offsets(qp.problem.cone_dimensions);
  const int n = offsets.back();
  MatX b(n, n);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) b(i, j) = normal(generator) / std::sqrt(n);
  }
  qp.q = b * b.transpose() + 0.1 * MatX::Identity(n, n);
  qp.hessian = std::make_unique<SparseQuadraticOperator>(SparseMatrix(qp.q.sparseView()));
  qp.problem.hessian = qp.hessian.get();
  qp.problem.linear = VecX(n);
  for (int i = 0; i < n; ++i) qp.problem.linear[i] = normal(generator);
  if (equality_rows > 0) {
    MatX a(equality_rows, n);
    for (int i = 0; i < equality_rows; ++i) {
      for (int j = 0; j < n; ++j) a(i, j) = normal(generator);
    }
    VecX x0(n);
    for (int k = 0; k < cones; ++k) {
      x0.segment(offsets[k], qp.problem.cone_dimensions[k]) =
          interior_point(generator, qp.problem.cone_dimensions[k])
              .head(qp.problem.cone_dimensions[k]);
    }
    qp.problem.equality = SparseMatrix(a.sparseView());
    qp.problem.equality_rhs = a * x0;
  }
  return qp;
}

std::filesystem::path cvxopt_script() {
  return std::filesystem::path(MOREAU_VALIDATION_DIR) / "unit" / "cvxopt_coneqp.py";
}

// Writes the QP (with s = diag(scale) x in the cones), runs CVXOPT, returns its x. Empty when
// cvxopt is missing (the caller skips with a message).
VecX solve_with_cvxopt(const MatX& q, const VecX& r, const std::vector<int>& dims,
                       const VecX& scale, const MatX& a, const VecX& b, const std::string& tag) {
  const std::filesystem::path directory = std::filesystem::temp_directory_path();
  const std::filesystem::path input = directory / ("moreau_ipm_" + tag + ".txt");
  const std::filesystem::path output = directory / ("moreau_ipm_" + tag + ".out");
  {
    std::ofstream file(input);
    file.precision(17);
    const Eigen::Index n = q.rows();
    file << n << ' ' << dims.size() << ' ' << a.rows() << '\n';
    for (int d : dims) file << d << ' ';
    file << '\n';
    for (Eigen::Index i = 0; i < n; ++i) file << scale[i] << ' ';
    file << '\n';
    for (Eigen::Index i = 0; i < n; ++i) {
      for (Eigen::Index j = 0; j < n; ++j) file << q(i, j) << ' ';
    }
    file << '\n';
    for (Eigen::Index i = 0; i < n; ++i) file << r[i] << ' ';
    file << '\n';
    for (Eigen::Index i = 0; i < a.rows(); ++i) {
      for (Eigen::Index j = 0; j < n; ++j) file << a(i, j) << ' ';
    }
    for (Eigen::Index i = 0; i < b.size(); ++i) file << b[i] << ' ';
    file << '\n';
  }
  const std::string command =
      "/usr/bin/python3 " + cvxopt_script().string() + " " + input.string() + " " + output.string();
  const int code = std::system(command.c_str());
  if (WIFEXITED(code) && WEXITSTATUS(code) == 3) return {};
  BOOST_REQUIRE_MESSAGE(code == 0, "the CVXOPT reference script failed: " + command);
  std::ifstream file(output);
  std::string status;
  file >> status;
  BOOST_REQUIRE_MESSAGE(status == "optimal", "CVXOPT status " + status + " for " + tag);
  VecX x(q.rows());
  for (Eigen::Index i = 0; i < x.size(); ++i) file >> x[i];
  return x;
}

BOOST_AUTO_TEST_CASE(step_along_the_cone_axis_stops_at_the_apex) {
  // x on the axis of C moved along it, x + t dx = (x_0 + t dx_0) e with dx_0 < 0: the step
  // leaves C at the apex, t = -x_0 / dx_0. det(x + t dx) = (x_0 + t dx_0)^2 only touches zero
  // there (a zero discriminant that rounds to either sign), so the determinant's roots alone
  // can miss it and let the step pass through the apex into -C. This is the scaled point of
  // a resting contact (zero friction), where the IPM's iterates left the cone.
  std::mt19937 generator(11);
  std::uniform_real_distribution<double> exponent(-6.0, 0.0);
  for (const int dim : {1, 2, 3}) {
    BOOST_TEST_CONTEXT("dim " << dim) {
      int missed = 0;
      for (int sample = 0; sample < 1000; ++sample) {
        const Vec3 x(std::pow(10.0, exponent(generator)), 0.0, 0.0);
        const Vec3 dx(-std::pow(10.0, exponent(generator)), 0.0, 0.0);
        const double step = max_step_in_cone(x, dx, dim);
        // A rounded-positive discriminant moves the double root by ~sqrt(epsilon) relative
        // (only ever to a shorter, still feasible step: the smaller root is taken).
        const double apex = x[0] / -dx[0];
        if (!(std::abs(step - apex) <= 1e-7 * apex)) ++missed;
      }
      BOOST_TEST(missed == 0);
    }
  }
}

const char* kCvxoptMissing =
    "python3-cvxopt is not installed (scripts/setup.sh installs it): CVXOPT comparison skipped";

BOOST_AUTO_TEST_CASE(conic_qp_matches_cvxopt) {
  for (const LinearBackend backend : {LinearBackend::conjugate_gradient, LinearBackend::cholmod}) {
    for (unsigned seed = 1; seed <= 4; ++seed) {
      for (const int equality_rows : {0, 2}) {
        RandomQp qp = random_qp(seed, 12, equality_rows);
        InteriorPointOptions options;
        options.tolerance = kCoreTolerance;
        options.backend = backend;
        VecX x, y, z;
        const InteriorPointStats stats = solve_conic_qp(qp.problem, options, x, y, z);
        BOOST_TEST_CONTEXT("backend " << to_string(backend) << ", seed " << seed << ", equalities "
                                      << equality_rows) {
          BOOST_TEST(stats.status == InteriorPointStatus::converged,
                     stats.message << " (primal " << stats.primal_residual << ", equality "
                                   << stats.equality_residual << ", complementarity "
                                   << stats.complementarity << ")");
          const MatX a = MatX(qp.problem.equality);
          const VecX reference =
              solve_with_cvxopt(qp.q, qp.problem.linear, qp.problem.cone_dimensions,
                                VecX::Ones(x.size()), a, qp.problem.equality_rhs,
                                "qp" + std::to_string(seed) + "_" + std::to_string(equality_rows));
          if (reference.size() == 0) {
            BOOST_TEST_MESSAGE(kCvxoptMissing);
            return;
          }
          if (equality_rows == 0) {
            check_against_reference(qp.q, qp.problem.linear, qp.problem.cone_dimensions,
                                    VecX::Ones(x.size()), x, reference);
          } else {
            // With equalities the VI bound needs the multipliers; CVXOPT's natural residual
            // is ~1e-7 relative (measured on these problems at its tightest tolerances that
            // still end 'optimal'), times cond(Q) ~ 1e2 bounds the distance by ~1e-5.
            BOOST_TEST((x - reference).norm() <= 1e-5 * reference.norm());
            BOOST_TEST(stats.equality_residual <= kCoreTolerance);
          }
          if (backend == LinearBackend::conjugate_gradient) {
            BOOST_TEST(stats.krylov_iterations > 0);
          } else {
            BOOST_TEST(stats.krylov_iterations == 0);
          }
          BOOST_TEST(static_cast<int>(stats.krylov_iterations_per_step.size()) ==
                     stats.newton_steps);
        }
      }
    }
  }
}

// A static problem of the form of the Krabbenhoft/NURBS chapter's eq. 4.16 (N = 0, a contact
// compliance C, 2D friction cones, equality rows A x = b) whose last row is a combination of
// the first two up to `deviation` (relative, per entry): a particle whose equilibrium rows are
// nearly dependent. Its solution is manufactured: complementary pairs x*, y* per cone (a third
// of the contacts sticking, x* interior and y* = 0; a third open, x* = 0; a third sliding, both
// on the boundary), multipliers z*, and r = y* - C x* + A^T z*, b = A x*, so that x* is the
// exact (unique: C > 0) solution.
struct StaticQp {
  std::unique_ptr<SparseQuadraticOperator> hessian;
  ConicQp problem;
  MatX q;            // N + C, dense (CVXOPT)
  VecX solution;     // x*
  VecX multipliers;  // z*
};

StaticQp static_qp(unsigned seed, double deviation, double compliance) {
  std::mt19937 generator(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  constexpr int kCones = 12, kRows = 8;
  const int n = 2 * kCones;
  StaticQp qp;
  qp.problem.cone_dimensions.assign(kCones, 2);
  qp.hessian = std::make_unique<SparseQuadraticOperator>(SparseMatrix(n, n));
  qp.problem.hessian = qp.hessian.get();
  qp.problem.compliance = VecX::Constant(n, compliance);
  qp.q = MatX(qp.problem.compliance.asDiagonal());
  MatX a = MatX::NullaryExpr(kRows, n, [&] { return normal(generator); });
  for (int j = 0; j < n; ++j)
    a(kRows - 1, j) = a(0, j) - 0.5 * a(1, j) + deviation * normal(generator);
  VecX x = VecX::Zero(n), y = VecX::Zero(n);
  for (int k = 0; k < kCones; ++k) {
    const double size = 0.5 + std::abs(normal(generator));
    const double direction = normal(generator) > 0.0 ? 1.0 : -1.0;
    if (k % 3 == 0) {  // sticking: x* interior, y* = 0
      x.segment<2>(2 * k) << size,
          0.5 * size * normal(generator) / (1.0 + std::abs(normal(generator)));
    } else if (k % 3 == 1) {  // open: x* = 0, y* interior
      y.segment<2>(2 * k) << size, 0.3 * size * direction;
    } else {  // sliding: x* = s (1, u), y* = t (1, -u)
      x.segment<2>(2 * k) << size, size * direction;
      y.segment<2>(2 * k) << 0.7 * size, -0.7 * size * direction;
    }
  }
  qp.solution = x;
  qp.multipliers = VecX::NullaryExpr(kRows, [&] { return normal(generator); });
  qp.problem.linear = y - qp.problem.compliance.cwiseProduct(x) + a.transpose() * qp.multipliers;
  qp.problem.equality = SparseMatrix(a.sparseView());
  qp.problem.equality_rhs = a * x;
  return qp;
}

// Nearly dependent rows (1e-5): the dense Schur complement A H^-1 A^T of the direct back-end
// (kept as dense_schur_complement) loses definiteness on these near the solution
// (not_positive_definite or numerical_limit); the quasi-definite KKT system solves them to the
// manufactured solution x* (1e-8; the tolerance 1e-12 because a sliding contact's x converges
// like the square root of the complementarity). The multipliers z are determined only to
// (residual) / sigma_min(A)^2 along the near-dependence: A^T z (the gaps) is compared.
// CVXOPT is the independent solver: with rows
// dependent to 1e-5 its stopping residuals (1e-9, cvxopt_coneqp.py) move its x by up to
// ~1e-9 / 1e-5 along the near-dependence, so ours must agree with it to 1e-8 or to CVXOPT's
// own distance from x* where that is larger.
BOOST_AUTO_TEST_CASE(nearly_dependent_equality_rows_match_cvxopt) {
  int dense_failures = 0;
  for (const unsigned seed : {1u, 2u, 3u, 4u, 5u, 6u}) {
    StaticQp qp = static_qp(seed, 1e-5, 0.05);
    InteriorPointOptions options;
    options.backend = LinearBackend::cholmod;
    options.tolerance = 1e-12;
    VecX x, y, z;
    const InteriorPointStats stats = solve_conic_qp(qp.problem, options, x, y, z);
    options.dense_schur_complement = true;
    VecX xd, yd, zd;
    const InteriorPointStats dense = solve_conic_qp(qp.problem, options, xd, yd, zd);
    if (dense.status != InteriorPointStatus::converged) ++dense_failures;
    BOOST_TEST_CONTEXT("seed " << seed) {
      BOOST_TEST_MESSAGE("seed " << seed << ": sparse KKT " << to_string(stats.status) << " in "
                                 << stats.newton_steps << " Newton steps, dense Schur "
                                 << to_string(dense.status) << " " << dense.message);
      BOOST_TEST(stats.status == InteriorPointStatus::converged, stats.message);
      const double exact = qp.solution.norm();
      BOOST_TEST((x - qp.solution).norm() <= 1e-8 * exact);
      const MatX a = MatX(qp.problem.equality);
      BOOST_TEST((a.transpose() * (z - qp.multipliers)).norm() <=
                 1e-8 * (a.transpose() * qp.multipliers).norm());
      const VecX reference = solve_with_cvxopt(
          qp.q, qp.problem.linear, qp.problem.cone_dimensions, VecX::Ones(x.size()),
          MatX(qp.problem.equality), qp.problem.equality_rhs, "near" + std::to_string(seed));
      if (reference.size() == 0) {
        BOOST_TEST_MESSAGE(kCvxoptMissing);
        return;
      }
      const double cvxopt_error = (reference - qp.solution).norm();
      BOOST_TEST((x - reference).norm() <= std::max(1e-8 * exact, 2.0 * cvxopt_error),
                 "|x - x_cvxopt| = " << (x - reference).norm() << ", |x_cvxopt - x*| = "
                                     << cvxopt_error << ", |x*| = " << exact);
    }
  }
  BOOST_TEST_MESSAGE("dense Schur complement: " << dense_failures << " of 6 not converged");
}

// On well-conditioned rows the sparse KKT factorization and the dense Schur complement are two
// eliminations of the same Newton system: the same solution (forces and multipliers) to the
// tolerance.
BOOST_AUTO_TEST_CASE(sparse_kkt_matches_dense_schur_complement) {
  for (const unsigned seed : {1u, 3u, 4u}) {
    for (const double compliance : {0.05, 1.0}) {
      StaticQp qp = static_qp(seed, 1.0, compliance);
      InteriorPointOptions options;
      options.backend = LinearBackend::cholmod;
      options.tolerance = 1e-10;
      VecX x, y, z, xd, yd, zd;
      const InteriorPointStats sparse = solve_conic_qp(qp.problem, options, x, y, z);
      options.dense_schur_complement = true;
      const InteriorPointStats dense = solve_conic_qp(qp.problem, options, xd, yd, zd);
      BOOST_TEST_CONTEXT("seed " << seed << ", compliance " << compliance) {
        BOOST_TEST(sparse.status == InteriorPointStatus::converged, sparse.message);
        BOOST_TEST(dense.status == InteriorPointStatus::converged, dense.message);
        BOOST_TEST((x - xd).norm() <= 1e-8 * x.norm());
        BOOST_TEST((z - zd).norm() <= 1e-8 * z.norm());
        BOOST_TEST(std::abs(sparse.newton_steps - dense.newton_steps) <= 2);
      }
    }
  }
}

// Rows of A that are exactly dependent (a row that is a combination of two others, a zero row
// with a load): the multipliers are not unique, and both back-ends say so, naming the row,
// instead of returning one of them.
BOOST_AUTO_TEST_CASE(dependent_equality_rows_give_their_status) {
  for (const LinearBackend backend : {LinearBackend::conjugate_gradient, LinearBackend::cholmod}) {
    BOOST_TEST_CONTEXT("backend " << to_string(backend)) {
      StaticQp combination = static_qp(5, 0.0, 0.05);
      StaticQp zero_row = static_qp(5, 1.0, 0.05);
      SparseMatrix& a = zero_row.problem.equality;
      a = SparseMatrix(MatX(MatX(a).topRows(a.rows() - 1)).sparseView());
      a.conservativeResize(a.rows() + 1, a.cols());
      zero_row.problem.equality_rhs[a.rows() - 1] = 1.0;
      for (StaticQp* qp : {&combination, &zero_row}) {
        InteriorPointOptions options;
        options.backend = backend;
        VecX x, y, z;
        const InteriorPointStats stats = solve_conic_qp(qp->problem, options, x, y, z);
        BOOST_TEST(stats.status == InteriorPointStatus::dependent_equalities);
        BOOST_TEST(stats.message.find("1 of the 8 equality rows") != std::string::npos,
                   stats.message);
        BOOST_TEST(stats.newton_steps == 0);
      }
    }
  }
}

// Relaxed rows A x + E z = b (conic_qp.hpp; the dynamic problem eq. 4.15 of the
// Krabbenhoft/NURBS chapter in mixed form). The manufactured solution stays exact with
// b = A x* + E z*. Relaxing a row of the dependent triple (rows 0, 1 and 7 = row 0 - row 1 / 2)
// makes z unique, and every back-end recovers x*, z*; relaxing another row leaves the triple
// dependent, and the status says so.
BOOST_AUTO_TEST_CASE(relaxed_equality_rows_recover_the_manufactured_solution) {
  struct Backend {
    LinearBackend backend;
    bool dense;
  };
  for (const Backend b :
       {Backend{LinearBackend::cholmod, false}, Backend{LinearBackend::cholmod, true},
        Backend{LinearBackend::conjugate_gradient, false}}) {
    for (const int relaxed_row : {0, 7, 3}) {
      BOOST_TEST_CONTEXT("backend " << to_string(b.backend) << (b.dense ? " (dense Schur)" : "")
                                    << ", relaxed row " << relaxed_row) {
        StaticQp qp = static_qp(5, 0.0, 0.05);
        VecX relaxation = VecX::Zero(qp.problem.equality.rows());
        relaxation(relaxed_row) = 0.7;
        qp.problem.equality_relaxation = relaxation;
        qp.problem.equality_rhs += relaxation.cwiseProduct(qp.multipliers);
        InteriorPointOptions options;
        options.backend = b.backend;
        options.dense_schur_complement = b.dense;
        options.tolerance = 1e-10;
        VecX x, y, z;
        const InteriorPointStats stats = solve_conic_qp(qp.problem, options, x, y, z);
        if (relaxed_row == 3) {
          BOOST_TEST(stats.status == InteriorPointStatus::dependent_equalities, stats.message);
          BOOST_TEST(stats.message.find("1 of the 8 equality rows") != std::string::npos,
                     stats.message);
          continue;
        }
        BOOST_TEST_REQUIRE(stats.status == InteriorPointStatus::converged, stats.message);
        BOOST_TEST((x - qp.solution).norm() <= 1e-7 * qp.solution.norm());
        BOOST_TEST((z - qp.multipliers).norm() <= 1e-7 * qp.multipliers.norm());
      }
    }
  }
  StaticQp qp = static_qp(5, 0.0, 0.05);
  qp.problem.equality_relaxation = -VecX::Ones(qp.problem.equality.rows());
  VecX x, y, z;
  BOOST_CHECK_THROW(solve_conic_qp(qp.problem, InteriorPointOptions{}, x, y, z), InputError);
}

// No solution (N = 0, a ray x = t (1, 1) of R+^2 with A x = 0 and r^T x -> -infinity: the
// static problem of a rigid assembly that cannot move as the load asks): the iterates grow
// without bound, reported as diverged with that reason by both back-ends.
BOOST_AUTO_TEST_CASE(unbounded_problem_with_equality_rows_diverges) {
  for (const LinearBackend backend : {LinearBackend::conjugate_gradient, LinearBackend::cholmod}) {
    SparseQuadraticOperator zero(SparseMatrix(3, 3));
    ConicQp qp;
    qp.hessian = &zero;
    qp.cone_dimensions = {1, 1, 1};
    qp.linear = Eigen::Vector3d(-1.0, 0.0, 1.0);
    qp.equality = SparseMatrix(Eigen::RowVector3d(1.0, -1.0, 0.0).sparseView());
    qp.equality_rhs = VecX::Zero(1);
    InteriorPointOptions options;
    options.backend = backend;
    VecX x, y, z;
    const InteriorPointStats stats = solve_conic_qp(qp, options, x, y, z);
    BOOST_TEST_CONTEXT("backend " << to_string(backend)) {
      BOOST_TEST(stats.status == InteriorPointStatus::diverged, stats.message);
      BOOST_TEST(stats.message.find("no solution") != std::string::npos, stats.message);
      BOOST_TEST(stats.message.find("grew without bound") != std::string::npos, stats.message);
    }
  }
}

// x in R+^2 with x_0 + x_1 = -1: no solution (the loads of a static problem that no
// compressive contact force can carry). `zero`: N = 0, 2 x 2.
ConicQp infeasible_equality_problem(const SparseQuadraticOperator& zero) {
  ConicQp qp;
  qp.hessian = &zero;
  qp.cone_dimensions = {1, 1};
  qp.compliance = VecX::Constant(2, 0.1);
  qp.linear = Eigen::Vector2d(1.0, 2.0);
  qp.equality = SparseMatrix(Eigen::RowVector2d(1.0, 1.0).sparseView());
  qp.equality_rhs = -VecX::Ones(1);
  return qp;
}

// No solution the other way (x in R+^2, x_0 + x_1 = -1: the loads of a static problem that no
// compressive contact force can carry): reported as diverged, "no solution" (the steps stall
// at the cone boundary here; in the biaxial samples of 500 and 1,520 disks the multipliers
// followed the Farkas ray instead), by the direct back-end.
BOOST_AUTO_TEST_CASE(infeasible_equality_rows_diverge) {
  SparseQuadraticOperator zero(SparseMatrix(2, 2));
  const ConicQp qp = infeasible_equality_problem(zero);
  InteriorPointOptions options;
  options.backend = LinearBackend::cholmod;
  VecX x, y, z;
  const InteriorPointStats plain = solve_conic_qp(qp, options, x, y, z);
  BOOST_TEST(plain.status == InteriorPointStatus::diverged, plain.message);
  BOOST_TEST(plain.message.find("no solution") != std::string::npos, plain.message);
  // The stall rule (stall_newton_steps) stops it earlier, with the same diagnosis.
  options.stall_newton_steps = 10;
  const InteriorPointStats stalled = solve_conic_qp(qp, options, x, y, z);
  BOOST_TEST(stalled.newton_steps < plain.newton_steps, stalled.newton_steps
                                                            << " Newton steps with the rule, "
                                                            << plain.newton_steps << " without");
  // Named as what it is where the divergence tests tell it at the stall.
  BOOST_TEST(stalled.status == InteriorPointStatus::diverged, stalled.message);
  BOOST_TEST(stalled.message.find("no solution") != std::string::npos, stalled.message);
}

// The stall rule (stall_newton_steps) acts only where the residuals stop halving: a converging
// solve takes the same Newton steps to the same point with it (the infeasible problem above stops
// earlier).
BOOST_AUTO_TEST_CASE(stall_rule_stops_only_a_stalled_solve) {
  for (unsigned seed = 1; seed <= 4; ++seed) {
    RandomQp qp = random_qp(seed, 12, 2);
    InteriorPointOptions options;
    options.tolerance = kCoreTolerance;
    options.backend = LinearBackend::cholmod;
    VecX x, y, z, x_stall, y_stall, z_stall;
    const InteriorPointStats plain = solve_conic_qp(qp.problem, options, x, y, z);
    options.stall_newton_steps = 5;
    const InteriorPointStats with_rule =
        solve_conic_qp(qp.problem, options, x_stall, y_stall, z_stall);
    BOOST_TEST_CONTEXT("seed " << seed) {
      BOOST_TEST(plain.status == InteriorPointStatus::converged, plain.message);
      BOOST_TEST(with_rule.status == InteriorPointStatus::converged, with_rule.message);
      BOOST_TEST(with_rule.newton_steps == plain.newton_steps);
      BOOST_TEST((x_stall - x).norm() == 0.0);
    }
  }
}

BOOST_AUTO_TEST_CASE(compliance_is_added_to_the_hessian) {
  RandomQp qp = random_qp(7, 9, 0);
  const int n = qp.problem.size();
  qp.problem.compliance = VecX::LinSpaced(n, 0.1, 1.0);
  InteriorPointOptions options;
  options.tolerance = kCoreTolerance;
  VecX x, y, z;
  const InteriorPointStats stats = solve_conic_qp(qp.problem, options, x, y, z);
  BOOST_TEST(stats.status == InteriorPointStatus::converged, stats.message);
  const MatX q = qp.q + MatX(qp.problem.compliance.asDiagonal());
  const VecX reference = solve_with_cvxopt(q, qp.problem.linear, qp.problem.cone_dimensions,
                                           VecX::Ones(n), MatX(0, n), VecX(0), "compliance");
  if (reference.size() == 0) {
    BOOST_TEST_MESSAGE(kCvxoptMissing);
    return;
  }
  check_against_reference(q, qp.problem.linear, qp.problem.cone_dimensions, VecX::Ones(n), x,
                          reference);
}

// A cone problem with an SPD W = B B^T + shift I of `contacts` contacts.
struct TestContactProblem {
  MatX w;
  std::unique_ptr<SparseDelassus> delassus;
  ConeProblem problem;
};

TestContactProblem random_contact_problem(unsigned seed, int contacts, int rows, double mu_max,
                                          FrictionModel model) {
  std::mt19937 generator(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const int n = contacts * rows;
  MatX b(n, n + 2);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n + 2; ++j) b(i, j) = normal(generator) / std::sqrt(n);
  }
  TestContactProblem test;
  test.w = b * b.transpose() + 0.2 * MatX::Identity(n, n);
  test.delassus = std::make_unique<SparseDelassus>(SparseMatrix(test.w.sparseView()), rows);
  test.problem.delassus = test.delassus.get();
  test.problem.q = VecX(n);
  // Mostly approaching contacts (negative normal velocity), some separating.
  for (int i = 0; i < n; ++i) {
    test.problem.q[i] = (i % rows == 0) ? normal(generator) - 0.5 : normal(generator);
  }
  test.problem.mu = VecX(contacts);
  for (int i = 0; i < contacts; ++i) test.problem.mu[i] = mu_max * (0.2 + 0.8 * uniform(generator));
  test.problem.friction_model = model;
  return test;
}

// The common options of a tight solve, in the options struct O of the solver.
template <class O = IpmOptions>
O tight(double tolerance) {
  O options;
  options.tolerance = tolerance;
  options.warm_start = false;
  return options;
}

BOOST_AUTO_TEST_CASE(contact_ccp_matches_cvxopt) {
  // The relaxed CCP (Kleinert eq. 22) is the optimality condition of
  // min 1/2 gamma^T W gamma + q^T gamma over gamma in K_mu: CVXOPT gets that QP directly with
  // s = diag(mu, 1, 1) gamma in the Lorentz cone (the paper's T_x), the IPM its eq. 23 form.
  for (const int rows : {1, 2, 3}) {
    for (const std::string solver : {"ipm", "ipm-direct"}) {
      TestContactProblem test =
          random_contact_problem(20 + rows, 6, rows, 0.8, FrictionModel::convex_relaxation);
      VecX r;
      const SolverStats stats = make_solver(solver, tight(1e-8))->solve(test.problem, r);
      BOOST_TEST_CONTEXT(solver << ", rows " << rows) {
        BOOST_TEST(stats.converged, stats.stop_reason);
        BOOST_TEST(stats.merit <= 1e-8);
        BOOST_TEST(stats.kleinert_error < 1e-8);
        const int n = test.problem.size();
        VecX scale = VecX::Ones(n);
        std::vector<int> dims(test.problem.contact_count(), rows);
        if (rows > 1) {
          for (int i = 0; i < test.problem.contact_count(); ++i)
            scale[i * rows] = test.problem.mu[i];
        }
        const VecX reference = solve_with_cvxopt(test.w, test.problem.q, dims, scale, MatX(0, n),
                                                 VecX(0), "ccp" + std::to_string(rows) + solver);
        if (reference.size() == 0) {
          BOOST_TEST_MESSAGE(kCvxoptMissing);
          return;
        }
        check_against_reference(test.w, test.problem.q, dims, scale, r, reference);
      }
    }
  }
}

// The VI of a cone problem's relaxed CCP (Kleinert eq. 22) in the form of check_against_reference.
void check_contact_solutions(const TestContactProblem& test, const VecX& r, const VecX& reference) {
  const int rows = test.problem.rows();
  const int n = test.problem.size();
  VecX scale = VecX::Ones(n);
  if (rows > 1) {
    for (int i = 0; i < test.problem.contact_count(); ++i) scale[i * rows] = test.problem.mu[i];
  }
  check_against_reference(test.w, test.problem.q,
                          std::vector<int>(test.problem.contact_count(), rows), scale, r,
                          reference);
}

BOOST_AUTO_TEST_CASE(agrees_with_apgd) {
  // APGD to merit 1e-10; the IPM to 1e-10 on the frictionless LCP (R+ cones: no sliding
  // pairs, full accuracy) and to 1e-8 on friction cones (see kSolutionAgreement). Relaxed
  // problems: compared through the VI error bound; Coulomb (small mu, where the fixed point on
  // s contracts and the solution is unique, but the problem is not monotone: no such bound):
  // compared directly, to 1e-6 relative (both merits <= 1e-8 on a W with condition ~10).
  struct Case {
    int rows;
    double mu_max;
    FrictionModel model;
    double ipm_tolerance;
  };
  for (const Case c : {Case{1, 0.0, FrictionModel::convex_relaxation, 1e-10},
                       Case{3, 0.6, FrictionModel::convex_relaxation, 1e-8},
                       Case{2, 0.5, FrictionModel::convex_relaxation, 1e-8},
                       Case{3, 0.3, FrictionModel::coulomb, 1e-8}}) {
    TestContactProblem test = random_contact_problem(40 + c.rows, 10, c.rows, c.mu_max, c.model);
    ApgdOptions apgd_options = tight<ApgdOptions>(1e-10);
    apgd_options.max_iterations = 200000;
    VecX r_apgd;
    const SolverStats apgd = Apgd(apgd_options).solve(test.problem, r_apgd);
    for (const std::string solver : {"ipm", "ipm-direct"}) {
      VecX r_ipm;
      const SolverStats ipm =
          make_solver(solver, tight(c.ipm_tolerance))->solve(test.problem, r_ipm);
      BOOST_TEST_CONTEXT(solver << ", rows " << c.rows << ", coulomb "
                                << (c.model == FrictionModel::coulomb)) {
        BOOST_TEST(ipm.converged, ipm.stop_reason);
        BOOST_TEST(apgd.converged);
        BOOST_TEST(ipm.merit <= c.ipm_tolerance);
        BOOST_TEST(std::abs(ipm.merit - merit(test.problem, r_ipm)) <= 1e-14);
        BOOST_TEST(ipm.iterations > 0);
        BOOST_TEST_MESSAGE(solver << " rows " << c.rows << ": " << ipm.iterations
                                  << " Newton steps, " << ipm.krylov_iterations
                                  << " Krylov iterations, merit " << ipm.merit << "; APGD "
                                  << apgd.iterations << " iterations");
        if (c.model == FrictionModel::coulomb) {
          BOOST_TEST((r_ipm - r_apgd).norm() <= 1e-6 * r_apgd.norm());
        } else {
          check_contact_solutions(test, r_ipm, r_apgd);
        }
      }
    }
  }
}

BOOST_AUTO_TEST_CASE(backends_agree) {
  TestContactProblem test = random_contact_problem(5, 30, 3, 0.5, FrictionModel::convex_relaxation);
  VecX r_cg, r_direct;
  const SolverStats cg = make_solver("ipm", tight(1e-8))->solve(test.problem, r_cg);
  const SolverStats direct = make_solver("ipm-direct", tight(1e-8))->solve(test.problem, r_direct);
  BOOST_TEST(cg.converged, cg.stop_reason);
  BOOST_TEST(direct.converged, direct.stop_reason);
  check_contact_solutions(test, r_cg, r_direct);
  BOOST_TEST(cg.krylov_iterations > 0);
  BOOST_TEST(direct.krylov_iterations == 0);
  BOOST_TEST(static_cast<int>(cg.krylov_iterations_per_step.size()) == cg.iterations);
  BOOST_TEST(cg.solver == "ipm");
  BOOST_TEST(direct.solver == "ipm-direct");
}

BOOST_AUTO_TEST_CASE(bad_input_is_reported) {
  // NaN in the free velocity: an InputError naming it.
  TestContactProblem test = random_contact_problem(3, 4, 3, 0.5, FrictionModel::convex_relaxation);
  test.problem.q[2] = std::nan("");
  VecX r;
  BOOST_CHECK_THROW(make_solver("ipm", tight(1e-8))->solve(test.problem, r), InputError);

  // NaN in the QP, wrong cone sizes, bad options: InputError.
  RandomQp qp = random_qp(1, 6, 0);
  VecX x, y, z;
  qp.problem.linear[0] = std::nan("");
  BOOST_CHECK_THROW(solve_conic_qp(qp.problem, {}, x, y, z), InputError);
  qp = random_qp(1, 6, 0);
  qp.problem.cone_dimensions.back() = 4;
  BOOST_CHECK_THROW(solve_conic_qp(qp.problem, {}, x, y, z), InputError);
  qp = random_qp(1, 6, 0);
  InteriorPointOptions bad;
  bad.step_fraction = 1.5;
  BOOST_CHECK_THROW(solve_conic_qp(qp.problem, bad, x, y, z), InputError);
  IpmOptions bad_solver;
  bad_solver.core.max_forcing = 0.0;
  BOOST_CHECK_THROW(InteriorPointSolver{bad_solver}, InputError);
  bad_solver = IpmOptions{};
  bad_solver.core.predictor_forcing = 1.0;
  BOOST_CHECK_THROW(InteriorPointSolver{bad_solver}, InputError);
  bad = InteriorPointOptions{};
  bad.predictor_forcing = std::nan("");
  BOOST_CHECK_THROW(solve_conic_qp(qp.problem, bad, x, y, z), InputError);

  // N indefinite: a status, not an exception, for both back-ends.
  for (const LinearBackend backend : {LinearBackend::conjugate_gradient, LinearBackend::cholmod}) {
    RandomQp indefinite = random_qp(2, 6, 0);
    indefinite.q -= 3.0 * MatX::Identity(indefinite.q.rows(), indefinite.q.cols());
    indefinite.hessian =
        std::make_unique<SparseQuadraticOperator>(SparseMatrix(indefinite.q.sparseView()));
    indefinite.problem.hessian = indefinite.hessian.get();
    InteriorPointOptions options;
    options.backend = backend;
    const InteriorPointStats stats = solve_conic_qp(indefinite.problem, options, x, y, z);
    BOOST_TEST(stats.status == InteriorPointStatus::not_positive_definite);
    BOOST_TEST(!stats.message.empty());
  }

  // An unbounded problem (N = 0, r < 0 along a cone direction): not converged, no exception.
  RandomQp unbounded = random_qp(3, 3, 0);
  const int n = unbounded.problem.size();
  unbounded.hessian = std::make_unique<SparseQuadraticOperator>(SparseMatrix(n, n));
  unbounded.problem.hessian = unbounded.hessian.get();
  unbounded.problem.linear = -VecX::Ones(n);
  InteriorPointOptions options;
  options.max_newton_steps = 60;
  const InteriorPointStats stats = solve_conic_qp(unbounded.problem, options, x, y, z);
  BOOST_TEST(stats.status != InteriorPointStatus::converged);
}

// A column of three balls resting on the floor (mu = 0.5, one Euler step): every contact has
// zero friction, so the solution lies on the axis of each friction cone and the scaled
// iterates move along it; a step through the apex there (see
// step_along_the_cone_axis_stops_at_the_apex) would make the Nesterov-Todd scaling NaN and
// stop the IPM after a few Newton steps with a wrong "N is not positive semi-definite".
// The contact under ball k (from the bottom, k = 1..3) carries (4 - k) m g dt.
BOOST_AUTO_TEST_CASE(resting_column_on_the_cone_axes) {
  constexpr double kGravity = 9.81;
  constexpr double kTimeStep = 1e-3;
  for (const std::string solver : {"ipm", "ipm-direct"}) {
    for (const FrictionModel model : {FrictionModel::coulomb, FrictionModel::convex_relaxation}) {
      BOOST_TEST_CONTEXT(solver << ", coulomb " << (model == FrictionModel::coulomb)) {
        World world = test::floor_world(0.5, kGravity);
        for (int k = 0; k < 3; ++k) {
          test::add_ball(world, 0.1, 1000.0, Vec3(0.0, 0.1 * (1 + 2 * k), 0.0));
        }
        const double mass = world.bodies[1].mass;
        test::EulerSetup setup;
        setup.time_step = kTimeStep;
        setup.collision.margin = 1e-3;
        setup.solver = solver;
        setup.solver_options = tight(1e-8);
        setup.friction_model = model;
        auto stepper = test::euler_stepper(world, setup);
        const StepReport& report = stepper.step();
        BOOST_TEST(report.solver_stats.converged, report.solver_stats.stop_reason);
        test::check_resting_column(report, mass, kGravity, kTimeStep);
      }
    }
  }
}

}  // namespace
