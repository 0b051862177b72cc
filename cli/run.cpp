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
#include "moreau/io/csv_writer.hpp"
#include "moreau/io/scene.hpp"
#include "moreau/io/vtk_writer.hpp"

namespace moreau::cli {
namespace {

using Clock = std::chrono::steady_clock;

// Non-converged steps are reported one by one up to this count, then only counted in the
// summary, so that a run whose solver fails every step does not drown its own output.
constexpr long kMaxWarnings = 10;
// Seconds between two progress lines; a run shorter than this prints none.
constexpr double kProgressInterval = 2.0;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Three significant digits, for messages ("3.1e-09", "0.125").
std::string short_number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}

bool solver_succeeded(const SolverStats& stats) {
  // A step without contacts has nothing to solve: that is not a failure.
  return stats.converged || stats.termination == Termination::not_run;
}

struct RunStatistics {
  long steps_completed = 0;
  long non_converged_steps = 0;
  long first_non_converged_step = -1;
  double max_merit = 0.0;
  long max_merit_step = -1;
  long total_iterations = 0;
  int max_iterations = 0;
  std::size_t max_contacts = 0;
  double contact_sum = 0.0;
  double solver_seconds = 0.0;
  double collision_seconds = 0.0;

  // contact_count: of the step (the report of a DEM step is only filled when it is written).
  void record(long step, const StepReport& report, std::size_t contact_count) {
    const SolverStats& stats = report.solver_stats;
    steps_completed = step;
    if (!solver_succeeded(stats)) {
      ++non_converged_steps;
      if (first_non_converged_step < 0) first_non_converged_step = step;
    }
    // A NaN merit (a diverged solve) is kept: it must not hide behind a later finite one.
    if (stats.termination != Termination::not_run &&
        (std::isnan(stats.merit) || stats.merit > max_merit) && !std::isnan(max_merit)) {
      max_merit = stats.merit;
      max_merit_step = step;
    }
    total_iterations += stats.iterations;
    max_iterations = std::max(max_iterations, stats.iterations);
    max_contacts = std::max(max_contacts, contact_count);
    contact_sum += static_cast<double>(contact_count);
    solver_seconds += stats.wall_seconds;
    collision_seconds +=
        report.collision_stats.broad_phase_seconds + report.collision_stats.narrow_phase_seconds;
  }
};

std::string failure_text(const StepReport& report, const std::string& solver) {
  const SolverStats& stats = report.solver_stats;
  return "step " + std::to_string(report.step) + " (t = " + short_number(report.time) +
         " s): solver " + solver + " did not converge: " + to_string(stats.termination) +
         " after " + std::to_string(stats.iterations) + " iterations, merit " +
         short_number(stats.merit) + " (tolerance " + short_number(stats.tolerance) + ")";
}

// The contacts after a DEM step as a StepReport, so that the CSV and VTK writers and the run
// statistics serve both methods: "impulses" are the forces on b times the time step in the
// frame (n, t1, t2), the normal row being DemContact::normal_force (elastic + viscous).
void fill_dem_report(StepReport& report, const std::vector<DemContact>& contacts,
                     const World& world, long step, double time_step) {
  report.step = step;
  report.time = world.time;
  report.rows_per_contact = 3;
  report.contacts.clear();
  report.impulses.resize(3 * static_cast<long>(contacts.size()));
  for (std::size_t i = 0; i < contacts.size(); ++i) {
    const DemContact& dem = contacts[i];
    Contact contact;
    contact.body_a = dem.body_a;
    contact.body_b = dem.body_b;
    contact.point = dem.point;
    contact.normal = dem.normal;
    contact.gap = -dem.overlap;
    complete_frame(contact, world.dimension);
    report.impulses.segment<3>(3 * static_cast<long>(i)) << time_step * dem.normal_force,
        time_step * dem.force_on_b.dot(contact.tangent1),
        time_step * dem.force_on_b.dot(contact.tangent2);
    report.contacts.push_back(contact);
  }
}

void write_summary(const std::filesystem::path& path, const Scene& scene, double time_step,
                   long steps_requested, const RunStatistics& stats, double wall_seconds,
                   const std::string& status, const std::string& error) {
  const bool cd = scene.method == Method::cd;
  nlohmann::json summary = {
      {"scene", scene.source},
      {"status", status},
      {"method", to_string(scene.method)},
      {"scheme", cd && scene.shake_scheme ? to_string(*scene.shake_scheme) : "semi_implicit"},
      {"dimension", static_cast<int>(scene.world.dimension)},
      {"bodies", scene.world.bodies.size()},
      // A DEM run has no contact solver.
      {"solver", cd ? nlohmann::json(scene.step.solver) : nlohmann::json(nullptr)},
      {"tolerance",
       cd ? nlohmann::json(scene.step.solver_options.tolerance) : nlohmann::json(nullptr)},
      {"compatible", cd && scene.step.compatible.enabled},
      {"time_step", time_step},
      {"steps_requested", steps_requested},
      {"steps", stats.steps_completed},
      {"simulated_time", scene.world.time},
      {"wall_seconds", wall_seconds},
      {"solver_seconds", stats.solver_seconds},
      {"collision_seconds", stats.collision_seconds},
      {"non_converged_steps", stats.non_converged_steps},
      {"first_non_converged_step", nullptr},
      {"max_merit", stats.max_merit},
      {"max_merit_step", nullptr},
      {"total_solver_iterations", stats.total_iterations},
      {"max_solver_iterations", stats.max_iterations},
      {"max_contacts", stats.max_contacts},
      {"mean_contacts", stats.steps_completed > 0
                            ? stats.contact_sum / static_cast<double>(stats.steps_completed)
                            : 0.0},
      {"output",
       {{"directory", scene.output.directory},
        {"every", scene.output.every},
        {"csv", scene.output.csv},
        {"vtk", scene.output.vtk}}}};
  if (stats.first_non_converged_step >= 0)
    summary["first_non_converged_step"] = stats.first_non_converged_step;
  if (stats.max_merit_step >= 0) summary["max_merit_step"] = stats.max_merit_step;
  if (!error.empty()) summary["error"] = error;
  std::ofstream out(path);
  out << summary.dump(2) << '\n';
  out.flush();
  if (!out) throw InputError(path.string() + ": cannot write the run summary");
}

// The time left is estimated from the rate since the previous line, not the mean rate: the
// cost of a step grows as a granular packing forms.
// A DEM step has no solver, so its line leaves out iterations and merit.
void print_progress(long step, long total, const StepReport& report, std::size_t contact_count,
                    bool solver, double recent_rate) {
  std::cerr << "moreau: step " << step << '/' << total << " ("
            << short_number(100.0 * static_cast<double>(step) / static_cast<double>(total))
            << "%), t = " << short_number(report.time) << " s, contacts " << contact_count;
  if (solver)
    std::cerr << ", iterations " << report.solver_stats.iterations << ", merit "
              << short_number(report.solver_stats.merit);
  std::cerr << ", " << short_number(recent_rate) << " steps/s, about "
            << short_number(static_cast<double>(total - step) / recent_rate) << " s left\n";
}

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

}  // namespace

