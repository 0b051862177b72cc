#pragma once
// The body-space Newton matrix K = I + F D^-1 F^T (body_space_system.cpp; N = F^T F,
// D = C + W^2 one block per cone) applied matrix-free from F's cone columns, kept in the form
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
  BodySpaceOperator(int bodies, const std::vector<int>& cone_dimensions,
                    const std::vector<std::array<int, 2>>& block,
                    const std::vector<std::array<QuadraticFactor::Columns, 2>>& columns);

  int size() const { return R * bodies_; }
  // D^-1 per cone (leading dim x dim block, zero beyond); kept by reference until the next
  // call, one per Newton step. In the proportional form it is also folded into the shared
  // blocks, G_k = F_bk L_k with L_k L_k^T = D_k^-1 (pivoted LDL^T, D clamped at 0), so that
  // the product's cone pass is F_bk^T's and F_bk's small products alone.
  void set_d_inverse(const std::vector<Mat3>& d_inverse);

  // bodies = F cones (the cone variables stacked by cone_dimensions).
  void apply(const VecX& cones, VecX& bodies) const;
  // cones = F^T bodies.
  void apply_transpose(const VecX& bodies, VecX& cones) const;
  // kp = K p = p + F D^-1 F^T p; returns p^T kp.
  double apply_newton_matrix(const VecX& p, VecX& kp) const;
  // The body blocks I + sum_k F_bk D_k^-1 F_bk^T of K (the body-block preconditioner's).
  std::vector<BodyBlock> body_blocks() const;
  // Whether every cone's sides are proportional (the form above).
  bool proportional() const { return proportional_; }

 private:
  using Side = Eigen::Matrix<double, R, 3>;
  using BodyVector = Eigen::Matrix<double, R, 1>;

  // Pass 2 of the products: out_b = sum over the sides j of body b of side(j), plus p_b when
  // given; returns p^T out when p is given.
  template <typename SideValue>
  double gather(const VecX* p, VecX& out, SideValue&& side) const;
  // Finds the proportional form (shared_, coefficient_) when every cone has it.
  void find_proportional_sides();

  int bodies_;
  int cones_;
  std::vector<int> dims_;
  std::vector<int> offsets_;
  std::vector<std::array<int, 2>> body_;  // per cone, -1: no dynamic body on that side
  std::vector<Side> side_;                // F_bk per cone and side (2 k + s), R x 3
  std::vector<int> side_start_;           // per body, into body_side_
  std::vector<int> body_side_;            // 2 k + s of each body's sides, in cone order
  const std::vector<Mat3>* d_inverse_ = nullptr;
  mutable std::vector<BodyVector> side_value_;  // F_bk times a cone vector, per side
  // The proportional form: F_sk = coefficient_[2 k + s] shared_[k].
  bool proportional_ = false;
  std::vector<Side> shared_;
  std::vector<Side> folded_;  // shared_[k] L_k
  std::vector<double> coefficient_;
  mutable std::vector<BodyVector> cone_value_;  // shared_[k] times a cone vector
};

}  // namespace moreau::conic::detail
