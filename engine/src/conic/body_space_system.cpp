// The Newton matrix H = D + F^T F (D = C + W^2 block diagonal, N = F^T F, conic_qp.hpp) solved
// in the space of F's rows, the bodies of a contact problem, by the Woodbury identity
//
//   H^-1 = D^-1 - D^-1 F^T K^-1 F D^-1,   K = I + F D^-1 F^T,
//
// i.e. K w = F D^-1 b, dx = D^-1 (b - F^T w). Why: a pile has several contacts per body, so N
// has a null space of (rows - 6 bodies) dimensions. There H acts as D alone, which tends to 0
// on the active contacts as mu -> 0 (W^2 ~ y / x), and the cone-block preconditioner
// (N_kk + D_k)^-1 leaves those directions with eigenvalues ~ D_k / N_kk: the preconditioned
// condition grows like 1/mu and CG in the cone variables needs thousands of iterations per
// Newton step near the solution (experiments/pile_problems/README.md). K has no such null
// space: it is I plus a network of springs D_k^-1 that stiffen on the active contacts, and its
// body-block preconditioner (I + sum_k F_bk D_k^-1 F_bk^T)^-1 sees the stiff springs in its
// own blocks, so the preconditioned condition depends on the contact network, not on mu.
//
// The residual in the cone variables is exact in terms of K's: H dx - b = -F^T (F D^-1 b - K w)
// (substitute dx), which is what CG stops on (the inexact-Newton forcing term is a bound on
// it). The recurrence residual drifts from the true one where D^-1 is large (late Newton
// steps); the true residual is checked once at the end, and CG in the cone variables polishes
// from dx if it is above the tolerance.
//
// The direct back-end factors K itself (CHOLMOD): r rows per body (r = F's block rows: 6 in
// 3D, 3 for the 2D variational problem) and one r x r block per pair of bodies in contact, far
// smaller and sparser than N + W^2 in the cone variables (each contact couples with every contact
// of its two bodies there). K's condition ~ 1/mu costs digits in dx, which iterative refinement on
// H (one product with N each) recovers.
#include <Eigen/Cholesky>
#include <Eigen/CholmodSupport>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "body_space_operator.hpp"
#include "newton_system.hpp"

namespace moreau::conic::detail {
namespace {

constexpr int kParallelCones = 2048;
using Mat6 = Eigen::Matrix<double, 6, 6>;
using Columns = QuadraticFactor::Columns;

// F's row blocks of each cone and its columns there (QuadraticFactor::cone_columns).
struct ConeColumns {
  std::vector<std::array<int, 2>> block;
  std::vector<std::array<Columns, 2>> columns;
};

ConeColumns cone_columns(const ConicQp& problem) {
  const QuadraticFactor& factor = *problem.hessian->factor();
  const std::vector<int> offsets = cone_offsets(problem.cone_dimensions);
  const std::size_t cones = problem.cone_dimensions.size();
  ConeColumns out{std::vector<std::array<int, 2>>(cones),
                  std::vector<std::array<Columns, 2>>(cones)};
  for (std::size_t k = 0; k < cones; ++k) {
    factor.cone_columns(offsets[k], problem.cone_dimensions[k], out.block[k], out.columns[k]);
  }
  return out;
}

// What both body-space back-ends share: F's cone columns, D^-1 per cone and the Woodbury
// recovery dx = D^-1 (b - F^T w).
class BodySpaceForm : public NewtonSystem {
 public:
  BodySpaceForm(const ConicQp& problem, ConeColumns columns)
      : problem_(problem),
        factor_(*problem.hessian->factor()),
        dims_(problem.cone_dimensions),
        rows_(factor_.block_rows()),
        offsets_(cone_offsets(problem.cone_dimensions)),
        cones_(static_cast<int>(problem.cone_dimensions.size())),
        block_(std::move(columns.block)),
        columns_(std::move(columns.columns)),
        d_inverse_(cones_),
        scaling_(cones_) {}

  void set_inverse_scaling(const std::vector<Mat3>& inverse_scaling_squared) override {
    inverse_scaling_ = inverse_scaling_squared;
  }

