#include "moreau/model/material.hpp"

#include <algorithm>

namespace moreau {

FrictionTable::FrictionTable(double default_mu) : default_mu_(default_mu) {}

void FrictionTable::set(int material_a, int material_b, double mu) {
  pairs_[{std::min(material_a, material_b), std::max(material_a, material_b)}] = mu;
}

double FrictionTable::get(int material_a, int material_b) const {
  const auto it = pairs_.find({std::min(material_a, material_b), std::max(material_a, material_b)});
  return it == pairs_.end() ? default_mu_ : it->second;
}

bool FrictionTable::all_frictionless() const {
  if (default_mu_ != 0.0) return false;
  return std::all_of(pairs_.begin(), pairs_.end(), [](const auto& p) { return p.second == 0.0; });
}

double pair_restitution(const Material& a, const Material& b) {
  return std::min(a.restitution, b.restitution);
}

}  // namespace moreau
