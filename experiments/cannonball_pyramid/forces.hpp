#pragma once
// What a method yields (Olsen & Kamrin Sec. 8.3): its contact forces and the floor reaction
// under the base, the measures that compare two of them, and the forces as a table.
#include <string>
#include <vector>

#include "moreau/harness/table.hpp"
#include "moreau/model/world.hpp"

namespace cannonball {

using moreau::CsvTable;
using moreau::Vec3;
using moreau::VecX;
using moreau::World;

// A contact force as the forces on body b (on a: the opposite).
struct ForceRecord {
  int body_a, body_b;
  Vec3 point;
  Vec3 force_on_b;
};

struct MethodResult {
  std::string name;
  std::vector<ForceRecord> forces;
  VecX floor;  // transmitted vertical load per base sphere (same order as base_bodies)
  double seconds = 0.0;
  std::string note;
};

VecX floor_reaction(const std::vector<ForceRecord>& forces, const World& world,
                    const std::vector<int>& base_bodies);

double relative_error(const VecX& x, const VecX& reference);

double max_force(const std::vector<ForceRecord>& forces);

// Mirror asymmetry of the floor map about the pyramid's x mid-plane: zero for a symmetric
// force distribution.
double floor_asymmetry(const VecX& floor, int base);

void write_forces(CsvTable& out, const std::string& variant, const MethodResult& m,
                  const World& world);

}  // namespace cannonball