 protected:
  // D = C + W^2 and its inverse per cone (W^-2 as given where C = 0); false when a block is
  // not positive definite.
  bool set_d_inverse(const std::vector<Mat3>& scaling_squared) {
    scaling_ = scaling_squared;
    if (problem_.compliance.size() == 0 && inverse_scaling_.size() == scaling_.size()) {
      d_inverse_ = inverse_scaling_;
      return std::all_of(d_inverse_.begin(), d_inverse_.end(),
                         [](const Mat3& m) { return m.allFinite(); });
    }
    bool positive = true;
#pragma omp parallel for schedule(static) if (cones_ > kParallelCones) reduction(&& : positive)
    for (int k = 0; k < cones_; ++k) {
      const int dim = dims_[k];
      Mat3 d = scaling_[k];
      if (problem_.compliance.size() > 0) {
        d.diagonal().head(dim) += problem_.compliance.segment(offsets_[k], dim);
      }
      if (!(invert_cone_block(d, dim, d_inverse_[k]) && d_inverse_[k].allFinite()))
        positive = compliant_inverse(k) && positive;
    }
    return positive;
  }

  // (C_k + W_k^2)^-1 = C^-1/2 G (I + G)^-1 C^-1/2 with G = C^1/2 W_k^-2 C^1/2, from the
  // accurate W^-2 (set_inverse_scaling), where C + W^2 is not numerically positive definite:
  // close to the solution W^2 of a closed contact spans 1/epsilon and rounds to singular,
  // while G's eigenvalues g give g / (1 + g) in [0, 1) to full absolute accuracy (the 2D
  // variational problem with contact elasticity meets this; C > 0 on the cone needed).
  bool compliant_inverse(int k) {
    const int dim = dims_[k];
    if (problem_.compliance.size() == 0 || inverse_scaling_.size() != scaling_.size()) return false;
    const Eigen::VectorXd c = problem_.compliance.segment(offsets_[k], dim);
    if (!(c.minCoeff() > 0.0)) return false;
    const Eigen::VectorXd root = c.cwiseSqrt();
    const Eigen::MatrixXd g =
        root.asDiagonal() * inverse_scaling_[k].topLeftCorner(dim, dim) * root.asDiagonal();
    if (!g.allFinite()) return false;
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigen(g);
    const Eigen::VectorXd lambda = eigen.eigenvalues().cwiseMax(0.0);
    const Eigen::VectorXd ratio = lambda.array() / (1.0 + lambda.array());
    const Eigen::MatrixXd middle =
        eigen.eigenvectors() * ratio.asDiagonal() * eigen.eigenvectors().transpose();
    const Eigen::VectorXd inverse_root = root.cwiseInverse();
    d_inverse_[k].topLeftCorner(dim, dim) =
        inverse_root.asDiagonal() * middle * inverse_root.asDiagonal();
    return d_inverse_[k].allFinite();
  }

  // F_bk D_k^-1 F_ck^T of cone k between its sides s and t (6 x 6; leading rows_ x rows_ used).
  Mat6 coupling(int k, int s, int t) const {
    const int dim = dims_[k];
    return columns_[k][s].leftCols(dim) * d_inverse_[k].topLeftCorner(dim, dim) *
           columns_[k][t].leftCols(dim).transpose();
  }

  void apply_d_inverse(const VecX& v, VecX& out) const {
    apply_cone_blocks(d_inverse_, dims_, offsets_, v, out);
  }

  // H v with H = N + C + W^2 (one product with N).
  void apply_h(const VecX& v, VecX& out) const {
    problem_.hessian->apply(v, out);
    apply_cone_blocks(scaling_, dims_, offsets_, v, out, true);
    if (problem_.compliance.size() > 0) out += problem_.compliance.cwiseProduct(v);
  }

  // rhs - H dx.
  VecX residual(const VecX& rhs, const VecX& dx) const {
    VecX out;
    apply_h(dx, out);
    return rhs - out;
  }

