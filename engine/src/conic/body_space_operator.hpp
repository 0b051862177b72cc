#pragma once
// The body-space Newton matrix K = I + F D^-1 F^T (body_space_system.cpp; N = F^T F,
// D = C + W^2 one block per cone), applied from its blocks assembled at each Newton step (one
// per body and per pair of bodies in contact; the default, see build_pattern) or matrix-free
// from F's cone columns. F^T and F themselves are always applied from the cone columns, kept
// in the form
// the conjugate gradients touch: per cone its two bodies and its column blocks restricted to
// the R rows per body that are not zero everywhere (R = 3 for bodies without rotation, e.g.
// the rotation-locked spheres of Kleinert et al. Sec. 5 and the 2D bodies x, y, phi; R = 6
// otherwise). Why its own form: the general path (QuadraticFactor::apply and its transpose)
// goes through the contact Jacobians, copies the stacked vectors between the contact rows and
// the cone variables and scales the bodies by 6 x 6 blocks, and its products are about three
// quarters of a Krylov iteration's time; here one product is two passes, cones then bodies,
// with D^-1 applied inside the first, and vectors of R rows per body.
//
// Where no body rotates (3D bodies with locked rotation), the two sides of a contact differ
// only by their bodies' inverse-mass roots: F_ak = -c_k F_bk with c_k = (m_b / m_a)^1/2
// (F = M^-1/2 H S, the translational rows of H are -+ the contact frame). The operator then
// keeps one block per cone and one coefficient per side, and the product needs one relative
// velocity F_bk^T (p_b - c_k p_a), one D^-1 and one F_bk e per cone (3 small products instead
// of 5, half the stored side values); proportional() says whether it does.
//
// The operator keeps bodies and cones in its own order, chosen for memory locality
// (locality_ordering.hpp): the body vectors it takes and returns (apply's result,
// apply_transpose's argument, K's products and body_blocks) are in that body order, which only
// the body-space CG sees; cone vectors are in the problem's order unless a call asks for the
// operator's.
//
// Every sum runs in a fixed order (a body's sides in cone order; reductions per thread in
// thread order), so the result depends on the thread count only through the reductions'
// partial sums and is the same for the same input and thread count.
#include <omp.h>

#include <array>
#include <vector>

#include "moreau/conic/conic_qp.hpp"

namespace moreau::conic::detail {

// Body loops of the body-space CG with fewer bodies than this run on one thread (the cone
// loops' limit and why: body_space_operator.cpp).
constexpr int kParallelBodies = 8192;

// sum over i in [0, count) of term(i), the loop split statically over the OpenMP threads
// (serial below `grain`) and the threads' partial sums added in thread order: the same
// numbers for the same thread count, whatever the scheduling.
template <typename Term>
double ordered_parallel_sum(int count, int grain, Term&& term) {
  std::vector<double> partial(static_cast<std::size_t>(omp_get_max_threads()), 0.0);
#pragma omp parallel if (count > grain)
  {
    double sum = 0.0;
#pragma omp for schedule(static)
    for (int i = 0; i < count; ++i) sum += term(i);
    partial[static_cast<std::size_t>(omp_get_thread_num())] = sum;
  }
  double total = 0.0;
  for (const double s : partial) total += s;
  return total;
}

template <int R>
class BodySpaceOperator {
 public:
  using BodyBlock = Eigen::Matrix<double, R, R>;

  // F's cone columns (QuadraticFactor::cone_columns: block[s] the body of side s or -1,
  // columns[s] its rows x dim entries, rows past R zero) of every cone.
  // assembled: K's products from its blocks, assembled at each set_d_inverse (below);
  // otherwise from F's cone columns alone (matrix-free).
  // sweep_parts: with `assembled`, the Gauss-Seidel sweeps below run on this many threads,
  // the bodies ordered for it (locality_ordering.hpp, separators_last); 1 for the plain
  // Cuthill-McKee order.
  BodySpaceOperator(int bodies, const std::vector<int>& cone_dimensions,
                    const std::vector<std::array<int, 2>>& block,
                    const std::vector<std::array<QuadraticFactor::Columns, 2>>& columns,
                    bool assembled, int sweep_parts = 1);

  int size() const { return R * bodies_; }
  // D^-1 per cone in the problem's cone order (leading dim x dim block, zero beyond), one per
  // Newton step. In the proportional form it is folded into the shared blocks,
  // G_k = F_bk L_k with L_k L_k^T = D_k^-1 (pivoted LDL^T, D clamped at 0), so that the
  // product's cone pass is F_bk^T's and F_bk's small products alone; otherwise copied into the
  // operator's cone order.
  void set_d_inverse(const std::vector<Mat3>& d_inverse);

