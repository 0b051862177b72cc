#include "run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <system_error>

#include "moreau/collision/contact.hpp"
#include "moreau/core/error.hpp"
#include "moreau/fclib/step_export.hpp"
#include "moreau/integrator/semi_implicit_euler.hpp"
#include "moreau/io/checkpoint.hpp"
#include "moreau/io/csv_writer.hpp"
#include "moreau/io/output_writer.hpp"
#include "moreau/io/scene.hpp"
#include "moreau/io/vtk_writer.hpp"
#include "moreau/simulation/channel_flow.hpp"
#include "moreau/simulation/observers.hpp"
#include "moreau/solver/solver_registry.hpp"

namespace moreau::cli {
namespace {

// Whether the run post-processes its steps with compatible CD (Olsen & Kamrin Alg. 1), a
// semi_implicit_euler option.
bool compatible_enabled(const Scene& scene) {
  const AnySchemeOptions options = scene.options_of(scene.scheme);
  const auto* euler = options.get_if<SemiImplicitEulerOptions>();
  return euler && euler->compatible.enabled;
}

// A number for summary.json: JSON has no NaN or infinity, and a null would read as "nothing
// measured"; a non-finite value is written as the string "nan", "inf" or "-inf".
nlohmann::json number(double value) {
  if (std::isfinite(value)) return value;
  if (std::isnan(value)) return "nan";
  return value > 0 ? "inf" : "-inf";
}

// The run's status: a run that completed its steps with a non-finite merit or criterion at some
// step did not solve what it claims ("non_finite", exit status 4).
std::string run_status(const RunOutcome& outcome, const RunStatistics& stats) {
  if (outcome.status == "completed" && stats.non_finite_steps > 0) return "non_finite";
  return outcome.status;
}

// The summary.json of a run: what ran, how it ended, and the solvers' totals.
void write_summary(const std::filesystem::path& path, const Scene& scene, const Stepper& stepper,
                   const RunStatistics& stats, const RunOutcome& outcome) {
  // The scene's solver, the scheme's own (variational_theta's conic QP core) or none (DEM).
  const SchemeRegistration& scheme = find_scheme(scene.scheme);
  nlohmann::json solver = nullptr;
  nlohmann::json tolerance = nullptr;
  if (scheme.takes_solver) {
    solver = scene.solver;
    tolerance = common_options(scene.solver_options).tolerance;
  } else if (scheme.own_solver) {
    const OwnSolver own = scheme.own_solver(scene.options_of(scheme.name));
    solver = own.name;
    tolerance = own.tolerance;
  }
  nlohmann::json summary = {{"scene", scene.source},
                            {"status", run_status(outcome, stats)},
                            {"scheme", scene.scheme},
                            {"dimension", static_cast<int>(scene.world.dimension)},
                            {"bodies", scene.world.bodies.size()},
                            {"solver", solver},
                            {"tolerance", tolerance},
                            {"compatible", compatible_enabled(scene)},
                            {"time_step", stepper.time_step()},
                            {"steps_requested", outcome.steps_requested},
                            {"steps", stats.steps_completed},
                            {"simulated_time", scene.world.time},
                            {"wall_seconds", outcome.wall_seconds},
                            {"solver_seconds", stats.solver_seconds},
                            {"collision_seconds", stats.collision_seconds},
                            {"non_converged_steps", stats.non_converged_steps},
                            {"first_non_converged_step", nullptr},
                            {"max_merit", number(stats.max_merit)},
                            {"non_finite_steps", stats.non_finite_steps},
                            {"first_non_finite_step", nullptr},
                            {"max_merit_step", nullptr},
                            {"total_solver_iterations", stats.total_iterations},
                            {"max_solver_iterations", stats.max_iterations},
                            {"total_krylov_iterations", stats.total_krylov_iterations},
                            {"max_krylov_iterations", stats.max_krylov_iterations},
                            {"max_contacts", stats.max_contacts},
                            {"mean_contacts", stats.mean_contacts()},
                            {"output",
                             {{"directory", scene.output.directory},
                              {"every", scene.output.every},
                              {"csv", scene.output.csv},
                              {"vtk", scene.output.vtk}}}};
  if (stats.first_non_converged_step >= 0)
    summary["first_non_converged_step"] = stats.first_non_converged_step;
  if (stats.max_merit_step >= 0) summary["max_merit_step"] = stats.max_merit_step;
  // A run whose solves have no merit (variational_theta) reports its criterion below only.
  if (stats.merit_steps == 0) summary["max_merit"] = nullptr;
  if (stats.first_non_finite_step >= 0)
    summary["first_non_finite_step"] = stats.first_non_finite_step;
  // A solver stopping on another measure than the merit (the IPM's `stopping`) says which.
  if (stats.criterion != "merit") {
    summary["stopping_criterion"] = stats.criterion;
    summary["max_criterion_value"] = number(stats.max_criterion_value);
  }
  if (compatible_enabled(scene)) {
    summary["compatible_solver"] = {
        {"steps", stats.compatible_steps},
        {"non_converged_steps", stats.compatible_non_converged_steps},
        {"first_non_converged_step", stats.compatible_first_non_converged_step >= 0
                                         ? nlohmann::json(stats.compatible_first_non_converged_step)
                                         : nlohmann::json(nullptr)},
        {"max_outer_iterations", stats.compatible_max_outer_iterations},
        {"total_inner_iterations", stats.compatible_total_inner_iterations},
        {"max_equilibrium_residual", number(stats.compatible_max_equilibrium_residual)},
        {"seconds", stats.compatible_seconds}};
  }
  if (!outcome.error.empty()) summary["error"] = outcome.error;
  std::ofstream out(path);
  out << summary.dump(2) << '\n';
  out.flush();
  if (!out) throw InputError(path.string() + ": cannot write the run summary");
}

// Writes summary.json when the run ends, also when a SimulationError ends it.
class SummaryWriter final : public StepObserver {
 public:
  SummaryWriter(std::filesystem::path path, const Scene& scene, const RunStatistics& stats)
      : path_(std::move(path)), scene_(scene), stats_(stats) {}
  void on_finish(const Stepper& stepper, const RunOutcome& outcome) override {
    write_summary(path_, scene_, stepper, stats_, outcome);
  }

