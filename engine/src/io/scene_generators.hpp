#pragma once
// The scene generators that create many bodies (docs/scene-format.md, section generators):
// grid, random_spheres (placement in sphere_placement.hpp) and container. Private to the
// engine.
#include "scene_reader.hpp"

namespace moreau::scene_io {

// The "generators" array: every generator's bodies added to the world in order.
void read_generators(const Node& node, World& world, Context& context);

}  // namespace moreau::scene_io
