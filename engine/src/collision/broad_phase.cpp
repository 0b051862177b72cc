// Broad phase on a uniform grid. Each bounded body sits in the one cell that holds its shape
// centre, and the cell is at least as wide as the largest bounding diameter plus the margin, so
// every partner lies in the block of cells within `reach` (1 by default) around it. Each cell
// gets one integer key, its (z, y, x) coordinates packed as bit fields, and the bodies are
// sorted by key with a radix sort; a row of neighbour cells along x is then one contiguous key
// range and one contiguous run of the sorted array, found by pointers that only move forward as
// the sweep advances. The sweep visits each pair of neighbouring cells once, with sequential
// memory access; the pairs are then bucketed by their first body, which gives the (a, b)-sorted
// list for any thread count.
#include <omp.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <utility>
#include <variant>
#include <vector>

#include "collision_buffers.hpp"
#include "moreau/collision/collision_detector.hpp"
#include "moreau/core/error.hpp"

namespace moreau {
namespace collision_detail {
namespace {

// Cell coordinates are clamped here before conversion to integers, so that bodies arbitrarily
// far away (or a NaN) still get a valid cell; clamped bodies share border cells, which costs
// time but never misses a pair, since every candidate is checked on its bounding spheres. The
// limit (2^40) keeps the three packed coordinates of a key within 128 bits for any reach below
// 2^40.
constexpr double kCellCoordinateLimit = 1099511627776.0;

// Below this many bodies a parallel region costs more than it saves.
constexpr int kParallelBodies = 4096;

// A non-dynamic body whose bounding radius exceeds this many times the largest dynamic one
// stays off the grid: the cell is sized for the grains, not for one blade or wall.
constexpr double kLargeBodyFactor = 4.0;
// The most cells a body's neighbour search reaches along an axis: its stencil has
// (2 reach + 1)^3 cells, 4,913 at 8, so that a cell size far below the bodies cannot make the
// broad phase's work and key arrays grow as (diameter / cell)^3 until memory runs out.
constexpr double kMaxCellReach = 8.0;

double largest_dynamic_radius(const std::vector<Bound>& bound, const std::vector<char>& dynamic) {
  double largest = 0.0;
  for (std::size_t i = 0; i < bound.size(); ++i)
    if (dynamic[i] && std::isfinite(bound[i].radius)) largest = std::max(largest, bound[i].radius);
  // Without dynamic bounded bodies no body is large: the grid then holds every bounded one.
  return largest > 0.0 ? largest : std::numeric_limits<double>::infinity();
}

// Bounding sphere, motion and sphere shape of every body.
void body_bounds(const World& world, bool parallel, BroadPhaseBuffers& buffers) {
  const int n = static_cast<int>(world.bodies.size());
  buffers.bound.resize(n);
  buffers.dynamic.resize(n);
  buffers.sphere.resize(n);
  int others = 0;
#pragma omp parallel for schedule(static) reduction(+ : others) if (parallel)
  for (int i = 0; i < n; ++i) {
    const RigidBody& b = world.bodies[i];
    const Mat3 rotation = b.orientation.toRotationMatrix();
    buffers.bound[i] =
        Bound{b.position + rotation * b.shape.offset, bounding_radius(b.shape.geometry)};
    buffers.dynamic[i] = b.is_dynamic();
    buffers.sphere[i] = std::holds_alternative<Sphere>(b.shape.geometry);
    others += buffers.sphere[i] ? 0 : 1;
  }
  buffers.all_spheres = others == 0;
}

// Relative slack of the half-space test below, about a thousand units in the last place of the
// coordinates: the narrow phase rotates the plane's normal with a rotation matrix instead of the
// quaternion used here and computes the height in another order, which differs in the last
// bits, and must never find a contact the test dropped.
constexpr double kPlaneSlack = 1e-13;

// A body whose bounding sphere lies beyond the margin above a half-space's surface has no
// contact with it (every point of the shape is at least that far from the plane): such pairs
// are dropped here rather than by the narrow phase, which saves the DEM and the detector one
// pair per body and wall.
bool near_plane(const BroadPhaseBuffers& buffers, int plane, int body, double margin) {
  if (!std::isfinite(buffers.bound[body].radius)) return true;
  const auto slot = std::lower_bound(buffers.unbounded.begin(), buffers.unbounded.end(), plane);
  const Vec3& m = buffers.plane_normal[slot - buffers.unbounded.begin()];
  if (m.isZero()) return true;
  const Vec3& p = buffers.bound[plane].centre;
  const Vec3& c = buffers.bound[body].centre;
  const double height = m.dot(c - p);
  const double reach = buffers.bound[body].radius + margin;
  const double scale = p.cwiseAbs().maxCoeff() + c.cwiseAbs().maxCoeff() + reach;
  return height <= reach + kPlaneSlack * scale;
}

std::int64_t cell_coordinate(double x, double inverse_cell) {
  double q = std::floor(x * inverse_cell);
  if (!(q > -kCellCoordinateLimit)) q = -kCellCoordinateLimit;
  if (q > kCellCoordinateLimit) q = kCellCoordinateLimit;
  return static_cast<std::int64_t>(q);
}

// Cell keys: coordinates relative to the lowest occupied cell, shifted by `reach` so that every
// neighbour of an occupied cell has non-negative coordinates below 2^bits, packed as
// (z, y, x) bit fields. Key order is then the lexicographic (z, y, x) order, and the cells of
// one row (z, y) with x in [x0, x1] are the keys in [key(z, y, x0), key(z, y, x1)].
struct KeyLayout {
  Cell low{};
  std::array<int, 3> bits{};
  std::int64_t reach = 1;
  int total_bits() const { return bits[0] + bits[1] + bits[2]; }

