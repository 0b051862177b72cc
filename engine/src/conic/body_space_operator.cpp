#include "body_space_operator.hpp"

#include <Eigen/Cholesky>
#include <algorithm>

#include "locality_ordering.hpp"

namespace moreau::conic::detail {
namespace {

// Loops over fewer cones (bodies) than this run on one thread. A Krylov iteration is a few
// such loops of tens of ns per cone, and waking the threads of a passive OpenMP team costs tens
// of us per loop: with every loop parallel, two threads make an iteration of the 4,800-sphere
// trench (19,700 cones, 4,800 bodies) 1.6x as long as one thread does
// (validation/benchmark/results/trench_4800_threads.json); the benchmark's 50,214 and 526,019
// cones gain from two threads (validation/benchmark/results/ipm_gauss_seidel_split.json).
constexpr int kParallelGrain = 32768;

// The entries [offset, offset + dim) of v, zero-padded to 3.
inline Vec3 cone_segment(const VecX& v, int offset, int dim) {
  if (dim == 3) return v.segment<3>(offset);
  Vec3 out = Vec3::Zero();
  out.head(dim) = v.segment(offset, dim);
  return out;
}

// Asks for the block kPrefetchBlocks ahead of n (or the last one).
template <typename Block>
inline void prefetch_ahead(const std::vector<Block>& blocks, int n) {
  // The blocks are read in ascending memory order in both sweeps and in the assembled product, yet
  // the loads of the blocks stall without help (`perf annotate`: most samples on the instructions
  // after them): the sweep reads several streams at once (blocks, columns, vectors, then the
  // diagonal inverses), and the hardware prefetcher alone does not run far enough ahead. A
  // software prefetch kPrefetchBlocks blocks ahead (about 2.3 KB, a few rows) takes about an
  // eighth off the Gauss-Seidel solve on the benchmark's 1e5 spheres and a few percent off the
  // assembled product's; 8 blocks ahead is too short, 64 and 128 gain no more, and prefetching
  // the diagonal inverses as well changes nothing
  // (validation/benchmark/results/ipm_body_space_1e5.json).
  constexpr std::size_t kPrefetchBlocks = 32;
  __builtin_prefetch(blocks.data() +
                     std::min(static_cast<std::size_t>(n) + kPrefetchBlocks, blocks.size() - 1));
}

}  // namespace

template <int R>
BodySpaceOperator<R>::BodySpaceOperator(
    int bodies, const std::vector<int>& cone_dimensions,
    const std::vector<std::array<int, 2>>& block,
    const std::vector<std::array<QuadraticFactor::Columns, 2>>& columns, bool assembled,
    int sweep_parts)
    : bodies_(bodies),
      cones_(static_cast<int>(cone_dimensions.size())),
      cone_(static_cast<std::size_t>(cones_)),
      dims_(static_cast<std::size_t>(cones_)),
      offsets_(static_cast<std::size_t>(cones_)),
      cone_rows_(cone_offsets(cone_dimensions).back()),
      body_(static_cast<std::size_t>(cones_)),
      side_(2 * static_cast<std::size_t>(cones_), Side::Zero()),
      side_start_(bodies + 1, 0),
      side_value_(2 * static_cast<std::size_t>(cones_), BodyVector::Zero()),
      assembled_(assembled) {
  // The operator's own order (locality_ordering.hpp): bodies by Cuthill-McKee rank, cones by
  // the lower rank of their bodies (a counting sort, stable in the problem's cone order), so
  // that a thread's range of cones touches a narrow range of bodies and a body's cones lie
  // close together.
  std::vector<int> rank = cuthill_mckee_ranks(bodies, block);
  sweep_begin_ = {0, bodies};
  if (assembled && sweep_parts > 1) {
    SweepOrder order = separators_last(rank, block, sweep_parts);
    rank = std::move(order.rank);
    sweep_begin_ = std::move(order.part_begin);
  }
  std::vector<int> first(static_cast<std::size_t>(bodies) + 2, 0);
  auto key = [&](int j) {
    int lowest = bodies;  // a cone without a dynamic side goes last
    for (const int b : block[j]) {
      if (b >= 0) lowest = std::min(lowest, rank[b]);
    }
    return lowest;
  };
  for (int j = 0; j < cones_; ++j) ++first[key(j) + 1];
  for (int i = 0; i <= bodies; ++i) first[i + 1] += first[i];
  for (int j = 0; j < cones_; ++j) cone_[first[key(j)]++] = j;
  const std::vector<int> problem_offsets = cone_offsets(cone_dimensions);
  for (int k = 0; k < cones_; ++k) {
    const int j = cone_[k];
    dims_[k] = cone_dimensions[j];
    offsets_[k] = problem_offsets[j];
    for (int s = 0; s < 2; ++s) {
      body_[k][s] = block[j][s] >= 0 ? rank[block[j][s]] : -1;
      if (body_[k][s] < 0) continue;
      side_[2 * k + s] = columns[j][s].template topRows<R>();
      ++side_start_[body_[k][s] + 1];
    }
  }
  operator_offsets_ = cone_offsets(dims_);
  for (int b = 0; b < bodies; ++b) side_start_[b + 1] += side_start_[b];
  body_side_.resize(side_start_.back());
  std::vector<int> fill(side_start_.begin(), side_start_.end() - 1);
  for (int k = 0; k < cones_; ++k) {
    for (int s = 0; s < 2; ++s) {
      if (body_[k][s] >= 0) body_side_[fill[body_[k][s]]++] = 2 * k + s;
    }
  }
  find_proportional_sides();
  if (assembled_) build_pattern();
}

template <int R>
void BodySpaceOperator<R>::build_pattern() {
  lower_start_.assign(static_cast<std::size_t>(bodies_) + 1, 0);
  slot_.assign(2 * static_cast<std::size_t>(cones_), -1);
  std::vector<std::array<int, 2>> row;  // (column, side) of one body's lower couplings
  for (int i = 0; i < bodies_; ++i) {
    row.clear();
    for (int j = side_start_[i]; j < side_start_[i + 1]; ++j) {
      const int side = body_side_[j];
      const int other = body_[side / 2][1 - side % 2];
      if (other >= 0 && other < i) row.push_back({other, side});
    }
    std::sort(row.begin(), row.end());
    int blocks = 0;
    for (std::size_t n = 0; n < row.size(); ++n) {
      if (n == 0 || row[n][0] != row[n - 1][0]) {
        lower_column_.push_back(row[n][0]);
        ++blocks;
      }
      slot_[row[n][1]] = lower_start_[i] + blocks - 1;
    }
    lower_start_[i + 1] = lower_start_[i] + blocks;
  }
  diagonal_.assign(static_cast<std::size_t>(bodies_), BodyBlock::Identity());
  lower_.assign(lower_column_.size(), BodyBlock::Zero());
  // The transposed pattern (a counting sort of the lower blocks by column, stable in row order
  // so that each upper row's columns ascend), its rows stored last row first.
  upper_start_.assign(static_cast<std::size_t>(bodies_) + 1, 0);
  for (const int j : lower_column_) ++upper_start_[upper_row(j) + 1];
  for (int i = 0; i < bodies_; ++i) upper_start_[i + 1] += upper_start_[i];
  upper_column_.resize(lower_column_.size());
  upper_source_.resize(lower_column_.size());
  std::vector<int> fill(upper_start_.begin(), upper_start_.end() - 1);
  for (int i = 0; i < bodies_; ++i) {
    for (int n = lower_start_[i]; n < lower_start_[i + 1]; ++n) {
      const int slot = fill[upper_row(lower_column_[n])]++;
      upper_column_[slot] = i;
      upper_source_[slot] = n;
    }
  }
  upper_.assign(lower_column_.size(), BodyBlock::Zero());
}

template <int R>
void BodySpaceOperator<R>::assemble() {
  // F_sk D_k^-1 F_tk^T of cone k between its sides s and t (side = 2 k + s).
  auto coupling = [&](int side, int other_side) -> BodyBlock {
    const int k = side / 2;
    if (proportional_) {
      return (coefficient_[side] * coefficient_[other_side]) * folded_[k] * folded_[k].transpose();
    }
    return side_[side] * d_inverse_[k] * side_[other_side].transpose();
  };
#pragma omp parallel for schedule(static) if (bodies_ > kParallelBodies)
  for (int i = 0; i < bodies_; ++i) {
    BodyBlock diagonal = BodyBlock::Identity();
    for (int n = lower_start_[i]; n < lower_start_[i + 1]; ++n) lower_[n].setZero();
    for (int j = side_start_[i]; j < side_start_[i + 1]; ++j) {
      const int side = body_side_[j];
      const int other_side = side ^ 1;
      diagonal.noalias() += coupling(side, side);
      const int other = body_[side / 2][other_side % 2];
      if (other == i) diagonal.noalias() += coupling(side, other_side);
      if (slot_[side] >= 0) lower_[slot_[side]].noalias() += coupling(side, other_side);
    }
    diagonal_[i] = diagonal;
  }
}

template <int R>
bool BodySpaceOperator<R>::scale_to_unit_diagonal() {
  factor_inverse_.resize(static_cast<std::size_t>(bodies_));
  scaled_lower_.resize(lower_.size());
  bool positive = true;
#pragma omp parallel for schedule(static) if (bodies_ > kParallelBodies) reduction(&& : positive)
  for (int i = 0; i < bodies_; ++i) {
    const Eigen::LLT<BodyBlock> factor(diagonal_[i]);
    positive = positive && factor.info() == Eigen::Success;
    factor_inverse_[i] = factor.matrixL().solve(BodyBlock::Identity());
  }
  if (!positive) return false;
#pragma omp parallel for schedule(static) if (bodies_ > kParallelBodies)
  for (int i = 0; i < bodies_; ++i) {
    for (int n = lower_start_[i]; n < lower_start_[i + 1]; ++n) {
      scaled_lower_[n].noalias() =
          factor_inverse_[i] * lower_[n] * factor_inverse_[lower_column_[n]].transpose();
    }
  }
#pragma omp parallel for schedule(static) if (bodies_ > kParallelBodies)
  for (int n = 0; n < static_cast<int>(upper_.size()); ++n)
    upper_[n] = scaled_lower_[upper_source_[n]].transpose();
  return true;
}

template <int R>
void BodySpaceOperator<R>::scale(const VecX& x, bool transposed, VecX& y) const {
  y.resize(size());
#pragma omp parallel for schedule(static) if (bodies_ > kParallelBodies)
  for (int i = 0; i < bodies_; ++i) {
    if (transposed) {
      y.template segment<R>(R * i).noalias() =
          factor_inverse_[i].transpose() * x.template segment<R>(R * i);
    } else {
      y.template segment<R>(R * i).noalias() = factor_inverse_[i] * x.template segment<R>(R * i);
    }
  }
}

// K p from the assembled blocks, rows split into one contiguous range per thread (balanced by
// blocks). Row i adds L_ij p_j to its own result and L_ij^T p_i to body j < i: directly where
// j is in the thread's range (its row, earlier in the same ascending pass, is already set),
// otherwise into the thread's spill, which the owner of j adds after a barrier, the spills of
// later threads in thread order. p^T K p = sum_i p_i^T (D_i p_i + 2 sum_j L_ij p_j) in the
// same pass.
template <int R>
double BodySpaceOperator<R>::apply_assembled(const VecX& p, VecX& kp) const {
  kp.resize(size());
  const int threads = bodies_ > kParallelBodies ? omp_get_max_threads() : 1;
  thread_begin_.assign(static_cast<std::size_t>(threads) + 1, bodies_);
  thread_reach_.assign(static_cast<std::size_t>(threads), bodies_);
  if (spill_.size() < static_cast<std::size_t>(threads)) spill_.resize(threads);
  std::vector<double> partial(static_cast<std::size_t>(threads), 0.0);
  const long work = static_cast<long>(bodies_) + lower_start_.back();
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    const int team = omp_get_num_threads();
    // Row ranges: the first row whose cumulative work (rows + blocks before it) reaches t / team.
    auto first_row = [&](int thread) {
      const long target = work * thread / team;
      int low = 0, high = bodies_;
      while (low < high) {
        const int mid = (low + high) / 2;
        if (static_cast<long>(mid) + lower_start_[mid] < target)
          low = mid + 1;
        else
          high = mid;
      }
      return low;
    };
    const int begin = first_row(t);
    const int end = t + 1 == team ? bodies_ : first_row(t + 1);
    int reach = begin;
    for (int i = begin; i < end; ++i) {
      if (lower_start_[i] < lower_start_[i + 1])
        reach = std::min(reach, lower_column_[lower_start_[i]]);
    }
    thread_begin_[t] = begin;
    thread_reach_[t] = reach;
    VecX& spill = spill_[t];
    spill.setZero(R * (begin - reach));
    double curvature = 0.0;
    for (int i = begin; i < end; ++i) {
      const BodyVector pi = p.template segment<R>(R * i);
      const BodyVector own = diagonal_[i] * pi;
      BodyVector coupled = BodyVector::Zero();
      for (int n = lower_start_[i]; n < lower_start_[i + 1]; ++n) {
        prefetch_ahead(lower_, n);
        const int j = lower_column_[n];
        coupled.noalias() += lower_[n] * p.template segment<R>(R * j);
        const BodyVector back = lower_[n].transpose() * pi;
        if (j >= begin) {
          kp.template segment<R>(R * j) += back;
        } else {
          spill.template segment<R>(R * (j - reach)) += back;
        }
      }
      kp.template segment<R>(R * i) = own + coupled;
      curvature += pi.dot(own + 2.0 * coupled);
    }
    partial[t] = curvature;
#pragma omp barrier
    for (int u = t + 1; u < team; ++u) {
      const int from = std::max(thread_reach_[u], begin);
      const int to = std::min(thread_begin_[u], end);
      for (int j = from; j < to; ++j) {
        kp.template segment<R>(R * j) += spill_[u].template segment<R>(R * (j - thread_reach_[u]));
      }
    }
  }
  double total = 0.0;
  for (const double c : partial) total += c;
  return total;
}

