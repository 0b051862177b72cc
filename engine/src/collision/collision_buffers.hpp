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

// Copy of what the pair test needs, in cell order so that neighbour runs are contiguous, one
// array per coordinate so that the test over a run reads each as a stream.
struct SortedBalls {
  std::vector<double> x, y, z, radius;
  std::vector<int> body;
  std::vector<char> dynamic;
};

// The arrays of the sweep that depend on the key type.
template <class Key>
struct KeyBuffers {
  std::vector<Keyed<Key>> items, scratch;  // (key, body), radix-sorted
  std::vector<Key> cells;                  // occupied cells in sweep order
};

// A body's bounding sphere: its shape centre and bounding radius (infinite for a half-space).
struct Bound {
  Vec3 centre;
  double radius;
};

struct BroadPhaseBuffers {
  // Per body: bounding sphere, motion, sphere shape, on the grid. The centre is the one the
  // narrow phase's shape pose computes (rotation matrix, then offset), bit for bit, so that the
  // narrow phase takes a sphere pair's centres and radii from here: 32 bytes per body read in
  // one pass over the body records, where every record spans several cache lines.
  std::vector<Bound> bound;
  std::vector<char> dynamic;
  std::vector<char> sphere;
  bool all_spheres = false;
  std::vector<char> gridded;
  // Bodies kept off the grid (ascending) and, aligned with them, half-space normals (zero
  // for other shapes).
  std::vector<int> unbounded;
  std::vector<Vec3> plane_normal;
  std::vector<int> item_body;  // gridded bodies, ascending
  std::vector<Cell> item_cell;
  KeyBuffers<std::uint64_t> keys;
  std::vector<int> cell_start;
  SortedBalls sorted;
  std::vector<std::vector<std::pair<int, int>>> found;  // per thread
  std::vector<std::vector<int>> hits;                   // per thread, one run's hits
  std::vector<int> grid_start, grid_partner, fill;
  std::vector<long long> pair_start;
  std::vector<std::pair<int, int>> pairs;  // the result
};

struct DetectorBuffers {
  BroadPhaseBuffers broad;
  std::vector<std::vector<Contact>> found;  // per thread but the first, which is the output
};

// broad_phase_pairs into buffers.pairs, reusing every array of `buffers`.
void broad_phase_pairs(const World& world, const CollisionOptions& options,
                       BroadPhaseBuffers& buffers);

}  // namespace moreau::collision_detail
