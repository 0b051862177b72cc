#include "moreau/io/scene.hpp"

#include <Eigen/Cholesky>
#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <unordered_map>
#include <vector>

#include "moreau/core/error.hpp"
#include "moreau/registry/solver_registry.hpp"
#include "sphere_placement.hpp"

namespace moreau {
namespace {

using json = nlohmann::json;

// Shortest text that reads back to the same double ("0.1", "1e-08", "inf").
std::string format_number(double value) {
  std::array<char, 32> buffer{};
  const auto result = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  return std::string(buffer.data(), result.ptr);
}

std::string describe(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::boolean:
      return value.get<bool>() ? "true" : "false";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return format_number(value.get<double>());
    case json::value_t::string: {
      std::string text = value.get<std::string>();
      if (text.size() > 40) text = text.substr(0, 37) + "...";
      return "the string \"" + text + "\"";
    }
    case json::value_t::array:
      return "an array of " + std::to_string(value.size()) + " elements";
    case json::value_t::object:
      return "an object";
    default:
      return "a value of type " + std::string(value.type_name());
  }
}

std::string join(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& word : words) out += (out.empty() ? "" : ", ") + word;
  return out;
}

// A JSON value together with its place in the document, so that every error names the
// file and the JSON path (bodies[3].shape.radius) of the value that is wrong.
class Node {
 public:
  Node(const json& value, std::string path, const std::string& source)
      : value_(&value), path_(std::move(path)), source_(&source) {}

  const json& value() const { return *value_; }
  const std::string& path() const { return path_; }

  [[noreturn]] void fail(const std::string& problem) const {
    std::string message = *source_ + ": ";
    if (!path_.empty()) message += path_ + ": ";
    throw InputError(message + problem);
  }
  [[noreturn]] void fail_type(const std::string& expected) const {
    fail("expected " + expected + ", got " + describe(*value_));
  }

  // Checks that this is an object whose keys are all in `allowed`.
  void expect_object(const std::vector<std::string>& allowed) const {
    if (!value_->is_object()) fail_type("an object");
    for (const auto& item : value_->items()) {
      if (std::find(allowed.begin(), allowed.end(), item.key()) == allowed.end())
        child(item.key()).fail("unknown key; allowed keys here: " + join(allowed));
    }
  }
  bool has(const std::string& key) const { return value_->contains(key); }
  std::optional<Node> find(const std::string& key) const {
    if (!value_->contains(key)) return std::nullopt;
    return child(key);
  }
  Node get(const std::string& key) const {
    if (!value_->contains(key)) fail("missing required key \"" + key + "\"");
    return child(key);
  }

  std::vector<Node> elements() const {
    if (!value_->is_array()) fail_type("an array");
    std::vector<Node> out;
    for (std::size_t i = 0; i < value_->size(); ++i)
      out.emplace_back((*value_)[i], path_ + "[" + std::to_string(i) + "]", *source_);
    return out;
  }

  double number() const {
    if (!value_->is_number()) fail_type("a number");
    const double x = value_->get<double>();
    if (!std::isfinite(x)) fail("must be a finite number, got " + format_number(x));
    return x;
  }
  double positive() const {
    const double x = number();
    if (!(x > 0.0)) fail("must be > 0, got " + format_number(x));
    return x;
  }
  double non_negative() const {
    const double x = number();
    if (!(x >= 0.0)) fail("must be >= 0, got " + format_number(x));
    return x;
  }
  double in_range(double low, double high) const {
    const double x = number();
    if (!(x >= low && x <= high))
      fail("must lie in [" + format_number(low) + ", " + format_number(high) + "], got " +
           format_number(x));
    return x;
  }
  // An integer >= minimum; a float with an integral value (1e3) is accepted.
  long integer(long minimum, long maximum = std::numeric_limits<long>::max()) const {
    if (!value_->is_number()) fail_type("an integer");
    const double x = value_->get<double>();
    if (!std::isfinite(x) || x != std::floor(x))
      fail("expected an integer, got " + describe(*value_));
    if (x < static_cast<double>(minimum) || x > static_cast<double>(maximum))
      fail("must lie in [" + std::to_string(minimum) + ", " + std::to_string(maximum) + "], got " +
           describe(*value_));
    return value_->is_number_float() ? static_cast<long>(x) : value_->get<long>();
  }
  // A stiffness: a number (checked by `read`) or the string "rigid", +infinity.
  template <class Read>
  double stiffness_or_rigid(Read read) const {
    if (!value_->is_string()) return std::invoke(read, *this);
    if (value_->get<std::string>() != "rigid") fail_type("a number or \"rigid\"");
    return std::numeric_limits<double>::infinity();
  }
  bool boolean() const {
    if (!value_->is_boolean()) fail_type("true or false");
    return value_->get<bool>();
  }
  std::string string() const {
    if (!value_->is_string()) fail_type("a string");
    return value_->get<std::string>();
  }
  // One of `options`; the message names what is chosen (a solver, a shape) and lists them.
  std::string choice(const std::vector<std::string>& options,
                     const std::string& what = "value") const {
    const std::string text = string();
    if (std::find(options.begin(), options.end(), text) == options.end())
      fail("unknown " + what + " \"" + text + "\"; expected one of: " + join(options));
    return text;
  }
  // An array of numbers with between `min_size` and `max_size` entries.
  std::vector<double> numbers(std::size_t min_size, std::size_t max_size) const {
    const std::string expected = min_size == max_size
                                     ? "an array of " + std::to_string(min_size) + " numbers"
                                     : "an array of " + std::to_string(min_size) + " to " +
                                           std::to_string(max_size) + " numbers";
    if (!value_->is_array() || value_->size() < min_size || value_->size() > max_size)
      fail_type(expected);
    std::vector<double> out;
    for (const Node& element : elements()) out.push_back(element.number());
    return out;
  }
  Vec3 vec3() const {
    const std::vector<double> v = numbers(3, 3);
    return Vec3(v[0], v[1], v[2]);
  }

 private:
  Node child(const std::string& key) const {
    return Node((*value_)[key], path_.empty() ? key : path_ + "." + key, *source_);
  }

  const json* value_;
  std::string path_;
  const std::string* source_;
};