  const ConicQp& problem_;
  const QuadraticFactor& factor_;
  const std::vector<int>& dims_;
  int rows_;  // F's rows per block
  std::vector<int> offsets_;
  int cones_;
  std::vector<std::array<int, 2>> block_;        // F's row blocks of each cone
  std::vector<std::array<Columns, 2>> columns_;  // and its columns there
  std::vector<Mat3> d_inverse_;                  // (C_k + W_k^2)^-1
  std::vector<Mat3> scaling_;                    // W_k^2
  std::vector<Mat3> inverse_scaling_;            // W_k^-2
};

// N = F^T F through the compact operator (two passes each way, no copies between the contact
// rows and the cone variables) with the cones in the operator's order, for the CG in the cone
// variables that takes over once the body-space CG reaches its cap: its vectors then run in the
// order of the operator's per-cone data, and its body accesses are those of the body-space CG.
// The polish of a body-space solution keeps the problem's own N: it exists to meet the residual
// the interior point method measures with that N, and near the solution (W^2 ~ 1/mu) a polish
// on the other product's rounding stalled short of it (ipm_body_space_test, no ball locked,
// 1e-9: numerical limit at 1.4e-9).
template <int R>
class OrderedCompactHessian final : public QuadraticOperator {
 public:
  using Order = typename BodySpaceOperator<R>::ConeOrder;
  OrderedCompactHessian(const QuadraticOperator& original, const BodySpaceOperator<R>& compact)
      : original_(original), compact_(compact), cone_at_(original.size(), -1) {
    const std::vector<int> offsets = cone_offsets(compact.cone_dimensions());
    for (std::size_t k = 0; k + 1 < offsets.size(); ++k) cone_at_[offsets[k]] = static_cast<int>(k);
  }
  int size() const override { return original_.size(); }
  void apply(const VecX& x, VecX& y) const override {
    compact_.apply(x, bodies_, Order::operator_order);
    compact_.apply_transpose(bodies_, y, Order::operator_order);
  }
  Mat3 diagonal_block(int offset, int dim) const override {
    return original_.diagonal_block(compact_.problem_offset(cone_at_[offset]), dim);
  }
  // N in the operator's order (P N P^T); the CG in the cone variables does not assemble it.
  SparseMatrix assemble() const override {
    // Row problem_offset(k) + a of the problem goes to row offset_k + a of the operator's order.
    Eigen::PermutationMatrix<Eigen::Dynamic, Eigen::Dynamic, int> to_operator(size());
    const std::vector<int>& dims = compact_.cone_dimensions();
    const std::vector<int> offsets = cone_offsets(dims);
    for (std::size_t k = 0; k < dims.size(); ++k) {
      for (int a = 0; a < dims[k]; ++a)
        to_operator.indices()[compact_.problem_offset(static_cast<int>(k)) + a] = offsets[k] + a;
    }
    const SparseMatrix n = original_.assemble();
    return to_operator * n * to_operator.transpose();
  }

 private:
  const QuadraticOperator& original_;
  const BodySpaceOperator<R>& compact_;
  std::vector<int> cone_at_;  // the cone (operator order) starting at an offset, else -1
  mutable VecX bodies_;       // F x (one thread calls)
};

// The problem's cone-variable form with the cones in the operator's order (N, C and the cone
// dimensions; the Newton systems use nothing else).
template <int R>
ConicQp in_operator_order(const ConicQp& problem, const QuadraticOperator& ordered_hessian,
                          const BodySpaceOperator<R>& compact) {
  ConicQp out;
  out.hessian = &ordered_hessian;
  out.cone_dimensions = compact.cone_dimensions();
  if (problem.compliance.size() > 0) compact.to_operator_order(problem.compliance, out.compliance);
  return out;
}

// Matrix-free CG on K with the body-block preconditioner (I + sum_k F_bk D_k^-1 F_bk^T)^-1,
// every product through the compact operator (body_space_operator.hpp) in R rows per body.
template <int R>
class BodySpaceConjugateGradient final : public BodySpaceForm {
 public:
  BodySpaceConjugateGradient(const ConicQp& problem, ConeColumns columns,
                             const InteriorPointOptions& options)
      : BodySpaceForm(problem, std::move(columns)),
        max_iterations_(options.max_krylov_iterations),
        gauss_seidel_(R == 3 && options.assemble_body_space &&
                      options.body_space_preconditioner ==
                          BodySpacePreconditioner::symmetric_gauss_seidel),
        operator_(factor_.blocks(), dims_, block_, columns_, options.assemble_body_space,
                  gauss_seidel_ && factor_.blocks() > kParallelBodies ? omp_get_max_threads() : 1),
        ordered_hessian_(*problem.hessian, operator_),
        ordered_problem_(in_operator_order(problem, ordered_hessian_, operator_)),
        polish_(make_conjugate_gradient_system(problem, options)),
        fallback_(make_conjugate_gradient_system(ordered_problem_, options)) {
    // Only where no body rotates (the proportional form: the published trench's locked
    // spheres). With rotating balls (ipm_body_space_test's heap) it loses: 1,934 Krylov
    // iterations against 1,718 with every other ball locked, and with none locked capped solves
    // whose polish stalls at merit 2.8e-7 against 1e-9
    // (validation/benchmark/results/ipm_gauss_seidel_split.json).
    gauss_seidel_ = gauss_seidel_ && operator_.proportional();
  }