  // Cone vectors are in the problem's cone order, or in the operator's where `order` says so
  // (for the CG in the cone variables that takes over from the body-space CG: its vectors
  // then follow the operator's per-cone data and bodies in memory).
  enum class ConeOrder { problem, operator_order };
  // bodies = F cones (the cone variables stacked by cone_dimensions).
  void apply(const VecX& cones, VecX& bodies, ConeOrder order = ConeOrder::problem) const;
  // cones = F^T bodies.
  void apply_transpose(const VecX& bodies, VecX& cones, ConeOrder order = ConeOrder::problem) const;
  // A cone vector or per-cone blocks moved between the two orders.
  void to_operator_order(const VecX& problem_order, VecX& operator_order) const;
  void to_problem_order(const VecX& operator_order, VecX& problem_order) const;
  std::vector<Mat3> blocks_in_operator_order(const std::vector<Mat3>& problem_order) const;
  // The cones' dimensions in the operator's order, and where cone k of that order starts in
  // the problem's cone vectors.
  const std::vector<int>& cone_dimensions() const { return dims_; }
  int problem_offset(int k) const { return offsets_[k]; }
  // |F^T bodies|^2 without writing F^T bodies (the CG's stopping test).
  double transpose_squared_norm(const VecX& bodies) const;
  // kp = K p = p + F D^-1 F^T p; returns p^T kp.
  double apply_newton_matrix(const VecX& p, VecX& kp) const;
  // The body blocks I + sum_k F_bk D_k^-1 F_bk^T of K (the body-block preconditioner's).
  std::vector<BodyBlock> body_blocks() const;
  // Whether every cone's sides are proportional (the form above).
  bool proportional() const { return proportional_; }

  // With K assembled, K = L + D + L^T (D its body blocks, L the strictly lower blocks in the
  // operator's body order): the pieces of the symmetric Gauss-Seidel preconditioner
  // (D + L) D^-1 (D + L^T) in Eisenstat's split form (body_space_system.cpp), on K scaled to
  // unit diagonal blocks: with D_i = C_i C_i^T (Cholesky), K^ = C^-1 K C^-T = I + L^ + L^T^,
  // L^_ij = C_i^-1 L_ij C_j^-T, and (D + L) D^-1 (D + L^T) = C (I + L^) (I + L^T^) C^T, the same
  // preconditioner. Why scaled: the sweeps then need no D_i^-1 per row (72 B and a 3 x 3
  // product fewer per row and sweep) and the CG's preconditioner is the identity.
  // scale_to_unit_diagonal (after each set_d_inverse): C^-1 and L^; false where a D_i is not
  // positive definite. Each sweep reads every lower block once; the ranges of sweep_parts run
  // in parallel, the separators alone (their rows are under 1 % at two parts).
  bool scale_to_unit_diagonal();
  // y = C^-1 x, or C^-T x when transposed.
  void scale(const VecX& x, bool transposed, VecX& y) const;
  // y = (I + L^)^-1 x.
  void forward_sweep(const VecX& x, VecX& y) const;
  // y = (I + L^T^)^-1 x.
  void backward_sweep(const VecX& x, VecX& y) const;
  // y = (D + L) x and y = (D + L^T) x (unscaled).
  void apply_lower(const VecX& x, VecX& y) const;
  void apply_upper(const VecX& x, VecX& y) const;
  // Eisenstat's product (Eisenstat 1981): kp = (I + L^)^-1 K^ (I + L^T^)^-1 p from one backward
  // and one forward sweep and no product with K^, as K^ = (I + L^) + (I + L^T^) - I gives
  // kp = t + (I + L^)^-1 (p - t) with t = (I + L^T^)^-1 p, and the backward sweep forms
  // L^T^ t = p - t on its way. Returns p^T kp.
  double apply_split_newton_matrix(const VecX& p, VecX& kp) const;

 private:
  using Side = Eigen::Matrix<double, R, 3>;
  using BodyVector = Eigen::Matrix<double, R, 1>;