// The keys of the scene's option sections, by JSON path ("" is the top level): the one list
// the parser accepts and the one that docs/scene-format.md must document (scene_test).
const std::vector<SceneSection>& option_sections() {
  static const std::vector<SceneSection> sections{
      {"",
       {"description", "dimension", "gravity", "time_step", "steps", "duration", "method",
        "integrator", "dem", "collision", "solver", "materials", "friction", "bodies", "generators",
        "output"}},
      {"integrator",
       {"scheme", "frictional", "friction_model", "impact_law", "compatible", "theta",
        "tangential_restitution", "error_reduction", "closed_gap", "k_n", "k_t"}},
      {"integrator.compatible",
       {"enabled", "law", "method", "equilibrium_tolerance", "optimality_tolerance",
        "max_outer_iterations", "max_inner_iterations", "max_interior_point_iterations"}},
      {"dem",
       {"law", "damping_ratio", "tangential", "tangential_stiffness_ratio",
        "tangential_damping_ratio", "time_step", "skin", "duration"}},
      {"collision", {"margin", "cell_size"}},
      {"solver.nlgs",
       {"alpha", "stopping", "epsilon_glob_tolerance", "newton_tolerance", "newton_max_iterations",
        "newton_line_search"}},
      {"solver",
       {"name", "tolerance", "max_iterations", "warm_start", "relaxation", "order", "seed",
        "adaptive_restart", "initial_lipschitz", "check_every", "record_history",
        "divergence_factor", "on_failure", "nlgs"}},
      {"output", {"directory", "every", "csv", "vtk", "progress", "checkpoint_every"}},
  };
  return sections;
}

const std::vector<std::string>& section_keys(const std::string& section) {
  for (const SceneSection& entry : option_sections())
    if (entry.path == section) return entry.keys;
  throw std::logic_error("scene section " + section + " has no key table");
}

// Scene-wide facts the parts of the parser share.
struct Context {
  Dimension dimension = Dimension::three;
  std::map<std::string, int> materials;  // name -> index into World::materials
  std::set<std::string> body_names;
  bool planar() const { return dimension == Dimension::two; }
  int active_axes() const { return planar() ? 2 : 3; }
};

// A position or vector of the world: three numbers; a 2D scene also takes two and needs z = 0.
Vec3 read_point(const Node& node, const Context& context) {
  if (!context.planar()) return node.vec3();
  const std::vector<double> v = node.numbers(2, 3);
  if (v.size() == 3 && v[2] != 0.0)
    node.fail("a 2D scene lies in the z = 0 plane, got z = " + format_number(v[2]));
  return Vec3(v[0], v[1], 0.0);
}

// A direction; normalized, so it must not be zero.
Vec3 read_direction(const Node& node, const Context& context) {
  const Vec3 v = read_point(node, context);
  if (!(v.norm() > 0.0)) node.fail("must be a non-zero vector");
  return v.normalized();
}

int read_material(const Node& node, const Context& context) {
  const std::string name = node.string();
  const auto it = context.materials.find(name);
  if (it == context.materials.end()) {
    std::vector<std::string> known;
    for (const auto& entry : context.materials) known.push_back(entry.first);
    node.fail("unknown material \"" + name + "\"; defined materials: " + join(known));
  }
  return it->second;
}

// ---- shapes ---------------------------------------------------------------------------

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
  const bool origin = node.has("centre") &&
                      node.get("centre").choice({"centroid", "origin"}, "centre") == "origin";
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

Shape read_shape(const Node& node, const Context& context) {
  if (!node.value().is_object()) node.fail_type("an object");
  const std::string type = node.get("type").choice(
      {"sphere", "disk", "half_space", "box", "capsule", "polygon"}, "shape type");
  if (type == "polygon") return read_polygon(node, context);
  Shape shape;
  shape.geometry = read_geometry(node, context, type);
  if (auto offset = node.find("offset")) shape.offset = read_point(*offset, context);
  return shape;
}

bool has_volume(const ShapeGeometry& geometry) {
  if (const auto* sphere = std::get_if<Sphere>(&geometry)) return sphere->radius > 0.0;
  if (const auto* capsule = std::get_if<Capsule>(&geometry)) return capsule->radius > 0.0;
  return std::holds_alternative<Box>(geometry) || std::holds_alternative<Polygon>(geometry);
}

// Half extents of the axis-aligned box around the shape when rotated by `rotation`.
Vec3 aabb_half_extents(const ShapeGeometry& geometry, const Mat3& rotation) {
  if (const auto* sphere = std::get_if<Sphere>(&geometry)) return Vec3::Constant(sphere->radius);
  if (const auto* box = std::get_if<Box>(&geometry)) return rotation.cwiseAbs() * box->half_extents;
  if (const auto* polygon = std::get_if<Polygon>(&geometry))
    return Vec3(polygon->radius, polygon->radius, 0.0);
  const auto& capsule = std::get<Capsule>(geometry);
  return rotation.col(0).cwiseAbs() * capsule.half_length + Vec3::Constant(capsule.radius);
}

// ---- bodies ---------------------------------------------------------------------------

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

const std::vector<std::string> kBodyPropertyKeys = {"material",         "motion", "rotation_locked",
                                                    "orientation",      "angle",  "velocity",
                                                    "angular_velocity", "mass",   "inertia"};

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

// Reads whichever of kBodyPropertyKeys the object has (the caller restricts which are allowed).
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

// Builds a body from its properties, computing mass and inertia from the material density
// where they are not given. `where` is the JSON node the body comes from (for messages).
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

// ---- generators -----------------------------------------------------------------------

// Uniform in [0, 1) with 53 random bits from two mt19937 draws (Matsumoto and Nishimura's
// genrand_res53). Unlike std::uniform_real_distribution, whose algorithm each standard
// library picks, it gives the same numbers everywhere, so a seed gives the same scene.
std::mt19937 make_rng(const Node& node) {
  const long seed = node.has("seed") ? node.get("seed").integer(0, 4294967295L) : 1;
  return std::mt19937(static_cast<std::mt19937::result_type>(seed));
}

std::string generator_name(const Node& node, const std::string& type, std::size_t index) {
  return node.has("name") ? node.get("name").string() : type + std::to_string(index);
}

const char* const kAxisNames[3] = {"x", "y", "z"};

