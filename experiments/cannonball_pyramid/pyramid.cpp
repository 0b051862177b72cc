#include "pyramid.hpp"

#include <cmath>
#include <cstdio>

namespace cannonball {

using namespace moreau;

const char* variant_name(Variant v) {
  switch (v) {
    case Variant::uniform_hookean:
      return "uniform Hookean";
    case Variant::multi_species_hookean:
      return "multi-species Hookean";
    case Variant::uniform_hertzian:
      return "uniform Hertzian";
  }
  return "";
}
const char* variant_key(Variant v) {
  switch (v) {
    case Variant::uniform_hookean:
      return "hookean";
    case Variant::multi_species_hookean:
      return "multispecies";
    case Variant::uniform_hertzian:
      return "hertzian";
  }
  return "";
}

World pyramid_world(int base, Variant variant, std::vector<int>& base_bodies) {
  World world;
  world.dimension = Dimension::three;
  world.gravity = Vec3(0.0, -kGravity, 0.0);
  world.materials.clear();
  // Relative stiffness k~ = E / E0; pair values follow in series (compatible_cd.hpp).
  world.add_material({"E0", kDensity, kModulus, kPoisson, 1.0, 0.0});
  world.add_material({"E1 = 5 E0", kDensity, 5.0 * kModulus, kPoisson, 5.0, 0.0});
  const double d = 2.0 * kRadius;
  const double mass = kDensity * 4.0 / 3.0 * M_PI * std::pow(kRadius, 3);
  base_bodies.clear();
  int index = 0;
  for (int layer = 0; layer < base; ++layer) {
    const int n = base - layer;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j, ++index) {
        RigidBody sphere;
        char name[48];
        std::snprintf(name, sizeof name, "L%d_%d_%d", layer, i, j);
        sphere.name = name;
        sphere.motion = layer == 0 ? Motion::fixed : Motion::dynamic;
        sphere.position =
            Vec3((i + 0.5 * layer) * d, kRadius + layer * (d / std::sqrt(2.0) + 0.05 * kRadius),
                 (j + 0.5 * layer) * d);
        sphere.mass = mass;
        sphere.inertia_body = Mat3::Identity() * 0.4 * mass * kRadius * kRadius;
        sphere.shape.geometry = Sphere{kRadius};
        // Olsen & Kamrin Sec. 8.2.2: even global index E0, odd E1 = 5 E0.
        sphere.material = (variant == Variant::multi_species_hookean && index % 2 == 1) ? 1 : 0;
        world.add_body(sphere);
        if (layer == 0) base_bodies.push_back(index);
      }
  }
  return world;
}

}  // namespace cannonball
