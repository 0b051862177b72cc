#include "moreau/io/scene.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <vector>

#include "moreau/collision/collision_detector.hpp"
#include "moreau/core/error.hpp"
#include "moreau/nlgs/nlgs_solver.hpp"
#include "moreau/solver/solver_registry.hpp"
#include "scene_bodies.hpp"
#include "scene_flow.hpp"
#include "scene_generators.hpp"
#include "scene_reader.hpp"
#include "scene_schema.hpp"

namespace moreau {
namespace {

using namespace scene_io;

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

// The schemes whose own keys are in the integrator section and have `key` (or it as their
// nested section).
std::vector<const SchemeRegistration*> integrator_readers(const std::string& key) {
  std::vector<const SchemeRegistration*> readers;
  for (const SchemeRegistration& scheme : registered_schemes()) {
    if (scheme.section != "integrator") continue;
    const std::vector<std::string> keys = option_keys(scheme.options);
    if (scheme.nested_key == key || std::find(keys.begin(), keys.end(), key) != keys.end())
      readers.push_back(&scheme);
  }
  return readers;
}

// A key that the chosen scheme does not read is an error naming it and the schemes that do:
// it would be silently ignored. A scheme that accepts another's keys (the DEM, compared with
// semi_implicit_euler on the same scene) reads those too.
void reject_unread_scheme_keys(const Node& node, const Scene& scene) {
  const SchemeRegistration& chosen = find_scheme(scene.scheme);
  const std::vector<std::string> shared = option_keys(StepSettings::fields());
  for (const auto& item : node.value().items()) {
    const std::string& key = item.key();
    if (key == "scheme" || std::find(shared.begin(), shared.end(), key) != shared.end()) continue;
    const std::vector<const SchemeRegistration*> readers = integrator_readers(key);
    std::vector<std::string> names;
    bool read = false;
    for (const SchemeRegistration* reader : readers) {
      names.push_back(reader->name);
      read = read || reader->name == chosen.name || reader->name == chosen.accepts_keys_of;
    }
    if (!read)
      node.get(key).fail("not read by scheme \"" + scene.scheme +
                         "\"; it is a parameter of: " + join(names));
  }
}

// The integrator section: the scheme (read first, by parse_scene), the shared StepSettings keys
// and every scheme's own keys, each into the options of every scheme that has it.
void read_integrator(const Node& node, Scene& scene) {
  std::vector<std::string> allowed{"scheme"};
  for (const std::string& key : option_keys(StepSettings::fields())) allowed.push_back(key);
  for (const SchemeRegistration& scheme : registered_schemes()) {
    if (scheme.section != "integrator") continue;
    for (const std::string& key : option_keys(scheme.options)) allowed.push_back(key);
    if (!scheme.nested_key.empty()) allowed.push_back(scheme.nested_key);
  }
  std::sort(allowed.begin(), allowed.end());
  allowed.erase(std::unique(allowed.begin(), allowed.end()), allowed.end());
  node.expect_object(allowed);
  reject_unread_scheme_keys(node, scene);
  read_fields(node, StepSettings::fields(), scene.step);
  for (const SchemeRegistration& scheme : registered_schemes()) {
    if (scheme.section != "integrator") continue;
    AnySchemeOptions& options = scene.scheme_options.at(scheme.name);
    read_fields(node, scheme.options, options);
    if (!scheme.nested_key.empty())
      if (const std::optional<Node> x = node.find(scheme.nested_key)) {
        read_options(*x, scheme.nested_options, options);
        check_options(*x, scheme.nested_options, options);
      }
    check_options(node, scheme.options, options);
  }
}

// The section of a scheme with its own (the DEM's "dem"): read whatever the scheme, so that
// `moreau run --scheme` can switch to it.
void read_scheme_section(const Node& node, const SchemeRegistration& scheme, Scene& scene) {
  AnySchemeOptions& options = scene.scheme_options.at(scheme.name);
  read_options(node, scheme.options, options);
  check_options(node, scheme.options, options);
}

// The solver section for a scheme with its own solver (variational_theta's conic QP core).
void read_scheme_solver(const Node& root, Scene& scene) {
  const SchemeRegistration& scheme = find_scheme(scene.scheme);
  const std::optional<Node> section = root.find("solver");
  if (!scheme.solver_section || !section) return;
  std::vector<std::string> given;
  for (const auto& item : section->value().items()) given.push_back(item.key());
  try {
    scheme.solver_section(scene.solver, common_options(scene.solver_options), given,
                          scene.scheme_options.at(scheme.name));
  } catch (const OptionError& e) {
    if (const std::optional<Node> x = section->find(e.key())) x->fail(e.problem());
    section->fail(e.what());
  }
}

void read_collision(const Node& node, CollisionOptions& collision) {
  read_options(node, collision_table(), collision);
  check_options(node, collision_table(), collision);
}

void read_solver(const Node& node, Scene& scene) {
  std::vector<std::string> keys;
  for (const SceneOption& option : solver_section()) keys.push_back(option.key);
  node.expect_object(keys);
  if (auto x = node.find("name")) {
    scene.solver = x->choice(solver_names(), "solver");
    scene.solver_options = default_solver_options(scene.solver);
  }
  read_fields(node, solver_policy_table(), scene);
  read_solver_options(node, scene.solver, scene.solver_options);
}

void read_output(const Node& node, OutputOptions& output) {
  read_options(node, output_table(), output);
  if (auto x = node.find("directory"); x && output.directory.empty()) x->fail("must not be empty");
  check_options(node, output_table(), output);
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

// A SAX walk of the document that knows the JSON path of the value it is at (bodies[3].shape),
// for the checks that run beside nlohmann's parser and name what they find by its path.
class PathTrackingSax : public nlohmann::json_sax<json> {
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
    frames_.push_back({false, -1, {}, {}});
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
    frames_.push_back({true, -1, {}, {}});
    return true;
  }
  bool end_array() override {
    frames_.pop_back();
    return true;
  }

 protected:
  struct Frame {
    bool array;
    long index;
    std::string key;
    std::map<std::string, std::size_t> seen;  // an object's keys, for DuplicateKeyFinder
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
};

// Walks the document as the parser does and records where it fails, so that a malformed
// file is reported by line, column and (for a number out of range) JSON path. Only run
// after the ordinary parse has failed.
class ErrorLocator final : public PathTrackingSax {
 public:
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

// Line and column (from 1) of a byte offset of the text.
std::string line_and_column(const std::string& text, std::size_t offset) {
  const std::size_t end = std::min(offset, text.size());
  const long line = 1 + std::count(text.begin(), text.begin() + static_cast<long>(end), '\n');
  const std::size_t line_start = end == 0 ? std::string::npos : text.rfind('\n', end - 1);
  const std::size_t column = line_start == std::string::npos ? end + 1 : end - line_start;
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

// An iterator over the text that records how far the parser has read, so that a SAX event
// knows where in the file it happens (nlohmann's key events carry no position).
class TrackingIterator {
 public:
  using iterator_category = std::forward_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;
  TrackingIterator() = default;
  TrackingIterator(const char* at, const char* begin, std::size_t* furthest)
      : at_(at), begin_(begin), furthest_(furthest) {}
  reference operator*() const { return *at_; }
  TrackingIterator& operator++() {
    ++at_;
    if (furthest_) *furthest_ = std::max(*furthest_, static_cast<std::size_t>(at_ - begin_));
    return *this;
  }
  TrackingIterator operator++(int) {
    TrackingIterator before = *this;
    ++*this;
    return before;
  }
  bool operator==(const TrackingIterator& other) const { return at_ == other.at_; }
  bool operator!=(const TrackingIterator& other) const { return at_ != other.at_; }

 private:
  const char* at_ = nullptr;
  const char* begin_ = nullptr;
  std::size_t* furthest_ = nullptr;
};

// Finds the first key that appears twice in one object. JSON leaves duplicate names undefined
// and nlohmann keeps the last silently: a scene edited with the old line left in would run
// what nobody asked for.
class DuplicateKeyFinder final : public PathTrackingSax {
 public:
  explicit DuplicateKeyFinder(const std::size_t* read) : read_(read) {}
  bool key(string_t& name) override {
    PathTrackingSax::key(name);
    const auto [first, inserted] = frames_.back().seen.emplace(name, *read_);
    if (!inserted) {
      duplicate_ = current_path();
      first_at_ = first->second;
      second_at_ = *read_;
      return false;  // stop at the first duplicate
    }
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const json::exception&) override {
    return false;  // the ordinary parse reports malformed JSON
  }

  const std::string& duplicate() const { return duplicate_; }
  std::size_t first_at() const { return first_at_; }
  std::size_t second_at() const { return second_at_; }

 private:
  const std::size_t* read_;  // bytes the parser has read
  std::string duplicate_;
  std::size_t first_at_ = 0;
  std::size_t second_at_ = 0;
};

// What the JSON parser would accept but a scene file must not hold: NUL bytes (the parser
// stops at the first and ignores what follows) and duplicate keys.
void check_scene_text(const std::string& path, const std::string& text) {
  if (const std::size_t nul = text.find('\0'); nul != std::string::npos)
    throw InputError(path + ": " + line_and_column(text, nul) +
                     ": a NUL byte; a scene file is JSON text, and nothing may follow its value");
  std::size_t read = 0;
  DuplicateKeyFinder finder(&read);
  const TrackingIterator begin(text.data(), text.data(), &read);
  const TrackingIterator end(text.data() + text.size(), text.data(), nullptr);
  json::sax_parse(begin, end, &finder, json::input_format_t::json, true, true);
  if (!finder.duplicate().empty())
    throw InputError(path + ": " + line_and_column(text, finder.second_at()) + ": " +
                     finder.duplicate() + ": duplicate key (first given at " +
                     line_and_column(text, finder.first_at()) +
                     "); JSON leaves a repeated name undefined, so a scene refuses it");
}

}  // namespace

std::vector<SceneSection> scene_option_keys() { return scene_sections(); }

Scene::Scene() {
  for (const SchemeRegistration& registration : registered_schemes())
    scheme_options.emplace(registration.name, registration.defaults);
}

AnySchemeOptions Scene::options_of(const std::string& name) const {
  const auto found = scheme_options.find(name);
  if (found == scheme_options.end()) find_scheme(name);  // throws, naming the known schemes
  AnySchemeOptions options = found == scheme_options.end() ? AnySchemeOptions() : found->second;
  if (StepSettings* settings = options.settings()) *settings = step;
  return options;
}

void Scene::set_scheme(const std::string& name) {
  find_scheme(name);
  scheme = name;
}

void Scene::set_solver(const std::string& name) {
  if (name == solver) return;
  AnySolverOptions options = default_solver_options(name);
  set_common_options(options, common_options(solver_options));
  solver = name;
  solver_options = std::move(options);
}

std::unique_ptr<ContactSolver> make_scene_solver(const Scene& scene) {
  AnySolverOptions options = scene.solver_options;
  // eps_glob with forces r / dt, as Dumont writes it (nlgs_solver.hpp).
  if (auto* nlgs = options.get_if<NlgsOptions>()) nlgs->time_step = scene.time_step();
  return make_solver(scene.solver, options);
}

std::unique_ptr<Stepper> make_stepper(Scene& scene) {
  const SchemeRegistration& scheme = find_scheme(scene.scheme);
  std::unique_ptr<Stepper> stepper;
  validate_in(scene.source, [&] {
    stepper = make_stepper(scheme.name, scene.world, scene.options_of(scheme.name),
                           scheme.takes_solver ? make_scene_solver(scene) : nullptr);
  });
  return stepper;
}

long scene_step_count(const Scene& scene, double time_step) {
  if (time_step == scene.time_step()) return scene.steps;
  const double duration = static_cast<double>(scene.steps) * scene.time_step();
  const double steps = step_count(duration, time_step);
  if (steps > 1e15)
    throw InputError(scene.source + ": scheme \"" + scene.scheme +
                     "\": " + format_number(duration) + " s at " + format_number(time_step) +
                     " s per step gives " + format_number(steps) + " steps, too many to run");
  return static_cast<long>(steps);
}

Scene parse_scene(const nlohmann::json& document, const std::string& source_name) {
  const Node root(document, "", source_name);
  Scene scene;
  scene.source = source_name;
  read_options(root, top_level_table(), scene);  // time_step: the other keys are read below
  check_options(root, top_level_table(), scene);
  if (auto x = root.find("description")) x->string();
  World& world = scene.world;
  Context context;
  if (auto x = root.find("dimension")) {
    const long d = x->integer(2, 3);
    context.dimension = d == 2 ? Dimension::two : Dimension::three;
  }
  world.dimension = context.dimension;
  if (auto x = root.find("gravity")) world.gravity = read_point(*x, context);
  scene.steps = read_step_count(root, scene.time_step());
  // The simulated time must be a number: 2^60 steps of 1e300 s is no run.
  if (!std::isfinite(static_cast<double>(scene.steps) * scene.time_step()))
    root.get(root.has("steps") ? "steps" : "duration")
        .fail(std::to_string(scene.steps) + " steps of " + format_number(scene.time_step()) +
              " s do not make a finite simulated time");
  if (auto x = root.find("method")) {
    // The older spelling of integrator.scheme: cd is semi_implicit_euler.
    if (auto integrator = root.find("integrator"); integrator && integrator->has("scheme"))
      x->fail("give the scheme once, as integrator.scheme (method is its older spelling)");
    scene.scheme = x->choice({"cd", "dem"}, "method") == "cd" ? "semi_implicit_euler" : "dem";
  }
  if (auto integrator = root.find("integrator"))
    if (auto x = integrator->find("scheme")) scene.scheme = x->choice(scheme_names(), "scheme");
  if (auto x = root.find("integrator")) read_integrator(*x, scene);
  for (const SchemeRegistration& scheme : registered_schemes())
    if (scheme.section != "integrator")
      if (auto x = root.find(scheme.section)) read_scheme_section(*x, scheme, scene);
  if (auto x = root.find("collision")) read_collision(*x, scene.step.collision);
  if (auto x = root.find("solver")) read_solver(*x, scene);
  read_scheme_solver(root, scene);

  if (auto x = root.find("materials"))
    read_materials(*x, world, context);
  else
    context.materials[world.materials.front().name] = 0;
  if (auto x = root.find("friction")) read_friction(*x, world, context);

  if (auto x = root.find("bodies"))
    for (const Node& body : x->elements()) read_body(body, world, context);
  if (auto x = root.find("generators")) read_generators(*x, world, context);
  if (auto x = root.find("channel_flow")) read_channel_flow(*x, scene, context);

  if (auto x = root.find("output")) read_output(*x, scene.output);
  if (scene.output.directory.empty())
    scene.output.directory =
        (std::filesystem::path("out") / std::filesystem::path(source_name).stem()).string();

  validate_in(source_name, [&] { world.validate(); });
  // The chosen scheme's options (with the world, e.g. the DEM's Young's moduli), and those of
  // the scheme whose keys it accepts; an option named by its key is reported at its place in
  // the scheme's section.
  const SchemeRegistration& chosen = find_scheme(scene.scheme);
  std::vector<std::string> validated{chosen.name};
  if (!chosen.accepts_keys_of.empty()) validated.push_back(chosen.accepts_keys_of);
  validate_in(source_name, [&] { scene.step.validate(); });
  for (const std::string& name : validated) {
    const std::optional<Node> section = root.find(find_scheme(name).section);
    try {
      scene.options_of(name).validate(world);
    } catch (const OptionError& e) {
      if (const std::optional<Node> x = section ? section->find_path(e.key()) : std::nullopt)
        x->fail(e.problem());
      throw InputError(source_name + ": " + e.what());
    } catch (const InputError& e) {
      throw InputError(source_name + ": " + e.what());
    }
  }
  // A cell size far below the bodies is refused by the broad phase before it allocates its
  // grid; one pass over the scene's bodies reports it now rather than at the first step.
  if (scene.step.collision.cell_size > 0.0)
    validate_in(source_name, [&] { broad_phase_pairs(world, scene.step.collision); });
  // The solver's own validator (what its constructor checks), so that `moreau check` reports
  // what `moreau run` would refuse.
  validate_in(source_name + ": solver", [&] { make_scene_solver(scene); });
  return scene;
}

Scene load_scene(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code status_error;
  const fs::file_status status = fs::status(path, status_error);
  if (!fs::exists(status)) throw InputError(path + ": scene file not found");
  if (fs::is_directory(status)) throw InputError(path + ": is a directory, not a scene file");
  // A device or a pipe has no size to check before reading and may never end.
  if (!fs::is_regular_file(status))
    throw InputError(path + ": not a regular file (a device, pipe or socket); a scene is a file");
  std::error_code size_error;
  const std::uintmax_t size = fs::file_size(path, size_error);
  if (size_error) throw InputError(path + ": cannot read the file size: " + size_error.message());
  if (size > kMaxSceneBytes)
    throw InputError(path + ": " + std::to_string(size) +
                     " bytes, more than a scene file may hold (" + std::to_string(kMaxSceneBytes) +
                     " bytes); large scenes place their bodies with generators");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open the scene file for reading");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  check_scene_text(path, text);

  json document;
  try {
    document = json::parse(text, nullptr, true, /*ignore_comments=*/true);
  } catch (const json::exception& e) {
    throw_malformed(path, text, e);
  }
  return parse_scene(document, path);
}

}  // namespace moreau
