#pragma once
// Scene files: a JSON description of a world, its time stepping, the run length and the
// output. The format, every key with its unit and default, is documented in
// docs/scene-format.md.
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "moreau/dem/dem_stepper.hpp"
#include "moreau/integrator/shake_stepper.hpp"
#include "moreau/integrator/time_stepper.hpp"
#include "moreau/model/world.hpp"

namespace moreau {

struct OutputOptions {
  // Where CSV, VTK and the run summary go; relative paths are taken from the working
  // directory of the run. The loader fills in "out/<scene file stem>" when none is given.
  std::string directory;
  long every = 1;        // write the state every k steps (and always the first and the last)
  bool csv = true;       // bodies.csv and contacts.csv
  bool vtk = false;      // VTK PolyData per output step plus .pvd collections
  bool progress = true;  // progress lines on stderr during long runs
};

// What a run does when the contact solver of a step does not converge.
enum class SolverFailurePolicy {
  warn,  // print a warning naming the step and go on
  stop,  // stop the run with a SimulationError
};

// Which time stepper runs the scene: the same world either way.
enum class Method {
  cd,   // contact dynamics, TimeStepper
  dem,  // the explicit penalty DEM reference, DemStepper
};

struct Scene {
  World world;
  Method method = Method::cd;
  StepOptions step;
  // integrator.scheme: unset runs the semi-implicit Euler of seed 000 (TimeStepper), else
  // Kleinert's nonsmooth SHAKE or RATTLE (ShakeStepper) with the same time step, collision,
  // friction and solver settings (shake_options).
  std::optional<ShakeScheme> shake_scheme;
  std::optional<double> closed_gap;  // integrator.closed_gap (rattle), m
  long steps = 0;                    // number of time steps to run
  // Read (and checked) whatever the method, so that `moreau run --method dem` can switch.
  DemOptions dem;
  bool dem_time_step_auto = true;      // dem.time_step from the stability estimate at run time
  std::optional<double> dem_duration;  // s; unset: steps x step.time_step
  OutputOptions output;
  SolverFailurePolicy on_solver_failure = SolverFailurePolicy::warn;
  std::string source;  // file name (or the name given to parse_scene), used in messages
};

// Reads and parses a scene file. Throws InputError naming the file, the JSON path and the
// problem (missing file, malformed JSON with line and column, unknown key, wrong type,
// non-finite number, out-of-range value, unknown name), and validates the resulting world
// and step options.
Scene load_scene(const std::string& path);

// Same as load_scene for an already parsed document; `source_name` prefixes every message.
Scene parse_scene(const nlohmann::json& document, const std::string& source_name);

// The ShakeStepper options of a scene with integrator.scheme "shake" or "rattle".
ShakeOptions shake_options(const Scene& scene);

std::string to_string(SolverFailurePolicy policy);
std::string to_string(Method method);

// A DEM run of the scene: its options with an "auto" time step resolved (half the stability
// estimate, a margin for the neighbours that form while the run goes on) and its step count.
struct DemRun {
  DemOptions options;
  long steps = 0;
};
// Throws InputError naming the scene file and the first material a body uses that lacks a
// Young's modulus (DEM needs one for every contact stiffness).
DemRun dem_run(const Scene& scene);

}  // namespace moreau
