#include "trench_runs.hpp"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <utility>

#include "moreau/core/error.hpp"
#include "moreau/harness/resumable_run.hpp"
#include "moreau/harness/stepping.hpp"
#include "moreau/io/checkpoint.hpp"
#include "trench_scene.hpp"

namespace blade_trench {
namespace {

using namespace moreau;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using json = nlohmann::json;

constexpr double kProgressInterval = 5.0;  // s between progress lines

json row_json(const WindowRow& r) {
  return json::array({r.time, r.draft, r.krylov, r.solver_iterations, r.merit, r.error, r.seconds,
                      r.contacts, r.fast_grains, r.max_speed, r.not_converged, r.solver_seconds,
                      r.collision_seconds, r.cpu_seconds});
}

// JSON has no NaN: nlohmann writes it as null (the DEM's and PGJ's error(gamma, u)).
double number(const json& x) {
  return x.is_null() ? std::numeric_limits<double>::quiet_NaN() : x.get<double>();
}

WindowRow row_from(const json& a) {
  WindowRow r;
  r.time = a.at(0);
  r.draft = a.at(1);
  r.krylov = a.at(2);
  r.solver_iterations = a.at(3);
  r.merit = a.at(4);
  r.error = number(a.at(5));
  r.seconds = a.at(6);
  r.contacts = a.at(7);
  r.fast_grains = a.at(8);
  r.max_speed = a.at(9);
  r.not_converged = a.at(10);
  r.solver_seconds = a.at(11);
  r.collision_seconds = a.at(12);
  // Progress files written before the CPU time was kept have 13 columns.
  r.cpu_seconds = a.size() > 13 ? number(a.at(13)) : std::nan("");
  return r;
}

// The run's windows and wall time beside each world checkpoint, so that a resumed run carries
// its series on.
fs::path progress_file(const fs::path& dir, long step) {
  return dir / ("progress_" + std::to_string(step) + ".json");
}

void save(const RunSpec& spec, const Stepper& stepper, const RunResult& result) {
  const fs::path dir = spec.checkpoint_directory / spec.slug;
  fs::create_directories(dir);
  const long step = stepper.steps_taken();
  // With the scheme's own state: the DEM's springs and forces, so that a resumed DEM is the
  // uninterrupted one.
  write_stepper_checkpoint(
      dir / ("checkpoint_" + std::to_string(step) + ".json"), stepper,
      CheckpointContents{step, "blade_trench " + spec.label, std::nullopt, json()});
  json windows = json::array();
  for (const WindowRow& r : result.windows) windows.push_back(row_json(r));
  // Written beside and renamed, as the checkpoint: a run killed while writing leaves the last
  // complete pair, which resume() takes.
  const fs::path progress = progress_file(dir, step);
  const fs::path partial = progress.string() + ".partial";
  {
    std::ofstream out(partial);
    out << json{{"step", step}, {"wall_seconds", result.wall_seconds}, {"windows", windows}}.dump()
        << '\n';
    if (!out) throw SimulationError(partial.string() + ": cannot write the progress file");
  }
  fs::rename(partial, progress);
}

// The latest checkpoint of the run with its progress file; restores world, step and series.
void resume(const RunSpec& spec, Stepper& stepper, RunResult& result) {
  const fs::path dir = spec.checkpoint_directory / spec.slug;
  if (!fs::is_directory(dir)) return;
  long latest = -1;
  for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("checkpoint_", 0) != 0) continue;
    const long step = std::stol(name.substr(11));
    if (step > latest && fs::exists(progress_file(dir, step))) latest = step;
  }
  if (latest <= 0) return;
  const fs::path checkpoint = dir / ("checkpoint_" + std::to_string(latest) + ".json");
  const CheckpointContents contents = read_checkpoint_contents(checkpoint, stepper.world());
  const long step = contents.step;
  std::ifstream in(progress_file(dir, latest));
  try {
    const json progress = json::parse(in);
    result.wall_seconds = progress.at("wall_seconds");
    for (const json& row : progress.at("windows")) result.windows.push_back(row_from(row));
  } catch (const json::exception& e) {
    throw InputError(progress_file(dir, latest).string() +
                     ": malformed progress file: " + e.what());
  }
  stepper.resume_at(step);
  restore_scheme_state(contents, stepper, checkpoint);
  result.resumed_from_step = step;
  std::cout << spec.label << ": resumed from step " << step << " (t = " << stepper.world().time
            << " s)" << std::endl;
}

void print_progress(const RunSpec& spec, const Stepper& stepper, long total, const WindowRow& row,
                    double rate) {
  std::cout << spec.label << ": step " << stepper.steps_taken() << "/" << total
            << ", t = " << stepper.world().time << " s, draft " << row.draft << " N";
  if (row.krylov > 0)
    std::cout << ", Krylov iterations " << row.krylov << " and solver iterations "
              << row.solver_iterations << " in the last window";
  std::cout << " (" << row.cpu_seconds << " s of CPU, " << row.contacts << " contacts)";
  std::cout << ", merit " << row.merit << ", about "
            << static_cast<long>((total - stepper.steps_taken()) / rate) << " s left" << std::endl;
}

}  // namespace

double process_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

double blade_impulse_against_motion(const StepReport& report, int blade) {
  double x = 0.0;
  const int rows = report.rows_per_contact;
  for (std::size_t i = 0; i < report.contacts.size(); ++i) {
    const Contact& c = report.contacts[i];
    if (c.body_a != blade && c.body_b != blade) continue;
    const long k = rows * static_cast<long>(i);
    // The impulse r acts on body b along (n, t1, t2) and on body a against it.
    double on_b = report.impulses(k) * c.normal.x();
    if (rows == 3)
      on_b += report.impulses(k + 1) * c.tangent1.x() + report.impulses(k + 2) * c.tangent2.x();
    x += c.body_b == blade ? on_b : -on_b;
  }
  return -x;  // the blade moves along +x: the resisting force is the negative x component
}

