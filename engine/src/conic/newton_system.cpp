#include "newton_system.hpp"

#include <Eigen/CholmodSupport>
#include <algorithm>
#include <array>
#include <cmath>

#include "kkt_system.hpp"

namespace moreau::conic::detail {
namespace {

// Below this many cones a block loop costs less than an OpenMP fork/join.
constexpr int kParallelCones = 2048;

using ColumnMatrix = Eigen::SparseMatrix<double, Eigen::ColMajor>;

// Preconditioned conjugate gradients on H = N + C + W^2 with every product through the
// operator N (never assembled) and the block-diagonal preconditioner, one dim x dim block
// (N_kk + C_k + W_k^2)^-1 per cone (Kleinert Sec. 4.2): W^2 dominates the blocks that become
// ill-conditioned as mu -> 0, which the preconditioner then captures exactly.
class ConjugateGradientSystem final : public NewtonSystem {
 public:
  ConjugateGradientSystem(const ConicQp& problem, const InteriorPointOptions& options)
      : problem_(problem),
        max_iterations_(options.max_krylov_iterations),
        offsets_(cone_offsets(problem.cone_dimensions)),
        hessian_blocks_(problem.cone_dimensions.size()),
        scaling_(problem.cone_dimensions.size()),
        preconditioner_(problem.cone_dimensions.size()) {
    for (std::size_t k = 0; k < hessian_blocks_.size(); ++k) {
      const int dim = problem.cone_dimensions[k];
      hessian_blocks_[k] = problem.hessian->diagonal_block(offsets_[k], dim);
      if (problem.compliance.size() > 0) {
        for (int a = 0; a < dim; ++a)
          hessian_blocks_[k](a, a) += problem.compliance[offsets_[k] + a];
      }
    }
  }

  bool set_scaling(const std::vector<Mat3>& scaling_squared) override {
    scaling_ = scaling_squared;
    const int cones = static_cast<int>(scaling_.size());
    bool positive = true;
#pragma omp parallel for schedule(static) if (cones > kParallelCones) reduction(&& : positive)
    for (int k = 0; k < cones; ++k) {
      const int dim = problem_.cone_dimensions[k];
      if (!invert_cone_block(hessian_blocks_[k] + scaling_[k], dim, preconditioner_[k]))
        positive = false;
    }
    return positive;
  }

  bool solve(const VecX& rhs, double tolerance, VecX& dx, int& iterations,
             bool warm_start) override {
    const Eigen::Index n = rhs.size();
    iterations = 0;
    // A non-finite right-hand side comes from a scaling point at the cone boundary (rounding,
    // mu ~ epsilon): reported like a breakdown.
    if (!rhs.allFinite()) return false;
    VecX residual = rhs, preconditioned(n), direction(n), product(n);
    if (warm_start && dx.size() == n && dx.allFinite()) {
      apply_hessian(dx, product);
      residual -= product;
    } else {
      dx = VecX::Zero(n);
    }
    if (residual.norm() == 0.0) return true;
    apply_preconditioner(residual, preconditioned);
    direction = preconditioned;
    double rho = residual.dot(preconditioned);
    while (residual.norm() > tolerance && iterations < max_iterations_) {
      apply_hessian(direction, product);
      const double curvature = direction.dot(product);
      if (!(curvature > 0.0)) return false;
      const double step = rho / curvature;
      dx += step * direction;
      residual -= step * product;
      apply_preconditioner(residual, preconditioned);
      const double rho_next = residual.dot(preconditioned);
      direction = preconditioned + (rho_next / rho) * direction;
      rho = rho_next;
      ++iterations;
    }
    reached_ = residual.norm() <= tolerance;
    return true;
  }

  bool reached_tolerance() const override { return reached_; }

 private:
  void apply_hessian(const VecX& v, VecX& out) const {
    problem_.hessian->apply(v, out);
    if (problem_.compliance.size() > 0) out += problem_.compliance.cwiseProduct(v);
    apply_cone_blocks(scaling_, problem_.cone_dimensions, offsets_, v, out, true);
  }

