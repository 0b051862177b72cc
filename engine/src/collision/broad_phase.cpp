// Broad phase on a uniform grid. Each bounded body sits in the one cell that holds its shape
// centre, and the cell is at least as wide as the largest bounding diameter plus the margin, so
// every partner lies in the block of cells within `reach` (1 by default) around it. Bodies are
// sorted by cell (z, y, x); a row of neighbour cells along x is then one contiguous run of the
// sorted array, found by pointers that only move forward as the sweep advances. The sweep visits
// each pair of neighbouring cells once, with sequential memory access; the pairs are then
// bucketed by their first body, which gives the (a, b)-sorted list for any thread count.
#include <omp.h>

#include <algorithm>
#include <array>
#include <bit>
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

// A non-dynamic body whose bounding radius exceeds this many times the largest dynamic one
// stays off the grid: the cell is sized for the grains, not for one blade or wall.
constexpr double kLargeBodyFactor = 4.0;

double largest_dynamic_radius(const std::vector<double>& radius, const std::vector<char>& dynamic) {
  double largest = 0.0;
  for (std::size_t i = 0; i < radius.size(); ++i)
    if (dynamic[i] && std::isfinite(radius[i])) largest = std::max(largest, radius[i]);
  // Without dynamic bounded bodies no body is large: the grid then holds every bounded one.
  return largest > 0.0 ? largest : std::numeric_limits<double>::infinity();
}

using Cell = std::array<std::int64_t, 3>;  // (z, y, x): lexicographic order is the sweep order

struct Item {
  Cell cell;
  int body;
};

// Copy of what the pair test needs, stored in cell order so that neighbour runs are contiguous.
struct Ball {
  Vec3 centre;
  double radius;
  int body;
  bool dynamic;
};

std::int64_t cell_coordinate(double x, double inverse_cell) {
  double q = std::floor(x * inverse_cell);
  if (!(q > -kCellCoordinateLimit)) q = -kCellCoordinateLimit;
  if (q > kCellCoordinateLimit) q = kCellCoordinateLimit;
  return static_cast<std::int64_t>(q);
}

// Sorts items, given in ascending body order, by (cell, body). Cell coordinates relative to
// the lowest occupied cell pack into one 64-bit key whenever their bit widths sum to at most 64
// (e.g. spans below 2^21 cells on every axis), and a stable LSD radix sort on that key is
// linear; bodies spread wider than that fall back to a comparison sort. The clamp on cell
// coordinates keeps every span below 2^63.
void sort_by_cell(std::vector<Item>& items) {
  if (items.empty()) return;
  Cell low = items[0].cell;
  Cell high = items[0].cell;
  for (const Item& item : items)
    for (int d = 0; d < 3; ++d) {
      low[d] = std::min(low[d], item.cell[d]);
      high[d] = std::max(high[d], item.cell[d]);
    }
  std::array<int, 3> bits{};
  for (int d = 0; d < 3; ++d)
    bits[d] = static_cast<int>(std::bit_width(static_cast<std::uint64_t>(high[d] - low[d])));
  const int key_bits = bits[0] + bits[1] + bits[2];
  if (key_bits > 64) {
    std::stable_sort(items.begin(), items.end(),
                     [](const Item& a, const Item& b) { return a.cell < b.cell; });
    return;
  }
  struct Keyed {
    std::uint64_t key;
    Item item;
  };
  const std::size_t count = items.size();
  std::vector<Keyed> from(count), to(count);
  for (std::size_t k = 0; k < count; ++k) {
    const Cell& c = items[k].cell;
    std::uint64_t key = 0;
    for (int d = 0; d < 3; ++d)
      key = bits[d] == 0 ? key : (key << bits[d]) | static_cast<std::uint64_t>(c[d] - low[d]);
    from[k] = Keyed{key, items[k]};
  }
  constexpr int kDigitBits = 11;
  for (int shift = 0; shift < key_bits; shift += kDigitBits) {
    std::array<std::size_t, (1 << kDigitBits) + 1> start{};
    for (const Keyed& k : from) ++start[((k.key >> shift) & ((1 << kDigitBits) - 1)) + 1];
    for (std::size_t d = 0; d < (1 << kDigitBits); ++d) start[d + 1] += start[d];
    for (const Keyed& k : from) to[start[(k.key >> shift) & ((1 << kDigitBits) - 1)]++] = k;
    from.swap(to);
  }
  for (std::size_t k = 0; k < count; ++k) items[k] = from[k].item;
}

}  // namespace

