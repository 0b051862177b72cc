#pragma once
// The commands of the `moreau` program, separate from the argument parsing in main.cpp.
#include <optional>
#include <string>

namespace moreau::cli {

// Command-line values that replace the scene's own.
struct RunOverrides {
  std::optional<std::string> output_directory;
  std::optional<long> steps;
  std::optional<std::string> solver;
  std::optional<std::string> scheme;  // integrator.scheme
  std::optional<std::string> method;  // the older spelling: "cd" (semi_implicit_euler) or "dem"
  // Steps whose contact problem is written to FCLIB ("10,20:30,100:1000:100" or "all").
  std::optional<std::string> export_fclib;
  // A checkpoint_<step>.json to restart from: the scene's world takes its state and the run goes on
  // from its step to the scene's last.
  std::optional<std::string> restart;
  bool quiet = false;  // no progress lines, no final summary line (warnings still print)
};

// `moreau run`: loads the scene, steps it with its scheme (integrator.scheme) in a Simulation,
// writes CSV/VTK every output.every steps and summary.json at the end. Under DEM, `steps`
// replaces the DEM step count.
// Throws InputError (bad scene or option) or SimulationError (a state that is not finite, or a
// solver failure under solver.on_failure = "stop"). Returns 0, or kNonFiniteExitStatus when
// the run completed but some step's merit or criterion was not finite.
inline constexpr int kNonFiniteExitStatus = 4;
int run_scene(const std::string& scene_path, const RunOverrides& overrides);

// `moreau check`: loads and validates the scene and prints what it holds, without running.
void check_scene(const std::string& scene_path);

// `moreau solvers`: the solver names, one per line.
void list_solvers();
// `moreau schemes`: each scheme with its description and whether it takes the scene's solver.
void list_schemes();
// The registered solvers' names, comma separated (for --help).
std::string known_solver_names();
// The schemes' names, comma separated (for --help).
std::string known_scheme_names();
// The scene's option tables as the first four columns of the tables of docs/scene-format.md.
void print_schema();

}  // namespace moreau::cli
