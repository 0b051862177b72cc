#include "body_space_operator.hpp"

#include <omp.h>

namespace moreau::conic::detail {
namespace {

// Below this many cones (or bodies) a loop costs less than an OpenMP fork/join.
constexpr int kParallelGrain = 2048;

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
}

template <int R>
double BodySpaceOperator<R>::gather(const VecX* p, VecX& out) const {
  out.resize(size());
  std::vector<double> partial(static_cast<std::size_t>(omp_get_max_threads()), 0.0);
#pragma omp parallel if (bodies_ > kParallelGrain)
  {
    double sum = 0.0;
#pragma omp for schedule(static)
    for (int b = 0; b < bodies_; ++b) {
      BodyVector v = BodyVector::Zero();
      for (int j = side_start_[b]; j < side_start_[b + 1]; ++j) v += side_value_[body_side_[j]];
      if (p) {
        const BodyVector pb = p->template segment<R>(R * b);
        v += pb;
        sum += pb.dot(v);
      }
      out.template segment<R>(R * b) = v;
    }
    partial[static_cast<std::size_t>(omp_get_thread_num())] = sum;
  }
  double total = 0.0;
  for (const double s : partial) total += s;
  return total;
}

template <int R>
double BodySpaceOperator<R>::apply_newton_matrix(const VecX& p, VecX& kp) const {
  const std::vector<Mat3>& d_inverse = *d_inverse_;
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
  return gather(&p, kp);
}

template <int R>
void BodySpaceOperator<R>::apply(const VecX& cones, VecX& bodies) const {
#pragma omp parallel for schedule(static) if (cones_ > kParallelGrain)
  for (int k = 0; k < cones_; ++k) {
    const Vec3 e = cone_segment(cones, offsets_[k], dims_[k]);
    for (int s = 0; s < 2; ++s) {
      if (body_[k][s] >= 0) side_value_[2 * k + s].noalias() = side_[2 * k + s] * e;
    }
  }
  gather(nullptr, bodies);
}

template <int R>
void BodySpaceOperator<R>::apply_transpose(const VecX& bodies, VecX& cones) const {
  cones.resize(offsets_.back());
#pragma omp parallel for schedule(static) if (cones_ > kParallelGrain)
  for (int k = 0; k < cones_; ++k) {
    Vec3 t = Vec3::Zero();
    for (int s = 0; s < 2; ++s) {
      const int b = body_[k][s];
      if (b >= 0) t.noalias() += side_[2 * k + s].transpose() * bodies.segment<R>(R * b);
    }
    cones.segment(offsets_[k], dims_[k]) = t.head(dims_[k]);
  }
}

template <int R>
std::vector<typename BodySpaceOperator<R>::BodyBlock> BodySpaceOperator<R>::body_blocks() const {
  const std::vector<Mat3>& d_inverse = *d_inverse_;
  std::vector<BodyBlock> blocks(static_cast<std::size_t>(bodies_));
#pragma omp parallel for schedule(static) if (bodies_ > kParallelGrain)
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