 private:
  std::filesystem::path path_;
  const Scene& scene_;
  const RunStatistics& stats_;
};

// The steps selected by --export-fclib: "all", or a comma list of N, A:B and A:B:S.
class StepSelection {
 public:
  explicit StepSelection(const std::string& text) {
    if (text == "all") {
      all_ = true;
      return;
    }
    std::size_t begin = 0;
    while (begin <= text.size()) {
      const std::size_t end = std::min(text.find(',', begin), text.size());
      ranges_.push_back(parse_range(text, text.substr(begin, end - begin)));
      begin = end + 1;
    }
  }
  bool contains(long step) const {
    if (all_) return true;
    for (const Range& r : ranges_)
      if (step >= r.first && step <= r.last && (step - r.first) % r.stride == 0) return true;
    return false;
  }

 private:
  struct Range {
    long first, last, stride;
  };
  bool all_ = false;
  std::vector<Range> ranges_;

  static Range parse_range(const std::string& whole, const std::string& item) {
    std::vector<long> numbers;
    std::size_t begin = 0;
    while (begin <= item.size()) {
      const std::size_t end = std::min(item.find(':', begin), item.size());
      const std::string field = item.substr(begin, end - begin);
      std::size_t used = 0;
      long value = 0;
      try {
        value = std::stol(field, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (field.empty() || used != field.size())
        throw InputError("--export-fclib: \"" + whole + "\": \"" + item +
                         "\" is not a step N, a range A:B or A:B:S, or all");
      numbers.push_back(value);
      begin = end + 1;
    }
    if (numbers.size() > 3)
      throw InputError("--export-fclib: \"" + item + "\" has more than three fields");
    const Range range{numbers[0], numbers.size() > 1 ? numbers[1] : numbers[0],
                      numbers.size() > 2 ? numbers[2] : 1};
    if (range.first < 1 || range.last < range.first || range.stride < 1)
      throw InputError("--export-fclib: \"" + item +
                       "\" must have 1 <= A <= B and a stride >= 1 (steps count from 1)");
    return range;
  }
};

std::string scheme_from_option(const std::string& option, const std::string& name) {
  const std::vector<std::string> names = scheme_names();
  if (std::find(names.begin(), names.end(), name) == names.end())
    throw InputError(option + ": unknown scheme \"" + name +
                     "\"; expected one of: " + known_scheme_names());
  return name;
}

// The command-line values that replace the scene's own.
void apply_overrides(Scene& scene, const RunOverrides& overrides) {
  if (overrides.method) {
    if (*overrides.method != "cd" && *overrides.method != "dem")
      throw InputError(
          "--method: unknown method \"" + *overrides.method +
          "\"; expected cd or dem (or use --scheme with one of: " + known_scheme_names() + ")");
    scene.set_scheme(*overrides.method == "cd" ? "semi_implicit_euler" : "dem");
  }
  if (overrides.scheme) scene.set_scheme(scheme_from_option("--scheme", *overrides.scheme));
  if (overrides.solver) {
    try {
      find_solver(*overrides.solver);
    } catch (const InputError& e) {
      throw InputError(std::string("--solver: ") + e.what());
    }
    scene.set_solver(*overrides.solver);
  }
  if (overrides.steps) {
    if (*overrides.steps < 0)
      throw InputError("--steps: must be >= 0, got " + std::to_string(*overrides.steps));
    scene.steps = *overrides.steps;
  }
  if (overrides.output_directory) scene.output.directory = *overrides.output_directory;
}

std::filesystem::path make_output_directory(const std::filesystem::path& directory) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error)
    throw InputError(directory.string() + ": cannot create the directory: " + error.message());
  return directory;
}

void print_result(const Scene& scene, const Stepper& stepper, const RunStatistics& stats,
                  const RunOutcome& outcome, const FclibExporter* exporter) {
  // A scheme without a contact solver (the DEM) has no merit to report, its time step instead.
  const SchemeRegistration& scheme = find_scheme(scene.scheme);
  const bool solves = scheme.takes_solver || scheme.own_solver;
  std::cout << "moreau: " << stats.steps_completed << (solves ? "" : " " + scene.scheme)
            << " steps in " << short_number(outcome.wall_seconds) << " s ("
            << short_number(static_cast<double>(stats.steps_completed) / outcome.wall_seconds)
            << " steps/s), ";
  if (!solves)
    std::cout << "time step " << short_number(stepper.time_step()) << " s";
  else
    std::cout << stats.non_converged_steps << " not converged, max "
              << (stats.merit_steps > 0 || stats.criterion.empty() ? "merit" : stats.criterion)
              << " "
              << short_number(stats.merit_steps > 0 || stats.criterion.empty()
                                  ? stats.max_merit
                                  : stats.max_criterion_value);
  if (stats.compatible_steps > 0)
    std::cout << "; compatible CD: " << stats.compatible_non_converged_steps << " of "
              << stats.compatible_steps << " steps not converged";
  if (exporter)
    std::cout << "; " << exporter->exported_steps() << " steps with contacts exported to FCLIB";
  std::cout << "; output in " << scene.output.directory << '\n';
}

}  // namespace

int run_scene(const std::string& scene_path, const RunOverrides& overrides) {
  Scene scene = load_scene(scene_path);
  apply_overrides(scene, overrides);
  // Read before the stepper is built: the DEM builds its neighbours from the state it is given.
  // A channel flow (Preclik et al. Sec. 4.3) appends its plane and first layers to the world
  // now and feeds and drains it after every step; its inflow state is in no checkpoint.
  if (scene.channel_flow && overrides.restart)
    throw InputError(*overrides.restart +
                     ": a channel_flow run cannot restart from a checkpoint (the inflow's plane, "
                     "generator and counters are not in it)");
  std::optional<ChannelInflow> inflow;
  if (scene.channel_flow) inflow.emplace(scene.world, *scene.channel_flow);
  const CheckpointContents restart = overrides.restart
                                         ? read_checkpoint_contents(*overrides.restart, scene.world)
                                         : CheckpointContents{};
  Simulation simulation(make_stepper(scene));
  if (inflow)
    simulation.add_world_update([&inflow](Stepper& stepper) { inflow->after_step(stepper); });
  // A scheme with its own time step (the DEM) covers the scene's simulated time; --steps is
  // its own step count.
  long total_steps = overrides.steps ? *overrides.steps
                                     : scene_step_count(scene, simulation.stepper().time_step());
  const long restart_step = restart.step;
  if (restart_step > total_steps)
    throw InputError(*overrides.restart + ": step " + std::to_string(restart_step) +
                     " is past the run's last step " + std::to_string(total_steps));
  total_steps -= restart_step;
  const std::filesystem::path directory = make_output_directory(scene.output.directory);
  simulation.stepper().resume_at(restart_step);
  if (overrides.restart) restore_scheme_state(restart, simulation.stepper(), *overrides.restart);
  const Stepper& stepper = simulation.stepper();

  std::optional<FclibExporter> exporter;
  if (overrides.export_fclib) {
    if (!stepper.exports_problems())
      throw InputError("--export-fclib: scheme \"" + stepper.scheme() +
                       "\" builds no contact problem of the exported form (use "
                       "semi_implicit_euler, impulse_velocity, shake or rattle)");
    const StepSelection selection(*overrides.export_fclib);
    exporter.emplace(make_output_directory(directory / "fclib"), "Moreau scene " + scene.source,
                     [selection](long step) { return selection.contains(step); });
  }
  RunStatistics stats;
  OutputSchedule schedule;
  schedule.every = scene.output.every;
  schedule.csv = scene.output.csv;
  schedule.vtk = scene.output.vtk;
  schedule.compatible_column = compatible_enabled(scene);
  schedule.write_stopping_step = scene.on_solver_failure == SolverFailurePolicy::stop;
  OutputWriter writer(directory, scene.world.dimension, schedule);
  FailurePolicy policy(scene.on_solver_failure, std::cerr);
  ProgressReporter progress(std::cerr);
  SummaryWriter summary(directory / "summary.json", scene, stats);
  CheckpointWriter checkpoint(directory, scene.output.checkpoint_every, scene.source);
  // In this order: the statistics and the output include a step at which the policy stops.
  simulation.add_observer(stats);
  simulation.add_observer(writer);
  if (exporter) simulation.add_observer(*exporter);
  simulation.add_observer(policy);
  if (scene.output.progress && !overrides.quiet) simulation.add_observer(progress);
  simulation.add_observer(summary);
  if (scene.output.checkpoint_every > 0) simulation.add_observer(checkpoint);
  const RunOutcome outcome = simulation.run(total_steps);
  if (!overrides.quiet)
    print_result(scene, stepper, stats, outcome, exporter ? &*exporter : nullptr);
  if (run_status(outcome, stats) == "non_finite") {
    std::cerr << "moreau: error: " << stats.non_finite_steps
              << " steps ended with a merit or criterion that is not finite (first: step "
              << stats.first_non_finite_step << "); summary.json has status \"non_finite\"\n";
    return kNonFiniteExitStatus;
  }
  return 0;
}

void check_scene(const std::string& scene_path) {
  const Scene scene = load_scene(scene_path);
  const World& world = scene.world;
  long dynamic = 0;
  long fixed = 0;
  for (const RigidBody& body : world.bodies) {
    if (body.motion == Motion::dynamic) ++dynamic;
    if (body.motion == Motion::fixed) ++fixed;
  }
  const long prescribed = static_cast<long>(world.bodies.size()) - dynamic - fixed;
  const SolverOptions solver = common_options(scene.solver_options);
  std::cout << scene.source << ": valid\n"
            << "  " << static_cast<int>(world.dimension) << "D world, " << world.bodies.size()
            << " bodies (" << dynamic << " dynamic, " << fixed << " fixed, " << prescribed
            << " prescribed), " << world.materials.size() << " materials\n"
            << "  " << scene.steps << " steps of " << short_number(scene.time_step()) << " s ("
            << short_number(static_cast<double>(scene.steps) * scene.time_step()) << " s), solver "
            << scene.solver << " (tolerance " << short_number(solver.tolerance) << ", at most "
            << solver.max_iterations << " iterations, on failure "
            << to_string(scene.on_solver_failure) << ")\n"
            << "  scheme " << scene.scheme
            << (compatible_enabled(scene) ? ", compatible CD forces" : "") << '\n';
  // A scheme with its own time step (the DEM's "auto" resolved from the world) says its run.
  if (!scene.options_of(scene.scheme).settings()) {
    Scene copy = scene;
    const std::unique_ptr<Stepper> stepper = make_stepper(copy);
    std::cout << "  " << scene.scheme << ": " << scene_step_count(scene, stepper->time_step())
              << " steps of " << short_number(stepper->time_step()) << " s\n";
  }
  std::cout << "  output: " << scene.output.directory << " every " << scene.output.every
            << " steps (" << (scene.output.csv ? "csv" : "no csv") << ", "
            << (scene.output.vtk ? "vtk" : "no vtk") << ")\n";
}

std::string known_scheme_names() {
  std::string known;
  for (const std::string& name : scheme_names()) known += (known.empty() ? "" : ", ") + name;
  return known;
}

std::string known_solver_names() {
  std::string known;
  for (const std::string& name : solver_names()) known += (known.empty() ? "" : ", ") + name;
  return known;
}

void list_solvers() {
  for (const SolverRegistration& solver : registered_solvers()) {
    std::string laws;
    const auto add = [&laws](bool solves, const char* law) {
      if (solves) laws += (laws.empty() ? "" : ", ") + std::string(law);
    };
    add(solver.laws.coulomb, "coulomb");
    add(solver.laws.convex_relaxation, "convex_relaxation");
    add(solver.laws.frictionless, "frictionless");
    add(solver.laws.maximum_dissipation, "maximum_dissipation");
    std::cout << solver.name << "\t" << solver.description << " [" << laws << "]\n";
  }
}

void list_schemes() {
  for (const SchemeRegistration& scheme : registered_schemes()) {
    const std::string solver = scheme.takes_solver ? "the scene's solver"
                               : scheme.own_solver ? "its own solver"
                                                   : "no contact solver";
    std::cout << scheme.name << "\t" << scheme.description << " [" << solver << "]\n";
  }
}

void print_schema() {
  for (const SceneSection& section : scene_option_keys()) {
    std::cout << "## " << (section.path.empty() ? "top level" : section.path)
              << "\n| key | type | unit | default |\n|---|---|---|---|\n";
    for (const SceneOption& option : section.options)
      std::cout << "| `" << option.key << "` | " << option.type << " | " << option.unit << " | "
                << option.default_value << " |\n";
    std::cout << '\n';
  }
}

}  // namespace moreau::cli