  bool set_scaling(const std::vector<Mat3>& scaling_squared) override {
    w_.resize(0);  // a new matrix: no warm start from the last one
    if (!set_d_inverse(scaling_squared)) return false;
    operator_.set_d_inverse(d_inverse_);
    polish_ready_.reset();
    fallback_ready_.reset();
    // Gauss-Seidel factors the body blocks itself (its scaling to unit diagonal blocks).
    if (gauss_seidel_) return operator_.scale_to_unit_diagonal();
    const std::vector<BodyBlock> blocks = operator_.body_blocks();
    const int bodies = static_cast<int>(blocks.size());
    body_preconditioner_.resize(blocks.size());
    bool positive = true;
#pragma omp parallel for schedule(static) if (bodies > kParallelCones) reduction(&& : positive)
    for (int b = 0; b < bodies; ++b) {
      Eigen::LLT<BodyBlock> factor(blocks[b]);
      positive = positive && factor.info() == Eigen::Success;
      body_preconditioner_[b] = factor.solve(BodyBlock::Identity());
    }
    return positive;
  }

  bool solve(const VecX& rhs, double tolerance, VecX& dx, int& iterations,
             bool warm_start) override {
    iterations = 0;
    if (!rhs.allFinite()) return false;
    if (use_cone_variables_) {
      if (!fallback_ready_)
        fallback_ready_ = fallback_->set_scaling(operator_.blocks_in_operator_order(scaling_));
      if (!*fallback_ready_) return false;
      VecX ordered_rhs, ordered_dx;
      operator_.to_operator_order(rhs, ordered_rhs);
      if (warm_start && dx.size() == rhs.size()) operator_.to_operator_order(dx, ordered_dx);
      const bool ok = fallback_->solve(ordered_rhs, tolerance, ordered_dx, iterations, warm_start);
      operator_.to_problem_order(ordered_dx, dx);
      reached_ = fallback_->reached_tolerance();
      return ok;
    }
    const int p = operator_.size();
    VecX d_rhs, g, kw;
    apply_d_inverse(rhs, d_rhs);
    operator_.apply(d_rhs, g);
    // w and the residual r = g - K w.
    VecX w = warm_start && w_.size() == p ? w_ : VecX::Zero(p);
    VecX r = g;
    if (w.squaredNorm() > 0.0) {
      operator_.apply_newton_matrix(w, kw);
      r -= kw;
    }
    const bool converged =
        gauss_seidel_
            ? split_conjugate_gradient(tolerance, w, r, iterations)
            : conjugate_gradient(
                  tolerance, body_preconditioner_,
                  [&](const VecX& d, VecX& kd) { return operator_.apply_newton_matrix(d, kd); },
                  [&](const VecX& residual) {
                    return std::sqrt(operator_.transpose_squared_norm(residual));
                  },
                  w, r, iterations);
    if (!converged) return false;
    w_ = w;
    VecX u;
    operator_.apply_transpose(w, u);
    apply_d_inverse(rhs - u, dx);
    // The true residual: polish in the cone variables where the recurrence drifted or the CG
    // stopped at its cap.
    const double true_residual = residual(rhs, dx).norm();
    reached_ = true_residual <= tolerance;
    if (reached_) return true;
    // Near the solution the body-space CG can reach its cap (K's springs D_k^-1 ~ 1/mu span
    // many decades). Where its solution is still better than none (|H dx - b| < |b|), the
    // polish from it finishes in a fraction of the cap (the published-scale blade trench's
    // first 1e-5 step: residuals 1e-4 to 1.4e-2 |b| after each capped solve, polished in
    // 1-326 iterations; switching to the cone variables for the remaining Newton steps instead
    // takes 1.8x the time there, each of their iterations moving twice the bytes:
    // validation/benchmark/results/ipm_published_trench_newton_systems.json). Where it is
    // worse, the body-space CG has lost K to rounding
    // (the heap of rotating balls in ipm_body_space_test: residuals 1e4-1e13 times |b|): the
    // cone variables solve this and the remaining Newton systems, from zero.
    if (iterations >= max_iterations_ && !(true_residual < rhs.norm())) {
      const int body_iterations = iterations;
      use_cone_variables_ = true;
      const bool ok = solve(rhs, tolerance, dx, iterations, false);
      iterations += body_iterations;
      return ok;
    }
    int polish_iterations = 0;
    if (!ready(*polish_, polish_ready_)) return false;
    const bool ok = polish_->solve(rhs, tolerance, dx, polish_iterations, true);
    iterations += polish_iterations;
    reached_ = polish_->reached_tolerance();
    return ok;
  }

  bool reached_tolerance() const override { return reached_; }

 private:
  using BodyBlock = Eigen::Matrix<double, R, R>;