template <int R>
template <typename Rows, typename Separators>
void BodySpaceOperator<R>::in_sweep_order(bool forward, Rows&& rows,
                                          Separators&& separators) const {
  const int parts = static_cast<int>(sweep_begin_.size()) - 1;
  const int separator_begin = sweep_begin_.back();
#pragma omp parallel num_threads(parts) if (parts > 1)
  {
    if (!forward) {
#pragma omp single
      separators(separator_begin, bodies_);
    }
#pragma omp for schedule(static, 1)
    for (int t = 0; t < parts; ++t) rows(t, sweep_begin_[t], sweep_begin_[t + 1]);
    if (forward) {
#pragma omp single
      separators(separator_begin, bodies_);
    }
  }
}

template <int R>
inline typename BodySpaceOperator<R>::BodyVector BodySpaceOperator<R>::row_product(
    int begin, int end, const std::vector<BodyBlock>& blocks, const std::vector<int>& column,
    const VecX& v) {
  std::array<double, R> sum{};
  const double* values = v.data();
  const int* columns = column.data();
  const BodyBlock* block = blocks.data();
  for (int n = begin; n < end; ++n) {
    prefetch_ahead(blocks, n);
    const double* b = block[n].data();  // column-major
    const double* y = values + R * columns[n];
    for (int c = 0; c < R; ++c) {
      const double yc = y[c];
      for (int r = 0; r < R; ++r) sum[r] += b[R * c + r] * yc;
    }
  }
  return Eigen::Map<const BodyVector>(sum.data());
}

