#include "scene_bodies.hpp"

#include <Eigen/Cholesky>

namespace moreau::scene_io {
namespace {

ShapeGeometry read_geometry(const Node& node, const Context& context, const std::string& type) {
  if (type == "sphere" || type == "disk") {
    node.expect_object({"type", "radius", "offset"});
    return Sphere{node.get("radius").non_negative()};
  }
  if (type == "half_space") {
    node.expect_object({"type", "normal", "offset"});
    HalfSpace half_space;
    if (auto normal = node.find("normal")) half_space.normal = read_direction(*normal, context);
    return half_space;
  }
  if (type == "box") {
    node.expect_object({"type", "half_extents", "offset"});
    const Node extents = node.get("half_extents");
    // A 2D box is a rectangle of unit thickness (mass_properties), so z defaults to 1/2.
    const std::vector<double> e = context.planar() ? extents.numbers(2, 3) : extents.numbers(3, 3);
    for (std::size_t i = 0; i < e.size(); ++i)
      if (!(e[i] > 0.0)) extents.elements()[i].fail("must be > 0, got " + format_number(e[i]));
    return Box{Vec3(e[0], e[1], e.size() == 3 ? e[2] : 0.5)};
  }
  node.expect_object({"type", "half_length", "radius", "offset"});
  return Capsule{node.get("half_length").non_negative(), node.get("radius").non_negative()};
}

// A polygon (2D scenes, docs/polygons.md): "vertices" counter-clockwise in the body frame;
// "centre": "centroid" (default) moves the outline so that the body position is its area
// centroid, "origin" keeps the given frame and puts the centroid at the shape offset.
Shape read_polygon(const Node& node, const Context& context) {
  node.expect_object({"type", "vertices", "centre", "offset"});
  if (!context.planar()) node.get("type").fail("a polygon needs a 2D scene (dimension 2)");
  const Node vertices = node.get("vertices");
  std::vector<Vec2> outline;
  for (const Node& v : vertices.elements()) {
    const std::vector<double> xy = v.numbers(2, 2);
    outline.emplace_back(xy[0], xy[1]);
  }
  const bool origin =
      node.has("centre") && node.get("centre").choice({"centroid", "origin"}, "centre") == "origin";
  Shape shape;
  Vec2 centroid = Vec2::Zero();
  try {
    shape.geometry = make_polygon(outline, &centroid);
  } catch (const InputError& e) {
    vertices.fail(e.what());
  }
  if (origin) shape.offset = Vec3(centroid.x(), centroid.y(), 0.0);
  if (auto offset = node.find("offset")) shape.offset += read_point(*offset, context);
  return shape;
}

bool has_volume(const ShapeGeometry& geometry) {
  if (const auto* sphere = std::get_if<Sphere>(&geometry)) return sphere->radius > 0.0;
  if (const auto* capsule = std::get_if<Capsule>(&geometry)) return capsule->radius > 0.0;
  return std::holds_alternative<Box>(geometry) || std::holds_alternative<Polygon>(geometry);
}

Quat read_orientation(const Node& node, const Context& context) {
  const std::vector<double> q = node.numbers(4, 4);
  Quat orientation(q[0], q[1], q[2], q[3]);
  if (!(orientation.norm() > 0.0)) node.fail("quaternion [w, x, y, z] must not be zero");
  orientation.normalize();
  if (context.planar() && (orientation.x() != 0.0 || orientation.y() != 0.0))
    node.fail("a 2D body rotates about z only: x and y of the quaternion must be 0");
  return orientation;
}

Vec3 read_angular_velocity(const Node& node, const Context& context) {
  if (context.planar()) {
    if (node.value().is_number()) return Vec3(0.0, 0.0, node.number());
    const Vec3 w = node.vec3();
    if (w.x() != 0.0 || w.y() != 0.0)
      node.fail("a 2D body rotates about z only: x and y must be 0 (or give one number)");
    return w;
  }
  return node.vec3();
}

Mat3 read_inertia(const Node& node, const Context& context) {
  const json& value = node.value();
  if (context.planar() && value.is_number()) return node.positive() * Mat3::Identity();
  if (value.is_array() && value.size() == 3 && value[0].is_array()) {
    Mat3 inertia;
    const std::vector<Node> rows = node.elements();
    for (int i = 0; i < 3; ++i) {
      const std::vector<double> row = rows[i].numbers(3, 3);
      for (int j = 0; j < 3; ++j) inertia(i, j) = row[j];
    }
    if (!inertia.isApprox(inertia.transpose(), 1e-12))
      node.fail("inertia matrix must be symmetric");
    if (Eigen::LLT<Mat3>(inertia).info() != Eigen::Success)
      node.fail("inertia matrix must be positive definite");
    return inertia;
  }
  if (!value.is_array() || value.size() != 3)
    node.fail_type(context.planar() ? "a number (I_zz), 3 principal moments or a 3x3 matrix"
                                    : "3 principal moments [Ixx, Iyy, Izz] or a 3x3 matrix");
  Vec3 moments;
  const std::vector<Node> entries = node.elements();
  for (int i = 0; i < 3; ++i) moments(i) = entries[i].positive();
  return moments.asDiagonal();
}

}  // namespace

Shape read_shape(const Node& node, const Context& context) {
  if (!node.value().is_object()) node.fail_type("an object");
  const std::string type = node.get("type").choice(
      {"sphere", "disk", "half_space", "box", "capsule", "polygon"}, "shape type");
  if (type == "polygon") return read_polygon(node, context);
  Shape shape{read_geometry(node, context, type)};
  if (auto offset = node.find("offset")) shape.offset = read_point(*offset, context);
  return shape;
}

Vec3 aabb_half_extents(const ShapeGeometry& geometry, const Mat3& rotation) {
  if (const auto* sphere = std::get_if<Sphere>(&geometry)) return Vec3::Constant(sphere->radius);
  if (const auto* box = std::get_if<Box>(&geometry)) return rotation.cwiseAbs() * box->half_extents;
  if (const auto* polygon = std::get_if<Polygon>(&geometry))
    return Vec3(polygon->radius, polygon->radius, 0.0);
  const auto& capsule = std::get<Capsule>(geometry);
  return rotation.col(0).cwiseAbs() * capsule.half_length + Vec3::Constant(capsule.radius);
}

BodyProperties read_body_properties(const Node& node, const Context& context) {
  BodyProperties p;
  if (auto motion = node.find("motion")) {
    const std::string text = motion->choice({"dynamic", "fixed", "prescribed"});
    p.motion = text == "dynamic" ? Motion::dynamic
                                 : (text == "fixed" ? Motion::fixed : Motion::prescribed);
  }
  if (auto locked = node.find("rotation_locked")) p.rotation_locked = locked->boolean();
  if (node.has("orientation") && node.has("angle"))
    node.fail("give either \"orientation\" or \"angle\", not both");
  if (auto orientation = node.find("orientation"))
    p.orientation = read_orientation(*orientation, context);
  if (auto angle = node.find("angle")) {
    if (!context.planar())
      angle->fail("\"angle\" is for 2D scenes; give a quaternion \"orientation\" in 3D");
    p.orientation = Quat(Eigen::AngleAxisd(angle->number(), Vec3::UnitZ()));
  }
  if (auto velocity = node.find("velocity")) {
    p.velocity = read_point(*velocity, context);
    p.velocity_node = velocity;
  }
  if (auto angular = node.find("angular_velocity")) {
    p.angular_velocity = read_angular_velocity(*angular, context);
    p.angular_velocity_node = angular;
  }
  if (auto material = node.find("material")) p.material = read_material(*material, context);
  p.mass = node.find("mass");
  p.inertia = node.find("inertia");
  return p;
}

RigidBody make_body(const Node& where, const BodyProperties& p, const Shape& shape,
                    const Vec3& position, std::string name, const World& world, Context& context) {
  RigidBody body;
  if (!context.body_names.insert(name).second)
    where.fail("body name \"" + name + "\" is used twice; body names must be unique");
  body.name = std::move(name);
  body.shape = shape;
  body.position = position;
  body.orientation = p.orientation;
  body.linear_velocity = p.velocity;
  body.angular_velocity = p.angular_velocity;
  body.rotation_locked = p.rotation_locked;
  body.material = p.material;

  const bool half_space = std::holds_alternative<HalfSpace>(shape.geometry);
  body.motion = p.motion.value_or(half_space ? Motion::fixed : Motion::dynamic);
  if (half_space && body.motion == Motion::dynamic)
    where.fail(
        "a half_space has no finite mass and cannot be dynamic; use motion \"fixed\" or "
        "\"prescribed\"");
  if (body.motion == Motion::fixed) {
    const std::string problem =
        "a fixed body cannot move; use motion \"prescribed\" for a body that moves with a given "
        "velocity";
    if (p.velocity_node && !p.velocity.isZero(0.0)) p.velocity_node->fail(problem);
    if (p.angular_velocity_node && !p.angular_velocity.isZero(0.0))
      p.angular_velocity_node->fail(problem);
  }

  const bool volume = has_volume(shape.geometry);
  if (volume) {
    // The computed inertia is the solid's about its own centre: an offset shape (an
    // eccentric body) needs its "inertia" given explicitly.
    const double density = world.materials[body.material].density;
    const MassProperties properties = mass_properties(shape.geometry, density, context.dimension);
    body.mass = properties.mass;
    body.inertia_body = properties.inertia;
  }
  if (p.mass) {
    const double mass = p.mass->positive();
    // A given mass with no inertia keeps the shape's mass distribution.
    if (volume) body.inertia_body *= mass / body.mass;
    body.mass = mass;
  }
  if (p.inertia) body.inertia_body = read_inertia(*p.inertia, context);

  if (!volume && body.is_dynamic()) {
    const std::string shape_text = shape_name(shape.geometry);
    if (!p.mass)
      where.fail("a dynamic " + shape_text + " with radius 0 has no volume: give \"mass\"");
    if (!p.inertia && !body.rotation_locked)
      where.fail("a dynamic " + shape_text +
                 " with radius 0 needs \"inertia\" (or \"rotation_locked\": true)");
  }
  return body;
}

void read_body(const Node& node, World& world, Context& context) {
  std::vector<std::string> allowed = {"name", "shape", "position"};
  allowed.insert(allowed.end(), kBodyPropertyKeys.begin(), kBodyPropertyKeys.end());
  node.expect_object(allowed);
  const std::string name =
      node.has("name") ? node.get("name").string() : "body" + std::to_string(world.bodies.size());
  const Shape shape = read_shape(node.get("shape"), context);
  Vec3 position = Vec3::Zero();
  if (auto p = node.find("position")) position = read_point(*p, context);
  const BodyProperties properties = read_body_properties(node, context);
  world.add_body(make_body(node, properties, shape, position, name, world, context));
}

}  // namespace moreau::scene_io