  // PCG on K w = g from w (r = g - K w), stopped on |F^T r| = |H dx - b| (dx from w as in
  // solve). That norm costs half a product; between evaluations it is estimated from the
  // preconditioned norm sqrt(r^T P^-1 r) (free) times their ratio at the last evaluation, and
  // evaluated again once the estimate reaches the tolerance (or every kCheckInterval
  // iterations). Each evaluation recalibrates the ratio, so the estimate is close where it
  // matters. Evaluating at every iteration once the estimate comes within 2x of the tolerance
  // would make the tests 17 % of the published trench's light steps (`perf`; the CG's last
  // iterations each reduce the residual by about 1 %). Evaluating where the estimate reaches
  // the tolerance stops the solves a few iterations later, and the Newton path follows: on the
  // benchmark's 1e5 spheres 1.30x cheaper iterations for 20 % more of them (8,580 against
  // 7,132, 16 Newton steps against 15: 7 % less time), 1 % and 3.5 % fewer on the trench
  // (4,800 spheres, first two 1e-5 steps; 105,144 spheres, first 1e-5 step;
  // validation/benchmark/results/ipm_stopping_test_1e4_1e5.json).
  // The periodic evaluation runs every kCheckInterval = 16 iterations: with the Gauss-Seidel
  // split each evaluation costs about 0.8 of an iteration (a product with S and the cone pass
  // of F^T), and every 8 iterations they would be 14 % of the iterations and 10 % of the time
  // on the benchmark's 1e5 spheres (`perf`); every 16 costs 0.3 % more iterations and 6 % less
  // time there and on the trench's 4,800 spheres at 1e-5
  // (validation/benchmark/results/ipm_body_space_1e5.json).
  //
  // The same CG runs on a transformed system where `product` and `residual_norm` say so
  // (split_conjugate_gradient): `blocks` is its block preconditioner (none: the identity),
  // residual_norm(r) the stopping test's |F^T r| of the original system from the recurrence's r.
  template <typename Product, typename ResidualNorm>
  bool conjugate_gradient(double tolerance, const std::vector<BodyBlock>& blocks, Product&& product,
                          ResidualNorm&& residual_norm, VecX& w, VecX& r, int& iterations) const {
    const int p = static_cast<int>(r.size());
    VecX z, direction, kp;
    double rho = precondition(blocks, r, z);
    direction = z;
    double ratio = 0.0;  // |F^T r| / sqrt(rho) at the last evaluation
    int last_check = -kCheckInterval;
    for (;;) {
      if (iterations >= max_iterations_) return true;
      const double estimate = ratio * std::sqrt(std::max(rho, 0.0));
      if (estimate <= kCheckMargin * tolerance || iterations - last_check >= kCheckInterval) {
        const double norm = residual_norm(r);
        if (norm <= tolerance) return true;
        ratio = rho > 0.0 ? norm / std::sqrt(rho) : 0.0;
        last_check = iterations;
      }
      const double curvature = product(direction, kp);
      if (!(curvature > 0.0)) return false;
      const double step = rho / curvature;
      const double rho_next = update(blocks, step, direction, kp, w, r, z);
      const double beta = rho_next / rho;
#pragma omp parallel for schedule(static) if (p > R * kParallelBodies)
      for (int i = 0; i < p; ++i) direction[i] = z[i] + beta * direction[i];
      rho = rho_next;
      ++iterations;
    }
  }

