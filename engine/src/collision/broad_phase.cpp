// Broad phase on a uniform grid. Each bounded body sits in the one cell that holds its shape
// centre; a cell at least as wide as the largest bounding diameter plus the margin means every
// candidate partner lies in the 3^d block of cells around it. Cells are found through a hash
// table built by a counting sort of bodies on the hashed cell key, so the cost is linear in the
// number of bodies (for bounded size ratios) and every step is deterministic.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "moreau/collision/collision_detector.hpp"

namespace moreau {
namespace {

// Cell coordinates are clamped here before conversion to integers, so that bodies arbitrarily
// far away (or a NaN) still get a valid cell; clamped bodies share border cells, which costs
// time but never misses a pair, since every candidate is checked on its bounding spheres.
constexpr double kCellCoordinateLimit = 4.0e18;

// Below this many bodies a parallel region costs more than it saves.
constexpr int kParallelBodies = 4096;

struct Entry {
  Vec3 centre;
  double radius;
  std::uint64_t key;
  int body;
};

std::int64_t cell_coordinate(double x, double inverse_cell) {
  double q = std::floor(x * inverse_cell);
  if (!(q > -kCellCoordinateLimit)) q = -kCellCoordinateLimit;
  if (q > kCellCoordinateLimit) q = kCellCoordinateLimit;
  return static_cast<std::int64_t>(q);
}

// Packs cell coordinates modulo 2^21 (3D) or 2^32 (2D) into one 64-bit key. Wrapping commutes
// with adding the stencil offsets, so neighbour keys stay exact; cells that alias across the
// wrap only add candidates that the sphere test rejects.
std::uint64_t cell_key(std::int64_t x, std::int64_t y, std::int64_t z, bool planar) {
  const auto u = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
  if (planar) return (u(x) & 0xffffffffULL) | (u(y) << 32);
  constexpr std::uint64_t mask = (1ULL << 21) - 1;
  return (u(x) & mask) | ((u(y) & mask) << 21) | ((u(z) & mask) << 42);
}

// splitmix64 finaliser: spreads neighbouring keys over the table.
std::uint64_t mix(std::uint64_t k) {
  k ^= k >> 30;
  k *= 0xbf58476d1ce4e5b9ULL;
  k ^= k >> 27;
  k *= 0x94d049bb133111ebULL;
  k ^= k >> 31;
  return k;
}

}  // namespace

std::vector<std::pair<int, int>> broad_phase_pairs(const World& world,
                                                    const CollisionOptions& options) {
  const int n = static_cast<int>(world.bodies.size());
  const bool planar = world.is_planar();
  const double margin = options.margin;

  std::vector<Vec3> centre(n);
  std::vector<double> radius(n);
  std::vector<char> dynamic(n);
  std::vector<int> unbounded;  // ascending body index
  double max_radius = 0.0;
  for (int i = 0; i < n; ++i) {
    const RigidBody& b = world.bodies[i];
    centre[i] = b.position + b.orientation * b.shape.offset;
    radius[i] = bounding_radius(b.shape.geometry);
    dynamic[i] = b.is_dynamic();
    if (std::isfinite(radius[i])) {
      max_radius = std::max(max_radius, radius[i]);
    } else {
      unbounded.push_back(i);
    }
  }

  // Reach: how many cells away a partner can sit. Any positive cell size works when the
  // default (all points, no margin) is zero, since partners then share a centre.
  const double diameter = 2.0 * max_radius + margin;
  double cell = options.cell_size > 0.0 ? options.cell_size : diameter;
  if (!(cell > 0.0)) cell = 1.0;
  const int reach = std::max(1, static_cast<int>(std::ceil(diameter / cell)));
  const double inverse_cell = 1.0 / cell;

  // Hash table: bodies counting-sorted by bucket of their cell key, stable in body index.
  std::vector<std::uint64_t> key(n, 0);
  std::vector<std::int64_t> coordinate(3 * static_cast<std::size_t>(n), 0);
#pragma omp parallel for schedule(static) if (n >= kParallelBodies)
  for (int i = 0; i < n; ++i) {
    if (!std::isfinite(radius[i])) continue;
    std::int64_t* c = &coordinate[3 * static_cast<std::size_t>(i)];
    c[0] = cell_coordinate(centre[i].x(), inverse_cell);
    c[1] = cell_coordinate(centre[i].y(), inverse_cell);
    c[2] = planar ? 0 : cell_coordinate(centre[i].z(), inverse_cell);
    key[i] = cell_key(c[0], c[1], c[2], planar);
  }
  const int bounded = n - static_cast<int>(unbounded.size());
  std::size_t table_size = 1;
  while (table_size < 2 * static_cast<std::size_t>(std::max(bounded, 1))) table_size <<= 1;
  const std::uint64_t table_mask = table_size - 1;
  std::vector<int> bucket_start(table_size + 1, 0);
  for (int i = 0; i < n; ++i)
    if (std::isfinite(radius[i])) ++bucket_start[(mix(key[i]) & table_mask) + 1];
  for (std::size_t b = 0; b < table_size; ++b) bucket_start[b + 1] += bucket_start[b];
  std::vector<Entry> table(bounded);
  {
    std::vector<int> fill(bucket_start.begin(), bucket_start.end() - 1);
    for (int i = 0; i < n; ++i)
      if (std::isfinite(radius[i]))
        table[fill[mix(key[i]) & table_mask]++] = Entry{centre[i], radius[i], key[i], i};
  }

  // Pairs of each body a with its partners b > a, sorted by b; blocks of consecutive a are
  // concatenated in order, which gives the pair list sorted by (a, b) for any thread count.
  const int dz = planar ? 0 : reach;
  auto partners = [&](int a, std::vector<int>& out) {
    out.clear();
    if (!std::isfinite(radius[a])) {
      for (int b = a + 1; b < n; ++b)
        if (dynamic[a] || dynamic[b]) out.push_back(b);
      return;
    }
    const std::int64_t* c = &coordinate[3 * static_cast<std::size_t>(a)];
    for (int z = -dz; z <= dz; ++z)
      for (int y = -reach; y <= reach; ++y)
        for (int x = -reach; x <= reach; ++x) {
          const std::uint64_t k = cell_key(c[0] + x, c[1] + y, c[2] + z, planar);
          const std::uint64_t bucket = mix(k) & table_mask;
          for (int e = bucket_start[bucket]; e < bucket_start[bucket + 1]; ++e) {
            const Entry& other = table[e];
            if (other.key != k || other.body <= a) continue;
            if (!dynamic[a] && !dynamic[other.body]) continue;
            const double reach_ab = radius[a] + other.radius + margin;
            if ((other.centre - centre[a]).squaredNorm() <= reach_ab * reach_ab)
              out.push_back(other.body);
          }
        }
    for (int b : unbounded)
      if (b > a && (dynamic[a] || dynamic[b])) out.push_back(b);
    std::sort(out.begin(), out.end());
  };

  std::vector<std::pair<int, int>> pairs;
  const int threads = n >= kParallelBodies ? omp_get_max_threads() : 1;
  std::vector<std::vector<std::pair<int, int>>> block_pairs(threads);
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    const int count = omp_get_num_threads();
    const int begin = static_cast<int>(static_cast<long long>(n) * t / count);
    const int end = static_cast<int>(static_cast<long long>(n) * (t + 1) / count);
    std::vector<int> found;
    for (int a = begin; a < end; ++a) {
      partners(a, found);
      for (int b : found) block_pairs[t].emplace_back(a, b);
    }
  }
  std::size_t total = 0;
  for (const auto& block : block_pairs) total += block.size();
  pairs.reserve(total);
  for (const auto& block : block_pairs) pairs.insert(pairs.end(), block.begin(), block.end());
  return pairs;
}

}  // namespace moreau
