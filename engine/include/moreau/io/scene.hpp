#pragma once
// Scene files: a JSON description of a world, its time stepping, the run length and the
// output. The format, every key with its unit and default, is documented in
// docs/scene-format.md.
#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "moreau/dem/dem_stepper.hpp"
#include "moreau/integrator/impulse_velocity_stepper.hpp"
#include "moreau/integrator/semi_implicit_euler.hpp"
#include "moreau/integrator/shake_stepper.hpp"
#include "moreau/integrator/theta_stepper.hpp"
#include "moreau/model/world.hpp"
#include "moreau/simulation/channel_flow.hpp"
#include "moreau/simulation/observers.hpp"
#include "moreau/solver/solver_registry.hpp"
#include "moreau/variational/variational_stepper.hpp"

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

// Which time-stepping scheme runs the scene (scene key integrator.scheme): the same world
// under any of them.
enum class Scheme {
  semi_implicit_euler,  // Olsen & Kamrin eq. 13-21, SemiImplicitEulerStepper
  theta,                // Dumont Sec. 2.1 and 3.2, ThetaStepper
  impulse_velocity,     // Preclik et al. Sec. 3.1, ImpulseVelocityStepper
  dem,                  // the explicit penalty DEM reference, DemStepper
  shake,                // Kleinert et al. eq. 14-20, ShakeStepper
  rattle,               // Kleinert et al. eq. 21, ShakeStepper
  variational_theta,    // Krabbenhoft/NURBS chapter eq. 4.4-4.15, VariationalStepper (2D)
};
std::vector<std::string> scheme_names();  // in the order above

// The option sections of a scene file, by JSON path ("" is the top level; "integrator",
// "integrator.compatible", "dem", "collision", "solver", "solver.nlgs", "output"), each with
// its keys as its option table declares them (src/io/scene_schema.cpp): the parser reads
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
  World world;
  Scheme scheme = Scheme::semi_implicit_euler;
  // The options of each contact-dynamics scheme; the scene's time_step, integrator.frictional
  // and collision are in all three, the other keys in the scheme that reads them.
  SemiImplicitEulerOptions semi_implicit_euler;
  ThetaOptions theta;
  ImpulseVelocityOptions impulse_velocity;
  ShakeOptions shake;  // shake and rattle (ShakeOptions::scheme set from Scene::scheme)
  // variational_theta: its own solver, the conic QP core (solver.name ipm-direct or ipm,
  // solver.tolerance and solver.max_iterations as the Newton steps).
  VariationalOptions variational;
  std::string solver = "pgs";  // contact solver of the CD schemes (solver.name)
  // Its options struct (solver and solver.nlgs): default_solver_options(solver) with the
  // scene's keys. set_solver changes both.
  AnySolverOptions solver_options = default_solver_options("pgs");
  long steps = 0;  // number of time steps to run
  // Read (and checked) whatever the scheme, so that `moreau run --scheme dem` can switch.
  DemOptions dem;
  bool dem_time_step_auto = true;      // dem.time_step from the stability estimate at run time
  std::optional<double> dem_duration;  // s; unset: steps x time_step
  OutputOptions output;
  SolverFailurePolicy on_solver_failure = SolverFailurePolicy::warn;
  // The inflow and outlet of a granular channel flow (section channel_flow), driven by
  // ChannelInflow (moreau/simulation/channel_flow.hpp); unset for a closed world.
  std::optional<ChannelFlowOptions> channel_flow;
  std::string source;  // file name (or the name given to parse_scene), used in messages

  double time_step() const;  // of the contact-dynamics schemes (scene key time_step), s
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

std::string to_string(Scheme scheme);

// A DEM run of the scene: its options with an "auto" time step resolved (half the stability
// estimate, a margin for the neighbours that form while the run goes on) and its step count.
struct DemRun {
  DemOptions options;
  long steps = 0;
};
// Throws InputError naming the scene file and the first material a body uses that lacks a
// Young's modulus (DEM needs one for every contact stiffness).
DemRun dem_run(const Scene& scene);

// The scene's contact solver: solver.name with its options (and solver.nlgs for nlgs-*).
std::unique_ptr<ContactSolver> make_scene_solver(const Scene& scene);
// The stepper of the scene's scheme over scene.world, with the scene's solver for the
// contact-dynamics schemes. A DEM scene's time step is resolved by dem_run. Throws InputError
// naming the scene file for options that cannot be used.
std::unique_ptr<Stepper> make_stepper(Scene& scene);
// The number of steps a run of the scene takes (dem_run's for the DEM).
long scene_step_count(const Scene& scene);

}  // namespace moreau