// Per-axis spacing: one number for all axes or one per axis (2 or 3 in 2D, 3 in 3D), > 0.
Vec3 read_per_axis(const Node& node, const Context& context) {
  if (node.value().is_number()) return Vec3::Constant(node.positive());
  const std::vector<double> v = context.planar() ? node.numbers(2, 3) : node.numbers(3, 3);
  const std::vector<Node> entries = node.elements();
  for (int axis = 0; axis < context.active_axes(); ++axis) entries[axis].positive();
  return Vec3(v[0], v[1], v.size() == 3 ? v[2] : 1.0);
}

void generate_grid(const Node& node, std::size_t index, World& world, Context& context) {
  std::vector<std::string> allowed = {"type",  "name",    "shape",  "origin",
                                      "count", "spacing", "jitter", "seed"};
  allowed.insert(allowed.end(), kBodyPropertyKeys.begin(), kBodyPropertyKeys.end());
  node.expect_object(allowed);
  const std::string name = generator_name(node, "grid", index);
  const Node shape_node = node.get("shape");
  const Shape shape = read_shape(shape_node, context);
  if (std::holds_alternative<HalfSpace>(shape.geometry))
    shape_node.fail(
        "a grid of half-spaces is not a thing; use a \"container\" generator or bodies");
  const BodyProperties properties = read_body_properties(node, context);

  const Node count_node = node.get("count");
  std::array<long, 3> count = {1, 1, 1};
  {
    const std::vector<Node> entries = count_node.elements();
    if (entries.size() != 3 && !(context.planar() && entries.size() == 2))
      count_node.fail_type(context.planar() ? "an array of 2 integers [nx, ny]"
                                            : "an array of 3 integers [nx, ny, nz]");
    for (std::size_t axis = 0; axis < entries.size(); ++axis)
      count[axis] = entries[axis].integer(1);
    if (context.planar() && count[2] != 1)
      entries[2].fail("a 2D grid has one layer in z, got " + std::to_string(count[2]));
  }
  Vec3 origin = Vec3::Zero();
  if (auto o = node.find("origin")) origin = read_point(*o, context);
  const Node spacing_node = node.get("spacing");
  const Vec3 spacing = read_per_axis(spacing_node, context);
  const double jitter = node.has("jitter") ? node.get("jitter").non_negative() : 0.0;

  // Neighbouring sites differ along at least one axis with several sites, and along that
  // axis their boxes stay apart when spacing >= 2 (half extent + jitter): no overlaps.
  const Vec3 half = aabb_half_extents(shape.geometry, properties.orientation.toRotationMatrix());
  for (int axis = 0; axis < context.active_axes(); ++axis) {
    const double needed = 2.0 * (half(axis) + jitter);
    if (count[axis] > 1 && spacing(axis) < needed)
      spacing_node.fail(std::string("bodies would overlap: spacing along ") + kAxisNames[axis] +
                        " is " + format_number(spacing(axis)) + ", needs >= " +
                        format_number(needed) + " (2 x (shape half extent + jitter))");
  }

  std::mt19937 rng = make_rng(node);
  long k = 0;
  for (long iz = 0; iz < count[2]; ++iz)
    for (long iy = 0; iy < count[1]; ++iy)
      for (long ix = 0; ix < count[0]; ++ix) {
        Vec3 position = origin + Vec3(ix * spacing.x(), iy * spacing.y(), iz * spacing.z());
        if (jitter > 0.0)
          for (int axis = 0; axis < context.active_axes(); ++axis)
            position(axis) += detail::uniform(rng, -jitter, jitter);
        world.add_body(make_body(node, properties, shape, position,
                                 name + "_" + std::to_string(k++), world, context));
      }
}

void generate_random_spheres(const Node& node, std::size_t index, World& world, Context& context) {
  node.expect_object({"type", "name", "count", "radius_min", "radius_max", "box_min", "box_max",
                      "seed", "placement", "spacing", "max_attempts", "material", "motion",
                      "rotation_locked", "velocity", "angular_velocity"});
  const std::string name = generator_name(node, "random_spheres", index);
  const BodyProperties properties = read_body_properties(node, context);
  const long count = node.get("count").integer(1);
  const double radius_min = node.get("radius_min").positive();
  double radius_max = radius_min;
  if (auto r = node.find("radius_max")) {
    radius_max = r->number();
    if (radius_max < radius_min)
      r->fail("must be >= radius_min = " + format_number(radius_min) + ", got " +
              format_number(radius_max));
  }
  const Vec3 box_min = read_point(node.get("box_min"), context);
  const Node box_max_node = node.get("box_max");
  const Vec3 box_max = read_point(box_max_node, context);
  for (int axis = 0; axis < context.active_axes(); ++axis)
    if (box_max(axis) - box_min(axis) < 2.0 * radius_max)
      box_max_node.fail(std::string("the box must be at least 2 radius_max = ") +
                        format_number(2.0 * radius_max) + " wide along " + kAxisNames[axis] +
                        ", got " + format_number(box_max(axis) - box_min(axis)));
  const bool lattice =
      node.has("placement") && node.get("placement").choice({"rejection", "lattice"}) == "lattice";
  if (!lattice && node.has("spacing"))
    node.get("spacing").fail("applies to \"placement\": \"lattice\" only");
  if (lattice && node.has("max_attempts"))
    node.get("max_attempts").fail("applies to \"placement\": \"rejection\" only");

  detail::SpherePlacement placement;
  placement.axes = context.active_axes();
  placement.count = count;
  placement.radius_min = radius_min;
  placement.radius_max = radius_max;
  placement.box_min = box_min;
  placement.box_max = box_max;
  placement.centres.reserve(count);
  placement.radii.reserve(count);
  std::mt19937 rng = make_rng(node);
  if (lattice) {
    double spacing = 2.0 * radius_max;
    if (auto s = node.find("spacing")) {
      spacing = s->positive();
      if (spacing < 2.0 * radius_max)
        s->fail("must be >= 2 radius_max = " + format_number(2.0 * radius_max) + ", got " +
                format_number(spacing));
    }
    const std::array<long, 3> sites = detail::lattice_sites(placement, spacing);
    const long capacity = sites[0] * sites[1] * sites[2];
    if (capacity < count)
      node.get("count").fail("the box holds only " + std::to_string(capacity) +
                             " lattice sites of spacing " + format_number(spacing) + " for " +
                             std::to_string(count) + " spheres");
    detail::place_on_lattice(placement, spacing, rng);
  } else {
    const long max_attempts = node.has("max_attempts") ? node.get("max_attempts").integer(1) : 1000;
    try {
      detail::place_by_rejection(placement, max_attempts, rng);
    } catch (const InputError& e) {
      node.get("count").fail(e.what());
    }
  }
  for (std::size_t k = 0; k < placement.centres.size(); ++k) {
    Shape shape;
    shape.geometry = Sphere{placement.radii[k]};
    world.add_body(make_body(node, properties, shape, placement.centres[k],
                             name + "_" + std::to_string(k), world, context));
  }
}