template <int R>
template <typename Finished>
void BodySpaceOperator<R>::backward_rows(int begin, int end, const VecX& x, VecX& t,
                                         Finished&& finished) const {
  for (int i = end - 1; i >= begin; --i) {
    const int row = upper_row(i);
    const BodyVector coupled =
        row_product(upper_start_[row], upper_start_[row + 1], upper_, upper_column_, t);
    t.template segment<R>(R * i) = x.template segment<R>(R * i) - coupled;
    finished(i, coupled);
  }
}

template <int R>
template <typename Finished>
void BodySpaceOperator<R>::forward_rows(int begin, int end, const VecX& x, VecX& y,
                                        Finished&& finished) const {
  for (int i = begin; i < end; ++i) {
    const BodyVector yi =
        x.template segment<R>(R * i) -
        row_product(lower_start_[i], lower_start_[i + 1], scaled_lower_, lower_column_, y);
    y.template segment<R>(R * i) = yi;
    finished(i, yi);
  }
}

template <int R>
void BodySpaceOperator<R>::forward_sweep(const VecX& x, VecX& y) const {
  y.resize(size());
  auto rows = [&](int, int begin, int end) {
    forward_rows(begin, end, x, y, [](int, const BodyVector&) {});
  };
  in_sweep_order(true, rows, [&](int begin, int end) { rows(-1, begin, end); });
}

