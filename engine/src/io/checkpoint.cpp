#include "moreau/io/checkpoint.hpp"

#include <unistd.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "moreau/core/error.hpp"
#include "moreau/dem/dem_stepper.hpp"
#include "moreau/variational/variational_stepper.hpp"

namespace moreau {
namespace {

using json = nlohmann::json;
constexpr const char* kFormat = "moreau checkpoint";
constexpr int kVersion = 2;  // 1: the bodies only, no scheme_state or metadata

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

// The shear history rows of `rows` (path `where`); a body index must lie in [0, bodies) when
// `bodies` >= 0. The forces read back exactly as written (17 significant digits).
variational::ShearHistory shear_history_rows(const json& rows, int bodies,
                                             const std::string& where) {
  if (!rows.is_array()) throw InputError(where + ": expected an array");
  variational::ShearHistory history;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string row = where + "[" + std::to_string(i) + "]";
    const json& c = rows[i];
    if (!c.is_array() || c.size() != 6 || !c[0].is_number_integer() || !c[1].is_number_integer() ||
        !c[2].is_number_integer())
      throw InputError(row + ": expected [body_a, body_b, order, fx, fy, fz]");
    const variational::ContactKey key{c[0].get<int>(), c[1].get<int>(), c[2].get<int>()};
    const auto outside = [&](int body) { return body < 0 || (bodies >= 0 && body >= bodies); };
    if (outside(key.body_a) || outside(key.body_b))
      throw InputError(row + ": a body outside the world's " + std::to_string(bodies));
    if (history.forces().count(key) > 0) throw InputError(row + ": the contact appears twice");
    std::vector<double> force;
    for (std::size_t k = 3; k < 6; ++k) {
      if (!c[k].is_number() || !std::isfinite(c[k].get<double>()))
        throw InputError(row + ": the force is not finite numbers");
      force.push_back(c[k].get<double>());
    }
    history.set(key, Vec3(force[0], force[1], force[2]));
  }
  return history;
}

// The DEM's springs of `rows` (path `where`), body indices as in shear_history_rows and in
// ascending order per pair; read back exactly as written.
std::vector<TangentialSpring> tangential_spring_rows(const json& rows, int bodies,
                                                     const std::string& where) {
  if (!rows.is_array()) throw InputError(where + ": expected an array");
  std::vector<TangentialSpring> springs;
  std::set<std::pair<int, int>> seen;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string row = where + "[" + std::to_string(i) + "]";
    const json& c = rows[i];
    if (!c.is_array() || c.size() != 5 || !c[0].is_number_integer() || !c[1].is_number_integer())
      throw InputError(row + ": expected [body_a, body_b, sx, sy, sz]");
    TangentialSpring spring{c[0].get<int>(), c[1].get<int>(), Vec3::Zero()};
    if (spring.body_a < 0 || (bodies >= 0 && spring.body_b >= bodies))
      throw InputError(row + ": a body outside the world's " + std::to_string(bodies));
    if (!(spring.body_a < spring.body_b)) throw InputError(row + ": expected body_a < body_b");
    if (!seen.insert({spring.body_a, spring.body_b}).second)
      throw InputError(row + ": the pair appears twice");
    for (int k = 0; k < 3; ++k) {
      if (!c[2 + k].is_number() || !std::isfinite(c[2 + k].get<double>()))
        throw InputError(row + ": the displacement is not finite numbers");
      spring.displacement[k] = c[2 + k].get<double>();
    }
    springs.push_back(spring);
  }
  return springs;
}

// The DEM's forces per body of `rows` (path `where`): one row of six finite numbers per body
// when `bodies` >= 0.
std::vector<Vec6> force_rows(const json& rows, int bodies, const std::string& where) {
  if (!rows.is_array() || (bodies >= 0 && rows.size() != static_cast<std::size_t>(bodies)))
    throw InputError(where + ": expected an array of one row per body" +
                     (bodies >= 0 ? " (" + std::to_string(bodies) + ")" : std::string()));
  std::vector<Vec6> forces(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const std::string row = where + "[" + std::to_string(i) + "]";
    const json& c = rows[i];
    if (!c.is_array() || c.size() != 6)
      throw InputError(row + ": expected [fx, fy, fz, tx, ty, tz]");
    for (int k = 0; k < 6; ++k) {
      if (!c[k].is_number() || !std::isfinite(c[k].get<double>()))
        throw InputError(row + ": expected finite numbers");
      forces[i][k] = c[k].get<double>();
    }
  }
  return forces;
}