  // Symmetric Gauss-Seidel in Eisenstat's split form (Eisenstat 1981). With K = L + D + L^T
  // and S = D + L, PCG on K with the preconditioner S D^-1 S^T is PCG on the transformed
  // system S^-1 K S^-T x = S^-1 g (w = S^-T x) with the block preconditioner D: same iterates,
  // and the transformed product costs a backward and a forward sweep instead of a product with
  // K (BodySpaceOperator::apply_split_newton_matrix). Its residual is S^-1 r, so the stopping
  // test forms r = S r_split (once per evaluation). Why: the body blocks alone leave K's
  // couplings along the packing's force chains to the Krylov space, and the published
  // trench's late Newton steps take most of their iterations there; Gauss-Seidel over the
  // bodies in the operator's order halves the iterations of a dumped late Newton system (832
  // against 1,769 to 1e-6,
  // validation/benchmark/results/ipm_published_trench_newton_systems.json). A preconditioner
  // applied as two sweeps beside the product reads K's blocks three times per iteration, the
  // split form twice (at the published scale: 1.86x fewer iterations at 1e-5, each 1.5x the
  // body blocks' cost). The split runs on K scaled to unit diagonal blocks, where D is the
  // identity: the same iterates in exact arithmetic (3,110 iterations on the benchmark's 1e5
  // spheres either way), no D^-1 in the sweeps and no preconditioner product in the CG
  // (validation/benchmark/results/ipm_body_space_1e5.json).
  bool split_conjugate_gradient(double tolerance, VecX& w, VecX& r, int& iterations) const {
    // On K^ = C^-1 K C^-T (unit diagonal blocks, BodySpaceOperator::scale_to_unit_diagonal)
    // with S^ = I + L^: x = S^T^ C^T w, r_split = S^-1 C^-1 r, and back r = (D + L) C^-T r_split
    // (as C S^ = (D + L) C^-T), w = C^-T S^-T^ x.
    VecX scaled, r_split, x_split, unscaled, r_full;
    operator_.scale(r, false, scaled);
    operator_.forward_sweep(scaled, r_split);
    if (w.squaredNorm() > 0.0) {
      operator_.apply_upper(w, unscaled);
      operator_.scale(unscaled, false, x_split);
    } else {
      x_split.setZero(w.size());
    }
    const bool ok = conjugate_gradient(
        tolerance, {},
        [&](const VecX& d, VecX& kd) { return operator_.apply_split_newton_matrix(d, kd); },
        [&](const VecX& residual) {
          operator_.scale(residual, true, unscaled);
          operator_.apply_lower(unscaled, r_full);
          return std::sqrt(operator_.transpose_squared_norm(r_full));
        },
        x_split, r_split, iterations);
    operator_.backward_sweep(x_split, unscaled);
    operator_.scale(unscaled, true, w);
    return ok;
  }

  // z_b = P_b r_b with the body blocks P (none: the identity); returns r_b^T z_b.
  static double precondition_body(const std::vector<BodyBlock>& blocks, int b, const VecX& r,
                                  VecX& z) {
    const auto rb = r.template segment<R>(R * b);
    if (blocks.empty()) {
      z.template segment<R>(R * b) = rb;
    } else {
      z.template segment<R>(R * b).noalias() = blocks[b] * rb;
    }
    return rb.dot(z.template segment<R>(R * b));
  }

  // z = P r; returns r^T z.
  double precondition(const std::vector<BodyBlock>& blocks, const VecX& r, VecX& z) const {
    z.resize(r.size());
    return ordered_parallel_sum(static_cast<int>(r.size()) / R, kParallelBodies,
                                [&](int b) { return precondition_body(blocks, b, r, z); });
  }

  // One CG update in one pass over the bodies: w += step d, r -= step K d, z = P r; returns
  // r^T z.
  double update(const std::vector<BodyBlock>& blocks, double step, const VecX& direction,
                const VecX& kp, VecX& w, VecX& r, VecX& z) const {
    return ordered_parallel_sum(static_cast<int>(r.size()) / R, kParallelBodies, [&](int b) {
      const int first = R * b;
      w.template segment<R>(first) += step * direction.template segment<R>(first);
      r.template segment<R>(first) -= step * kp.template segment<R>(first);
      return precondition_body(blocks, b, r, z);
    });
  }

  // A cone-variable system is set to the Newton step's scaling on its first use in the step
  // (false: its H is not positive definite). Most Newton steps use neither, and setting one up
  // factors a block per cone.
  bool ready(NewtonSystem& system, std::optional<bool>& state) {
    if (!state) state = system.set_scaling(scaling_);
    return *state;
  }

