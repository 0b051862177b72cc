#include "moreau/variational/force_problem.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "moreau/core/error.hpp"

namespace moreau::variational {
namespace {

constexpr double kTiny = 1e-300;

void require_size(const VecX& v, long size, const std::string& field, bool may_be_empty) {
  if (may_be_empty && v.size() == 0) return;
  if (v.size() != size) {
    throw InputError("variational force problem: " + field + " has " + std::to_string(v.size()) +
                     " entries, expected " + std::to_string(size));
  }
  if (!v.allFinite()) throw InputError("variational force problem: " + field + " is not finite");
}

// Where each contact's variables sit in the core's vector: (p, q / mu) or (p) when mu = 0.
struct ConeLayout {
  std::vector<int> offsets;
  std::vector<int> dimensions;
  int size = 0;
};

ConeLayout cone_layout(const VecX& friction) {
  ConeLayout layout;
  for (Eigen::Index i = 0; i < friction.size(); ++i) {
    const int dim = friction(i) > 0.0 ? 2 : 1;
    layout.offsets.push_back(layout.size);
    layout.dimensions.push_back(dim);
    layout.size += dim;
  }
  return layout;
}

// S of the change of variables f = S x (force_problem.hpp): column-disjoint, so S^T C S stays
// diagonal.
SparseMatrix scaling_matrix(const VecX& friction, const ConeLayout& layout) {
  const int n = static_cast<int>(friction.size());
  std::vector<Eigen::Triplet<double>> triplets;
  for (int i = 0; i < n; ++i) {
    triplets.emplace_back(2 * i, layout.offsets[i], 1.0);
    if (layout.dimensions[i] == 2) triplets.emplace_back(2 * i + 1, layout.offsets[i] + 1, friction(i));
  }
  SparseMatrix s(2 * n, layout.size);
  s.setFromTriplets(triplets.begin(), triplets.end());
  return s;
}

// Mean diagonal of N + C in the core's variables (0 for the rigid static problem).
double mean_diagonal(const conic::ConicQp& qp) {
  const std::vector<int> offsets = conic::cone_offsets(qp.cone_dimensions);
  double sum = qp.compliance.size() > 0 ? qp.compliance.sum() : 0.0;
  for (std::size_t k = 0; k < qp.cone_dimensions.size(); ++k)
    sum += qp.hessian->diagonal_block(offsets[k], qp.cone_dimensions[k]).trace();
  return qp.size() > 0 ? sum / qp.size() : 0.0;
}

// The core's default stop measures are relative to |r| and |x| (interior_point.hpp), which
// vanish for a static problem at rest and for a step whose contacts all open (x -> 0: the
// relative complementarity stays O(1) there). Here, with a displacement scale
// d = max(|r|, length_scale) and a force scale F = max(|x|, |b|, d / mean diag(N + C)):
//   |(N + C) x + r - A^T z - y| / d,   |x o y| / (d F),   |A x - b| / F   <= tolerance.
conic::StopTest stop_test(const conic::ConicQp& qp, double length_scale, double tolerance) {
  const double r_norm = qp.linear.norm();
  const double scale = std::max(r_norm, length_scale);
  const double diagonal = mean_diagonal(qp);
  const double b_norm = qp.equality_rhs.size() > 0 ? qp.equality_rhs.norm() : 0.0;
  const double reference_force = std::max(b_norm, diagonal > 0.0 ? scale / diagonal : 0.0);
  const std::vector<int> offsets = conic::cone_offsets(qp.cone_dimensions);
  return [&qp, r_norm, scale, reference_force, offsets, tolerance](const conic::InteriorPointIterate& it) {
    const double force = std::max({it.x.norm(), reference_force, kTiny});
    const double primal = it.stats.primal_residual * std::max(r_norm, kTiny) / scale;
    double products = 0.0;
    for (std::size_t k = 0; k < qp.cone_dimensions.size(); ++k) {
      const int o = offsets[k];
      const double x0 = it.x(o), y0 = it.y(o);
      if (qp.cone_dimensions[k] == 1) {
        products += x0 * y0 * x0 * y0;
        continue;
      }
      const double x1 = it.x(o + 1), y1 = it.y(o + 1);
      const double dot = x0 * y0 + x1 * y1, cross = x0 * y1 + y0 * x1;  // Jordan product
      products += dot * dot + cross * cross;
    }
    const double complementarity = std::sqrt(products) / (scale * force);
    double equality = 0.0;
    if (qp.equality.rows() > 0) equality = (qp.equality * it.x - qp.equality_rhs).norm() / force;
    return std::max({primal, complementarity, equality}) <= tolerance;
  };
}

}  // namespace

void ContactStiffness::validate() const {
  if (!(normal > 0.0)) throw InputError("k_n must be > 0 (inf for a rigid contact), got " + std::to_string(normal));
  if (!(tangential > 0.0)) {
    throw InputError("k_t must be > 0 (inf for a rigid contact), got " + std::to_string(tangential));
  }
}

void ForceProblem::validate() const {
  const long rows = 2L * contact_count();
  if (hessian.rows() != 0 || hessian.cols() != 0) {
    if (hessian.rows() != rows || hessian.cols() != rows) {
      throw InputError("variational force problem: hessian is " + std::to_string(hessian.rows()) +
                       " x " + std::to_string(hessian.cols()) + ", expected " + std::to_string(rows) +
                       " square (or empty for N = 0)");
    }
  }
  require_size(linear, rows, "linear", false);
  require_size(compliance, rows, "compliance", true);
  require_size(shear_history, contact_count(), "shear_history", true);
  if (!friction.allFinite() || (friction.size() > 0 && friction.minCoeff() < 0.0)) {
    throw InputError("variational force problem: friction must be finite and >= 0");
  }
  if (compliance.size() > 0 && compliance.minCoeff() < 0.0) {
    throw InputError("variational force problem: compliance must be >= 0");
  }
  if (equality.rows() > 0 && equality.cols() != rows) {
    throw InputError("variational force problem: equality has " + std::to_string(equality.cols()) +
                     " columns, expected " + std::to_string(rows));
  }
  require_size(equality_rhs, equality.rows(), "equality_rhs", equality.rows() == 0);
  if (!(length_scale > 0.0) || !std::isfinite(length_scale)) {
    throw InputError("variational force problem: length_scale must be finite and > 0");
  }
}

conic::InteriorPointOptions default_interior_point_options() {
  conic::InteriorPointOptions options;
  options.backend = conic::LinearBackend::cholmod;
  options.tolerance = 1e-8;
  return options;
}

ForceSolution solve_force_problem(const ForceProblem& problem,
                                  const conic::InteriorPointOptions& options) {
  problem.validate();
  const auto start = std::chrono::steady_clock::now();
  const int n = problem.contact_count();
  if (n == 0) {
    ForceSolution empty;
    empty.stats.status = conic::InteriorPointStatus::converged;
    empty.multipliers = VecX::Zero(problem.equality.rows());
    return empty;
  }
  const ConeLayout layout = cone_layout(problem.friction);
  const SparseMatrix s = scaling_matrix(problem.friction, layout);
  const SparseMatrix st = s.transpose();

  // c - C_T q0 on the tangential rows: the linear part of 1/2 (q - q0)^T C_T (q - q0).
  VecX linear = problem.linear;
  if (problem.compliance.size() > 0 && problem.shear_history.size() > 0) {
    for (int i = 0; i < n; ++i) linear(2 * i + 1) -= problem.compliance(2 * i + 1) * problem.shear_history(i);
  }
  SparseMatrix hessian(layout.size, layout.size);
  if (problem.hessian.rows() > 0) hessian = SparseMatrix(st * problem.hessian * s);
  const conic::SparseQuadraticOperator op(hessian);
  conic::ConicQp qp;
  qp.hessian = &op;
  if (problem.compliance.size() > 0) qp.compliance = st.cwiseAbs2() * problem.compliance;
  qp.linear = st * linear;
  qp.cone_dimensions = layout.dimensions;
  if (problem.equality.rows() > 0) {
    qp.equality = problem.equality * s;
    qp.equality_rhs = problem.equality_rhs;
  } else {
    qp.equality.resize(0, layout.size);
  }

  ForceSolution solution;
  VecX x, y;
  solution.stats = conic::solve_conic_qp(
      qp, options, x, y, solution.multipliers, false,
      stop_test(qp, problem.length_scale, options.tolerance));
  solution.forces = s * x;
  // y = S^T (...): the tangential row carries mu times the tangential slack.
  solution.slack = VecX::Zero(2 * n);
  for (int i = 0; i < n; ++i) {
    solution.slack(2 * i) = y(layout.offsets[i]);
    if (layout.dimensions[i] == 2) solution.slack(2 * i + 1) = y(layout.offsets[i] + 1) / problem.friction(i);
  }
  solution.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return solution;
}

}  // namespace moreau::variational
