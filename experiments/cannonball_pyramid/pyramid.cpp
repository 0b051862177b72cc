#include "pyramid.hpp"

#include <fstream>
#include <nlohmann/json.hpp>

#include "moreau/core/error.hpp"
#include "moreau/io/scene.hpp"

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
  std::ifstream in(kScene);
  if (!in) throw InputError(kScene + ": cannot open the pyramid's scene");
  nlohmann::json document = nlohmann::json::parse(in, nullptr, true, /*ignore_comments=*/true);
  nlohmann::json& pyramid = document.at("generators").at(0);
  pyramid["base"] = base;
  // Olsen & Kamrin Sec. 8.2.2: even global index E0, odd E1 = 5 E0.
  if (variant == Variant::multi_species_hookean) {
    pyramid.erase("material");
    pyramid["materials"] = {"E0", "E1 = 5 E0"};
  }
  World world = parse_scene(document, kScene).world;
  // The constants this program's readings use (the weight of a sphere, the margin) are the
  // scene's.
  const RigidBody& first = world.bodies.front();
  if (world.bodies.size() != static_cast<std::size_t>(base * (base + 1) * (2 * base + 1) / 6) ||
      std::get<Sphere>(first.shape.geometry).radius != kRadius ||
      world.materials[first.material].density != kDensity ||
      world.gravity != Vec3(0.0, -kGravity, 0.0))
    throw InputError(kScene + ": the pyramid differs from this program's (radius, density, g)");
  base_bodies.clear();
  for (int i = 0; i < base * base; ++i) base_bodies.push_back(i);
  return world;
}

}  // namespace cannonball