void generate_container(const Node& node, std::size_t index, World& world, Context& context) {
  node.expect_object({"type", "name", "min", "max", "open_top", "material"});
  const std::string name = generator_name(node, "container", index);
  const Vec3 low = read_point(node.get("min"), context);
  const Node max_node = node.get("max");
  const Vec3 high = read_point(max_node, context);
  for (int axis = 0; axis < context.active_axes(); ++axis)
    if (!(high(axis) > low(axis)))
      max_node.fail(std::string("must exceed min along ") + kAxisNames[axis] + ", got " +
                    format_number(high(axis)) + " <= " + format_number(low(axis)));
  const bool open_top = node.has("open_top") ? node.get("open_top").boolean() : true;
  BodyProperties properties = read_body_properties(node, context);
  properties.motion = Motion::fixed;

  const Vec3 centre = 0.5 * (low + high);
  for (int axis = 0; axis < context.active_axes(); ++axis)
    for (int side = 0; side < 2; ++side) {
      if (axis == 1 && side == 1 && open_top) continue;
      // The wall is the solid beyond the face; its normal points into the container.
      Shape shape;
      HalfSpace wall;
      wall.normal = (side == 0 ? 1.0 : -1.0) * Vec3::Unit(axis);
      shape.geometry = wall;
      Vec3 position = centre;
      position(axis) = side == 0 ? low(axis) : high(axis);
      world.add_body(make_body(node, properties, shape, position,
                               name + "_" + kAxisNames[axis] + (side == 0 ? "_min" : "_max"), world,
                               context));
    }
}

// ---- top-level sections ---------------------------------------------------------------

void read_materials(const Node& node, World& world, Context& context) {
  context.materials[world.materials.front().name] = 0;
  std::set<std::string> seen;
  for (const Node& entry : node.elements()) {
    entry.expect_object({"name", "density", "youngs_modulus", "poisson_ratio", "relative_stiffness",
                         "restitution"});
    Material material;
    const Node name_node = entry.get("name");
    material.name = name_node.string();
    if (material.name.empty()) name_node.fail("must not be empty");
    if (!seen.insert(material.name).second)
      name_node.fail("material \"" + material.name + "\" is defined twice");
    if (auto x = entry.find("density")) material.density = x->positive();
    if (auto x = entry.find("youngs_modulus"))
      material.youngs_modulus = x->stiffness_or_rigid(&Node::non_negative);
    if (auto x = entry.find("poisson_ratio")) material.poisson_ratio = x->in_range(-1.0, 0.5);
    if (auto x = entry.find("relative_stiffness"))
      material.relative_stiffness = x->stiffness_or_rigid(&Node::positive);
    if (auto x = entry.find("restitution")) material.restitution = x->in_range(0.0, 1.0);
    // A material named like the built-in one replaces it, so bodies without a material use it.
    if (material.name == world.materials.front().name)
      world.materials.front() = material;
    else
      context.materials[material.name] = world.add_material(material);
  }
}

void read_friction(const Node& node, World& world, const Context& context) {
  node.expect_object({"default", "pairs"});
  double default_mu = 0.0;
  if (auto x = node.find("default")) default_mu = x->non_negative();
  world.friction = FrictionTable(default_mu);
  if (auto pairs = node.find("pairs")) {
    for (const Node& pair : pairs->elements()) {
      pair.expect_object({"materials", "mu"});
      const Node names = pair.get("materials");
      const std::vector<Node> two = names.elements();
      if (two.size() != 2) names.fail_type("an array of 2 material names");
      world.friction.set(read_material(two[0], context), read_material(two[1], context),
                         pair.get("mu").non_negative());
    }
  }
}

void read_compatible(const Node& node, bool frictional, CompatibleOptions& compatible) {
  node.expect_object(section_keys("integrator.compatible"));
  if (auto x = node.find("enabled")) {
    compatible.enabled = x->boolean();
    // Checked here rather than left to SemiImplicitEulerOptions::validate so the message names
    // the key.
    if (compatible.enabled && frictional)
      x->fail(
          "compatible CD is defined for frictionless contact: set integrator.frictional "
          "to false");
  }
  if (auto x = node.find("law"))
    compatible.law = x->choice({"hookean", "hertzian"}, "contact law") == "hookean"
                         ? ContactLaw::hookean
                         : ContactLaw::hertzian;
  NoTensionTrussOptions& truss = compatible.truss;
  if (auto x = node.find("equilibrium_tolerance")) truss.equilibrium_tolerance = x->positive();
  if (auto x = node.find("optimality_tolerance")) truss.optimality_tolerance = x->positive();
  constexpr long kMaxInt = std::numeric_limits<int>::max();
  if (auto x = node.find("method"))
    truss.method = x->choice({"augmented_lagrangian", "interior_point"}, "truss solver") ==
                           "augmented_lagrangian"
                       ? TrussMethod::augmented_lagrangian
                       : TrussMethod::interior_point;
  // The truss solver's effort: its iterations are bounded by these, and a solve that reaches a
  // bound is reported as not converged (summary.json, progress line, warnings).
  if (auto x = node.find("max_outer_iterations"))
    truss.max_outer_iterations = static_cast<int>(x->integer(1, kMaxInt));
  if (auto x = node.find("max_inner_iterations"))
    truss.max_inner_iterations = static_cast<int>(x->integer(1, kMaxInt));
  if (auto x = node.find("max_interior_point_iterations"))
    truss.max_interior_point_iterations = static_cast<int>(x->integer(1, kMaxInt));
}