double blade_force_against_motion(const DemStepper& dem, int blade) {
  double x = 0.0;
  for (const DemContact& c : dem.contacts()) {
    if (c.body_a == blade) x -= c.force_on_b.x();
    if (c.body_b == blade) x += c.force_on_b.x();
  }
  return -x;
}

namespace {

// The window being measured: its row, summed over its steps, and the counts that average them.
struct WindowSums {
  WindowRow row;
  double samples = 0.0, errors = 0.0;
  long steps = 0;
};

// Adds the step just taken to the window of `per_window` steps; the draft is sampled every
// `sample_every` steps.
void add_step(WindowSums& w, const StepReport& report, long per_window, long sample_every,
              const std::function<double(const StepReport&)>& draft) {
  WindowRow& row = w.row;
  const SolverStats& s = report.solver_stats;
  if (++w.steps % sample_every == 0) {
    row.draft += draft(report);
    w.samples += 1.0;
  }
  row.krylov += s.krylov_iterations;
  row.solver_iterations += s.iterations;
  row.merit = std::max(row.merit, s.merit);
  if (std::isfinite(s.kleinert_error)) {
    row.error += s.kleinert_error;
    w.errors += 1.0;
  }
  row.contacts += static_cast<double>(report.active_contacts) / per_window;
  row.solver_seconds += s.wall_seconds;
  row.collision_seconds +=
      report.collision_stats.broad_phase_seconds + report.collision_stats.narrow_phase_seconds;
  if (s.termination != Termination::not_run && !s.converged) ++row.not_converged;
}

}  // namespace

RunResult run_windows(const RunSpec& spec, std::unique_ptr<Stepper> owned, int grains,
                      const std::function<double(const StepReport&)>& draft, long sample_every,
                      bool draft_reads_contacts) {
  RunResult result;
  result.label = spec.label;
  result.time_step = owned->time_step();
  const long per_window = std::lround(kWindow / result.time_step);
  if (per_window < 1 || std::abs(per_window * result.time_step - kWindow) > 1e-9 * kWindow)
    throw InputError(spec.label + ": the time step must divide " + std::to_string(kWindow) + " s");
  const long total = std::lround(spec.duration / kWindow) * per_window;
  WindowSums sums;
  SteppingRun run(std::move(owned), [&](const Stepper&, const StepReport& report) {
    add_step(sums, report, per_window, sample_every, draft);
  });
  run.read_contacts(draft_reads_contacts);
  Stepper& stepper = run.stepper();
  if (spec.resume) resume(spec, stepper, result);
  Clock::time_point last_line = Clock::now();
  long line_step = stepper.steps_taken();
  try {
    while (stepper.steps_taken() < total) {
      sums = WindowSums{};
      const Clock::time_point start = Clock::now();
      const double cpu_start = process_cpu_seconds();
      run.advance(per_window);
      WindowRow& row = sums.row;
      row.seconds = std::chrono::duration<double>(Clock::now() - start).count();
      row.cpu_seconds = process_cpu_seconds() - cpu_start;
      row.time = stepper.world().time;
      row.draft /= std::max(sums.samples, 1.0);
      row.error = sums.errors > 0.0 ? row.error / sums.errors : std::nan("");
      const Speeds speeds = grain_speeds(stepper.world(), kSeparationSpeed);
      row.fast_grains = speeds.above;
      row.max_speed = speeds.max_speed;
      result.wall_seconds += row.seconds;
      result.windows.push_back(row);
      if (result.first_separated_window < 0 && row.fast_grains > kSeparatedShare * grains)
        result.first_separated_window = static_cast<long>(result.windows.size()) - 1;
      if (speeds.max_speed > kExplodedSpeed)
        throw SimulationError("a grain moves at " + std::to_string(speeds.max_speed) +
                              " m/s at t = " + std::to_string(row.time) +
                              " s: the packing exploded");
      const double since = std::chrono::duration<double>(Clock::now() - last_line).count();
      if (since > kProgressInterval || stepper.steps_taken() >= total) {
        print_progress(spec, stepper, total, row, (stepper.steps_taken() - line_step) / since);
        last_line = Clock::now();
        line_step = stepper.steps_taken();
      }
      const bool checkpointing = !spec.checkpoint_directory.empty() && spec.checkpoint_every > 0;
      const bool stop = checkpointing && resumable::stop_requested();
      if (checkpointing &&
          (stop || static_cast<long>(result.windows.size()) % spec.checkpoint_every == 0))
        save(spec, stepper, result);
      if (stop)
        throw resumable::Interrupted(spec.label +
                                     ": stopped by a signal at t = " + std::to_string(row.time) +
                                     " s after its checkpoint; --resume continues from there");
      if (spec.windows_left && --*spec.windows_left == 0)
        throw resumable::Interrupted(spec.label + ": interrupted at t = " +
                                     std::to_string(row.time) + " s (--interrupt-after)");
    }
  } catch (const SimulationError& e) {
    result.failure = e.what();
    std::cout << spec.label << ": stopped: " << e.what() << std::endl;
  }
  result.steps = stepper.steps_taken();
  result.simulated = static_cast<double>(result.windows.size()) * kWindow;
  return result;
}

}  // namespace blade_trench