template <int R>
void BodySpaceOperator<R>::backward_sweep(const VecX& x, VecX& y) const {
  y.resize(size());
  auto rows = [&](int, int begin, int end) {
    backward_rows(begin, end, x, y, [](int, const BodyVector&) {});
  };
  in_sweep_order(false, rows, [&](int begin, int end) { rows(-1, begin, end); });
}

template <int R>
void BodySpaceOperator<R>::apply_lower(const VecX& x, VecX& y) const {
  y.resize(size());
#pragma omp parallel for schedule(static) if (bodies_ > kParallelBodies)
  for (int i = 0; i < bodies_; ++i) {
    BodyVector v = diagonal_[i] * x.template segment<R>(R * i);
    for (int n = lower_start_[i]; n < lower_start_[i + 1]; ++n)
      v.noalias() += lower_[n] * x.template segment<R>(R * lower_column_[n]);
    y.template segment<R>(R * i) = v;
  }
}

template <int R>
void BodySpaceOperator<R>::apply_upper(const VecX& x, VecX& y) const {
  // Once per solve (a warm start): one thread.
  y.resize(size());
  for (int i = 0; i < bodies_; ++i)
    y.template segment<R>(R * i).noalias() = diagonal_[i] * x.template segment<R>(R * i);
  for (int j = 0; j < bodies_; ++j) {
    for (int n = lower_start_[j]; n < lower_start_[j + 1]; ++n) {
      y.template segment<R>(R * lower_column_[n]).noalias() +=
          lower_[n].transpose() * x.template segment<R>(R * j);
    }
  }
}