  static constexpr double kCheckMargin = 1.0;
  static constexpr int kCheckInterval = 16;
  int max_iterations_;
  bool gauss_seidel_;  // symmetric Gauss-Seidel (split_conjugate_gradient), else body blocks
  BodySpaceOperator<R> operator_;
  OrderedCompactHessian<R> ordered_hessian_;
  ConicQp ordered_problem_;  // the cone variables in operator_'s order, N through operator_
  // (I + sum_k F_bk D_k^-1 F_bk^T)^-1, for the body-block preconditioner alone
  std::vector<BodyBlock> body_preconditioner_;
  std::unique_ptr<NewtonSystem> polish_;    // CG in the cone variables, the problem's N
  std::unique_ptr<NewtonSystem> fallback_;  // CG in the cone variables, operator_'s order
  std::optional<bool> polish_ready_, fallback_ready_;  // set_scaling's result, once called
  bool reached_ = true;
  bool use_cone_variables_ = false;  // after a body-space solve that hit the cap
  VecX w_;                           // last solution, for the warm start
};

// The rows per body the body-space CG works in: 3 when F has no entries in rows 3-5 of any
// block (bodies without rotation in 3D; 2D bodies have x, y and phi only), else 6.
int body_space_rows(int factor_rows,
                    const std::vector<std::array<QuadraticFactor::Columns, 2>>& columns) {
  if (factor_rows <= 3) return 3;
  for (const auto& cone : columns) {
    for (const QuadraticFactor::Columns& side : cone) {
      if (!side.bottomRows<3>().isZero(0.0)) return 6;
    }
  }
  return 3;
}

// Sparse Cholesky (CHOLMOD) of K, assembled from the cones' couplings (lower triangle); the
// pattern does not change, so the ordering is computed once.
class BodySpaceCholmod final : public BodySpaceForm {
 public:
  explicit BodySpaceCholmod(const ConicQp& problem)
      : BodySpaceForm(problem, cone_columns(problem)) {
    d_inverse_.assign(cones_, Mat3::Identity());
    assemble();
    factor_k_.cholmod().print = 0;
    // Supernodal for 6 rows per body (3D, as measured in pile_problems); simplicial for fewer:
    // K of a 2D problem has 3 x 3 blocks, too small for the supernodal BLAS kernels to pay
    // (the same time at 200 non-convex particles, docs/variational.md "Cost"), and the
    // simplicial factorization runs no OpenMP region (CHOLMOD's supernodal one forks 4 threads
    // whatever OMP_NUM_THREADS says).
    factor_k_.setMode(rows_ == 6 ? Eigen::CholmodSupernodalLLt : Eigen::CholmodSimplicialLLt);
    factor_k_.analyzePattern(k_);
  }

  bool set_scaling(const std::vector<Mat3>& scaling_squared) override {
    if (cone_variables_) return cone_variables_->set_scaling(scaling_squared);
    if (!set_d_inverse(scaling_squared)) return false;
    assemble();
    factor_k_.factorize(k_);
    return factor_k_.info() == Eigen::Success;
  }

  // dx = H^-1 rhs through K, then iterative refinement on H (the residual with one product
  // with N) until the residual is below the tolerance or stops decreasing.
  bool solve(const VecX& rhs, double tolerance, VecX& dx, int& iterations,
             bool /*warm_start*/) override {
    iterations = 0;
    if (!rhs.allFinite()) return false;
    if (cone_variables_) return cone_variables_->solve(rhs, tolerance, dx, iterations);
    woodbury(rhs, dx);
    double previous = std::numeric_limits<double>::infinity();
    for (int refinement = 0;; ++refinement) {
      const VecX r = residual(rhs, dx);
      const double norm = r.norm();
      if (norm <= kRefinementTarget * tolerance) break;
      if (!(norm < previous) || refinement == kMaxRefinements) {
        // Rounding in K (condition ~ 1/mu) beyond what refinement recovers, close to the
        // solution. Refinement is a Richardson iteration on the Woodbury solve, which stalls
        // once the rounding pushes an eigenvalue of (solve x H) beyond 2; CG preconditioned by
        // the same solve has no such limit. Where that fails too, the cone variables'
        // factorization takes over for the remaining steps.
        if (norm > tolerance && !preconditioned_cg(rhs, tolerance, dx, iterations))
          return switch_to_cone_variables(rhs, tolerance, dx, iterations);
        break;
      }
      previous = norm;
      VecX correction;
      woodbury(r, correction);
      dx += correction;
    }
    return factor_k_.info() == Eigen::Success && dx.allFinite();
  }

 private:
  // A direct solve is asked for more than the forcing term: refinement aims at this fraction
  // of it (each step costs one product with N and two triangular solves).
  static constexpr double kRefinementTarget = 1e-3;
  static constexpr int kMaxRefinements = 3;
  // A CG that does not converge costs at most this many products with N and solves with K
  // before the cone variables take over (measured on the published column drop's non-convex
  // settling: 1-20 iterations where it converged).
  static constexpr int kMaxPreconditionedIterations = 20;

  // CG on H dx = rhs from dx, preconditioned by the Woodbury solve through K (symmetric
  // positive definite in exact arithmetic); false where a curvature or the preconditioned
  // residual stops being positive (the rounding made the solve indefinite), or where the
  // residual is still above the tolerance after kMaxPreconditionedIterations.
  bool preconditioned_cg(const VecX& rhs, double tolerance, VecX& dx, int& iterations) {
    VecX r = residual(rhs, dx);
    VecX z, p, hp;
    woodbury(r, z);
    p = z;
    double rz = r.dot(z);
    for (int it = 1; it <= kMaxPreconditionedIterations; ++it) {
      apply_h(p, hp);
      const double curvature = p.dot(hp);
      if (!(rz > 0.0) || !(curvature > 0.0)) return false;
      const double alpha = rz / curvature;
      dx += alpha * p;
      r -= alpha * hp;
      iterations = it;
      if (r.norm() <= kRefinementTarget * tolerance) break;
      woodbury(r, z);
      const double rz_next = r.dot(z);
      p = z + (rz_next / rz) * p;
      rz = rz_next;
    }
    return dx.allFinite() && residual(rhs, dx).norm() <= tolerance;
  }