// The integrator keys that only some schemes read, with those schemes. A key given for a
// scheme that does not read it is an error naming it; a DEM scene may carry the
// semi_implicit_euler keys, which `moreau run --scheme semi_implicit_euler` then uses.
struct SchemeKey {
  const char* key;
  std::vector<Scheme> schemes;
};
const std::vector<SchemeKey>& scheme_keys() {
  static const std::vector<SchemeKey> keys{
      {"frictional",
       {Scheme::semi_implicit_euler, Scheme::theta, Scheme::impulse_velocity, Scheme::shake,
        Scheme::rattle, Scheme::variational_theta}},
      {"friction_model",
       {Scheme::semi_implicit_euler, Scheme::impulse_velocity, Scheme::shake, Scheme::rattle}},
      {"impact_law", {Scheme::semi_implicit_euler}},
      {"compatible", {Scheme::semi_implicit_euler}},
      {"theta", {Scheme::theta, Scheme::variational_theta}},
      {"k_n", {Scheme::variational_theta}},
      {"k_t", {Scheme::variational_theta}},
      {"tangential_restitution", {Scheme::theta}},
      {"error_reduction", {Scheme::impulse_velocity}},
      {"closed_gap", {Scheme::rattle}},
  };
  return keys;
}

void check_scheme_keys(const Node& node, Scheme scheme) {
  const Scheme reader = scheme == Scheme::dem ? Scheme::semi_implicit_euler : scheme;
  for (const SchemeKey& entry : scheme_keys()) {
    const auto x = node.find(entry.key);
    if (!x || std::find(entry.schemes.begin(), entry.schemes.end(), reader) != entry.schemes.end())
      continue;
    std::vector<std::string> readers;
    for (Scheme s : entry.schemes) readers.push_back(to_string(s));
    x->fail("not read by scheme \"" + to_string(scheme) +
            "\"; it is a parameter of: " + join(readers));
  }
}

double read_stiffness(const Node& node) {
  if (node.value().is_string()) {
    node.choice({"inf"}, "stiffness");
    return std::numeric_limits<double>::infinity();
  }
  return node.positive();
}

FrictionModel read_friction_model(const Node& node) {
  return node.choice({"coulomb", "convex_relaxation"}) == "coulomb"
             ? FrictionModel::coulomb
             : FrictionModel::convex_relaxation;
}

void read_integrator(const Node& node, Scene& scene) {
  node.expect_object(section_keys("integrator"));
  if (auto x = node.find("scheme")) {
    const std::string name = x->choice(scheme_names(), "scheme");
    const std::vector<std::string> names = scheme_names();
    scene.scheme = static_cast<Scheme>(std::find(names.begin(), names.end(), name) - names.begin());
  }
  check_scheme_keys(node, scene.scheme);
  SemiImplicitEulerOptions& euler = scene.semi_implicit_euler;
  if (auto x = node.find("frictional")) {
    euler.frictional = x->boolean();
    scene.theta.frictional = euler.frictional;
    scene.impulse_velocity.frictional = euler.frictional;
    scene.shake.frictional = euler.frictional;
    scene.variational.contact.frictional = euler.frictional;
  }
  if (auto x = node.find("friction_model")) {
    euler.friction_model = read_friction_model(*x);
    scene.impulse_velocity.friction_model = euler.friction_model;
    scene.shake.friction_model = euler.friction_model;
  }
  if (auto x = node.find("impact_law"))
    euler.impact_law = x->choice({"plastic", "restitution"}) == "plastic" ? ImpactLaw::plastic
                                                                          : ImpactLaw::restitution;
  if (auto x = node.find("compatible")) read_compatible(*x, euler.frictional, euler.compatible);
  // Dumont Sec. 2.1: theta in [1/2, 1]; e_t of eq. 20 in [0, 1].
  // Krabbenhoft/NURBS chapter eq. 4.7: the same range, e = (1 - theta) / theta in [0, 1].
  if (auto x = node.find("theta"))
    scene.theta.theta = scene.variational.theta = x->in_range(0.5, 1.0);
  // Contact stiffnesses k_N, k_T of eq. 4.8 (N/m per unit thickness), > 0, "inf" for rigid.
  if (auto x = node.find("k_n")) scene.variational.contact.stiffness.normal = read_stiffness(*x);
  if (auto x = node.find("k_t"))
    scene.variational.contact.stiffness.tangential = read_stiffness(*x);
  if (auto x = node.find("tangential_restitution"))
    scene.theta.tangential_restitution = x->in_range(0.0, 1.0);
  // Preclik et al. Sec. 3.1: epsilon in [0, 1].
  if (auto x = node.find("error_reduction"))
    scene.impulse_velocity.error_reduction = x->in_range(0.0, 1.0);
  // Kleinert et al. eq. 21: the linearized end-of-step gap below which RATTLE's velocity CCP
  // holds a contact, m.
  if (auto x = node.find("closed_gap")) scene.shake.closed_gap = x->non_negative();
  if (scene.scheme == Scheme::shake || scene.scheme == Scheme::rattle)
    scene.shake.scheme = scene.scheme == Scheme::shake ? ShakeScheme::shake : ShakeScheme::rattle;
}

void read_dem(const Node& node, Scene& scene) {
  node.expect_object(section_keys("dem"));
  DemMaterialLaw& law = scene.dem.law;
  if (auto x = node.find("law"))
    law.law = x->choice({"hookean", "hertzian"}, "contact law") == "hookean" ? NormalLaw::hookean
                                                                             : NormalLaw::hertzian;
  if (auto x = node.find("damping_ratio")) law.damping_ratio = x->non_negative();
  if (auto x = node.find("tangential")) law.tangential = x->boolean();
  if (auto x = node.find("tangential_stiffness_ratio"))
    law.tangential_stiffness_ratio = x->non_negative();
  if (auto x = node.find("tangential_damping_ratio"))
    law.tangential_damping_ratio = x->non_negative();
  if (auto x = node.find("time_step")) {
    scene.dem_time_step_auto = x->value().is_string();
    if (scene.dem_time_step_auto && x->string() != "auto") x->fail_type("a number > 0 or \"auto\"");
    if (!scene.dem_time_step_auto) scene.dem.time_step = x->positive();
  }
  if (auto x = node.find("skin")) scene.dem.skin = x->non_negative();
  if (auto x = node.find("duration")) scene.dem_duration = x->non_negative();
}

void read_collision(const Node& node, CollisionOptions& collision) {
  node.expect_object(section_keys("collision"));
  if (auto x = node.find("margin")) collision.margin = x->non_negative();
  if (auto x = node.find("cell_size")) collision.cell_size = x->non_negative();
}