template <int R>
double BodySpaceOperator<R>::apply_split_newton_matrix(const VecX& p, VecX& kp) const {
  kp.resize(size());
  VecX& upper = sweep_upper_;            // t = (I + L^T)^-1 p
  VecX& lower = sweep_lower_;            // (I + L)^-1 (p - t)
  VecX& difference = sweep_difference_;  // p - t = L^T t
  upper.resize(size());
  lower.resize(size());
  difference.resize(size());
  auto backward = [&](int, int begin, int end) {
    backward_rows(begin, end, p, upper, [&](int i, const BodyVector& coupled) {
      difference.template segment<R>(R * i) = coupled;
    });
  };
  in_sweep_order(false, backward, [&](int begin, int end) { backward(-1, begin, end); });
  const int parts = static_cast<int>(sweep_begin_.size()) - 1;
  std::vector<double> partial(static_cast<std::size_t>(parts) + 1, 0.0);
  auto forward = [&](int t, int begin, int end) {
    double curvature = 0.0;
    forward_rows(begin, end, difference, lower, [&](int i, const BodyVector& li) {
      const BodyVector ki = upper.template segment<R>(R * i) + li;
      kp.template segment<R>(R * i) = ki;
      curvature += p.template segment<R>(R * i).dot(ki);
    });
    partial[t < 0 ? parts : t] = curvature;
  };
  in_sweep_order(true, forward, [&](int begin, int end) { forward(-1, begin, end); });
  double total = 0.0;
  for (const double c : partial) total += c;
  return total;
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
  if (!proportional_) {
    d_inverse_.resize(static_cast<std::size_t>(cones_));
#pragma omp parallel for schedule(static) if (cones_ > kParallelGrain)
    for (int k = 0; k < cones_; ++k) d_inverse_[k] = d_inverse[cone_[k]];
    if (assembled_) assemble();
    return;
  }
  folded_.resize(static_cast<std::size_t>(cones_));
#pragma omp parallel for schedule(static) if (cones_ > kParallelGrain)
  for (int k = 0; k < cones_; ++k) {
    const Eigen::LDLT<Mat3> ldlt(d_inverse[cone_[k]]);
    const Vec3 root = ldlt.vectorD().cwiseMax(0.0).cwiseSqrt();
    const Mat3 lower = ldlt.matrixL();
    const Mat3 factor = ldlt.transpositionsP().transpose() * (lower * root.asDiagonal());
    folded_[k].noalias() = shared_[k] * factor;
  }
  if (assembled_) assemble();
}

template <int R>
double BodySpaceOperator<R>::apply_newton_matrix(const VecX& p, VecX& kp) const {
  if (assembled_) return apply_assembled(p, kp);
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
    const Vec3 e = d_inverse_[k] * t;
    if (body[0] >= 0) side_value_[2 * k].noalias() = side_[2 * k] * e;
    if (body[1] >= 0) side_value_[2 * k + 1].noalias() = side_[2 * k + 1] * e;
  }
  return gather(&p, kp, [&](int side) { return side_value_[side]; });
}