// Everything but the bodies: format, version, step, scene, scheme state and metadata.
CheckpointContents read_header(const json& document, int bodies) {
  if (!document.is_object() || document.value("format", "") != kFormat)
    throw InputError("not a checkpoint (no \"format\": \"" + std::string(kFormat) + "\")");
  const int version = document.value("version", 0);
  if (version != 1 && version != kVersion)
    throw InputError("version: expected 1 or " + std::to_string(kVersion));
  CheckpointContents contents;
  const json& step = document.value("step", json());
  if (!step.is_number_integer() || step.get<long>() < 0)
    throw InputError("step: expected an integer >= 0");
  contents.step = step.get<long>();
  contents.scene = document.value("scene", "");
  // Version 1 had neither section: one there is a file of another writer, not ours to guess.
  for (const char* key : {"scheme_state", "metadata"})
    if (version == 1 && document.contains(key))
      throw InputError(std::string(key) + ": a version-1 checkpoint has none");
  if (document.contains("scheme_state")) {
    const json& scheme = document["scheme_state"];
    if (!scheme.is_object()) throw InputError("scheme_state: expected an object");
    for (const auto& [key, value] : scheme.items())
      if (key != "shear_history" && key != "tangential_springs" && key != "forces")
        throw InputError("scheme_state." + key +
                         ": unknown (expected shear_history, tangential_springs or forces)");
    if (scheme.contains("shear_history"))
      contents.shear_history =
          shear_history_rows(scheme["shear_history"], bodies, "scheme_state.shear_history");
    if (scheme.contains("tangential_springs") || scheme.contains("forces")) {
      DemState& dem = contents.dem_state.emplace();
      if (scheme.contains("tangential_springs"))
        dem.springs = tangential_spring_rows(scheme["tangential_springs"], bodies,
                                             "scheme_state.tangential_springs");
      if (scheme.contains("forces"))
        dem.forces = force_rows(scheme["forces"], bodies, "scheme_state.forces");
    }
  }
  if (document.contains("metadata")) {
    contents.metadata = document["metadata"];
    if (!contents.metadata.is_object()) throw InputError("metadata: expected an object");
  }
  return contents;
}

void read_state(const json& document, World& world) {
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

// Parses the file and runs `read` on it; every error names the file.
template <class Read>
CheckpointContents parse_file(const std::filesystem::path& path, const Read& read) {
  std::ifstream in(path);
  if (!in) throw InputError(path.string() + ": cannot open the checkpoint");
  try {
    return read(json::parse(in));
  } catch (const json::exception& e) {
    throw InputError(path.string() + ": malformed checkpoint: " + e.what());
  } catch (const InputError& e) {
    throw InputError(path.string() + ": " + e.what());
  }
}

}  // namespace

void write_checkpoint(const std::filesystem::path& path, const World& world,
                      const CheckpointContents& contents) {
  if (!contents.metadata.is_null() && !contents.metadata.is_object())
    throw InputError(path.string() + ": metadata: expected an object");
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
  json document = {{"format", kFormat},     {"version", 1},       {"scene", contents.scene},
                   {"step", contents.step}, {"time", world.time}, {"bodies", bodies}};
  if (contents.shear_history) {
    json rows = json::array();
    for (const auto& [key, f] : contents.shear_history->forces())
      rows.push_back(json::array({key.body_a, key.body_b, key.order, f.x(), f.y(), f.z()}));
    document["scheme_state"]["shear_history"] = rows;
  }
  if (contents.dem_state) {
    json springs = json::array();
    for (const TangentialSpring& s : contents.dem_state->springs)
      springs.push_back(json::array(
          {s.body_a, s.body_b, s.displacement.x(), s.displacement.y(), s.displacement.z()}));
    document["scheme_state"]["tangential_springs"] = springs;
    if (!contents.dem_state->forces.empty()) {
      json forces = json::array();
      for (const Vec6& f : contents.dem_state->forces)
        forces.push_back(json::array({f[0], f[1], f[2], f[3], f[4], f[5]}));
      document["scheme_state"]["forces"] = forces;
    }
  }
  if (contents.metadata.is_object()) document["metadata"] = contents.metadata;
  if (document.contains("scheme_state") || document.contains("metadata"))
    document["version"] = kVersion;
  // The partial file is the writing process's own, so that two processes writing the same
  // checkpoint (a cache shared by two runs) do not write into one partial file or rename it
  // from under each other: the last rename wins, each leaving a whole file.
  const std::filesystem::path partial = path.string() + ".partial" + std::to_string(::getpid());
  {
    std::ofstream out(partial);
    out << document.dump(1) << '\n';  // nlohmann writes doubles with round-trip precision
    out.flush();
    if (!out) throw InputError(path.string() + ": cannot write the checkpoint");
  }
  std::error_code error;
  std::filesystem::rename(partial, path, error);  // replaces `path` whole
  if (error) throw InputError(path.string() + ": cannot write the checkpoint: " + error.message());
}

