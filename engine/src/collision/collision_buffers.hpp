#pragma once
// Working arrays of the broad and narrow phases (engine-internal), kept by a CollisionDetector
// between calls. At a million bodies each array is tens of megabytes: allocated afresh per
// call, every one is a new mapping whose pages the kernel faults in and zeroes (a sixth of a
// call's time), while kept ones are already mapped and only overwritten.
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "moreau/collision/collision_detector.hpp"

namespace moreau::collision_detail {

using Cell = std::array<std::int64_t, 3>;  // (z, y, x)

template <class Key>
struct Keyed {
  Key key;
  int body;
};

// Copy of what the pair test needs, stored in cell order so that neighbour runs are contiguous.
struct Ball {
  Vec3 centre;
  double radius;
  int body;
  bool dynamic;
};

// The arrays of the sweep that depend on the key type.
template <class Key>
struct KeyBuffers {
  std::vector<Keyed<Key>> items, scratch;  // (key, body), radix-sorted
  std::vector<Key> cells;                  // occupied cells in sweep order
};

struct BroadPhaseBuffers {
  // Per body: shape centre, bounding radius (infinite for a half-space), motion, on the grid.
  std::vector<Vec3> centre;
  std::vector<double> radius;
  std::vector<char> dynamic;
  std::vector<char> gridded;
  // Bodies kept off the grid (ascending) and, aligned with them, half-space normals (zero
  // for other shapes).
  std::vector<int> unbounded;
  std::vector<Vec3> plane_normal;
  std::vector<int> item_body;  // gridded bodies, ascending
  std::vector<Cell> item_cell;
  KeyBuffers<std::uint64_t> keys;
  std::vector<int> cell_start;
  std::vector<Ball> sorted;
  std::vector<std::vector<std::pair<int, int>>> found;  // per thread
  std::vector<int> grid_start, grid_partner, fill;
  std::vector<long long> pair_start;
  std::vector<std::pair<int, int>> pairs;  // the result
};

struct SphereEntry {
  Vec3 centre;
  double radius;  // -1 for a body that is not a sphere
};

struct DetectorBuffers {
  BroadPhaseBuffers broad;
  std::vector<SphereEntry> spheres;
  std::vector<std::vector<Contact>> found;  // per thread but the first, which is the output
};

// broad_phase_pairs into buffers.pairs, reusing every array of `buffers`.
void broad_phase_pairs(const World& world, const CollisionOptions& options,
                       BroadPhaseBuffers& buffers);

}  // namespace moreau::collision_detail