  void apply_preconditioner(const VecX& v, VecX& out) const {
    apply_cone_blocks(preconditioner_, problem_.cone_dimensions, offsets_, v, out);
  }

  const ConicQp& problem_;
  int max_iterations_;
  bool reached_ = true;
  std::vector<int> offsets_;
  std::vector<Mat3> hessian_blocks_;  // N_kk + C_k
  std::vector<Mat3> scaling_;         // W_k^2
  std::vector<Mat3> preconditioner_;  // (N_kk + C_k + W_k^2)^-1
};

// Sparse Cholesky (CHOLMOD) of the assembled H = N + C + W^2. The pattern is that of N plus
// the cone blocks and does not change, so the symbolic analysis (fill-reducing ordering) is
// done once and each Newton step only refactors numerically.
class CholmodSystem final : public NewtonSystem {
 public:
  explicit CholmodSystem(const ConicQp& problem)
      : dimensions_(problem.cone_dimensions), offsets_(cone_offsets(problem.cone_dimensions)) {
    const SparseMatrix assembled = problem.hessian->assemble();
    const int n = problem.size();
    std::vector<Eigen::Triplet<double>> triplets;
    triplets.reserve(static_cast<std::size_t>(assembled.nonZeros()) + 9 * dimensions_.size());
    for (int row = 0; row < assembled.outerSize(); ++row) {
      for (SparseMatrix::InnerIterator it(assembled, row); it; ++it) {
        triplets.emplace_back(static_cast<int>(it.row()), static_cast<int>(it.col()), it.value());
      }
    }
    for (std::size_t k = 0; k < dimensions_.size(); ++k) {
      for (int a = 0; a < dimensions_[k]; ++a) {
        const double c = problem.compliance.size() > 0 ? problem.compliance[offsets_[k] + a] : 0.0;
        for (int b = 0; b < dimensions_[k]; ++b) {
          triplets.emplace_back(offsets_[k] + a, offsets_[k] + b, a == b ? c : 0.0);
        }
      }
    }
    matrix_.resize(n, n);
    matrix_.setFromTriplets(triplets.begin(), triplets.end());
    matrix_.makeCompressed();
    base_values_.assign(matrix_.valuePtr(), matrix_.valuePtr() + matrix_.nonZeros());
    // Position of each cone block entry (a, b) in the value array, column by column.
    block_entries_.resize(dimensions_.size());
    for (std::size_t k = 0; k < dimensions_.size(); ++k) {
      for (int b = 0; b < dimensions_[k]; ++b) {
        const int column = offsets_[k] + b;
        const int* begin = matrix_.innerIndexPtr() + matrix_.outerIndexPtr()[column];
        const int* end = matrix_.innerIndexPtr() + matrix_.outerIndexPtr()[column + 1];
        for (int a = 0; a < dimensions_[k]; ++a) {
          const int* found = std::lower_bound(begin, end, offsets_[k] + a);
          block_entries_[k][3 * b + a] = static_cast<int>(found - matrix_.innerIndexPtr());
        }
      }
    }
    factor_.cholmod().print = 0;  // failures are reported as a status
    factor_.setMode(Eigen::CholmodSupernodalLLt);
    factor_.analyzePattern(matrix_);
  }

  bool set_scaling(const std::vector<Mat3>& scaling_squared) override {
    std::copy(base_values_.begin(), base_values_.end(), matrix_.valuePtr());
    for (std::size_t k = 0; k < dimensions_.size(); ++k) {
      for (int b = 0; b < dimensions_[k]; ++b) {
        for (int a = 0; a < dimensions_[k]; ++a) {
          matrix_.valuePtr()[block_entries_[k][3 * b + a]] += scaling_squared[k](a, b);
        }
      }
    }
    factor_.factorize(matrix_);
    return factor_.info() == Eigen::Success;
  }

