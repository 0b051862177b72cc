#include "moreau/variational/force_problem.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <vector>

#include "moreau/core/error.hpp"

namespace moreau::variational {
namespace {

constexpr double kTiny = 1e-300;
// Relative to length_scale: below it a gap or displacement is rounding (solve_force_problem).
constexpr double kRoundingLength = 1e-9;

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
    if (layout.dimensions[i] == 2)
      triplets.emplace_back(2 * i + 1, layout.offsets[i] + 1, friction(i));
  }
  SparseMatrix s(2 * n, layout.size);
  s.setFromTriplets(triplets.begin(), triplets.end());
  return s;
}

}  // namespace

double stop_displacement_scale(const ForceProblem& problem) {
  if (problem.displacement_scale > 0.0) return problem.displacement_scale;
  // |r|_inf of the core's r = S^T (c - C_T q0) (solve_force_problem), entries at the rounding
  // level of a length counted as zero there.
  double r_max = 0.0;
  for (int i = 0; i < problem.contact_count(); ++i) {
    double tangential = problem.linear(2 * i + 1);
    if (problem.compliance.size() > 0 && problem.shear_history.size() > 0)
      tangential -= problem.compliance(2 * i + 1) * problem.shear_history(i);
    const double rounding = kRoundingLength * problem.length_scale;
    if (std::abs(problem.linear(2 * i)) > rounding)
      r_max = std::max(r_max, std::abs(problem.linear(2 * i)));
    if (std::abs(tangential) > rounding)
      r_max = std::max(r_max, std::abs(problem.friction(i) * tangential));
  }
  return r_max > 0.0 ? r_max : problem.length_scale;
}

namespace {

// The core's default stop measures are relative to |r| and |x| (interior_point.hpp); the
// relative complementarity |x o y| / (|x| |r|) stays O(1) when the forces vanish (every contact
// opens in the step), and |r| vanishes for a static problem at rest. Here, per cone k, with the
// displacement scale d = |r|_inf (length_scale when r = 0) and the force scale
// F = max(|x|_inf, force_scale):
//   |x_k o y_k| / max(|x_k| d, |y_k| F, sqrt(tolerance) d F)  (~ |y_k| / d on a closed
//   contact, ~ |x_k| / F on an open one), the core's relative primal residual, and
//   |A x + E z - b| / F, all <= tolerance.
// The floor sqrt(tolerance) d F is for a degenerate contact, one with neither force nor gap
// at the solution (not strictly complementary): the interior point iterates approach it with
// x_k / F ~ y_k / d ~ sqrt(mu / (d F)), so without the floor the ratio falls only like
// sqrt(mu / (d F)) and the tolerance 1e-8 asks for mu ~ 1e-16 d F, which is where rounding
// stops mu (the boundary-boundary pairs of sliding contacts compute x_k^T y_k as a difference
// of terms of size |x_k| |y_k|). Measured on 200-disk columns (column_drop's parameters): the
// worst contact of every stalled step was of this kind, stuck at ratios 1.8e-8 to 3e-8 with
// force and gap below 1e-7 of their scales. With the floor such a contact passes once
// |x_k o y_k| <= tolerance^1.5 d F (force and gap ~1e-6 of their scales), four decades above
// rounding; a contact carrying a force or a gap above sqrt(tolerance) of its scale is held to
// the test as before. Off (ForceProblem::degenerate_contact_floor), the floor is 0.
conic::StopTest stop_test(const conic::ConicQp& qp, const ForceProblem& problem, double tolerance) {
  const double r_norm = qp.linear.norm();
  const double scale = stop_displacement_scale(problem);
  const double force_scale = problem.force_scale;
  const double length_scale = problem.length_scale;
  const std::vector<int> offsets = conic::cone_offsets(qp.cone_dimensions);
  const double degenerate = problem.degenerate_contact_floor ? std::sqrt(tolerance) : 0.0;
  return [&qp, r_norm, scale, force_scale, length_scale, offsets, degenerate,
          tolerance](const conic::InteriorPointIterate& it) {
    const double force = std::max({it.x.cwiseAbs().maxCoeff(), force_scale, kTiny});
    const double primal =
        r_norm > 0.0 ? it.stats.primal_residual : it.stats.primal_residual * kTiny / length_scale;
    double complementarity = 0.0;
    for (std::size_t k = 0; k < qp.cone_dimensions.size(); ++k) {
      const int o = offsets[k];
      const double x0 = it.x(o), y0 = it.y(o);
      double product = std::abs(x0 * y0), x_norm = std::abs(x0), y_norm = std::abs(y0);
      if (qp.cone_dimensions[k] == 2) {
        const double x1 = it.x(o + 1), y1 = it.y(o + 1);
        product = std::hypot(x0 * y0 + x1 * y1, x0 * y1 + y0 * x1);  // Jordan product
        x_norm = std::hypot(x0, x1);
        y_norm = std::hypot(y0, y1);
      }
      const double ratio =
          product / std::max({x_norm * scale, y_norm * force, degenerate * scale * force, kTiny});
      complementarity = std::max(complementarity, ratio);
    }
    double equality = 0.0;
    if (qp.equality.rows() > 0) {
      VecX residual = qp.equality * it.x - qp.equality_rhs;
      if (qp.equality_relaxation.size() > 0) residual += qp.equality_relaxation.cwiseProduct(it.z);
      equality = residual.cwiseAbs().maxCoeff() / force;
    }
    return std::max({primal, complementarity, equality}) <= tolerance;
  };
}

// N' = S^T N S: from the factor F' = F S when the problem gives F (N' = F'^T F'), else
// assembled.
std::unique_ptr<conic::QuadraticOperator> hessian_operator(const ForceProblem& problem,
                                                           const SparseMatrix& s) {
  if (problem.hessian_factor.rows() > 0) {
    return std::make_unique<conic::SparseFactorOperator>(SparseMatrix(problem.hessian_factor * s),
                                                         problem.factor_block_rows);
  }
  SparseMatrix hessian(s.cols(), s.cols());
  if (problem.hessian.rows() > 0) {
    const SparseMatrix st = s.transpose();
    hessian = SparseMatrix(st * problem.hessian * s);
  }
  return std::make_unique<conic::SparseQuadraticOperator>(hessian);
}

}  // namespace