void run_scene(const std::string& scene_path, const RunOverrides& overrides) {
  Scene scene = load_scene(scene_path);
  if (overrides.method) {
    if (*overrides.method != "cd" && *overrides.method != "dem")
      throw InputError("--method: unknown method \"" + *overrides.method +
                       "\"; expected one of: cd, dem");
    scene.method = *overrides.method == "cd" ? Method::cd : Method::dem;
  }
  if (overrides.solver) {
    const std::vector<std::string> names = solver_names();
    if (std::find(names.begin(), names.end(), *overrides.solver) == names.end()) {
      std::string known;
      for (const std::string& name : names) known += (known.empty() ? "" : ", ") + name;
      throw InputError("--solver: unknown solver \"" + *overrides.solver +
                       "\"; known solvers: " + known);
    }
    scene.step.solver = *overrides.solver;
  }
  if (overrides.steps) {
    if (*overrides.steps < 0)
      throw InputError("--steps: must be >= 0, got " + std::to_string(*overrides.steps));
    scene.steps = *overrides.steps;
  }
  // Checked here as well as at load time: --method dem may have switched a CD scene.
  std::optional<DemRun> dem;
  if (scene.method == Method::dem) {
    dem = dem_run(scene);
    if (overrides.steps) dem->steps = *overrides.steps;
  }
  const long total_steps = dem ? dem->steps : scene.steps;
  const double dt = dem ? dem->options.time_step : scene.step.time_step;
  const bool compatible = !dem && scene.step.compatible.enabled;
  if (overrides.output_directory) scene.output.directory = *overrides.output_directory;
  const bool progress = scene.output.progress && !overrides.quiet;

  const std::filesystem::path directory = scene.output.directory;
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error)
    throw InputError(directory.string() +
                     ": cannot create the output directory: " + error.message());

  World& world = scene.world;
  std::optional<TimeStepper> cd_stepper;
  std::optional<ShakeStepper> shake_stepper;  // integrator.scheme "shake" or "rattle"
  std::optional<DemStepper> dem_stepper;
  if (dem)
    dem_stepper.emplace(world, dem->options);
  else if (scene.shake_scheme)
    shake_stepper.emplace(world, shake_options(scene),
                          make_solver(scene.step.solver, scene.step.solver_options));
  else
    cd_stepper.emplace(world, scene.step);
  long exported_steps = 0;
  if (overrides.export_fclib) {
    if (dem)
      throw InputError(
          "--export-fclib: a DEM run has no contact problem to export (use method cd)");
    const StepSelection selection(*overrides.export_fclib);
    const std::filesystem::path fclib_directory = directory / "fclib";
    std::filesystem::create_directories(fclib_directory, error);
    if (error)
      throw InputError(fclib_directory.string() + ": cannot create directory: " + error.message());
    const std::string title = "Moreau scene " + scene.source;
    auto observer = [selection, fclib_directory, title,
                     &exported_steps](const StepProblem& problem) {
      if (!selection.contains(problem.step)) return;
      const fclib::StepExport files = fclib::export_step(problem, title);
      const std::string stem = "step_" + std::to_string(problem.step);
      fclib::write_file(fclib_directory / (stem + "_local.hdf5"), files.local);
      fclib::write_file(fclib_directory / (stem + "_global.hdf5"), files.global);
      ++exported_steps;
    };
    if (shake_stepper)
      shake_stepper->set_problem_observer(observer);
    else
      cd_stepper->set_problem_observer(observer);
  }
  StepReport dem_report;
  std::size_t contact_count = 0;
  auto advance = [&](long step) -> const StepReport& {
    if (cd_stepper || shake_stepper) {
      const StepReport& report = cd_stepper ? cd_stepper->step() : shake_stepper->step();
      contact_count = report.contacts.size();
      return report;
    }
    dem_stepper->step();
    contact_count = dem_stepper->touching_count();
    // The contacts of a DEM step are converted only for the steps that are written: copying
    // them every step would cost more than the step itself on a large packing.
    if (step % scene.output.every == 0 || step == total_steps)
      fill_dem_report(dem_report, dem_stepper->contacts(), world, step, dt);
    dem_report.step = step;
    dem_report.time = world.time;
    return dem_report;
  };
  std::optional<CsvWriter> csv;
  if (scene.output.csv) csv.emplace(directory, world.dimension, compatible);
  std::optional<VtkWriter> vtk;
  if (scene.output.vtk) vtk.emplace(directory);
  auto write_output = [&](long step, const StepReport* report) {
    if (csv) {
      csv->write_bodies(world, step);
      if (report) csv->write_contacts(*report, dt);
    }
    if (vtk) vtk->write(world, step, report, dt);
  };

  const Clock::time_point start = Clock::now();
  Clock::time_point last_progress = start;
  long last_progress_step = 0;
  RunStatistics stats;
  std::string status = "failed";
  try {
    write_output(0, nullptr);
    for (long step = 1; step <= total_steps; ++step) {
      const StepReport& report = advance(step);
      stats.record(step, report, contact_count);
      const bool failed = !solver_succeeded(report.solver_stats);
      const bool stop = failed && scene.on_solver_failure == SolverFailurePolicy::stop;
      // The state of a step that stops the run is written too: it is the one to look at.
      if (step % scene.output.every == 0 || step == total_steps || stop)
        write_output(step, &report);
      if (failed) {
        const std::string solver =
            report.solver_stats.solver.empty() ? scene.step.solver : report.solver_stats.solver;
        const std::string text = failure_text(report, solver);
        if (stop) {
          status = "stopped";
          throw SimulationError(text + "; stopping because solver.on_failure is \"stop\"");
        }
        if (stats.non_converged_steps <= kMaxWarnings)
          std::cerr << "moreau: warning: " << text << '\n';
        if (stats.non_converged_steps == kMaxWarnings)
          std::cerr << "moreau: warning: further steps that do not converge are only counted "
                       "(summary.json)\n";
      }
      if (progress && step < total_steps) {
        const double interval = seconds_since(last_progress);
        if (interval >= kProgressInterval) {
          print_progress(step, total_steps, report, contact_count, !dem,
                         static_cast<double>(step - last_progress_step) / interval);
          last_progress = Clock::now();
          last_progress_step = step;
        }
      }
    }
  } catch (const SimulationError& e) {
    if (csv) csv->flush();
    write_summary(directory / "summary.json", scene, dt, total_steps, stats, seconds_since(start),
                  status, e.what());
    throw;
  }
  if (csv) csv->flush();
  const double wall = seconds_since(start);
  write_summary(directory / "summary.json", scene, dt, total_steps, stats, wall, "completed", "");
  if (!overrides.quiet) {
    std::cout << "moreau: " << stats.steps_completed << (dem ? " DEM" : "") << " steps in "
              << short_number(wall) << " s ("
              << short_number(static_cast<double>(stats.steps_completed) / wall) << " steps/s), ";
    if (dem)
      std::cout << "time step " << short_number(dt) << " s";
    else
      std::cout << stats.non_converged_steps << " not converged, max merit "
                << short_number(stats.max_merit);
    if (overrides.export_fclib)
      std::cout << "; " << exported_steps << " steps with contacts exported to FCLIB";
    std::cout << "; output in " << directory.string() << '\n';
  }
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
  const SolverOptions& solver = scene.step.solver_options;
  std::cout << scene.source << ": valid\n"
            << "  " << static_cast<int>(world.dimension) << "D world, " << world.bodies.size()
            << " bodies (" << dynamic << " dynamic, " << fixed << " fixed, " << prescribed
            << " prescribed), " << world.materials.size() << " materials\n"
            << "  " << scene.steps << " steps of " << short_number(scene.step.time_step) << " s ("
            << short_number(static_cast<double>(scene.steps) * scene.step.time_step)
            << " s), solver " << scene.step.solver << " (tolerance "
            << short_number(solver.tolerance) << ", at most " << solver.max_iterations
            << " iterations, on failure " << to_string(scene.on_solver_failure) << ")\n"
            << "  method " << to_string(scene.method)
            << (scene.method == Method::cd && scene.step.compatible.enabled
                    ? ", compatible CD forces"
                    : "")
            << (scene.method == Method::cd && scene.shake_scheme
                    ? ", scheme " + to_string(*scene.shake_scheme)
                    : "")
            << '\n';
  if (scene.method == Method::dem) {
    const DemRun dem = dem_run(scene);
    std::cout << "  DEM: " << dem.steps << " steps of " << short_number(dem.options.time_step)
              << " s\n";
  }
  std::cout << "  output: " << scene.output.directory << " every " << scene.output.every
            << " steps (" << (scene.output.csv ? "csv" : "no csv") << ", "
            << (scene.output.vtk ? "vtk" : "no vtk") << ")\n";
}

void list_solvers() {
  for (const std::string& name : solver_names()) std::cout << name << '\n';
}

}  // namespace moreau::cli