void read_contact_order(const Node& node, SolverOptions& options) {
  if (node.value().is_array()) {
    const std::vector<Node> entries = node.elements();
    const long n = static_cast<long>(entries.size());
    std::vector<bool> used(entries.size(), false);
    for (const Node& entry : entries) {
      const long i = entry.integer(0, n - 1);
      if (used[i])
        entry.fail("contact " + std::to_string(i) +
                   " appears twice; a custom order must be a permutation of 0 .. " +
                   std::to_string(n - 1));
      used[i] = true;
      options.custom_order.push_back(static_cast<int>(i));
    }
    options.order = ContactOrder::custom;
    return;
  }
  if (!node.value().is_string())
    node.fail_type("\"natural\", \"reverse\", \"random\" or an array (a permutation)");
  const std::string text = node.choice({"natural", "reverse", "random"});
  options.order = text == "natural"   ? ContactOrder::natural
                  : text == "reverse" ? ContactOrder::reverse
                                      : ContactOrder::random;
}

// A key of the solver section that the chosen solver does not read (the registry's table of
// what each one reads) is an error naming it: it would be silently ignored.
void check_solver_keys(const Node& node, const std::string& solver) {
  const std::vector<std::string> reads = solver_option_keys(solver);
  for (const std::string& key : section_keys("solver")) {
    if (key == "name" || key == "on_failure") continue;
    if (auto x = node.find(key); x && std::find(reads.begin(), reads.end(), key) == reads.end())
      x->fail("not read by solver \"" + solver + "\"; its keys are: " + join(reads));
  }
}

// solver.nlgs: the options of Dumont's NLGS (nlgs_solver.hpp).
void read_nlgs(const Node& node, NlgsOptions& nlgs) {
  node.expect_object(section_keys("solver.nlgs"));
  // alpha of rho = alpha rho_bar (Dumont Sec. 4); 0 takes the method's default.
  if (auto x = node.find("alpha")) nlgs.rho_factor = x->non_negative();
  if (auto x = node.find("stopping"))
    nlgs.stopping = x->choice({"merit", "epsilon_glob"}) == "merit" ? NlgsStopping::merit
                                                                    : NlgsStopping::epsilon_glob;
  if (auto x = node.find("epsilon_glob_tolerance")) nlgs.epsilon_glob_tolerance = x->positive();
  if (auto x = node.find("newton_tolerance")) nlgs.newton_tolerance = x->positive();
  if (auto x = node.find("newton_max_iterations"))
    nlgs.newton_max_iterations = static_cast<int>(x->integer(1, std::numeric_limits<int>::max()));
  if (auto x = node.find("newton_line_search")) nlgs.newton_line_search = x->boolean();
}

// variational_theta solves with the conic QP core (variational_stepper.hpp): solver.name, if
// given, picks its back-end (ipm-direct, the default, or ipm for CG); solver.tolerance and
// solver.max_iterations (Newton steps) set the core's.
void read_variational_solver(const Node& root, Scene& scene) {
  conic::InteriorPointOptions& ipm = scene.variational.interior_point;
  const auto section = root.find("solver");
  if (!section) return;
  if (auto x = section->find("name")) {
    if (scene.solver != "ipm" && scene.solver != "ipm-direct")
      x->fail("scheme \"variational_theta\" solves with the interior point core: use "
              "\"ipm-direct\" (default) or \"ipm\"");
    ipm.backend = scene.solver == "ipm" ? conic::LinearBackend::conjugate_gradient
                                        : conic::LinearBackend::cholmod;
  }
  if (section->has("tolerance")) ipm.tolerance = scene.solver_options.tolerance;
  if (section->has("max_iterations")) ipm.max_newton_steps = scene.solver_options.max_iterations;
}

void read_solver(const Node& node, Scene& scene) {
  node.expect_object(section_keys("solver"));
  SolverOptions& options = scene.solver_options;
  if (auto x = node.find("name")) scene.solver = x->choice(solver_names(), "solver");
  check_solver_keys(node, scene.solver);
  if (auto x = node.find("nlgs")) read_nlgs(*x, scene.nlgs);
  if (auto x = node.find("tolerance")) options.tolerance = x->positive();
  if (auto x = node.find("max_iterations"))
    options.max_iterations = static_cast<int>(x->integer(1, std::numeric_limits<int>::max()));
  if (auto x = node.find("warm_start")) options.warm_start = x->boolean();
  if (auto x = node.find("relaxation")) {
    options.relaxation = x->number();
    // The maximum-dissipation solvers blend with the previous iterate (Preclik et al. Sec. 3.2)
    // and take omega in (0, 1]; the projected ones over-relax up to 2.
    const bool blend = scene.solver.rfind("md_", 0) == 0;
    const double omega = options.relaxation;
    if (!(omega > 0.0 && (blend ? omega <= 1.0 : omega < 2.0)))
      x->fail("must lie in " + std::string(blend ? "(0, 1]" : "(0, 2)") + " for solver \"" +
              scene.solver + "\", got " + format_number(options.relaxation));
  }
  if (auto x = node.find("order")) read_contact_order(*x, options);
  if (auto x = node.find("seed")) options.seed = static_cast<unsigned>(x->integer(0, 4294967295L));
  if (auto x = node.find("adaptive_restart")) options.adaptive_restart = x->boolean();
  if (auto x = node.find("initial_lipschitz")) options.initial_lipschitz = x->non_negative();
  if (auto x = node.find("check_every"))
    options.check_every = static_cast<int>(x->integer(1, std::numeric_limits<int>::max()));
  if (auto x = node.find("record_history")) options.record_history = x->boolean();
  if (auto x = node.find("divergence_factor")) {
    options.divergence_factor = x->number();
    if (!(options.divergence_factor > 1.0))
      x->fail("must be > 1, got " + format_number(options.divergence_factor));
  }
  if (auto x = node.find("on_failure"))
    scene.on_solver_failure = x->choice({"warn", "stop"}) == "warn" ? SolverFailurePolicy::warn
                                                                    : SolverFailurePolicy::stop;
}

