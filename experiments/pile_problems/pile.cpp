#include "pile.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <numbers>
#include <optional>
#include <random>
#include <string>

#include "moreau/core/error.hpp"
#include "moreau/harness/cache_lock.hpp"
#include "moreau/harness/stepping.hpp"
#include "moreau/integrator/shake_stepper.hpp"
#include "moreau/io/checkpoint.hpp"
#include "moreau/io/scene.hpp"
#include "moreau/model/shape.hpp"
#include "moreau/solver/apgd.hpp"
#include "moreau/solver/solver_registry.hpp"

#ifndef MOREAU_PILE_CACHE
#define MOREAU_PILE_CACHE ""
#endif

namespace pile_problems {

using namespace moreau;
using Clock = std::chrono::steady_clock;
namespace fs = std::filesystem;

namespace {

// Settling (README.md): SHAKE with APGD, h = 2 ms; the pile is settled when no sphere moves
// faster than kSettledSpeed (2 mm per 10 ms step, 1/6 of the smallest radius per second).
constexpr double kSettleStep = 2e-3;
constexpr double kSettleTolerance = 1e-3;
constexpr int kSettleIterations = 150;
constexpr double kSettledSpeed = 0.02;    // m/s
constexpr double kPackingFraction = 0.6;  // to size the container: height ~ side
constexpr unsigned kSeed = 2015;          // std::mt19937, + pile size
constexpr int kCacheVersion = 3;          // bump when the generator or the settling changes

// E[r^3] of r uniform in [a, b], for the mean sphere volume.
double mean_cubed_radius() {
  return (std::pow(kRadiusMax, 4) - std::pow(kRadiusMin, 4)) / (4.0 * (kRadiusMax - kRadiusMin));
}

// Square box with open top whose settled pile is about as high as it is wide.
double container_side(int spheres) {
  const double volume = spheres * 4.0 / 3.0 * std::numbers::pi * mean_cubed_radius();
  return std::cbrt(volume / kPackingFraction);
}

// Square box with open top (the scene format's container generator: five fixed half-spaces),
// gravity and mu = 0.25 between every pair of bodies.
World empty_box(double side) {
  const nlohmann::json box = {
      {"steps", 0},
      {"gravity", {0.0, -kGravity, 0.0}},
      {"friction", {{"default", kMu}}},
      {"generators",
       {{{"type", "container"}, {"min", {0.0, 0.0, 0.0}}, {"max", {side, side, side}}}}}};
  return parse_scene(box, "pile container").world;
}

// Initial state: radii uniform in [8, 16] mm on a square lattice that fills the box from the
// floor up, spacing at least one largest diameter plus 1 mm, every other layer shifted by half
// a spacing (so that spheres fall into the gaps below, not onto the sphere below), each sphere
// moved at random within its cell's clearance and given a random horizontal velocity of up to
// 0.5 m/s per component: without it the lattice falls as one block and lands as stable
// columns of non-rotating spheres instead of a random packing.
Pile initial_pile(int spheres) {
  Pile pile;
  pile.spheres = spheres;
  pile.side = container_side(spheres);
  const double pitch = 2.0 * kRadiusMax + 1e-3;
  const int per_row = std::max(1, static_cast<int>(pile.side / pitch - 0.5));
  const double spacing = pile.side / (per_row + 0.5);
  std::mt19937 generator(kSeed + static_cast<unsigned>(spheres));
  std::uniform_real_distribution<double> radius(kRadiusMin, kRadiusMax);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  const double clearance = 0.5 * (spacing - 2.0 * kRadiusMax);
  for (int k = 0; k < spheres; ++k) {
    const int layer = k / (per_row * per_row), i = (k / per_row) % per_row, j = k % per_row;
    const double shift = layer % 2 == 0 ? 0.5 : 1.0;
    const double r = radius(generator);
    const double x = (i + shift) * spacing + clearance * unit(generator);
    const double z = (j + shift) * spacing + clearance * unit(generator);
    const Vec3 velocity(0.5 * unit(generator), 0.0, 0.5 * unit(generator));
    pile.grains.push_back({Vec3(x, kRadiusMax + 5e-4 + layer * pitch, z), velocity, r});
  }
  return pile;
}

std::unique_ptr<ContactSolver> settle_solver() {
  ApgdOptions options;
  options.tolerance = kSettleTolerance;
  options.max_iterations = kSettleIterations;
  options.record_history = false;
  return make_solver("apgd", options);
}

double max_speed(const World& world) {
  double worst = 0.0;
  for (const RigidBody& b : world.bodies)
    if (b.is_dynamic()) worst = std::max(worst, b.linear_velocity.norm());
  return worst;
}

// The grains' positions and velocities from the dynamic bodies of a pile_world.
void take_grain_states(const World& world, Pile& pile) {
  int k = 0;
  for (const RigidBody& b : world.bodies) {
    if (!b.is_dynamic()) continue;
    pile.grains[k].position = b.position;
    pile.grains[k].velocity = b.linear_velocity;
    ++k;
  }
}

// Settles the pile under gravity with nonsmooth SHAKE. The collision margin covers one step's
// approach at the largest fall speed sqrt(2 g H0), so that no pair closes unseen.
void settle(Pile& pile) {
  World world = pile_world(pile);
  double top = 0.0;
  for (const Sphere3& g : pile.grains) top = std::max(top, g.position.y());
  const double fall_speed = std::sqrt(2.0 * kGravity * top);
  ShakeOptions options;
  options.time_step = kSettleStep;
  options.collision.margin = std::max(kPotentialContactDistance, 1.2 * kSettleStep * fall_speed);
  SteppingRun run(std::make_unique<ShakeStepper>(world, options, settle_solver()));
  const long min_steps = static_cast<long>(1.5 * std::sqrt(2.0 * top / kGravity) / kSettleStep);
  const long max_steps = min_steps + static_cast<long>(2.0 / kSettleStep);  // 2 s more at most
  const Clock::time_point start = Clock::now();
  const RunOutcome outcome = run.advance_while([&](const Stepper& stepper) {
    const long step = stepper.steps_taken();
    return step < max_steps && (step < min_steps || !(max_speed(world) < kSettledSpeed));
  });
  pile.settle_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  pile.settle_steps = outcome.steps_completed;
  pile.final_max_speed = max_speed(world);
  take_grain_states(world, pile);
}

fs::path cache_path(int spheres) {
  const std::string directory = MOREAU_PILE_CACHE;
  if (directory.empty()) return {};
  return fs::path(directory) /
         ("pile_" + std::to_string(spheres) + "_seed" + std::to_string(kSeed) + "_v" +
          std::to_string(kCacheVersion) + ".json");
}

// What a cache file is of: checked on reading, so that a pile of another size, seed or
// settling is refused by name rather than measured.
nlohmann::json cache_identity(int spheres) {
  return {{"kind", "pile_problems settled pile"},
          {"spheres", spheres},
          {"seed", kSeed},
          {"cache_version", kCacheVersion}};
}

// The settled pile of the cache, if it holds one. The file is an engine checkpoint
// (moreau/io/checkpoint.hpp) of pile_world's bodies, read into the world of the pile's initial
// state (so that the radii, drawn from the seed, are checked against the file's) with the
// settling's counters in its metadata. A file that cannot be read or is of another pile is an
// InputError naming it: measuring a pile settled afresh in its place would hide why.
std::optional<Pile> read_cache(int spheres) {
  const fs::path path = cache_path(spheres);
  if (path.empty() || !fs::exists(path)) return std::nullopt;
  Pile pile = initial_pile(spheres);
  World world = pile_world(pile);
  const nlohmann::json metadata = read_checkpoint_contents(path, world).metadata;
  const auto fail = [&](const std::string& what) {
    throw InputError(path.string() + ": metadata" + what +
                     " (delete the file to settle the pile again)");
  };
  if (!metadata.is_object()) fail(": missing");
  const nlohmann::json identity = cache_identity(spheres);
  for (const auto& [key, expected] : identity.items())
    if (metadata.value(key, nlohmann::json()) != expected)
      fail("." + key + ": expected " + expected.dump());
  try {
    pile.settle_steps = metadata.at("settle_steps").get<long>();
    pile.settle_seconds = metadata.at("settle_seconds").get<double>();
    pile.final_max_speed = metadata.at("final_max_speed").get<double>();
  } catch (const nlohmann::json::exception& e) {
    fail(std::string(": ") + e.what());
  }
  take_grain_states(world, pile);
  pile.from_cache = true;
  return pile;
}

void write_cache(const Pile& pile) {
  const fs::path path = cache_path(pile.spheres);
  if (path.empty()) return;
  fs::create_directories(path.parent_path());
  nlohmann::json metadata = cache_identity(pile.spheres);
  metadata["settle_steps"] = pile.settle_steps;
  metadata["settle_seconds"] = pile.settle_seconds;
  metadata["final_max_speed"] = pile.final_max_speed;
  write_checkpoint(
      path, pile_world(pile),
      CheckpointContents{pile.settle_steps, "pile_problems settled pile", std::nullopt, metadata});
}

}  // namespace

World pile_world(const Pile& pile) {
  World world = empty_box(pile.side);
  for (const Sphere3& g : pile.grains) {
    const MassProperties mass = mass_properties(Sphere{g.radius}, kDensity, Dimension::three);
    RigidBody body;
    body.name = "grain";
    body.rotation_locked = true;  // Kleinert's non-rotating spheres
    body.shape.geometry = Sphere{g.radius};
    body.mass = mass.mass;
    body.inertia_body = mass.inertia;
    body.position = g.position;
    body.linear_velocity = g.velocity;
    world.add_body(body);
  }
  return world;
}

Pile settled_pile(int spheres) {
  // Another process settling the same pile into the cache is waited for, and its pile read.
  std::optional<CacheLock> lock;
  if (const fs::path path = cache_path(spheres); !path.empty())
    lock.emplace(path, "waiting for another process settling the " + std::to_string(spheres) +
                           "-sphere pile into " + path.parent_path().string());
  if (std::optional<Pile> cached = read_cache(spheres)) return *cached;
  Pile pile = initial_pile(spheres);
  settle(pile);
  write_cache(pile);
  return pile;
}

}  // namespace pile_problems
