#include "body_space_operator.hpp"

#include <Eigen/Cholesky>

namespace moreau::conic::detail {
namespace {

// Loops over fewer cones (bodies) than this run on one thread. A Krylov iteration is a few
// such loops of tens of ns per cone, and waking the threads of a passive OpenMP team costs tens
// of us per loop: on the 4,800-sphere trench (19,700 cones, 4,800 bodies) two threads made an
// iteration 1.6x slower (0.47 -> 0.75 ms, 27 Nov); at 50,214 cones and 10,000 bodies they gain
// 1.14x, at 526,019 cones 1.59x (validation/benchmark/README.md).
constexpr int kParallelGrain = 32768;

// The entries [offset, offset + dim) of v, zero-padded to 3.
inline Vec3 cone_segment(const VecX& v, int offset, int dim) {
  if (dim == 3) return v.segment<3>(offset);
  Vec3 out = Vec3::Zero();
  out.head(dim) = v.segment(offset, dim);
  return out;
}

}  // namespace

template <int R>
BodySpaceOperator<R>::BodySpaceOperator(
    int bodies, const std::vector<int>& cone_dimensions,
    const std::vector<std::array<int, 2>>& block,
    const std::vector<std::array<QuadraticFactor::Columns, 2>>& columns)
    : bodies_(bodies),
      cones_(static_cast<int>(cone_dimensions.size())),
      dims_(cone_dimensions),
      offsets_(cone_offsets(cone_dimensions)),
      body_(block),
      side_(2 * static_cast<std::size_t>(cones_), Side::Zero()),
      side_start_(bodies + 1, 0),
      side_value_(2 * static_cast<std::size_t>(cones_), BodyVector::Zero()) {
  for (int k = 0; k < cones_; ++k) {
    for (int s = 0; s < 2; ++s) {
      if (body_[k][s] < 0) continue;
      side_[2 * k + s] = columns[k][s].template topRows<R>();
      ++side_start_[body_[k][s] + 1];
    }
  }
  for (int b = 0; b < bodies; ++b) side_start_[b + 1] += side_start_[b];
  body_side_.resize(side_start_.back());
  std::vector<int> fill(side_start_.begin(), side_start_.end() - 1);
  for (int k = 0; k < cones_; ++k) {
    for (int s = 0; s < 2; ++s) {
      if (body_[k][s] >= 0) body_side_[fill[body_[k][s]]++] = 2 * k + s;
    }
  }
  find_proportional_sides();
}

template <int R>
void BodySpaceOperator<R>::find_proportional_sides() {
  // Sides that agree with -c times the other to this relative accuracy are taken as
  // proportional: F's entries are products of a few rounded factors, so the two sides of a
  // translation-only contact agree to a few units of rounding, and rotating bodies' sides
  // (levers) differ at order 1.
  constexpr double kRelativeAccuracy = 1e-12;
  std::vector<Side> shared(static_cast<std::size_t>(cones_), Side::Zero());
  std::vector<double> coefficient(2 * static_cast<std::size_t>(cones_), 0.0);
  for (int k = 0; k < cones_; ++k) {
    const int a = body_[k][0], b = body_[k][1];
    if (a < 0 || b < 0) {  // one dynamic side (or none): it is the shared block
      const int s = a < 0 ? 1 : 0;
      shared[k] = side_[2 * k + s];
      coefficient[2 * k + s] = 1.0;
      continue;
    }
    const Side& side_a = side_[2 * k];
    const Side& side_b = side_[2 * k + 1];
    const double norm_b = side_b.norm();
    if (!(norm_b > 0.0)) return;
    const double c = -side_a.norm() / norm_b;
    if ((side_a - c * side_b).norm() > kRelativeAccuracy * side_a.norm()) return;
    shared[k] = side_b;
    coefficient[2 * k] = c;
    coefficient[2 * k + 1] = 1.0;
  }
  shared_ = std::move(shared);
  coefficient_ = std::move(coefficient);
  proportional_ = true;
  cone_value_.assign(static_cast<std::size_t>(cones_), BodyVector::Zero());
  side_value_.clear();
  side_value_.shrink_to_fit();
}

template <int R>
template <typename SideValue>
double BodySpaceOperator<R>::gather(const VecX* p, VecX& out, SideValue&& side) const {
  out.resize(size());
  return ordered_parallel_sum(bodies_, kParallelBodies, [&](int b) {
    BodyVector v = BodyVector::Zero();
    for (int j = side_start_[b]; j < side_start_[b + 1]; ++j) v += side(body_side_[j]);
    double product = 0.0;
    if (p) {
      const BodyVector pb = p->template segment<R>(R * b);
      v += pb;
      product = pb.dot(v);
    }
    out.template segment<R>(R * b) = v;
    return product;
  });
}

template <int R>
void BodySpaceOperator<R>::set_d_inverse(const std::vector<Mat3>& d_inverse) {
  d_inverse_ = &d_inverse;
  if (!proportional_) return;
  folded_.resize(static_cast<std::size_t>(cones_));
#pragma omp parallel for schedule(static) if (cones_ > kParallelGrain)
  for (int k = 0; k < cones_; ++k) {
    const Eigen::LDLT<Mat3> ldlt(d_inverse[k]);
    const Vec3 root = ldlt.vectorD().cwiseMax(0.0).cwiseSqrt();
    const Mat3 lower = ldlt.matrixL();
    const Mat3 factor = ldlt.transpositionsP().transpose() * (lower * root.asDiagonal());
    folded_[k].noalias() = shared_[k] * factor;
  }
}

template <int R>
double BodySpaceOperator<R>::apply_newton_matrix(const VecX& p, VecX& kp) const {
  const std::vector<Mat3>& d_inverse = *d_inverse_;
  if (proportional_) {
#pragma omp parallel for schedule(static) if (cones_ > kParallelGrain)
    for (int k = 0; k < cones_; ++k) {
      const int a = body_[k][0], b = body_[k][1];
      BodyVector relative = BodyVector::Zero();
      if (a >= 0) relative += coefficient_[2 * k] * p.segment<R>(R * a);
      if (b >= 0) relative += coefficient_[2 * k + 1] * p.segment<R>(R * b);
      const Vec3 t = folded_[k].transpose() * relative;
      cone_value_[k].noalias() = folded_[k] * t;
    }
    return gather(&p, kp, [&](int side) { return coefficient_[side] * cone_value_[side / 2]; });
  }
#pragma omp parallel for schedule(static) if (cones_ > kParallelGrain)
  for (int k = 0; k < cones_; ++k) {
    const std::array<int, 2> body = body_[k];
    Vec3 t = Vec3::Zero();
    if (body[0] >= 0) t.noalias() += side_[2 * k].transpose() * p.segment<R>(R * body[0]);
    if (body[1] >= 0) t.noalias() += side_[2 * k + 1].transpose() * p.segment<R>(R * body[1]);
    const Vec3 e = d_inverse[k] * t;
    if (body[0] >= 0) side_value_[2 * k].noalias() = side_[2 * k] * e;
    if (body[1] >= 0) side_value_[2 * k + 1].noalias() = side_[2 * k + 1] * e;
  }
  return gather(&p, kp, [&](int side) { return side_value_[side]; });
}

template <int R>
void BodySpaceOperator<R>::apply(const VecX& cones, VecX& bodies) const {
  if (proportional_) {
#pragma omp parallel for schedule(static) if (cones_ > kParallelGrain)
    for (int k = 0; k < cones_; ++k) {
      cone_value_[k].noalias() = shared_[k] * cone_segment(cones, offsets_[k], dims_[k]);
    }
    gather(nullptr, bodies, [&](int side) { return coefficient_[side] * cone_value_[side / 2]; });
    return;
  }
#pragma omp parallel for schedule(static) if (cones_ > kParallelGrain)
  for (int k = 0; k < cones_; ++k) {
    const Vec3 e = cone_segment(cones, offsets_[k], dims_[k]);
    for (int s = 0; s < 2; ++s) {
      if (body_[k][s] >= 0) side_value_[2 * k + s].noalias() = side_[2 * k + s] * e;
    }
  }
  gather(nullptr, bodies, [&](int side) { return side_value_[side]; });
}

template <int R>
void BodySpaceOperator<R>::apply_transpose(const VecX& bodies, VecX& cones) const {
  cones.resize(offsets_.back());
#pragma omp parallel for schedule(static) if (cones_ > kParallelGrain)
  for (int k = 0; k < cones_; ++k) {
    Vec3 t;
    if (proportional_) {
      BodyVector relative = BodyVector::Zero();
      for (int s = 0; s < 2; ++s) {
        const int b = body_[k][s];
        if (b >= 0) relative += coefficient_[2 * k + s] * bodies.segment<R>(R * b);
      }
      t.noalias() = shared_[k].transpose() * relative;
    } else {
      t.setZero();
      for (int s = 0; s < 2; ++s) {
        const int b = body_[k][s];
        if (b >= 0) t.noalias() += side_[2 * k + s].transpose() * bodies.segment<R>(R * b);
      }
    }
    cones.segment(offsets_[k], dims_[k]) = t.head(dims_[k]);
  }
}

template <int R>
std::vector<typename BodySpaceOperator<R>::BodyBlock> BodySpaceOperator<R>::body_blocks() const {
  const std::vector<Mat3>& d_inverse = *d_inverse_;
  std::vector<BodyBlock> blocks(static_cast<std::size_t>(bodies_));
#pragma omp parallel for schedule(static) if (bodies_ > kParallelBodies)
  for (int b = 0; b < bodies_; ++b) {
    BodyBlock block = BodyBlock::Identity();
    for (int j = side_start_[b]; j < side_start_[b + 1]; ++j) {
      const int side = body_side_[j];
      block.noalias() += side_[side] * d_inverse[side / 2] * side_[side].transpose();
    }
    blocks[b] = block;
  }
  return blocks;
}

template class BodySpaceOperator<3>;
template class BodySpaceOperator<6>;

}  // namespace moreau::conic::detail