void read_output(const Node& node, OutputOptions& output) {
  node.expect_object(section_keys("output"));
  if (auto x = node.find("directory")) {
    output.directory = x->string();
    if (output.directory.empty()) x->fail("must not be empty");
  }
  if (auto x = node.find("every")) output.every = x->integer(1);
  if (auto x = node.find("csv")) output.csv = x->boolean();
  if (auto x = node.find("vtk")) output.vtk = x->boolean();
  if (auto x = node.find("progress")) output.progress = x->boolean();
  if (auto x = node.find("checkpoint_every")) output.checkpoint_every = x->integer(0);
}

// duration / time_step rounded up, to the nearest integer when it is one up to rounding
// error (0.3 / 0.1 gives 3).
double step_count(double duration, double time_step) {
  const double ratio = duration / time_step;
  const double nearest = std::round(ratio);
  return std::abs(ratio - nearest) <= 1e-9 * std::max(1.0, ratio) ? nearest : std::ceil(ratio);
}

// Number of steps from "steps" or "duration".
long read_step_count(const Node& root, double time_step) {
  if (root.has("steps") && root.has("duration"))
    root.fail("give either \"steps\" or \"duration\", not both");
  if (auto steps = root.find("steps")) return steps->integer(0);
  if (auto duration = root.find("duration")) {
    const double steps = step_count(duration->non_negative(), time_step);
    if (steps > 1e15) duration->fail("gives " + format_number(steps) + " steps, too many to run");
    return static_cast<long>(steps);
  }
  root.fail("missing the run length: give \"steps\" (a count) or \"duration\" (seconds)");
}

// Re-throws a validation error of the built world or options with the file name in front.
template <class F>
void validate_in(const std::string& source, F&& validate) {
  try {
    validate();
  } catch (const InputError& e) {
    throw InputError(source + ": " + e.what());
  }
}

// Walks the document as the parser does and records where it fails, so that a malformed
// file is reported by line, column and (for a number out of range) JSON path. Only run
// after the ordinary parse has failed.
class ErrorLocator final : public nlohmann::json_sax<json> {
 public:
  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override {
    value();
    frames_.push_back({false, -1, {}});
    return true;
  }
  bool key(string_t& name) override {
    frames_.back().key = name;
    return true;
  }
  bool end_object() override {
    frames_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    value();
    frames_.push_back({true, -1, {}});
    return true;
  }
  bool end_array() override {
    frames_.pop_back();
    return true;
  }
  bool parse_error(std::size_t position, const std::string&,
                   const json::exception& error) override {
    position_ = position;
    id_ = error.id;
    message_ = error.what();
    // The failing value was never reported, so inside an array it is the next element.
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
    path_ = current_path();
    return false;
  }

  std::size_t position() const { return position_; }
  int id() const { return id_; }
  const std::string& message() const { return message_; }
  const std::string& path() const { return path_; }

 private:
  struct Frame {
    bool array;
    long index;
    std::string key;
  };
  bool value() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().index;
    return true;
  }
  std::string current_path() const {
    std::string path;
    for (const Frame& frame : frames_) {
      if (frame.array) {
        path += '[';
        path += std::to_string(std::max(frame.index, 0L));
        path += ']';
      } else if (!frame.key.empty()) {
        if (!path.empty()) path += '.';
        path += frame.key;
      }
    }
    return path;
  }

  std::vector<Frame> frames_;
  std::size_t position_ = 0;
  int id_ = 0;
  std::string message_;
  std::string path_;
};

[[noreturn]] void throw_malformed(const std::string& source, const std::string& text,
                                  const json::exception& original) {
  ErrorLocator locator;
  json::sax_parse(text, &locator, json::input_format_t::json, true, true);
  std::string detail = locator.message().empty() ? original.what() : locator.message();
  // Drop nlohmann's "[json.exception.parse_error.101] parse error at line 3, column 7: ";
  // the line and column are recomputed below from the byte position.
  if (const auto bracket = detail.find("] "); detail.rfind("[json.exception", 0) == 0)
    detail = detail.substr(bracket + 2);
  if (detail.rfind("parse error", 0) == 0)
    if (const auto colon = detail.find(": "); colon != std::string::npos)
      detail = detail.substr(colon + 2);
  const std::size_t end = std::min(locator.position(), text.size());
  const long line = 1 + std::count(text.begin(), text.begin() + static_cast<long>(end), '\n');
  const std::size_t line_start = end == 0 ? 0 : text.rfind('\n', end - 1);
  const std::size_t column = line_start == std::string::npos ? end : end - line_start - 1;
  std::string message = source + ": line " + std::to_string(line) + ", column " +
                        std::to_string(std::max<std::size_t>(column, 1)) + ": ";
  // id 406 is nlohmann's "number overflow", e.g. 1e999: a number that is not finite.
  if (locator.id() == 406 && !locator.path().empty())
    message += locator.path() + ": must be a finite number (" + detail + ")";
  else
    message += "malformed JSON: " + detail;
  throw InputError(message);
}

}  // namespace

std::vector<SceneSection> scene_option_keys() { return option_sections(); }

std::vector<std::string> scheme_names() {
  return {"semi_implicit_euler", "theta", "impulse_velocity", "dem", "shake", "rattle",
          "variational_theta"};
}

std::string to_string(Scheme scheme) { return scheme_names()[static_cast<std::size_t>(scheme)]; }

double Scene::time_step() const { return semi_implicit_euler.time_step; }

std::unique_ptr<ContactSolver> make_scene_solver(const Scene& scene) {
  if (scene.solver.rfind("nlgs-", 0) != 0) return make_solver(scene.solver, scene.solver_options);
  NlgsOptions nlgs = scene.nlgs;
  // eps_glob with forces r / dt, as Dumont writes it (nlgs_solver.hpp).
  nlgs.time_step = scene.time_step();
  return make_nlgs_solver(scene.solver, scene.solver_options, nlgs);
}