  bool switch_to_cone_variables(const VecX& rhs, double tolerance, VecX& dx, int& iterations) {
    cone_variables_ = make_cholmod_system(problem_);
    return cone_variables_->set_scaling(scaling_) &&
           cone_variables_->solve(rhs, tolerance, dx, iterations);
  }

  void woodbury(const VecX& b, VecX& dx) {
    VecX d_b, g, u;
    apply_d_inverse(b, d_b);
    factor_.apply(d_b, g);
    const VecX w = factor_k_.solve(g);
    factor_.apply_transpose(w, u);
    apply_d_inverse(b - u, dx);
  }

  // K's lower triangle in a fixed order: the identity, then each cone's couplings (the order
  // setFromTriplets sums duplicates in, so that refilling the values in it gives the same sums).
  template <typename Entry>
  void for_each_entry(Entry&& entry) const {
    const int p = rows_ * factor_.blocks();
    for (int i = 0; i < p; ++i) entry(i, i, 1.0);
    for (int k = 0; k < cones_; ++k) {
      for (int s = 0; s < 2; ++s) {
        for (int t = 0; t < 2; ++t) {
          const int row_block = block_[k][s], column_block = block_[k][t];
          if (row_block < 0 || column_block < 0 || row_block < column_block) continue;
          const Mat6 c = coupling(k, s, t);
          for (int a = 0; a < rows_; ++a) {
            for (int b = 0; b < rows_; ++b) {
              const int row = rows_ * row_block + a, column = rows_ * column_block + b;
              if (row >= column) entry(row, column, c(a, b));
            }
          }
        }
      }
    }
  }

  // The first call builds the pattern and where each entry lands in it; later calls (one per
  // Newton step) only add the new values there.
  void assemble() {
    if (position_.empty()) {
      const int p = rows_ * factor_.blocks();
      std::vector<Eigen::Triplet<double>> triplets;
      triplets.reserve(static_cast<std::size_t>(p) + 4 * static_cast<std::size_t>(rows_ * rows_) *
                                                         static_cast<std::size_t>(cones_));
      for_each_entry(
          [&](int row, int column, double value) { triplets.emplace_back(row, column, value); });
      k_.resize(p, p);
      k_.setFromTriplets(triplets.begin(), triplets.end());
      k_.makeCompressed();
      position_.reserve(triplets.size());
      for (const Eigen::Triplet<double>& t : triplets) {
        const int* begin = k_.innerIndexPtr() + k_.outerIndexPtr()[t.col()];
        const int* end = k_.innerIndexPtr() + k_.outerIndexPtr()[t.col() + 1];
        position_.push_back(
            static_cast<int>(std::lower_bound(begin, end, t.row()) - k_.innerIndexPtr()));
      }
      return;
    }
    double* values = k_.valuePtr();
    std::fill(values, values + k_.nonZeros(), 0.0);
    std::size_t next = 0;
    for_each_entry([&](int, int, double value) { values[position_[next++]] += value; });
  }

  Eigen::SparseMatrix<double, Eigen::ColMajor> k_;  // lower triangle of K
  std::vector<int> position_;                       // of each entry (for_each_entry) in k_
  std::unique_ptr<NewtonSystem> cone_variables_;    // once K's accuracy ran out
  Eigen::CholmodDecomposition<Eigen::SparseMatrix<double, Eigen::ColMajor>, Eigen::Lower> factor_k_;
};

}  // namespace

std::unique_ptr<NewtonSystem> make_body_space_system(const ConicQp& problem,
                                                     const InteriorPointOptions& options) {
  if (options.backend == LinearBackend::cholmod) {
    return std::make_unique<BodySpaceCholmod>(problem);
  }
  ConeColumns columns = cone_columns(problem);
  if (body_space_rows(problem.hessian->factor()->block_rows(), columns.columns) == 3) {
    return std::make_unique<BodySpaceConjugateGradient<3>>(problem, std::move(columns), options);
  }
  return std::make_unique<BodySpaceConjugateGradient<6>>(problem, std::move(columns), options);
}

}  // namespace moreau::conic::detail
