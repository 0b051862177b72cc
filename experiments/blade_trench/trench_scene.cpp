#include "trench_scene.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <numbers>
#include <random>
#include <sstream>
#include <utility>

#include "moreau/core/error.hpp"
#include "moreau/integrator/shake_stepper.hpp"
#include "moreau/io/checkpoint.hpp"
#include "moreau/io/scene.hpp"
#include "moreau/registry/solver_registry.hpp"
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
constexpr int kCacheVersion = 1;  // bump when the scene or the settling changes
// Settling (as pile_problems, README.md): SHAKE with APGD, h = 2 ms, at rest when no grain
// moves faster than 0.02 m/s, after at least 1.5 free-fall times of the top layer and at most
// 2 s more. Random horizontal velocities of up to 0.5 m/s per component break the lattice:
// without them it lands as stable columns of non-rotating spheres.
constexpr double kSettleStep = 2e-3;
constexpr double kSettleTolerance = 1e-3;
constexpr int kSettleIterations = 150;
constexpr double kSettledSpeed = 0.02;  // m/s
constexpr double kPourSpeed = 0.5;      // m/s

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

// Settles `world` (blade at rest) in place; returns the steps taken.
long settle(World& world, const TrenchGeometry& g, double top) {
  std::mt19937 generator(kSeed + static_cast<unsigned>(g.spheres));
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (RigidBody& b : world.bodies)
    if (b.is_dynamic())
      b.linear_velocity = Vec3(kPourSpeed * unit(generator), 0.0, kPourSpeed * unit(generator));
  const double fall_speed = std::sqrt(2.0 * kGravity * top);
  ShakeOptions options;
  options.time_step = kSettleStep;
  // The margin covers one step's approach at the largest fall speed.
  options.collision.margin = std::max(0.5 * kMeanRadius, 1.2 * kSettleStep * fall_speed);
  ApgdOptions solver;
  solver.tolerance = kSettleTolerance;
  solver.max_iterations = kSettleIterations;
  solver.record_history = false;
  ShakeStepper stepper(world, options, make_solver("apgd", solver));
  const long min_steps = static_cast<long>(1.5 * std::sqrt(2.0 * top / kGravity) / kSettleStep);
  const long max_steps = min_steps + static_cast<long>(2.0 / kSettleStep);
  long step = 0;
  while (step < max_steps) {
    stepper.step();
    ++step;
    if (step % 100 == 0)
      std::cout << "settling: step " << step << ", t = " << step * kSettleStep
                << " s, largest speed " << max_grain_speed(world) << " m/s" << std::endl;
    if (step >= min_steps && max_grain_speed(world) < kSettledSpeed) break;
  }
  return step;
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
      {"solver", {{"name", "ipm"}, {"tolerance", 1e-5}, {"max_iterations", 200}}},
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

Settled settled_trench(const TrenchGeometry& g, const fs::path& cache) {
  Settled settled;
  settled.checkpoint = cache_file(g, cache);
  const nlohmann::json scene = trench_scene(g, kBulkDensity / kExpectedPacking, 0.0);
  World world = parse_scene(scene, "blade trench " + g.tag()).world;
  if (fs::exists(settled.checkpoint)) {
    try {
      read_checkpoint(settled.checkpoint, world);
      settled.from_cache = true;
      return settled;
    } catch (const InputError& e) {
      std::cerr << "blade_trench: settling again, the cached packing is unusable: " << e.what()
                << "\n";
      world = parse_scene(scene, "blade trench " + g.tag()).world;
    }
  }
  const Clock::time_point start = Clock::now();
  const double cpu_start = process_cpu_seconds();
  settled.steps = settle(world, g, pour_lattice(g).height);
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
  fs::create_directories(cache);
  write_checkpoint(settled.checkpoint, world, 0, "blade_trench " + g.tag());
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
    s.max_speed = std::max(s.max_speed, v);
    if (v > limit) ++s.above;
  }
  return s;
}

}  // namespace blade_trench