std::unique_ptr<Stepper> make_stepper(Scene& scene) {
  std::unique_ptr<Stepper> stepper;
  validate_in(scene.source, [&] {
    switch (scene.scheme) {
      case Scheme::semi_implicit_euler:
        stepper = std::make_unique<SemiImplicitEulerStepper>(scene.world, scene.semi_implicit_euler,
                                                             make_scene_solver(scene));
        break;
      case Scheme::theta:
        stepper =
            std::make_unique<ThetaStepper>(scene.world, scene.theta, make_scene_solver(scene));
        break;
      case Scheme::impulse_velocity:
        stepper = std::make_unique<ImpulseVelocityStepper>(scene.world, scene.impulse_velocity,
                                                           make_scene_solver(scene));
        break;
      case Scheme::shake:
      case Scheme::rattle:
        stepper =
            std::make_unique<ShakeStepper>(scene.world, scene.shake, make_scene_solver(scene));
        break;
      case Scheme::variational_theta:
        stepper = std::make_unique<VariationalStepper>(scene.world, scene.variational);
        break;
      case Scheme::dem:
        break;
    }
  });
  if (scene.scheme == Scheme::dem)
    stepper = std::make_unique<DemStepper>(scene.world, dem_run(scene).options);
  return stepper;
}

long scene_step_count(const Scene& scene) {
  return scene.scheme == Scheme::dem ? dem_run(scene).steps : scene.steps;
}

DemRun dem_run(const Scene& scene) {
  const World& world = scene.world;
  for (const RigidBody& body : world.bodies) {
    const Material& material = world.materials[body.material];
    if (material.youngs_modulus == 0.0)
      throw InputError(scene.source + ": scheme \"dem\": material \"" + material.name +
                       "\" (of body \"" + body.name +
                       "\") has no youngs_modulus; DEM needs one (in Pa, or \"rigid\")");
  }
  DemRun run;
  run.options = scene.dem;
  validate_in(scene.source, [&] {
    if (scene.dem_time_step_auto) {
      run.options.time_step = 0.5 * estimate_stable_time_step(world, run.options);
      if (!std::isfinite(run.options.time_step))
        throw InputError(
            "dem.time_step: \"auto\" needs a dynamic body to estimate from; give "
            "a number");
    }
    run.options.validate();
  });
  const double duration =
      scene.dem_duration.value_or(static_cast<double>(scene.steps) * scene.time_step());
  const double steps = step_count(duration, run.options.time_step);
  if (steps > 1e15)
    throw InputError(scene.source + ": scheme \"dem\": " + format_number(duration) + " s at " +
                     format_number(run.options.time_step) + " s per step gives " +
                     format_number(steps) + " steps, too many to run");
  run.steps = static_cast<long>(steps);
  return run;
}

Scene parse_scene(const nlohmann::json& document, const std::string& source_name) {
  const Node root(document, "", source_name);
  root.expect_object(section_keys(""));
  if (auto x = root.find("description")) x->string();

  Scene scene;
  scene.source = source_name;
  World& world = scene.world;
  Context context;
  if (auto x = root.find("dimension")) {
    const long d = x->integer(2, 3);
    context.dimension = d == 2 ? Dimension::two : Dimension::three;
  }
  world.dimension = context.dimension;
  if (auto x = root.find("gravity")) world.gravity = read_point(*x, context);
  if (auto x = root.find("time_step")) scene.semi_implicit_euler.time_step = x->positive();
  scene.theta.time_step = scene.impulse_velocity.time_step = scene.shake.time_step =
      scene.variational.time_step = scene.time_step();
  scene.steps = read_step_count(root, scene.time_step());
  if (auto x = root.find("method")) {
    // The older spelling of integrator.scheme: cd is semi_implicit_euler.
    if (auto integrator = root.find("integrator"); integrator && integrator->has("scheme"))
      x->fail("give the scheme once, as integrator.scheme (method is its older spelling)");
    scene.scheme =
        x->choice({"cd", "dem"}, "method") == "cd" ? Scheme::semi_implicit_euler : Scheme::dem;
  }
  if (auto x = root.find("integrator")) read_integrator(*x, scene);
  if (auto x = root.find("dem")) read_dem(*x, scene);
  if (auto x = root.find("collision")) {
    read_collision(*x, scene.semi_implicit_euler.collision);
    scene.theta.collision = scene.impulse_velocity.collision = scene.shake.collision =
        scene.variational.collision = scene.semi_implicit_euler.collision;
  }
  if (auto x = root.find("solver")) read_solver(*x, scene);
  if (scene.scheme == Scheme::variational_theta) read_variational_solver(root, scene);

  if (auto x = root.find("materials"))
    read_materials(*x, world, context);
  else
    context.materials[world.materials.front().name] = 0;
  if (auto x = root.find("friction")) read_friction(*x, world, context);

  if (auto x = root.find("bodies"))
    for (const Node& body : x->elements()) read_body(body, world, context);
  if (auto x = root.find("generators")) {
    const std::vector<Node> generators = x->elements();
    for (std::size_t i = 0; i < generators.size(); ++i) {
      const Node& generator = generators[i];
      if (!generator.value().is_object()) generator.fail_type("an object");
      const std::string type =
          generator.get("type").choice({"grid", "random_spheres", "container"}, "generator type");
      if (type == "grid") generate_grid(generator, i, world, context);
      if (type == "random_spheres") generate_random_spheres(generator, i, world, context);
      if (type == "container") generate_container(generator, i, world, context);
    }
  }

  if (auto x = root.find("output")) read_output(*x, scene.output);
  if (scene.output.directory.empty())
    scene.output.directory =
        (std::filesystem::path("out") / std::filesystem::path(source_name).stem()).string();

  validate_in(source_name, [&] { world.validate(); });
  validate_in(source_name, [&] {
    scene.semi_implicit_euler.validate();
    scene.theta.validate();
    scene.impulse_velocity.validate();
    scene.shake.validate();
    if (scene.scheme == Scheme::variational_theta) scene.variational.validate(world);
  });
  // The solver's own validator (what its constructor checks), so that `moreau check` reports
  // what `moreau run` would refuse.
  validate_in(source_name + ": solver", [&] { make_scene_solver(scene); });
  // A DEM scene's materials and time step are checked now, not when the run starts.
  if (scene.scheme == Scheme::dem) dem_run(scene);
  return scene;
}

Scene load_scene(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code status_error;
  const fs::file_status status = fs::status(path, status_error);
  if (!fs::exists(status)) throw InputError(path + ": scene file not found");
  if (fs::is_directory(status)) throw InputError(path + ": is a directory, not a scene file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open the scene file for reading");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();

  json document;
  try {
    document = json::parse(text, nullptr, true, /*ignore_comments=*/true);
  } catch (const json::exception& e) {
    throw_malformed(path, text, e);
  }
  return parse_scene(document, path);
}

}  // namespace moreau
