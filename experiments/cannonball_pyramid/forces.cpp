#include "forces.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace cannonball {

using namespace moreau;

VecX floor_reaction(const std::vector<ForceRecord>& forces, const World& world,
                    const std::vector<int>& base_bodies) {
  std::map<int, int> slot;
  for (std::size_t k = 0; k < base_bodies.size(); ++k) slot[base_bodies[k]] = static_cast<int>(k);
  VecX floor = VecX::Zero(static_cast<Eigen::Index>(base_bodies.size()));
  for (const ForceRecord& f : forces) {
    // Downward load a dynamic sphere puts on a fixed base sphere.
    if (slot.count(f.body_b) && world.bodies[f.body_a].is_dynamic())
      floor(slot[f.body_b]) -= f.force_on_b.y();
    if (slot.count(f.body_a) && world.bodies[f.body_b].is_dynamic())
      floor(slot[f.body_a]) += f.force_on_b.y();
  }
  return floor;
}

double relative_error(const VecX& x, const VecX& reference) {
  return (x - reference).norm() / reference.norm();
}

double max_force(const std::vector<ForceRecord>& forces) {
  double largest = 0.0;
  for (const ForceRecord& f : forces) largest = std::max(largest, f.force_on_b.norm());
  return largest;
}

double floor_asymmetry(const VecX& floor, int base) {
  double diff = 0.0;
  for (int i = 0; i < base; ++i)
    for (int j = 0; j < base; ++j)
      diff += std::pow(floor(i * base + j) - floor((base - 1 - i) * base + j), 2);
  return std::sqrt(diff) / floor.norm();
}

void write_forces(CsvTable& out, const std::string& variant, const MethodResult& m,
                  const World& world) {
  for (const ForceRecord& f : m.forces) {
    const Vec3& a = world.bodies[f.body_a].position;
    const Vec3& b = world.bodies[f.body_b].position;
    out.row(variant, m.name, f.body_a, f.body_b, a.x(), a.y(), a.z(), b.x(), b.y(), b.z(),
            f.force_on_b.norm());
  }
}

}  // namespace cannonball
