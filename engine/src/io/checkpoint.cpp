#include "moreau/io/checkpoint.hpp"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <type_traits>
#include <utility>
#include <variant>

#include "moreau/core/error.hpp"

namespace moreau {
namespace {

using json = nlohmann::json;
constexpr const char* kFormat = "moreau checkpoint";
constexpr int kVersion = 1;

json vector_json(const Vec3& v) { return json::array({v.x(), v.y(), v.z()}); }

std::string motion_name(Motion motion) {
  switch (motion) {
    case Motion::fixed:
      return "fixed";
    case Motion::prescribed:
      return "prescribed";
    case Motion::dynamic:
      break;
  }
  return "dynamic";
}

// What a body is, beside its state: its motion and shape (type, size, offset; a polygon
// by its outline), written so that a checkpoint read into another scene is caught.
json identity_json(const RigidBody& b) {
  json shape = std::visit(
      [](const auto& g) -> json {
        using G = std::decay_t<decltype(g)>;
        if constexpr (std::is_same_v<G, Sphere>) return {{"radius", g.radius}};
        if constexpr (std::is_same_v<G, HalfSpace>) return {{"normal", vector_json(g.normal)}};
        if constexpr (std::is_same_v<G, Box>)
          return {{"half_extents", vector_json(g.half_extents)}};
        if constexpr (std::is_same_v<G, Capsule>)
          return {{"half_length", g.half_length}, {"radius", g.radius}};
        if constexpr (std::is_same_v<G, Polygon>) {
          json outline = json::array();
          for (const Vec2& v : g.outline) outline.push_back(json::array({v.x(), v.y()}));
          return {{"outline", outline}};
        }
      },
      b.shape.geometry);
  shape["type"] = shape_name(b.shape.geometry);
  shape["offset"] = vector_json(b.shape.offset);
  return {
      {"motion", motion_name(b.motion)}, {"rotation_locked", b.rotation_locked}, {"shape", shape}};
}

// The numbers at `key` of `node` (path `where`), `size` of them, all finite.
std::vector<double> read_numbers(const json& node, const std::string& key, std::size_t size,
                                 const std::string& where) {
  const std::string path = where + "." + key;
  if (!node.contains(key)) throw InputError(path + ": missing");
  const json& value = node[key];
  if (!value.is_array() || value.size() != size)
    throw InputError(path + ": expected an array of " + std::to_string(size) + " numbers");
  std::vector<double> out;
  for (const json& x : value) {
    if (!x.is_number() || !std::isfinite(x.get<double>()))
      throw InputError(path + ": expected finite numbers");
    out.push_back(x.get<double>());
  }
  return out;
}

Vec3 read_vec3(const json& node, const std::string& key, const std::string& where) {
  const std::vector<double> v = read_numbers(node, key, 3, where);
  return Vec3(v[0], v[1], v[2]);
}

void read_state(const json& document, World& world) {
  if (!document.is_object() || document.value("format", "") != kFormat)
    throw InputError("not a checkpoint (no \"format\": \"" + std::string(kFormat) + "\")");
  if (document.value("version", 0) != kVersion)
    throw InputError("version: expected " + std::to_string(kVersion));
  const json time = document.contains("time") ? document["time"] : json();
  if (!time.is_number() || !std::isfinite(time.get<double>()))
    throw InputError("time: expected a finite number");
  const json& bodies = document.value("bodies", json());
  if (!bodies.is_array() || bodies.size() != world.bodies.size())
    throw InputError("bodies: expected an array of the scene's " +
                     std::to_string(world.bodies.size()) + " bodies");
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    const std::string where = "bodies[" + std::to_string(i) + "]";
    RigidBody& body = world.bodies[i];
    if (bodies[i].value("name", "") != body.name)
      throw InputError(where + ".name: expected \"" + body.name + "\", the scene's body " +
                       std::to_string(i));
    // A version-1 file may lack these keys: each is checked only where present.
    const json identity = identity_json(body);
    for (const auto& [key, expected] : identity.items())
      if (bodies[i].contains(key) && bodies[i][key] != expected)
        throw InputError(where + "." + key + ": the checkpoint has " + bodies[i][key].dump() +
                         ", the scene " + expected.dump());
    body.position = read_vec3(bodies[i], "position", where);
    const std::vector<double> q = read_numbers(bodies[i], "orientation", 4, where);
    const Quat orientation(q[0], q[1], q[2], q[3]);
    if (std::abs(orientation.norm() - 1.0) > 1e-12)
      throw InputError(where + ".orientation: not a unit quaternion");
    body.orientation = orientation;
    body.linear_velocity = read_vec3(bodies[i], "velocity", where);
    body.angular_velocity = read_vec3(bodies[i], "angular_velocity", where);
  }
  world.time = time.get<double>();
}

}  // namespace

void write_checkpoint(const std::filesystem::path& path, const World& world, long step,
                      const std::string& scene) {
  json bodies = json::array();
  for (const RigidBody& b : world.bodies) {
    json body = {{"name", b.name},
                 {"position", vector_json(b.position)},
                 {"orientation", json::array({b.orientation.w(), b.orientation.x(),
                                              b.orientation.y(), b.orientation.z()})},
                 {"velocity", vector_json(b.linear_velocity)},
                 {"angular_velocity", vector_json(b.angular_velocity)}};
    body.update(identity_json(b));
    bodies.push_back(body);
  }
  const json document = {{"format", kFormat}, {"version", kVersion}, {"scene", scene},
                         {"step", step},      {"time", world.time},  {"bodies", bodies}};
  std::ofstream out(path);
  out << document.dump(1) << '\n';  // nlohmann writes doubles with round-trip precision
  out.flush();
  if (!out) throw InputError(path.string() + ": cannot write the checkpoint");
}

long read_checkpoint(const std::filesystem::path& path, World& world) {
  std::ifstream in(path);
  if (!in) throw InputError(path.string() + ": cannot open the checkpoint");
  try {
    const json document = json::parse(in);
    const json& step = document.value("step", json());
    if (!step.is_number_integer() || step.get<long>() < 0)
      throw InputError("step: expected an integer >= 0");
    read_state(document, world);
    return step.get<long>();
  } catch (const json::exception& e) {
    throw InputError(path.string() + ": malformed checkpoint: " + e.what());
  } catch (const InputError& e) {
    throw InputError(path.string() + ": " + e.what());
  }
}

CheckpointWriter::CheckpointWriter(std::filesystem::path directory, long every, std::string scene)
    : directory_(std::move(directory)), every_(every), scene_(std::move(scene)) {}

std::filesystem::path CheckpointWriter::path(long step) const {
  return directory_ / ("checkpoint_" + std::to_string(step) + ".json");
}

void CheckpointWriter::on_step(const Stepper& stepper, const StepReport& report) {
  if (every_ > 0 && report.step % every_ == 0)
    write_checkpoint(path(report.step), stepper.world(), report.step, scene_);
}

void CheckpointWriter::on_finish(const Stepper& stepper, const RunOutcome& outcome) {
  // A failed run may hold a state that is not finite: it is no place to restart from.
  const long step = stepper.steps_taken();
  if (outcome.status != "failed" && (every_ <= 0 || step % every_ != 0))
    write_checkpoint(path(step), stepper.world(), step, scene_);
}

}  // namespace moreau
