#pragma once
// Bodies of scene files: their shapes and the properties a body shares with the bodies of a
// generator (docs/scene-format.md, sections bodies and shapes). Private to the engine.
#include <optional>
#include <string>
#include <vector>

#include "scene_reader.hpp"

namespace moreau::scene_io {

// The properties a body shares with the bodies of a generator. Unset optionals fall back to
// defaults that depend on the shape.
struct BodyProperties {
  std::optional<Motion> motion;
  bool rotation_locked = false;
  Quat orientation = Quat::Identity();
  Vec3 velocity = Vec3::Zero();
  Vec3 angular_velocity = Vec3::Zero();
  int material = 0;
  std::optional<Node> mass;
  std::optional<Node> inertia;
  std::optional<Node> velocity_node;  // where velocity and angular_velocity were given
  std::optional<Node> angular_velocity_node;
};

inline const std::vector<std::string> kBodyPropertyKeys = {
    "material",         "motion", "rotation_locked", "orientation", "angle", "velocity",
    "angular_velocity", "mass",   "inertia"};

Shape read_shape(const Node& node, const Context& context);
// Half extents of the axis-aligned box around the shape when rotated by `rotation`.
Vec3 aabb_half_extents(const ShapeGeometry& geometry, const Mat3& rotation);
// Reads whichever of kBodyPropertyKeys the object has (the caller restricts which are allowed).
BodyProperties read_body_properties(const Node& node, const Context& context);
// Builds a body from its properties, computing mass and inertia from the material density
// where they are not given. `where` is the JSON node the body comes from (for messages).
RigidBody make_body(const Node& where, const BodyProperties& p, const Shape& shape,
                    const Vec3& position, std::string name, const World& world, Context& context);
// One entry of "bodies", added to the world.
void read_body(const Node& node, World& world, Context& context);

}  // namespace moreau::scene_io
