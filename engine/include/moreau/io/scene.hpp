#pragma once
// Scene files: a JSON description of a world, its time stepping, the run length and the
// output. The format, every key with its unit and default, is documented in
// docs/scene-format.md.
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "moreau/integrator/scheme_registry.hpp"
#include "moreau/model/world.hpp"
#include "moreau/simulation/channel_flow.hpp"
#include "moreau/simulation/observers.hpp"
#include "moreau/solver/solver_registry.hpp"

namespace moreau {

struct OutputOptions {
  // Where CSV, VTK and the run summary go; relative paths are taken from the working
  // directory of the run. The loader fills in "out/<scene file stem>" when none is given.
  std::string directory;
  long every = 1;             // write the state every k steps (and always the first and the last)
  bool csv = true;            // bodies.csv and contacts.csv
  bool vtk = false;           // VTK PolyData per output step plus .pvd collections
  bool progress = true;       // progress lines on stderr during long runs
  long checkpoint_every = 0;  // checkpoint.json every k steps and at the end; 0: none
};

// The option sections of a scene file, by JSON path ("" is the top level; "integrator",
// "integrator.compatible", "dem", "collision", "solver", "solver.nlgs", "output"), each with
// its keys as its option table declares them (the options structs' fields(), read through the
// scheme and solver registries, and src/io/scene_schema.cpp): the parser reads
// exactly these, and docs/scene-format.md documents each key in the table of its section with
// this type, unit and default (scene_test compares them; `moreau schema` prints the rows).
struct SceneOption {
  std::string key;
  std::string type;           // "number in (0, 2)", "integer >= 1", "bool", "`\"a\"` or `\"b\"`"
  std::string unit;           // "m", "s", "" (dimensionless or not a quantity)
  std::string default_value;  // as the docs write it ("1e-8", "`\"pgs\"`", "" for none)
};
struct SceneSection {
  std::string path;
  std::vector<SceneOption> options;
};
std::vector<SceneSection> scene_option_keys();

struct Scene {
  Scene();
  World world;
  std::string scheme = "semi_implicit_euler";  // integrator.scheme, a registered scheme
  // What every scheme reads: the top-level time_step, integrator.frictional, collision.
  StepSettings step;
  // Every registered scheme's own options with the scene's keys (the integrator section, or the
  // scheme's own section such as dem), by name, so that `moreau run --scheme` can switch. A key
  // that the chosen scheme does not read is an error at load time.
  std::map<std::string, AnySchemeOptions> scheme_options;
  std::string solver = "pgs";  // contact solver of the schemes that take one (solver.name)
  // Its options struct (solver and solver.nlgs): default_solver_options(solver) with the
  // scene's keys. set_solver changes both.
  AnySolverOptions solver_options = default_solver_options("pgs");
  long steps = 0;  // number of time steps to run
  OutputOptions output;
  SolverFailurePolicy on_solver_failure = SolverFailurePolicy::warn;
  // The inflow and outlet of a granular channel flow (section channel_flow), driven by
  // ChannelInflow (moreau/simulation/channel_flow.hpp); unset for a closed world.
  std::optional<ChannelFlowOptions> channel_flow;
  std::string source;  // file name (or the name given to parse_scene), used in messages

  double time_step() const { return step.time_step; }  // the scene's time_step, s
  // The options of scheme `name` as the scene sets them: its own keys with the shared
  // StepSettings. InputError for a scheme that is not registered.
  AnySchemeOptions options_of(const std::string& name) const;
  template <class Options>
  Options options_of(const std::string& name) const {
    return options_of(name).get<Options>();
  }
  // Another scheme (`moreau run --scheme`): InputError naming the known ones for an unknown
  // name.
  void set_scheme(const std::string& name);
  // Another contact solver (`moreau run --solver`): its options struct with its defaults and
  // the scene's common options (tolerance, max_iterations, warm_start, record_history); the
  // scene's own solver keeps all its options.
  void set_solver(const std::string& name);
};

// The largest scene file read (64 MiB): explicit bodies take about 150-300 bytes each, so this
// holds a few hundred thousand of them; larger scenes place bodies with generators. Checked
// before anything is read, so that reading a scene takes at most a few times this in memory
// (the text and its parsed document).
inline constexpr std::uintmax_t kMaxSceneBytes = std::uintmax_t{64} << 20;

// The most bodies a scene may hold (10 million, a few GB of state): generators' counts are
// checked against it before a body is made.
inline constexpr std::size_t kMaxSceneBodies = 10000000;

// Reads and parses a scene file. Throws InputError naming the file, the JSON path and the
// problem (missing file, not a regular file, larger than kMaxSceneBytes, malformed JSON with
// line and column, NUL bytes, a duplicate key with both places, unknown key, wrong type,
// non-finite number, out-of-range value, unknown name), and validates the resulting world
// and step options.
Scene load_scene(const std::string& path);

// Same as load_scene for an already parsed document; `source_name` prefixes every message.
Scene parse_scene(const nlohmann::json& document, const std::string& source_name);

// The scene's contact solver: solver.name with its options (and solver.nlgs for nlgs-*).
std::unique_ptr<ContactSolver> make_scene_solver(const Scene& scene);
// The stepper of the scene's scheme over scene.world, with the scene's solver for the schemes
// that take one. Throws InputError naming the scene file for options that cannot be used.
std::unique_ptr<Stepper> make_stepper(Scene& scene);
// The number of steps of `time_step` that cover the scene's simulated time (steps x
// time_step): the scene's steps for a scheme that steps with the scene's time step, more for
// one with its own (the DEM's "auto").
long scene_step_count(const Scene& scene, double time_step);

}  // namespace moreau
