#include "sphere_placement.hpp"

#include <cmath>
#include <cstdint>
#include <string>
#include <unordered_map>

#include "moreau/core/error.hpp"

namespace moreau::detail {
namespace {

// Cell grid over sphere centres for the overlap test of rejection sampling: with cells of
// the largest diameter, an overlapping sphere lies in one of the 3^d neighbouring cells.
class SphereHash {
 public:
  explicit SphereHash(double cell) : cell_(cell) {}
  bool overlaps(const Vec3& centre, double radius, const std::vector<Vec3>& centres,
                const std::vector<double>& radii) const {
    const std::array<long, 3> c = cell_of(centre);
    for (long dx = -1; dx <= 1; ++dx)
      for (long dy = -1; dy <= 1; ++dy)
        for (long dz = -1; dz <= 1; ++dz) {
          const auto it = cells_.find(key({c[0] + dx, c[1] + dy, c[2] + dz}));
          if (it == cells_.end()) continue;
          for (int j : it->second)
            if ((centres[j] - centre).norm() < radius + radii[j]) return true;
        }
    return false;
  }
  void insert(const Vec3& centre, int index) { cells_[key(cell_of(centre))].push_back(index); }

 private:
  std::array<long, 3> cell_of(const Vec3& p) const {
    return {static_cast<long>(std::floor(p.x() / cell_)),
            static_cast<long>(std::floor(p.y() / cell_)),
            static_cast<long>(std::floor(p.z() / cell_))};
  }
  // Distinct cells whose keys collide share a bucket list: that costs distance checks, never
  // correctness, since every candidate is tested by distance.
  static std::uint64_t key(const std::array<long, 3>& c) {
    return static_cast<std::uint64_t>(c[0]) * 73856093ULL ^
           static_cast<std::uint64_t>(c[1]) * 19349663ULL ^
           static_cast<std::uint64_t>(c[2]) * 83492791ULL;
  }
  double cell_;
  std::unordered_map<std::uint64_t, std::vector<int>> cells_;
};

}  // namespace

double uniform01(std::mt19937& rng) {
  const double a = static_cast<double>(rng() >> 5);
  const double b = static_cast<double>(rng() >> 6);
  return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0);
}

double uniform(std::mt19937& rng, double low, double high) {
  return low + (high - low) * uniform01(rng);
}

std::array<long, 3> lattice_sites(const SpherePlacement& p, double spacing) {
  std::array<long, 3> sites = {1, 1, 1};
  for (int axis = 0; axis < p.axes; ++axis)
    sites[axis] = static_cast<long>(std::floor((p.box_max(axis) - p.box_min(axis)) / spacing));
  return sites;
}

void place_on_lattice(SpherePlacement& p, double spacing, std::mt19937& rng) {
  const std::array<long, 3> sites = lattice_sites(p, spacing);
  for (long k = 0; k < p.count; ++k) {
    const long ix = k % sites[0];
    const long iz = (k / sites[0]) % sites[2];
    const long iy = k / (sites[0] * sites[2]);
    const double radius = uniform(rng, p.radius_min, p.radius_max);
    const double play = 0.5 * spacing - radius;
    Vec3 centre = Vec3::Zero();
    const std::array<long, 3> site = {ix, iy, iz};
    for (int axis = 0; axis < p.axes; ++axis)
      centre(axis) = p.box_min(axis) + (site[axis] + 0.5) * spacing + uniform(rng, -play, play);
    p.centres.push_back(centre);
    p.radii.push_back(radius);
  }
}

void place_by_rejection(SpherePlacement& p, long max_attempts, std::mt19937& rng) {
  SphereHash hash(2.0 * p.radius_max);
  for (long k = 0; k < p.count; ++k) {
    const double radius = uniform(rng, p.radius_min, p.radius_max);
    bool placed = false;
    for (long attempt = 0; attempt < max_attempts && !placed; ++attempt) {
      Vec3 centre = Vec3::Zero();
      for (int axis = 0; axis < p.axes; ++axis)
        centre(axis) = uniform(rng, p.box_min(axis) + radius, p.box_max(axis) - radius);
      if (hash.overlaps(centre, radius, p.centres, p.radii)) continue;
      hash.insert(centre, static_cast<int>(p.centres.size()));
      p.centres.push_back(centre);
      p.radii.push_back(radius);
      placed = true;
    }
    if (!placed)
      throw InputError("placed only " + std::to_string(k) + " of " + std::to_string(p.count) +
                       " spheres without overlap (" + std::to_string(max_attempts) +
                       " attempts each); enlarge the box, raise max_attempts or use "
                       "\"placement\": \"lattice\"");
  }
}

}  // namespace moreau::detail