std::vector<std::pair<int, int>> broad_phase_pairs(const World& world,
                                                   const CollisionOptions& options) {
  const int n = static_cast<int>(world.bodies.size());
  const bool planar = world.is_planar();
  const double margin = options.margin;
  const bool parallel = n >= kParallelBodies;

  std::vector<Vec3> centre(n);
  std::vector<double> radius(n);
  std::vector<char> dynamic(n);
#pragma omp parallel for schedule(static) if (parallel)
  for (int i = 0; i < n; ++i) {
    const RigidBody& b = world.bodies[i];
    centre[i] = b.position + b.orientation * b.shape.offset;
    radius[i] = bounding_radius(b.shape.geometry);
    dynamic[i] = b.is_dynamic();
  }
  // Bodies kept off the grid (ascending index): unbounded shapes (half-spaces) and large
  // non-dynamic bodies (a blade, a wall box among grains), which would otherwise set the cell
  // size for every grain; both are tested against every body instead.
  const double large = kLargeBodyFactor * largest_dynamic_radius(radius, dynamic);
  std::vector<int> unbounded;
  std::vector<char> gridded(n);
  double max_radius = 0.0;
  for (int i = 0; i < n; ++i) {
    gridded[i] = std::isfinite(radius[i]) && (dynamic[i] != 0 || !(radius[i] > large));
    if (gridded[i]) {
      max_radius = std::max(max_radius, radius[i]);
    } else {
      unbounded.push_back(i);
    }
  }

  // With the default cell the reach is 1. Points without margin (a zero default) only meet
  // partners with the same centre, which any positive cell size finds.
  const double diameter = 2.0 * max_radius + margin;
  double cell_size = options.cell_size > 0.0 ? options.cell_size : diameter;
  if (!(cell_size > 0.0)) cell_size = 1.0;
  const int reach = std::max(1, static_cast<int>(std::ceil(diameter / cell_size)));
  const double inverse_cell = 1.0 / cell_size;

  std::vector<Item> items;
  items.reserve(n - unbounded.size());
  for (int i = 0; i < n; ++i)
    if (gridded[i]) items.push_back(Item{Cell{}, i});
  const int bounded = static_cast<int>(items.size());
#pragma omp parallel for schedule(static) if (parallel)
  for (int k = 0; k < bounded; ++k) {
    const Vec3& c = centre[items[k].body];
    items[k].cell = {planar ? 0 : cell_coordinate(c.z(), inverse_cell),
                     cell_coordinate(c.y(), inverse_cell), cell_coordinate(c.x(), inverse_cell)};
  }
  sort_by_cell(items);

  // Occupied cells in sweep order, each with its run [cell_start[c], cell_start[c + 1]).
  std::vector<Cell> cells;
  std::vector<int> cell_start;
  for (int k = 0; k < bounded; ++k) {
    if (k == 0 || items[k].cell != items[k - 1].cell) {
      cells.push_back(items[k].cell);
      cell_start.push_back(k);
    }
  }
  cell_start.push_back(bounded);
  const int cell_count = static_cast<int>(cells.size());
  std::vector<Ball> sorted(bounded);
#pragma omp parallel for schedule(static) if (parallel)
  for (int k = 0; k < bounded; ++k) {
    const int b = items[k].body;
    sorted[k] = Ball{centre[b], radius[b], b, dynamic[b] != 0};
  }

  // Half stencil: the cell itself (pairs inside it), the cells after it in its own row, and
  // the full rows (dz, dy) > (0, 0). Each neighbouring pair of cells is visited once.
  std::vector<std::array<int, 2>> rows;
  for (int dz = planar ? 0 : -reach; dz <= (planar ? 0 : reach); ++dz)
    for (int dy = -reach; dy <= reach; ++dy)
      if (std::make_pair(dz, dy) > std::make_pair(0, 0)) rows.push_back({dz, dy});

  auto test = [&](int i, int j, std::vector<std::pair<int, int>>& out) {
    const Ball& p = sorted[i];
    const Ball& q = sorted[j];
    const double limit = p.radius + q.radius + margin;
    if ((p.centre - q.centre).squaredNorm() <= limit * limit && (p.dynamic || q.dynamic))
      out.emplace_back(std::min(p.body, q.body), std::max(p.body, q.body));
  };

  const int threads = parallel ? omp_get_max_threads() : 1;
  std::vector<std::vector<std::pair<int, int>>> found(threads);
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    const int count = omp_get_num_threads();
    const int first = static_cast<int>(static_cast<long long>(cell_count) * t / count);
    const int last = static_cast<int>(static_cast<long long>(cell_count) * (t + 1) / count);
    std::vector<std::pair<int, int>>& out = found[t];
    // Run pointers into `cells` for each row: [lo, hi) covers x in [cx - reach, cx + reach]
    // of row (cz + dz, cy + dy). Both only move forward while the sweep advances.
    std::vector<int> lo(rows.size()), hi(rows.size());
    for (std::size_t r = 0; r < rows.size(); ++r) {
      if (first >= last) break;
      const Cell& c = cells[first];
      const Cell start{c[0] + rows[r][0], c[1] + rows[r][1], c[2] - reach};
      lo[r] = hi[r] =
          static_cast<int>(std::lower_bound(cells.begin(), cells.end(), start) - cells.begin());
    }
    for (int c = first; c < last; ++c) {
      const Cell& here = cells[c];
      const int begin = cell_start[c];
      const int end = cell_start[c + 1];
      // Own cell and the rest of its row, x in (cx, cx + reach].
      for (int i = begin; i < end; ++i)
        for (int j = i + 1; j < end; ++j) test(i, j, out);
      const Cell row_end{here[0], here[1], here[2] + reach};
      for (int d = c + 1; d < cell_count && cells[d] <= row_end; ++d)
        for (int i = begin; i < end; ++i)
          for (int j = cell_start[d]; j < cell_start[d + 1]; ++j) test(i, j, out);
      for (std::size_t r = 0; r < rows.size(); ++r) {
        const Cell from{here[0] + rows[r][0], here[1] + rows[r][1], here[2] - reach};
        const Cell to{here[0] + rows[r][0], here[1] + rows[r][1], here[2] + reach};
        while (lo[r] < cell_count && cells[lo[r]] < from) ++lo[r];
        hi[r] = std::max(hi[r], lo[r]);
        while (hi[r] < cell_count && cells[hi[r]] <= to) ++hi[r];
        for (int i = begin; i < end; ++i)
          for (int j = cell_start[lo[r]]; j < cell_start[hi[r]]; ++j) test(i, j, out);
      }
    }
  }

  // Partners of each body a: grid partners (bucketed by a, then sorted) and unbounded bodies.
  std::vector<int> grid_start(n + 1, 0);
  for (const auto& block : found)
    for (const auto& [a, b] : block) ++grid_start[a + 1];
  for (int a = 0; a < n; ++a) grid_start[a + 1] += grid_start[a];
  std::vector<int> grid_partner(grid_start[n]);
  {
    std::vector<int> fill(grid_start.begin(), grid_start.end() - 1);
    for (const auto& block : found)
      for (const auto& [a, b] : block) grid_partner[fill[a]++] = b;
  }
  found.clear();

  // The same bounding-sphere test as the grid's, always true for an unbounded shape.
  auto close = [&](int a, int b) {
    if (!std::isfinite(radius[a]) || !std::isfinite(radius[b])) return true;
    const double limit = radius[a] + radius[b] + margin;
    return (centre[a] - centre[b]).squaredNorm() <= limit * limit;
  };
  auto unbounded_partners = [&](int a, auto&& emit) {
    if (gridded[a]) {
      for (auto it = std::upper_bound(unbounded.begin(), unbounded.end(), a); it != unbounded.end();
           ++it)
        if ((dynamic[a] || dynamic[*it]) && close(a, *it)) emit(*it);
    } else {
      for (int b = a + 1; b < n; ++b)
        if ((dynamic[a] || dynamic[b]) && close(a, b)) emit(b);
    }
  };
  std::vector<long long> pair_start(n + 1, 0);
#pragma omp parallel for schedule(dynamic, 256) if (parallel)
  for (int a = 0; a < n; ++a) {
    std::sort(grid_partner.begin() + grid_start[a], grid_partner.begin() + grid_start[a + 1]);
    long long count = grid_start[a + 1] - grid_start[a];
    unbounded_partners(a, [&](int) { ++count; });
    pair_start[a + 1] = count;
  }
  for (int a = 0; a < n; ++a) pair_start[a + 1] += pair_start[a];

  std::vector<std::pair<int, int>> pairs(pair_start[n]);
#pragma omp parallel for schedule(dynamic, 256) if (parallel)
  for (int a = 0; a < n; ++a) {
    auto out = pairs.begin() + pair_start[a];
    for (int g = grid_start[a]; g < grid_start[a + 1]; ++g) *out++ = {a, grid_partner[g]};
    unbounded_partners(a, [&](int b) { *out++ = {a, b}; });
    // Grid and unbounded partners are each sorted; one merge orders the whole run.
    std::inplace_merge(pairs.begin() + pair_start[a],
                       pairs.begin() + pair_start[a] + (grid_start[a + 1] - grid_start[a]), out);
  }
  return pairs;
}

}  // namespace moreau