void ContactStiffness::validate() const {
  if (!(normal > 0.0))
    throw InputError("k_n must be > 0 (inf for a rigid contact), got " + std::to_string(normal));
  if (!(tangential > 0.0)) {
    throw InputError("k_t must be > 0 (inf for a rigid contact), got " +
                     std::to_string(tangential));
  }
}

void ForceProblem::validate() const {
  const long rows = 2L * contact_count();
  if (hessian.rows() != 0 || hessian.cols() != 0) {
    if (hessian.rows() != rows || hessian.cols() != rows) {
      throw InputError("variational force problem: hessian is " + std::to_string(hessian.rows()) +
                       " x " + std::to_string(hessian.cols()) + ", expected " +
                       std::to_string(rows) + " square (or empty for N = 0)");
    }
  }
  if (hessian_factor.rows() > 0 && hessian_factor.cols() != rows) {
    throw InputError("variational force problem: hessian_factor has " +
                     std::to_string(hessian_factor.cols()) + " columns, expected " +
                     std::to_string(rows));
  }
  if (hessian_factor.rows() > 0 && hessian.rows() > 0) {
    throw InputError("variational force problem: give hessian or hessian_factor, not both");
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
  require_size(equality_relaxation, equality.rows(), "equality_relaxation", true);
  if (equality_relaxation.size() > 0 && equality_relaxation.minCoeff() < 0.0) {
    throw InputError("variational force problem: equality_relaxation must be >= 0");
  }
  if (!(length_scale > 0.0) || !std::isfinite(length_scale)) {
    throw InputError("variational force problem: length_scale must be finite and > 0");
  }
  if (!(force_scale >= 0.0) || !std::isfinite(force_scale)) {
    throw InputError("variational force problem: force_scale must be finite and >= 0");
  }
  if (!(displacement_scale >= 0.0) || !std::isfinite(displacement_scale)) {
    throw InputError("variational force problem: displacement_scale must be finite and >= 0");
  }
}

conic::InteriorPointOptions default_interior_point_options() {
  conic::InteriorPointOptions options;
  options.backend = conic::LinearBackend::cholmod;
  options.tolerance = 1e-8;
  // The augmented quasi-definite KKT matrix [C + W^2, F^T; F, -I] where the problem gives
  // N = F^T F (the dynamic stepper): as sparse as the contact graph, unlike N + C + W^2 (a dense
  // clique per particle), and with AMD's ordering and regularized pivots instead of the body
  // space's K = I + F D^-1 F^T, which loses its digits along stiff contact chains and falls
  // back to the cone variables (docs/variational.md "Cost"). Without a factor (the static
  // problem) N is assembled.
  options.body_space = false;
  options.augmented_kkt = true;
  return options;
}

ForceSolution solve_force_problem(const ForceProblem& problem,
                                  const conic::InteriorPointOptions& options) {
  problem.validate();
  const auto start = std::chrono::steady_clock::now();
  const int n = problem.contact_count();
  if (n == 0) {
    // No forces: each equality row reads E z = b alone (the dynamic forces of eq. 4.15 carry
    // the loads), and without relaxation a loaded row has no solution.
    ForceSolution empty;
    empty.stats.status = conic::InteriorPointStatus::converged;
    empty.multipliers = VecX::Zero(problem.equality.rows());
    for (Eigen::Index r = 0; r < problem.equality.rows(); ++r) {
      const double relaxation =
          problem.equality_relaxation.size() > 0 ? problem.equality_relaxation(r) : 0.0;
      if (relaxation > 0.0) {
        empty.multipliers(r) = problem.equality_rhs(r) / relaxation;
      } else if (problem.equality_rhs(r) != 0.0) {
        empty.stats.status = conic::InteriorPointStatus::diverged;
        empty.stats.message = "a loaded equality row and no contact to carry it";
      }
    }
    return empty;
  }
  const ConeLayout layout = cone_layout(problem.friction);
  const SparseMatrix s = scaling_matrix(problem.friction, layout);
  const SparseMatrix st = s.transpose();

  // c - C_T q0 on the tangential rows: the linear part of 1/2 (q - q0)^T C_T (q - q0).
  VecX linear = problem.linear;
  if (problem.compliance.size() > 0 && problem.shear_history.size() > 0) {
    for (int i = 0; i < n; ++i)
      linear(2 * i + 1) -= problem.compliance(2 * i + 1) * problem.shear_history(i);
  }
  // Entries at the rounding level of a length (a resting contact's gap computes as 1e-17 to
  // 1e-13 m after a few position updates) are zero: otherwise, where they are all there is, they
  // would set the displacement scale of the stop test and the core's starting point (measured: a
  // disk resting on a face, whose solve then ran into the iteration limit with the right forces).
  for (Eigen::Index i = 0; i < linear.size(); ++i) {
    if (std::abs(linear(i)) <= kRoundingLength * problem.length_scale) linear(i) = 0.0;
  }
  const std::unique_ptr<conic::QuadraticOperator> op = hessian_operator(problem, s);
  conic::ConicQp qp;
  qp.hessian = op.get();
  if (problem.compliance.size() > 0) qp.compliance = st.cwiseAbs2() * problem.compliance;
  qp.linear = st * linear;
  qp.cone_dimensions = layout.dimensions;
  if (problem.equality.rows() > 0) {
    qp.equality = problem.equality * s;
    qp.equality_rhs = problem.equality_rhs;
    qp.equality_relaxation = problem.equality_relaxation;
  } else {
    qp.equality.resize(0, layout.size);
  }

  ForceSolution solution;
  VecX x, y;
  solution.stats = conic::solve_conic_qp(qp, options, x, y, solution.multipliers, false,
                                         stop_test(qp, problem, options.tolerance));
  solution.forces = s * x;
  // y = S^T (...): the tangential row carries mu times the tangential slack.
  solution.slack = VecX::Zero(2 * n);
  for (int i = 0; i < n; ++i) {
    solution.slack(2 * i) = y(layout.offsets[i]);
    if (layout.dimensions[i] == 2)
      solution.slack(2 * i + 1) = y(layout.offsets[i] + 1) / problem.friction(i);
  }
  solution.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return solution;
}

}  // namespace moreau::variational
