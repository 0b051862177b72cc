#include "trench_scene.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <memory>
#include <numbers>
#include <optional>
#include <random>
#include <sstream>
#include <utility>
#include <vector>

#include "moreau/core/error.hpp"
#include "moreau/dem/dem_stepper.hpp"
#include "moreau/harness/cache_lock.hpp"
#include "moreau/harness/resumable_run.hpp"
#include "moreau/harness/stepping.hpp"
#include "moreau/io/checkpoint.hpp"
#include "moreau/io/scene.hpp"
#include "moreau/solver/solver_registry.hpp"
#include "trench_runs.hpp"

namespace blade_trench {
namespace {

using namespace moreau;
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Expected packing fraction of the settled random packing, to size the fill and the blade
// before settling; the packing fraction is then measured (measure_packing).
constexpr double kExpectedPacking = 0.6;
// Lattice spacing of the pour: the largest diameter plus 1 mm of clearance.
constexpr double kLatticeSpacing = 2.0 * kRadiusMax + 1e-3;
constexpr unsigned kSeed = 2015;
constexpr int kCacheVersion = 3;  // bump when the scene, the settling or the cache file changes
// Settling with the penalty DEM (README.md "filling"; Hookean, Cundall-Strack, critical normal
// damping) in three stages:
//  - soft: E = 1e6 Pa (a time step 10x the reference's) until no grain moves faster than
//    0.02 m/s, after at least 1.5 free-fall times of the top layer and at most 2 s more;
//  - ramp: E raised to the scene's 1e8 Pa (the DEM reference's) in 20 steps of 10^0.1 over
//    5 ms each. At once, the soft overlaps (about 1% of a diameter at the floor) would carry
//    100x their force and blow the fill apart (measured: grains thrown up at 1.4 m/s);
//  - stiff: E = 1e8 Pa until at rest, at least 0.05 s (several compression periods of the
//    0.4 m fill) and at most 0.5 s: overlaps as the reference's (below 0.1%).
// Random horizontal velocities of up to 0.5 m/s per component break the lattice: without them
// it lands as stable columns of non-rotating spheres. Nonsmooth SHAKE with APGD (150
// iterations per 2 ms step, warm-started or not) does not bring the 0.4 m deep fill to rest:
// 6,721 of 9,013 grains still faster than 0.02 m/s after 1,379 steps.
constexpr double kSettledSpeed = 0.02;  // m/s
constexpr double kSoftModulus = 1e6;    // Pa
constexpr int kRampStages = 20;
constexpr double kRampStageDuration = 5e-3;                          // s
constexpr double kStiffMinDuration = 0.05, kStiffMaxDuration = 0.5;  // s
// The settling writes its state every 0.1 s and at each stage's start, so a killed settling
// resumes where it was: within a stage with the DEM's springs and forces, time step and
// schedules, so that the resumed settling is the uninterrupted one.
constexpr double kSettleCheckpointInterval = 0.1;  // s
constexpr double kPourSpeed = 0.5;                 // m/s
// The kinds of the cache's two files (their metadata's "kind").
constexpr const char* kSettledKind = "blade_trench settled packing";
constexpr const char* kSettlingKind = "blade_trench settling in progress";

double mean_sphere_volume() {
  const double cubed = (std::pow(kRadiusMax, 4) - std::pow(kRadiusMin, 4)) /
                       (4.0 * (kRadiusMax - kRadiusMin));  // E[r^3], r uniform
  return 4.0 / 3.0 * std::numbers::pi * cubed;
}

struct Lattice {
  double x_min = 0.0;
  double height = 0.0;
};

// The fill box of the random_spheres lattice: from just behind the blade to the far wall,
// as many layers as the count needs.
Lattice pour_lattice(const TrenchGeometry& g) {
  Lattice lattice;
  lattice.x_min = g.blade_thickness + 1e-3;
  const long along = static_cast<long>(std::floor((g.length - lattice.x_min) / kLatticeSpacing));
  const long across = static_cast<long>(std::floor(g.width / kLatticeSpacing));
  if (along < 1 || across < 1)
    throw InputError("trench " + g.tag() + ": too small for one lattice site per layer");
  const long layers = (g.spheres + along * across - 1) / (along * across);
  lattice.height = static_cast<double>(layers) * kLatticeSpacing + 1e-6;
  return lattice;
}

fs::path cache_file(const TrenchGeometry& g, const fs::path& cache) {
  return cache / ("trench_" + g.tag() + "_seed" + std::to_string(kSeed) + "_v" +
                  std::to_string(kCacheVersion) + "_settled.json");
}

double max_grain_speed(const World& world) { return grain_speeds(world, 0.0).max_speed; }

fs::path settling_checkpoint(const TrenchGeometry& g, const fs::path& cache) {
  fs::path p = cache_file(g, cache);
  return p.replace_filename(p.stem().string() + "_in_progress.json");
}

struct SettleStage {
  std::string name;
  std::vector<double> youngs_modulus;             // Pa, per material of the world
  double min_duration = 0.0, max_duration = 0.0;  // s; at rest ends it in between
};

// The stages of the settling for a world whose materials have the moduli `stiff`.
std::vector<SettleStage> settle_stages(const std::vector<double>& stiff, double fall_time) {
  auto scaled = [&](double factor) {
    std::vector<double> e;
    for (double x : stiff) e.push_back(x > 0.0 ? std::min(x, kSoftModulus * factor) : x);
    return e;
  };
  std::vector<SettleStage> stages{{"soft", scaled(1.0), 1.5 * fall_time, 1.5 * fall_time + 2.0}};
  for (int k = 1; k <= kRampStages; ++k) {
    const double factor = std::pow(10.0, 2.0 * k / kRampStages);
    stages.push_back(
        {"ramp " + std::to_string(k), scaled(factor), kRampStageDuration, kRampStageDuration});
  }
  stages.push_back({"stiff", stiff, kStiffMinDuration, kStiffMaxDuration});
  return stages;
}

// What the cache's files are of: checked on reading, so that a file of another trench, seed or
// settling is refused by name rather than used.
nlohmann::json cache_identity(const TrenchGeometry& g, const std::string& kind) {
  return {{"kind", kind}, {"trench", g.tag()}, {"seed", kSeed}, {"cache_version", kCacheVersion}};
}

// The metadata of a cache file (moreau/io/checkpoint.hpp) against cache_identity; returns it.
nlohmann::json cache_metadata(const fs::path& path, const CheckpointContents& contents,
                              const TrenchGeometry& g, const std::string& kind) {
  const nlohmann::json identity = cache_identity(g, kind);
  for (const auto& [key, expected] : identity.items())
    if (!contents.metadata.is_object() ||
        contents.metadata.value(key, nlohmann::json()) != expected)
      throw InputError(path.string() + ": metadata." + key + ": expected " + expected.dump() +
                       " (delete the file to settle the trench again)");
  return contents.metadata;
}

// Where a stage stands, saved in the settling's checkpoint (its metadata) beside the DEM's
// springs and forces, so that a resumed stage continues as the uninterrupted one.
struct StageProgress {
  double time_step = 0.0;        // s, the stage's (halved where the packing demanded it)
  long steps = 0;                // of the stage so far
  double next_checkpoint = 0.0;  // s, when the stage writes its next checkpoint
  double next_report = 0.0;      // s, when it next reports (and tests whether it is at rest)
};

// The settling's checkpoint: at the start of stage `stage` (no stepper yet: the stage starts
// with no springs) or within it, with `steps_before` the DEM steps of the stages before it.
// Written over the previous one (write_checkpoint renames it into place, so a settling killed
// while writing keeps the last one). `checkpoints_left` (the --interrupt-after test hook; null:
// none) counts them down; at zero the settling stops as if killed. After a stop signal
// (resumable::stop_on_signals) the settling stops at its next checkpoint.
void write_progress(const fs::path& progress, const World& world, const TrenchGeometry& g,
                    int stage, long steps_before, const Stepper* stepper,
                    const StageProgress& within, long* checkpoints_left) {
  fs::create_directories(progress.parent_path());
  nlohmann::json metadata = cache_identity(g, kSettlingKind);
  metadata["stage"] = stage;
  metadata["steps_before_stage"] = steps_before;
  CheckpointContents contents{0, "blade_trench settling " + g.tag(), std::nullopt,
                              nlohmann::json()};
  if (stepper) {
    metadata["stage_progress"] = {{"time_step", within.time_step},
                                  {"steps", within.steps},
                                  {"next_checkpoint", within.next_checkpoint},
                                  {"next_report", within.next_report}};
    contents.step = stepper->steps_taken();
    contents.metadata = metadata;
    write_stepper_checkpoint(progress, *stepper, contents);
  } else {
    contents.metadata = metadata;
    write_checkpoint(progress, world, contents);
  }
  if (checkpoints_left && --*checkpoints_left == 0)
    throw resumable::Interrupted("settling interrupted after a checkpoint in stage " +
                                 std::to_string(stage) + " (--interrupt-after)");
  if (resumable::stop_requested())
    throw resumable::Interrupted("settling stopped by a signal after a checkpoint in stage " +
                                 std::to_string(stage));
}

// A stage resumed from the settling's checkpoint (read into the world already).
struct StageResume {
  CheckpointContents contents;
  fs::path path;
  StageProgress progress;
};

// Runs stage `index` of the settling on `world` (its time counted from 0 when the stage
// starts), or continues it from `resumed`; returns its steps. The time step is half the
// stability estimate at the start; a packing denser than the estimate saw (SimulationError at a
// neighbour rebuild) halves it.
long settle_stage(World& world, const TrenchGeometry& g, const SettleStage& stage, int index,
                  long steps_before, const fs::path& progress,
                  const std::optional<StageResume>& resumed, long* checkpoints_left) {
  for (std::size_t i = 0; i < world.materials.size(); ++i)
    world.materials[i].youngs_modulus = stage.youngs_modulus[i];
  DemOptions options;
  options.law.law = NormalLaw::hookean;
  StageProgress at;
  if (resumed) {
    at = resumed->progress;
  } else {
    at.time_step = 0.5 * estimate_stable_time_step(world, options);
    at.next_checkpoint = world.time + kSettleCheckpointInterval;
    at.next_report = world.time + 0.1 * kSettleCheckpointInterval;
  }
  options.time_step = at.time_step;
  bool settled = false;
  const long steps_at_start = at.steps;
  const Clock::time_point start = Clock::now();
  const auto read = [&](const Stepper& stepper, const StepReport&) {
    ++at.steps;
    if (world.time >= at.next_report || world.time >= stage.max_duration) {
      at.next_report += 0.1 * kSettleCheckpointInterval;
      const Speeds speeds = grain_speeds(world, kSettledSpeed);
      const double per_step = std::chrono::duration<double>(Clock::now() - start).count() /
                              static_cast<double>(at.steps - steps_at_start);
      std::cout << "settling (" << stage.name << "): t = " << world.time << " s, step " << at.steps
                << " of " << options.time_step << " s, largest speed " << speeds.max_speed
                << " m/s at height " << speeds.fastest_height << " m, " << speeds.above
                << " grains above " << kSettledSpeed << " m/s, " << 1e3 * per_step << " ms per step"
                << std::endl;
      settled = world.time >= stage.min_duration && speeds.max_speed < kSettledSpeed;
    }
    // After the test for rest: a checkpoint is of a stage that goes on.
    if (!settled && world.time >= at.next_checkpoint) {
      at.next_checkpoint += kSettleCheckpointInterval;
      write_progress(progress, world, g, index, steps_before, &stepper, at, checkpoints_left);
    }
  };
  bool restore = resumed.has_value();
  for (;;) {
    options.time_step = at.time_step;
    SteppingRun run(std::make_unique<DemStepper>(world, options), read);
    // The grain positions and forces are read from the world, not the report's contacts.
    run.read_contacts(false);
    if (restore) {
      run.stepper().resume_at(resumed->contents.step);
      restore_scheme_state(resumed->contents, run.stepper(), resumed->path);
      restore = false;
    }
    try {
      run.advance_while(
          [&](const Stepper&) { return !settled && world.time < stage.max_duration; });
      break;
    } catch (const SimulationError& e) {
      if (std::string(e.what()).find("stability estimate") == std::string::npos) throw;
      at.time_step *= 0.5;
      std::cout << "settling (" << stage.name << "): time step halved to " << at.time_step << " s ("
                << e.what() << ")" << std::endl;
    }
  }
  return at.steps;
}

// Settles `world` (blade at rest) in place, from the settling's checkpoint in `cache` when
// there is one; returns the settling's DEM steps, those before a resume included. The world's
// moduli are restored.
long settle(World& world, const TrenchGeometry& g, double top, const fs::path& cache,
            long* checkpoints_left, bool& resumed_settling) {
  std::vector<double> stiff;
  for (const Material& m : world.materials) stiff.push_back(m.youngs_modulus);
  const std::vector<SettleStage> stages = settle_stages(stiff, std::sqrt(2.0 * top / kGravity));
  const fs::path progress = settling_checkpoint(g, cache);
  int first = 0;
  long steps = 0;
  std::optional<StageResume> resumed;
  world.time = 0.0;
  if (fs::exists(progress)) {
    CheckpointContents contents = read_checkpoint_contents(progress, world);
    const nlohmann::json metadata = cache_metadata(progress, contents, g, kSettlingKind);
    const nlohmann::json& stage = metadata.value("stage", nlohmann::json());
    if (!stage.is_number_integer() || stage.get<int>() < 0 ||
        stage.get<int>() >= static_cast<int>(stages.size()))
      throw InputError(progress.string() + ": metadata.stage: expected a stage in [0, " +
                       std::to_string(stages.size()) + "), got " + stage.dump() +
                       " (delete the file to settle the trench again)");
    first = stage.get<int>();
    try {
      steps = metadata.at("steps_before_stage").get<long>();
      if (metadata.contains("stage_progress")) {
        const nlohmann::json& p = metadata.at("stage_progress");
        const StageProgress at{p.at("time_step").get<double>(), p.at("steps").get<long>(),
                               p.at("next_checkpoint").get<double>(),
                               p.at("next_report").get<double>()};
        if (!(at.time_step > 0.0) || !std::isfinite(at.time_step) || at.steps < 0)
          throw InputError(progress.string() +
                           ": metadata.stage_progress: expected a time step > 0 and steps >= 0 "
                           "(delete the file to settle the trench again)");
        resumed = StageResume{std::move(contents), progress, at};
      }
    } catch (const nlohmann::json::exception& e) {
      throw InputError(progress.string() + ": metadata: " + e.what() +
                       " (delete the file to settle the trench again)");
    }
    resumed_settling = true;
    std::cout << "settling: resumed in stage " << stages[first].name << " at t = " << world.time
              << " s" << std::endl;
  } else {
    std::mt19937 generator(kSeed + static_cast<unsigned>(g.spheres));
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    for (RigidBody& b : world.bodies)
      if (b.is_dynamic())
        b.linear_velocity = Vec3(kPourSpeed * unit(generator), 0.0, kPourSpeed * unit(generator));
  }
  for (int k = first; k < static_cast<int>(stages.size()); ++k) {
    if (k > first) {
      world.time = 0.0;
      write_progress(progress, world, g, k, steps, nullptr, StageProgress{}, checkpoints_left);
    }
    steps += settle_stage(world, g, stages[k], k, steps, progress,
                          k == first ? resumed : std::nullopt, checkpoints_left);
  }
  for (std::size_t i = 0; i < world.materials.size(); ++i)
    world.materials[i].youngs_modulus = stiff[i];
  return steps;
}

}  // namespace

double TrenchGeometry::fill_height() const {
  return spheres * mean_sphere_volume() / (kExpectedPacking * length * width);
}

std::string TrenchGeometry::tag() const {
  std::ostringstream out;
  out << spheres << "_" << std::lround(1000 * length) << "x" << std::lround(1000 * width) << "_b"
      << std::lround(1000 * blade_width) << "d" << std::lround(1000 * blade_depth);
  return out.str();
}

nlohmann::json trench_scene(const TrenchGeometry& g, double density, double blade_speed) {
  const Lattice lattice = pour_lattice(g);
  const double fill = g.fill_height();
  const double bottom = fill - g.blade_depth;
  if (!(bottom > 2.0 * kRadiusMax))
    throw InputError("trench " + g.tag() + ": the blade would reach the floor");
  // The blade reaches a blade depth above the surface, above the heap it pushes.
  const double height = 2.0 * g.blade_depth;
  const nlohmann::json grain_box_min = {lattice.x_min, 0.0, 0.0};
  const nlohmann::json grain_box_max = {g.length, lattice.height, g.width};
  return {
      {"description",
       "Blade trench of Kleinert, Simeon & Dressler Sec. 5 (experiments/blade_trench)"},
      {"gravity", {0.0, -kGravity, 0.0}},
      {"time_step", 1e-2},
      {"steps", 1},
      {"integrator", {{"scheme", "shake"}}},
      {"collision", {{"margin", 0.5 * kMeanRadius}}},
      // The IPM as the experiment runs it (methods.cpp, ipm_options) at tolerance 1e-5.
      {"solver",
       {{"name", "ipm"},
        {"tolerance", 1e-5},
        {"max_iterations", 200},
        {"stopping", "kleinert_error"},
        {"predictor_relative_residual", kPredictorRelativeResidual}}},
      // E for the DEM reference only (README.md); CD contacts are rigid.
      {"materials",
       {{{"name", "soil"}, {"density", density}, {"youngs_modulus", 1e8}, {"poisson_ratio", 0.3}}}},
      {"friction", {{"default", kMu}}},
      {"generators",
       {{{"type", "container"},
         {"name", "trench"},
         {"min", {0.0, 0.0, 0.0}},
         {"max", {g.length, lattice.height, g.width}},
         {"material", "soil"}},
        {{"type", "random_spheres"},
         {"name", "grain"},
         {"count", g.spheres},
         {"radius_min", kRadiusMin},
         {"radius_max", kRadiusMax},
         {"box_min", grain_box_min},
         {"box_max", grain_box_max},
         {"placement", "lattice"},
         {"spacing", kLatticeSpacing},
         {"seed", kSeed},
         {"rotation_locked", true},
         {"material", "soil"}}}},
      {"bodies",
       {{{"name", "blade"},
         {"shape",
          {{"type", "box"},
           {"half_extents", {0.5 * g.blade_thickness, 0.5 * height, 0.5 * g.blade_width}}}},
         {"motion", "prescribed"},
         {"position", {0.5 * g.blade_thickness, bottom + 0.5 * height, 0.5 * g.width}},
         {"velocity", {blade_speed, 0.0, 0.0}},
         {"material", "soil"}}}},
      {"output", {{"csv", false}}}};
}

int blade_index(const World& world) {
  for (std::size_t i = 0; i < world.bodies.size(); ++i)
    if (world.bodies[i].name == "blade") return static_cast<int>(i);
  throw InputError("the trench has no body named \"blade\"");
}

Packing measure_packing(const World& world, const TrenchGeometry& g) {
  // Packing fraction: volume of the grains whose centres lie in a slab away from the floor,
  // the walls and the blade, below the fill's expected top, over the slab's volume.
  const Vec3 low(g.blade_thickness + 2.0 * kRadiusMax, 2.0 * kRadiusMax, 2.0 * kRadiusMax);
  const Vec3 high(g.length - 2.0 * kRadiusMax, 0.75 * g.fill_height(), g.width - 2.0 * kRadiusMax);
  const Vec3 size = high - low;
  if (!(size.minCoeff() > 0.0)) throw InputError("trench " + g.tag() + ": too small to measure");
  double solid = 0.0, total = 0.0;
  for (const RigidBody& b : world.bodies) {
    if (!b.is_dynamic()) continue;
    const double volume =
        4.0 / 3.0 * std::numbers::pi * std::pow(std::get<Sphere>(b.shape.geometry).radius, 3);
    total += volume;
    const Vec3& x = b.position;
    if ((x.array() >= low.array()).all() && (x.array() <= high.array()).all()) solid += volume;
  }
  Packing p;
  p.packing_fraction = solid / size.prod();
  // The surface of a level fill of that packing fraction (the top grains' heights scatter by
  // a diameter; the volume does not).
  p.surface_height = total / (p.packing_fraction * g.length * g.width);
  const RigidBody& blade = world.bodies[blade_index(world)];
  const double bottom = blade.position.y() - std::get<Box>(blade.shape.geometry).half_extents.y();
  p.blade_depth = p.surface_height - bottom;
  return p;
}

Settled settled_trench(const TrenchGeometry& g, const fs::path& cache, long* checkpoints_left) {
  Settled settled;
  settled.checkpoint = cache_file(g, cache);
  const nlohmann::json scene = trench_scene(g, kBulkDensity / kExpectedPacking, 0.0);
  World world = parse_scene(scene, "blade trench " + g.tag()).world;
  // Another process settling the same trench into the same cache (two runs of one build tree,
  // ctest -j) is waited for: its packing is then read, not settled a second time beside it.
  const CacheLock lock(settled.checkpoint, "waiting for another process settling trench " +
                                               g.tag() + " into " + cache.string());
  // A cached packing that cannot be read or is of another trench is an error naming the file:
  // settling again in its place would hide why the cache was not used.
  if (fs::exists(settled.checkpoint)) {
    const nlohmann::json metadata = cache_metadata(
        settled.checkpoint, read_checkpoint_contents(settled.checkpoint, world), g, kSettledKind);
    try {
      settled.steps = metadata.at("settle_steps").get<long>();
      settled.max_speed = metadata.at("max_speed").get<double>();
    } catch (const nlohmann::json::exception& e) {
      throw InputError(settled.checkpoint.string() + ": metadata: " + e.what() +
                       " (delete the file to settle the trench again)");
    }
    settled.from_cache = true;
    return settled;
  }
  const Clock::time_point start = Clock::now();
  const double cpu_start = process_cpu_seconds();
  settled.steps =
      settle(world, g, pour_lattice(g).height, cache, checkpoints_left, settled.resumed);
  settled.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  settled.cpu_seconds = process_cpu_seconds() - cpu_start;
  std::cout << "settling: " << settled.steps << " steps, " << settled.seconds << " s wall, "
            << settled.cpu_seconds << " s CPU" << std::endl;
  settled.max_speed = max_grain_speed(world);
  if (settled.max_speed >= kSettledSpeed)
    throw SimulationError("trench " + g.tag() + ": the fill did not come to rest (largest speed " +
                          std::to_string(settled.max_speed) + " m/s after " +
                          std::to_string(settled.steps) + " steps)");
  // The state the ploughing starts from: grains at rest, t = 0, the blade at its speed.
  for (RigidBody& b : world.bodies)
    if (b.is_dynamic()) b.linear_velocity.setZero();
  world.bodies[blade_index(world)].linear_velocity = Vec3(kBladeSpeed, 0.0, 0.0);
  world.time = 0.0;
  nlohmann::json metadata = cache_identity(g, kSettledKind);
  metadata["settle_steps"] = settled.steps;
  metadata["max_speed"] = settled.max_speed;
  write_checkpoint(settled.checkpoint, world,
                   CheckpointContents{0, "blade_trench " + g.tag(), std::nullopt, metadata});
  fs::remove(settling_checkpoint(g, cache));
  return settled;
}

World trench_world(const TrenchGeometry& g, double density, double blade_speed,
                   const fs::path& checkpoint) {
  World world = parse_scene(trench_scene(g, density, blade_speed), "blade trench " + g.tag()).world;
  read_checkpoint(checkpoint, world);
  world.bodies[blade_index(world)].linear_velocity = Vec3(blade_speed, 0.0, 0.0);
  return world;
}

Speeds grain_speeds(const World& world, double limit) {
  Speeds s;
  for (const RigidBody& b : world.bodies) {
    if (!b.is_dynamic()) continue;
    const double v = b.linear_velocity.norm();
    if (v > s.max_speed) s.fastest_height = b.position.y();
    s.max_speed = std::max(s.max_speed, v);
    if (v > limit) ++s.above;
  }
  return s;
}

}  // namespace blade_trench