void write_checkpoint(const std::filesystem::path& path, const World& world, long step,
                      const std::string& scene) {
  write_checkpoint(path, world, CheckpointContents{step, scene, std::nullopt, json()});
}

CheckpointContents read_checkpoint_contents(const std::filesystem::path& path, World& world) {
  return parse_file(path, [&](const json& document) {
    CheckpointContents contents = read_header(document, static_cast<int>(world.bodies.size()));
    read_state(document, world);
    return contents;
  });
}

CheckpointContents read_checkpoint_header(const std::filesystem::path& path) {
  return parse_file(path, [](const json& document) { return read_header(document, -1); });
}

long read_checkpoint(const std::filesystem::path& path, World& world) {
  const CheckpointContents contents = read_checkpoint_contents(path, world);
  for (const auto& [carried, key] :
       {std::pair{contents.shear_history.has_value(), "shear_history"},
        std::pair{contents.dem_state.has_value(), "tangential_springs"}})
    if (carried)
      throw InputError(path.string() + ": scheme_state." + key +
                       ": carried by the checkpoint, but this run does not restore it (it would "
                       "not continue as the run that wrote it)");
  return contents.step;
}

CheckpointWriter::CheckpointWriter(std::filesystem::path directory, long every, std::string scene)
    : directory_(std::move(directory)), every_(every), scene_(std::move(scene)) {}

std::filesystem::path CheckpointWriter::path(long step) const {
  return directory_ / ("checkpoint_" + std::to_string(step) + ".json");
}

namespace {

// The world after `step` and the scheme's own state: the variational scheme's shear history,
// without which a restarted run would not continue as the uninterrupted one.
void write_run_checkpoint(const std::filesystem::path& path, const Stepper& stepper, long step,
                          const std::string& scene) {
  CheckpointContents contents;
  contents.step = step;
  contents.scene = scene;
  write_stepper_checkpoint(path, stepper, std::move(contents));
}

}  // namespace

void write_stepper_checkpoint(const std::filesystem::path& path, const Stepper& stepper,
                              CheckpointContents contents) {
  if (const auto* variational = dynamic_cast<const VariationalStepper*>(&stepper))
    contents.shear_history = variational->shear_history();
  if (const auto* dem = dynamic_cast<const DemStepper*>(&stepper))
    contents.dem_state = dem->state();
  write_checkpoint(path, stepper.world(), contents);
}

void CheckpointWriter::on_step(const Stepper& stepper, const StepReport& report) {
  if (every_ > 0 && report.step % every_ == 0)
    write_run_checkpoint(path(report.step), stepper, report.step, scene_);
}

void CheckpointWriter::on_finish(const Stepper& stepper, const RunOutcome& outcome) {
  // A failed run may hold a state that is not finite: it is no place to restart from.
  const long step = stepper.steps_taken();
  if (outcome.status != "failed" && (every_ <= 0 || step % every_ != 0))
    write_run_checkpoint(path(step), stepper, step, scene_);
}

void restore_scheme_state(const CheckpointContents& contents, Stepper& stepper,
                          const std::filesystem::path& path) {
  if (auto* dem = dynamic_cast<DemStepper*>(&stepper)) {
    if (contents.shear_history)
      throw InputError(path.string() +
                       ": scheme_state.shear_history: a state of the variational_theta scheme, "
                       "not of \"dem\"");
    try {
      dem->resume(contents.dem_state.value_or(DemState{}));
    } catch (const InputError& e) {
      throw InputError(path.string() + ": scheme_state: " + e.what());
    }
    return;
  }
  if (contents.dem_state)
    throw InputError(path.string() +
                     ": scheme_state.tangential_springs: a state of the dem "
                     "scheme, not of \"" +
                     stepper.scheme() + "\"");
  if (!contents.shear_history) return;
  auto* variational = dynamic_cast<VariationalStepper*>(&stepper);
  if (!variational)
    throw InputError(path.string() +
                     ": scheme_state.shear_history: a state of the "
                     "variational_theta scheme, not of \"" +
                     stepper.scheme() + "\"");
  variational->resume_shear_history(*contents.shear_history);
}

}  // namespace moreau