  template <class Key>
  Key key(const Cell& c) const {
    Key key = 0;
    for (int d = 0; d < 3; ++d)
      if (bits[d] > 0) key = (key << bits[d]) | static_cast<Key>(c[d] - low[d] + reach);
    return key;
  }
  // Key difference of a move by (dz, dy, dx) cells, modulo 2^(key width): added to a key whose
  // destination is a valid cell, unsigned wrap-around gives the destination's key.
  template <class Key>
  Key offset(std::int64_t dz, std::int64_t dy, std::int64_t dx) const {
    const Key unit_y = static_cast<Key>(1) << bits[2];
    const Key unit_z = bits[0] > 0 ? static_cast<Key>(1) << (bits[1] + bits[2]) : 0;
    return static_cast<Key>(dz) * unit_z + static_cast<Key>(dy) * unit_y + static_cast<Key>(dx);
  }
};

// In a planar world z takes no bits; otherwise every axis keeps room for its neighbours even
// where all bodies share one layer, so that the rows of the stencil have distinct keys.
KeyLayout key_layout(const std::vector<Cell>& cells, int reach, bool planar) {
  KeyLayout layout;
  layout.reach = reach;
  if (cells.empty()) return layout;
  Cell high = cells[0];
  layout.low = cells[0];
  for (const Cell& c : cells)
    for (int d = 0; d < 3; ++d) {
      layout.low[d] = std::min(layout.low[d], c[d]);
      high[d] = std::max(high[d], c[d]);
    }
  for (int d = planar ? 1 : 0; d < 3; ++d)
    layout.bits[d] = static_cast<int>(
        std::bit_width(static_cast<std::uint64_t>(high[d] - layout.low[d] + 2 * reach)));
  return layout;
}

// Stable LSD radix sort of (key, body) records by key over its `key_bits` low bits: linear in
// the number of bodies, and bodies of one cell stay in ascending order.
template <class Key>
void radix_sort(std::vector<Keyed<Key>>& items, std::vector<Keyed<Key>>& to, int key_bits) {
  constexpr int kDigitBits = 11;
  constexpr std::size_t kDigits = std::size_t{1} << kDigitBits;
  to.resize(items.size());
  for (int shift = 0; shift < key_bits; shift += kDigitBits) {
    std::vector<std::size_t> start(kDigits + 1, 0);
    auto digit = [shift](const Keyed<Key>& k) {
      return static_cast<std::size_t>((k.key >> shift) & static_cast<Key>(kDigits - 1));
    };
    for (const Keyed<Key>& k : items) ++start[digit(k) + 1];
    for (std::size_t d = 0; d < kDigits; ++d) start[d + 1] += start[d];
    for (const Keyed<Key>& k : items) to[start[digit(k)]++] = k;
    items.swap(to);
  }
}

// The gridded bodies sorted by cell: keys.cells lists the occupied cells in sweep order,
// cell c holding the run [cell_start[c], cell_start[c + 1]) of buffers.sorted.
template <class Key>
void sort_into_cells(const KeyLayout& layout, bool parallel, KeyBuffers<Key>& keys,
                     BroadPhaseBuffers& buffers) {
  const std::vector<Cell>& item_cell = buffers.item_cell;
  const std::vector<int>& item_body = buffers.item_body;
  const int bounded = static_cast<int>(item_body.size());
  std::vector<Keyed<Key>>& items = keys.items;
  items.resize(bounded);
#pragma omp parallel for schedule(static) if (parallel)
  for (int k = 0; k < bounded; ++k)
    items[k] = Keyed<Key>{layout.key<Key>(item_cell[k]), item_body[k]};
  radix_sort(items, keys.scratch, layout.total_bits());

  std::vector<Key>& cells = keys.cells;
  std::vector<int>& cell_start = buffers.cell_start;
  cells.clear();
  cell_start.clear();
  for (int k = 0; k < bounded; ++k) {
    if (k == 0 || items[k].key != items[k - 1].key) {
      cells.push_back(items[k].key);
      cell_start.push_back(k);
    }
  }
  cell_start.push_back(bounded);
  SortedBalls& sorted = buffers.sorted;
  for (std::vector<double>* v : {&sorted.x, &sorted.y, &sorted.z, &sorted.radius})
    v->resize(bounded);
  sorted.body.resize(bounded);
  sorted.dynamic.resize(bounded);
#pragma omp parallel for schedule(static) if (parallel)
  for (int k = 0; k < bounded; ++k) {
    const int b = items[k].body;
    const Bound& bound = buffers.bound[b];
    sorted.x[k] = bound.centre.x();
    sorted.y[k] = bound.centre.y();
    sorted.z[k] = bound.centre.z();
    sorted.radius[k] = bound.radius;
    sorted.body[k] = b;
    sorted.dynamic[k] = buffers.dynamic[b];
  }
}

// The balls j in [from, to) whose bounding spheres (grown by the margin) meet ball i's, into
// `hits`; returns their count. Every j is written and only a hit advances the count: about one
// test in ten hits, at no pattern a branch predictor could learn, and a branch per test would
// cost a misprediction per hit.
int bounding_hits(const SortedBalls& s, int i, int from, int to, double margin, int* hits) {
  const double xi = s.x[i], yi = s.y[i], zi = s.z[i], ri = s.radius[i];
  const double* x = s.x.data();
  const double* y = s.y.data();
  const double* z = s.z.data();
  const double* r = s.radius.data();
  int count = 0;
  for (int j = from; j < to; ++j) {
    const double dx = xi - x[j], dy = yi - y[j], dz = zi - z[j];
    const double limit = ri + r[j] + margin;
    hits[count] = j;
    count += dx * dx + dy * dy + dz * dz <= limit * limit;
  }
  return count;
}

// Candidate pairs of the gridded bodies, found by the sweep over the sorted cells; each
// thread puts its pairs (a, b), a < b, into its own vector of buffers.found.
template <class Key>
void grid_pairs(const KeyLayout& layout, bool planar, double margin, bool parallel,
                KeyBuffers<Key>& keys, BroadPhaseBuffers& buffers) {
  sort_into_cells(layout, parallel, keys, buffers);
  const std::vector<Key>& cells = keys.cells;
  const std::vector<int>& cell_start = buffers.cell_start;
  const SortedBalls& sorted = buffers.sorted;
  const int cell_count = static_cast<int>(cells.size());

  // Half stencil: the cell itself (pairs inside it), the cells after it in its own row, and
  // the full rows (dz, dy) > (0, 0), each as its key offset from the cell's own row.
  const std::int64_t reach = layout.reach;
  std::vector<Key> rows;
  for (std::int64_t dz = planar ? 0 : -reach; dz <= (planar ? 0 : reach); ++dz)
    for (std::int64_t dy = -reach; dy <= reach; ++dy)
      if (std::make_pair(dz, dy) > std::make_pair(std::int64_t{0}, std::int64_t{0}))
        rows.push_back(layout.offset<Key>(dz, dy, 0));
  const Key reach_key = static_cast<Key>(reach);

  const int threads = parallel ? omp_get_max_threads() : 1;
  std::vector<std::vector<std::pair<int, int>>>& found = buffers.found;
  if (static_cast<int>(found.size()) < threads) found.resize(threads);
  if (static_cast<int>(buffers.hits.size()) < threads) buffers.hits.resize(threads);
  for (auto& block : found) block.clear();
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    const int count = omp_get_num_threads();
    const int first = static_cast<int>(static_cast<long long>(cell_count) * t / count);
    const int last = static_cast<int>(static_cast<long long>(cell_count) * (t + 1) / count);
    std::vector<std::pair<int, int>>& out = found[t];
    std::vector<int>& hits = buffers.hits[t];
    // Room for a few partners per body up front (untouched capacity costs nothing).
    out.reserve(4 * static_cast<std::size_t>(cell_start[last] - cell_start[first]));
    auto emit_hits = [&](int i, int from, int to) {
      if (static_cast<int>(hits.size()) < to - from) hits.resize(to - from);
      const int found_here = bounding_hits(sorted, i, from, to, margin, hits.data());
      for (int h = 0; h < found_here; ++h) {
        const int j = hits[h];
        if (sorted.dynamic[i] || sorted.dynamic[j])
          out.emplace_back(std::min(sorted.body[i], sorted.body[j]),
                           std::max(sorted.body[i], sorted.body[j]));
      }
    };
    // Run pointers into `cells` for each row: [lo, hi) covers x in [cx - reach, cx + reach]
    // of row (cz + dz, cy + dy). Both only move forward while the sweep advances.
    std::vector<int> lo(rows.size()), hi(rows.size());
    for (std::size_t r = 0; r < rows.size() && first < last; ++r) {
      const Key start = cells[first] + rows[r] - reach_key;
      lo[r] = hi[r] =
          static_cast<int>(std::lower_bound(cells.begin(), cells.end(), start) - cells.begin());
    }
    for (int c = first; c < last; ++c) {
      const Key here = cells[c];
      const int begin = cell_start[c];
      const int end = cell_start[c + 1];
      // The own cell and the rest of its row, x in (cx, cx + reach], are one run.
      int row_end = c + 1;
      while (row_end < cell_count && cells[row_end] <= here + reach_key) ++row_end;
      for (int i = begin; i < end; ++i) emit_hits(i, i + 1, cell_start[row_end]);
      for (std::size_t r = 0; r < rows.size(); ++r) {
        const Key from = here + rows[r] - reach_key;
        const Key to = here + rows[r] + reach_key;
        while (lo[r] < cell_count && cells[lo[r]] < from) ++lo[r];
        hi[r] = std::max(hi[r], lo[r]);
        while (hi[r] < cell_count && cells[hi[r]] <= to) ++hi[r];
        for (int i = begin; i < end; ++i) emit_hits(i, cell_start[lo[r]], cell_start[hi[r]]);
      }
    }
  }
}

// The pairs in (a, b) order, into buffers.pairs: per body a, its grid partners (bucketed by
// a, then sorted) merged with the off-grid bodies it meets.
void canonical_pairs(double margin, bool parallel, BroadPhaseBuffers& buffers) {
  const std::vector<char>& gridded = buffers.gridded;
  const std::vector<int>& unbounded = buffers.unbounded;
  const int n = static_cast<int>(gridded.size());
  std::vector<int>& grid_start = buffers.grid_start;
  grid_start.assign(n + 1, 0);
  for (const auto& block : buffers.found)
    for (const auto& [a, b] : block) ++grid_start[a + 1];
  for (int a = 0; a < n; ++a) grid_start[a + 1] += grid_start[a];
  std::vector<int>& grid_partner = buffers.grid_partner;
  grid_partner.resize(grid_start[n]);
  {
    std::vector<int>& fill = buffers.fill;
    fill.assign(grid_start.begin(), grid_start.end() - 1);
    for (const auto& block : buffers.found)
      for (const auto& [a, b] : block) grid_partner[fill[a]++] = b;
  }

  const std::vector<Bound>& bound = buffers.bound;
  const std::vector<char>& dynamic = buffers.dynamic;
  // The same bounding-sphere test as the grid's; for a half-space, the bounding sphere of the
  // other body against its plane.
  auto close = [&](int a, int b) {
    if (!std::isfinite(bound[a].radius)) return near_plane(buffers, a, b, margin);
    if (!std::isfinite(bound[b].radius)) return near_plane(buffers, b, a, margin);
    const double limit = bound[a].radius + bound[b].radius + margin;
    return (bound[a].centre - bound[b].centre).squaredNorm() <= limit * limit;
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
  std::vector<long long>& pair_start = buffers.pair_start;
  pair_start.assign(n + 1, 0);
#pragma omp parallel for schedule(dynamic, 256) if (parallel)
  for (int a = 0; a < n; ++a) {
    std::sort(grid_partner.begin() + grid_start[a], grid_partner.begin() + grid_start[a + 1]);
    long long count = grid_start[a + 1] - grid_start[a];
    unbounded_partners(a, [&](int) { ++count; });
    pair_start[a + 1] = count;
  }
  for (int a = 0; a < n; ++a) pair_start[a + 1] += pair_start[a];

  std::vector<std::pair<int, int>>& pairs = buffers.pairs;
  pairs.resize(pair_start[n]);
#pragma omp parallel for schedule(dynamic, 256) if (parallel)
  for (int a = 0; a < n; ++a) {
    auto out = pairs.begin() + pair_start[a];
    for (int g = grid_start[a]; g < grid_start[a + 1]; ++g) *out++ = {a, grid_partner[g]};
    unbounded_partners(a, [&](int b) { *out++ = {a, b}; });
    // Grid and unbounded partners are each sorted; one merge orders the whole run.
    std::inplace_merge(pairs.begin() + pair_start[a],
                       pairs.begin() + pair_start[a] + (grid_start[a + 1] - grid_start[a]), out);
  }
}

// 128-bit keys for worlds whose occupied cells span more than 64 bits of coordinates (bodies
// flung far away); __extension__ keeps -Wpedantic quiet about the GCC/Clang type.
__extension__ using WideKey = unsigned __int128;

}  // namespace

void broad_phase_pairs(const World& world, const CollisionOptions& options,
                       BroadPhaseBuffers& buffers) {
  const int n = static_cast<int>(world.bodies.size());
  const bool planar = world.is_planar();
  const double margin = options.margin;
  const bool parallel = n >= kParallelBodies;

  body_bounds(world, parallel, buffers);
  const std::vector<Bound>& bound = buffers.bound;
  // Bodies kept off the grid (ascending index): unbounded shapes (half-spaces) and large
  // non-dynamic bodies (a blade, a wall box among grains), which would otherwise set the cell
  // size for every grain; both are tested against every body instead.
  const double large = kLargeBodyFactor * largest_dynamic_radius(bound, buffers.dynamic);
  std::vector<int>& unbounded = buffers.unbounded;
  std::vector<int>& item_body = buffers.item_body;
  std::vector<char>& gridded = buffers.gridded;
  unbounded.clear();
  item_body.clear();
  buffers.plane_normal.clear();
  gridded.resize(n);
  double max_radius = 0.0;
  for (int i = 0; i < n; ++i) {
    const double radius = bound[i].radius;
    gridded[i] = std::isfinite(radius) && (buffers.dynamic[i] != 0 || !(radius > large));
    if (gridded[i]) {
      max_radius = std::max(max_radius, radius);
      item_body.push_back(i);
    } else {
      unbounded.push_back(i);
      const RigidBody& b = world.bodies[i];
      const HalfSpace* plane = std::get_if<HalfSpace>(&b.shape.geometry);
      buffers.plane_normal.push_back(plane ? Vec3(b.orientation * plane->normal) : Vec3::Zero());
    }
  }

  // With the default cell the reach is 1. Points without margin (a zero default) only meet
  // partners with the same centre, which any positive cell size finds.
  const double diameter = 2.0 * max_radius + margin;
  double cell_size = options.cell_size > 0.0 ? options.cell_size : diameter;
  if (!(cell_size > 0.0)) cell_size = 1.0;
  const double reach_cells = std::ceil(diameter / cell_size);
  if (reach_cells > kMaxCellReach) {
    std::ostringstream message;
    message << "collision.cell_size: " << cell_size << " m is below 1/" << kMaxCellReach
            << " of the largest gridded body's diameter plus the margin (" << diameter
            << " m): each body's neighbour search would span " << reach_cells
            << " cells per axis; give at least " << diameter / kMaxCellReach
            << " m, or 0 for the automatic size";
    throw InputError(message.str());
  }
  const int reach = static_cast<int>(std::max(reach_cells, 1.0));
  const double inverse_cell = 1.0 / cell_size;

  const int bounded = static_cast<int>(item_body.size());
  std::vector<Cell>& item_cell = buffers.item_cell;
  item_cell.resize(bounded);
#pragma omp parallel for schedule(static) if (parallel)
  for (int k = 0; k < bounded; ++k) {
    const Vec3& c = bound[item_body[k]].centre;
    item_cell[k] = {planar ? 0 : cell_coordinate(c.z(), inverse_cell),
                    cell_coordinate(c.y(), inverse_cell), cell_coordinate(c.x(), inverse_cell)};
  }
  const KeyLayout layout = key_layout(item_cell, reach, planar);
  if (layout.total_bits() <= 64) {
    grid_pairs<std::uint64_t>(layout, planar, margin, parallel, buffers.keys, buffers);
  } else {
    KeyBuffers<WideKey> wide;
    grid_pairs<WideKey>(layout, planar, margin, parallel, wide, buffers);
  }
  canonical_pairs(margin, parallel, buffers);
}

}  // namespace collision_detail

std::vector<std::pair<int, int>> broad_phase_pairs(const World& world,
                                                   const CollisionOptions& options) {
  collision_detail::BroadPhaseBuffers buffers;
  collision_detail::broad_phase_pairs(world, options, buffers);
  return std::move(buffers.pairs);
}

}  // namespace moreau