template <int R>
void BodySpaceOperator<R>::apply(const VecX& cones, VecX& bodies, ConeOrder order) const {
  const std::vector<int>& offsets = order == ConeOrder::problem ? offsets_ : operator_offsets_;
  if (proportional_) {
#pragma omp parallel for schedule(static) if (cones_ > kParallelGrain)
    for (int k = 0; k < cones_; ++k) {
      cone_value_[k].noalias() = shared_[k] * cone_segment(cones, offsets[k], dims_[k]);
    }
    gather(nullptr, bodies, [&](int side) { return coefficient_[side] * cone_value_[side / 2]; });
    return;
  }
#pragma omp parallel for schedule(static) if (cones_ > kParallelGrain)
  for (int k = 0; k < cones_; ++k) {
    const Vec3 e = cone_segment(cones, offsets[k], dims_[k]);
    for (int s = 0; s < 2; ++s) {
      if (body_[k][s] >= 0) side_value_[2 * k + s].noalias() = side_[2 * k + s] * e;
    }
  }
  gather(nullptr, bodies, [&](int side) { return side_value_[side]; });
}

template <int R>
void BodySpaceOperator<R>::to_operator_order(const VecX& problem_order,
                                             VecX& operator_order) const {
  operator_order.resize(cone_rows_);
#pragma omp parallel for schedule(static) if (cones_ > kParallelGrain)
  for (int k = 0; k < cones_; ++k) {
    operator_order.segment(operator_offsets_[k], dims_[k]) =
        problem_order.segment(offsets_[k], dims_[k]);
  }
}

template <int R>
void BodySpaceOperator<R>::to_problem_order(const VecX& operator_order, VecX& problem_order) const {
  problem_order.resize(cone_rows_);
#pragma omp parallel for schedule(static) if (cones_ > kParallelGrain)
  for (int k = 0; k < cones_; ++k) {
    problem_order.segment(offsets_[k], dims_[k]) =
        operator_order.segment(operator_offsets_[k], dims_[k]);
  }
}

template <int R>
std::vector<Mat3> BodySpaceOperator<R>::blocks_in_operator_order(
    const std::vector<Mat3>& problem_order) const {
  std::vector<Mat3> out(static_cast<std::size_t>(cones_));
  for (int k = 0; k < cones_; ++k) out[k] = problem_order[cone_[k]];
  return out;
}

template <int R>
Vec3 BodySpaceOperator<R>::transpose_of_cone(int k, const VecX& bodies) const {
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
  if (dims_[k] < 3) t.tail(3 - dims_[k]).setZero();
  return t;
}

template <int R>
void BodySpaceOperator<R>::apply_transpose(const VecX& bodies, VecX& cones, ConeOrder order) const {
  const std::vector<int>& offsets = order == ConeOrder::problem ? offsets_ : operator_offsets_;
  cones.resize(cone_rows_);
#pragma omp parallel for schedule(static) if (cones_ > kParallelGrain)
  for (int k = 0; k < cones_; ++k) {
    const Vec3 t = transpose_of_cone(k, bodies);
    // A fixed-size copy where the cone has 3 rows (a runtime-sized one is a call to memcpy
    // per cone, a fifth of a Krylov iteration's time in the profile).
    if (dims_[k] == 3) {
      cones.segment<3>(offsets[k]) = t;
    } else {
      for (int a = 0; a < dims_[k]; ++a) cones[offsets[k] + a] = t[a];
    }
  }
}

template <int R>
double BodySpaceOperator<R>::transpose_squared_norm(const VecX& bodies) const {
  return ordered_parallel_sum(cones_, kParallelGrain,
                              [&](int k) { return transpose_of_cone(k, bodies).squaredNorm(); });
}

template <int R>
std::vector<typename BodySpaceOperator<R>::BodyBlock> BodySpaceOperator<R>::body_blocks() const {
  if (assembled_) return diagonal_;
  std::vector<BodyBlock> blocks(static_cast<std::size_t>(bodies_));
#pragma omp parallel for schedule(static) if (bodies_ > kParallelBodies)
  for (int b = 0; b < bodies_; ++b) {
    BodyBlock block = BodyBlock::Identity();
    for (int j = side_start_[b]; j < side_start_[b + 1]; ++j) {
      const int side = body_side_[j];
      if (proportional_) {  // F_bk D_k^-1 F_bk^T = c^2 G_k G_k^T
        const double c = coefficient_[side];
        block.noalias() += (c * c) * folded_[side / 2] * folded_[side / 2].transpose();
      } else {
        block.noalias() += side_[side] * d_inverse_[side / 2] * side_[side].transpose();
      }
    }
    blocks[b] = block;
  }
  return blocks;
}

template class BodySpaceOperator<3>;
template class BodySpaceOperator<6>;

}  // namespace moreau::conic::detail