  bool solve(const VecX& rhs, double /*tolerance*/, VecX& dx, int& iterations,
             bool /*warm_start*/) override {
    iterations = 0;
    if (!rhs.allFinite()) return false;
    dx = factor_.solve(rhs);
    // One step of iterative refinement: H has a condition number ~ 1/mu near the solution,
    // and the refinement recovers the digits the factorization loses to it.
    const VecX residual = rhs - matrix_ * dx;
    dx += factor_.solve(residual);
    return factor_.info() == Eigen::Success && dx.allFinite();
  }

 private:
  std::vector<int> dimensions_;
  std::vector<int> offsets_;
  ColumnMatrix matrix_;
  std::vector<double> base_values_;  // N + C on the pattern
  std::vector<std::array<int, 9>> block_entries_;
  Eigen::CholmodDecomposition<ColumnMatrix, Eigen::Lower> factor_;
};

}  // namespace

bool invert_cone_block(const Mat3& block, int dim, Mat3& inverse) {
  inverse.setZero();
  if (dim == 3) {
    const Eigen::LLT<Mat3> factor(block);
    if (factor.info() != Eigen::Success) return false;
    inverse = factor.solve(Mat3::Identity());
    return true;
  }
  const Eigen::LLT<Eigen::MatrixXd> factor(block.topLeftCorner(dim, dim));
  if (factor.info() != Eigen::Success) return false;
  inverse.topLeftCorner(dim, dim) = factor.solve(Eigen::MatrixXd::Identity(dim, dim));
  return true;
}

void apply_cone_blocks(const std::vector<Mat3>& blocks, const std::vector<int>& dims,
                       const std::vector<int>& offsets, const VecX& v, VecX& out, bool accumulate) {
  if (!accumulate) out.resize(v.size());
  const int cones = static_cast<int>(blocks.size());
#pragma omp parallel for schedule(static) if (cones > kParallelCones)
  for (int k = 0; k < cones; ++k) {
    const int dim = dims[k];
    const int offset = offsets[k];
    if (dim == 3) {
      const Vec3 product = blocks[k] * v.segment<3>(offset);
      if (accumulate) {
        out.segment<3>(offset) += product;
      } else {
        out.segment<3>(offset) = product;
      }
    } else if (accumulate) {
      out.segment(offset, dim) += blocks[k].topLeftCorner(dim, dim) * v.segment(offset, dim);
    } else {
      out.segment(offset, dim) = blocks[k].topLeftCorner(dim, dim) * v.segment(offset, dim);
    }
  }
}

std::unique_ptr<NewtonSystem> make_conjugate_gradient_system(const ConicQp& problem,
                                                             const InteriorPointOptions& options) {
  return std::make_unique<ConjugateGradientSystem>(problem, options);
}

std::unique_ptr<NewtonSystem> make_cholmod_system(const ConicQp& problem) {
  return std::make_unique<CholmodSystem>(problem);
}

std::unique_ptr<NewtonSystem> make_newton_system(const ConicQp& problem,
                                                 const InteriorPointOptions& options) {
  if (options.body_space && problem.hessian->factor() != nullptr) {
    return make_body_space_system(problem, options);
  }
  if (options.backend == LinearBackend::cholmod) return make_cholmod_system(problem);
  return make_conjugate_gradient_system(problem, options);
}

std::unique_ptr<KktSystem> make_kkt_system(const ConicQp& problem,
                                           const InteriorPointOptions& options) {
  const bool direct = options.backend == LinearBackend::cholmod;
  if (direct && options.augmented_kkt && problem.hessian->factor() != nullptr &&
      (problem.equality.rows() == 0 || !options.dense_schur_complement)) {
    return make_quasi_definite_system(problem, true);
  }
  if (problem.equality.rows() > 0 && direct && !options.dense_schur_complement) {
    return make_quasi_definite_system(problem, false);
  }
  return make_schur_complement_system(problem, options);
}

}  // namespace moreau::conic::detail
