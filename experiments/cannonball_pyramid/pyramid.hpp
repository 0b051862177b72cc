#pragma once
// The cannonball pyramid of Olsen & Kamrin Sec. 8.2 (README.md, "Scene"): glass beads in a
// square-based close-packed pyramid on a fixed base layer, in three contact-law variants.
#include <string>
#include <vector>

#include "moreau/model/world.hpp"

namespace cannonball {

using moreau::World;

constexpr double kRadius = 1.25e-3;         // 2.5 mm diameter, Olsen & Kamrin Sec. 8.2
constexpr double kDensity = 2000.0;         // kg/m^3
constexpr double kModulus = 50e9;           // Pa, E0 (glass beads)
constexpr double kPoisson = 0.22;           // soda-lime glass; not given in the paper
constexpr double kGravity = 9.81;           // m/s^2
constexpr double kCdTimeStep = 1e-3;        // s, Olsen & Kamrin Sec. 8.2
constexpr double kPublishedDemStep = 5e-7;  // s, Olsen & Kamrin Sec. 8.2

enum class Variant { uniform_hookean, multi_species_hookean, uniform_hertzian };
const char* variant_name(Variant v);  // "uniform Hookean", ...
const char* variant_key(Variant v);   // "hookean", ... (of the reference entries)

// The pyramid of scenes/cannonball_pyramid.json (its "pyramid" generator) with `base` spheres
// along the base: layer L (0 = fixed base) holds (base - L)^2 spheres in the hollows of the
// layer below, a centre distance d/sqrt(2) higher; every layer starts 5% of a radius further up
// than at rest (the spheres are "separated vertically from their neighbors by 5% of a radius").
// `base_bodies`: the fixed base spheres, row by row. Throws InputError when the scene's spheres
// differ from the constants above.
inline const std::string kScene = std::string(MOREAU_SCENES_DIR) + "/cannonball_pyramid.json";
World pyramid_world(int base, Variant variant, std::vector<int>& base_bodies);

}  // namespace cannonball
