#include "refinement_gmres.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

namespace moreau::conic::detail {
namespace {

// Krylov vectors kept before a restart: the outlying eigenvalues of M^-1 K are a handful.
constexpr int kRestart = 20;
// A restart cycle that does not reduce the residual by this factor ends the refinement (the
// residual is at rounding).
constexpr double kCycleProgress = 0.5;

// Givens rotation (c, s) that zeroes b in (a, b), applied to the Hessenberg column and g.
struct Rotation {
  double c = 1.0;
  double s = 0.0;
  void apply(double& a, double& b) const {
    const double t = c * a + s * b;
    b = -s * a + c * b;
    a = t;
  }
};

}  // namespace

RefinementResult refine_with_gmres(const std::function<void(const VecX&, VecX&)>& apply_k,
                                   const std::function<bool(const VecX&, VecX&)>& solve_m,
                                   const VecX& scaling, const VecX& b, double target,
                                   int max_iterations, VecX& d) {
  RefinementResult result;
  if (!solve_m(b, d)) return result;
  result.solved = true;
  const Eigen::Index size = b.size();
  VecX product;
  auto scaled_residual = [&](const VecX& x) {
    apply_k(x, product);
    return VecX(scaling.cwiseProduct(b - product));
  };
  VecX r = scaled_residual(d);
  double beta = r.norm();
  while (beta > target && result.iterations < max_iterations) {
    const int cycle = std::min(kRestart, max_iterations - result.iterations);
    MatX v(size, cycle + 1);
    MatX h = MatX::Zero(cycle + 1, cycle);
    VecX g = VecX::Zero(cycle + 1);
    std::vector<Rotation> rotations(cycle);
    g(0) = beta;
    v.col(0) = r / beta;
    VecX z, w;
    int k = 0;
    while (k < cycle) {
      if (!solve_m(v.col(k).cwiseQuotient(scaling), z)) break;
      ++result.iterations;
      apply_k(z, w);
      w = scaling.cwiseProduct(w);
      for (int i = 0; i <= k; ++i) {  // modified Gram-Schmidt (Arnoldi)
        h(i, k) = v.col(i).dot(w);
        w -= h(i, k) * v.col(i);
      }
      const double next = w.norm();
      h(k + 1, k) = next;
      for (int i = 0; i < k; ++i) rotations[i].apply(h(i, k), h(i + 1, k));
      const double rho = std::hypot(h(k, k), h(k + 1, k));
      if (rho > 0.0) rotations[k] = {h(k, k) / rho, h(k + 1, k) / rho};
      rotations[k].apply(h(k, k), h(k + 1, k));
      rotations[k].apply(g(k), g(k + 1));
      ++k;
      if (std::abs(g(k)) <= target || !(next > 0.0)) break;
      v.col(k) = w / next;
    }
    if (k == 0) break;
    const VecX y = h.topLeftCorner(k, k).triangularView<Eigen::Upper>().solve(g.head(k));
    VecX correction;
    if (!solve_m((v.leftCols(k) * y).cwiseQuotient(scaling), correction)) break;
    const VecX candidate = d + correction;
    const VecX candidate_residual = scaled_residual(candidate);
    const double candidate_norm = candidate_residual.norm();
    if (!(candidate_norm < beta)) break;
    const bool slow = candidate_norm > kCycleProgress * beta;
    d = candidate;
    r = candidate_residual;
    beta = candidate_norm;
    if (slow) break;
  }
  result.residual = beta;
  return result;
}

}  // namespace moreau::conic::detail