  // K assembled: one R x R block per body (I + sum_k F_bk D_k^-1 F_bk^T) and one per pair of
  // bodies in contact (sum over their cones of F_ik D_k^-1 F_jk^T, row i > column j, the lower
  // triangle). Why: the matrix-free product reads per cone its column block, coefficients,
  // bodies and writes and reads back a side value (about 216 B per cone in the proportional
  // form, 550 B with rotation); the assembled one reads one block per pair of bodies and
  // applies it both ways (72 B with R = 3), so a Krylov iteration moves about half the bytes.
  // Assembling costs about one matrix-free product per Newton step, against hundreds of
  // products per step. The contact-space Newton matrix is still never formed.
  void build_pattern();
  void assemble();
  double apply_assembled(const VecX& p, VecX& kp) const;
  // The sweeps' phases: `rows` on the rows of each range [sweep_begin_[t], sweep_begin_[t + 1])
  // in parallel, `separators` on the rows from sweep_begin_.back() on; the forward order runs
  // the ranges first, the backward order the separators first.
  template <typename Rows, typename Separators>
  void in_sweep_order(bool forward, Rows&& rows, Separators&& separators) const;
  // sum over n in [begin, end) of blocks[n] v_column[n] (a row of L or of L^T).
  static BodyVector row_product(int begin, int end, const std::vector<BodyBlock>& blocks,
                                const std::vector<int>& column, const VecX& v);
  // Rows [begin, end) of a forward sweep (I + L^) y = x, ascending:
  // y_i = x_i - sum_j L^_ij y_j; `finished(i, yi)` receives each row's result.
  template <typename Finished>
  void forward_rows(int begin, int end, const VecX& x, VecX& y, Finished&& finished) const;
  // Rows [begin, end) of a backward sweep (I + L^T^) t = x, descending, by rows of L^T^:
  // t_i = x_i - sum_j L^_ji^T t_j, reading the transposed copy upper_;
  // `finished(i, coupled)` receives each row's coupled = sum_j L^_ji^T t_j.
  template <typename Finished>
  void backward_rows(int begin, int end, const VecX& x, VecX& t, Finished&& finished) const;
  // Pass 2 of the products: out_b = sum over the sides j of body b of side(j), plus p_b when
  // given; returns p^T out when p is given.
  template <typename SideValue>
  double gather(const VecX* p, VecX& out, SideValue&& side) const;
  // (F^T bodies) of cone k, zero past its dimension.
  Vec3 transpose_of_cone(int k, const VecX& bodies) const;
  // Finds the proportional form (shared_, coefficient_) when every cone has it.
  void find_proportional_sides();

  // Per cone in the operator's order: its index in the problem, dimension and offset in the
  // problem's cone vectors, and its bodies in the operator's order (-1: no dynamic body on
  // that side).
  int bodies_;
  int cones_;
  std::vector<int> cone_;
  std::vector<int> dims_;
  std::vector<int> offsets_;
  std::vector<int> operator_offsets_;  // of the cones stacked in the operator's order
  int cone_rows_;                      // the problem's cone variables
  std::vector<std::array<int, 2>> body_;
  std::vector<Side> side_;                      // F_bk per cone and side (2 k + s), R x 3
  std::vector<int> side_start_;                 // per body, into body_side_
  std::vector<int> body_side_;                  // 2 k + s of each body's sides, in cone order
  std::vector<Mat3> d_inverse_;                 // per cone, where the sides are not proportional
  mutable std::vector<BodyVector> side_value_;  // F_bk times a cone vector, per side
  // The proportional form: F_sk = coefficient_[2 k + s] shared_[k].
  bool proportional_ = false;
  std::vector<Side> shared_;
  std::vector<Side> folded_;  // shared_[k] L_k
  std::vector<double> coefficient_;
  mutable std::vector<BodyVector> cone_value_;  // shared_[k] times a cone vector
  // K assembled (build_pattern, assemble): lower blocks of body i in
  // [lower_start_[i], lower_start_[i + 1]), columns ascending; slot_[2 k + s] is the lower
  // block that side s of cone k adds to (-1: its other body is absent or has the higher index).
  bool assembled_;
  std::vector<BodyBlock> diagonal_;
  std::vector<int> lower_start_;
  std::vector<int> lower_column_;
  std::vector<BodyBlock> lower_;
  std::vector<int> slot_;
  // Per thread of a product: its rows' start and the lowest body its rows' blocks reach, and
  // the contributions to bodies below its rows (added by their own threads after a barrier).
  mutable std::vector<int> thread_begin_, thread_reach_;
  mutable std::vector<VecX> spill_;
  // K scaled to unit diagonal blocks for the sweeps (scale_to_unit_diagonal): C_i^-1 per body
  // and L^ in the pattern of lower_.
  std::vector<BodyBlock> factor_inverse_;
  std::vector<BodyBlock> scaled_lower_;
  // L^T^ by rows (row i: L^_ji^T for j > i, columns ascending), a copy of the scaled lower
  // blocks made at each scale_to_unit_diagonal, so that the backward sweep gathers like the forward
  // one instead of scattering into earlier rows (a scattering sweep costs about 1.1 products).
  // Its rows are stored last row first (row i at upper_row(i)), so that the descending
  // backward sweep reads them in ascending memory order, as the forward sweep reads the lower
  // blocks: the hardware prefetchers follow ascending streams. With the rows in body order the
  // backward sweep takes 2.8x the forward sweep's time on the benchmark's 1e5 spheres; stored
  // reversed, the two take the same (validation/benchmark/results/ipm_body_space_1e5.json).
  int upper_row(int i) const { return bodies_ - 1 - i; }
  std::vector<int> upper_start_;
  std::vector<int> upper_column_;
  std::vector<int> upper_source_;  // the lower block each upper block is the transpose of
  std::vector<BodyBlock> upper_;
  // The sweeps' ranges (separators_last) and their scratch vectors.
  std::vector<int> sweep_begin_;
  mutable VecX sweep_upper_, sweep_lower_, sweep_difference_;
};

}  // namespace moreau::conic::detail
