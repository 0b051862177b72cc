#pragma once
// Materials per body and friction per pair of materials.
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace moreau {

struct Material {
  std::string name = "default";
  double density = 1000.0;          // kg/m^3, used when a body gives no mass
  double youngs_modulus = 0.0;      // Pa; 0 = unspecified (no DEM), +inf = rigid
  double poisson_ratio = 0.3;       // -
  double relative_stiffness = 1.0;  // k~ of Olsen & Kamrin eq. 35 (dimensionless; +inf = rigid)
  double restitution = 0.0;         // normal Newton coefficient e_n, Olsen & Kamrin Sec. 4.3
};

// Coulomb friction coefficient per unordered pair of material indices, with a default.
class FrictionTable {
 public:
  explicit FrictionTable(double default_mu = 0.0);
  void set(int material_a, int material_b, double mu);
  double get(int material_a, int material_b) const;
  double default_coefficient() const { return default_mu_; }
  bool all_frictionless() const;

 private:
  double default_mu_;
  std::map<std::pair<int, int>, double> pairs_;
};

// Effective restitution of a pair: the smaller of the two (a soft partner limits rebound).
double pair_restitution(const Material& a, const Material& b);

}  // namespace moreau
