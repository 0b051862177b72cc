#pragma once
// The blade trench of Kleinert, Simeon & Dressler Sec. 5 (Fig. 8-9) as a scene: a box with
// open top filled with non-rotating spheres, a rectangular blade (a prescribed-velocity box)
// flush with the trench's start wall, the settling of the fill and the settled packing as a
// checkpoint (moreau/io/checkpoint.hpp) that every method starts from. Published values:
// radii, bulk density, mu, blade width, speed and depth; the rest is ours (README.md).
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "moreau/model/world.hpp"
#include "moreau/solver/solver.hpp"

namespace blade_trench {

// Kleinert Sec. 5: radii uniform in [8, 16] mm, bulk density 1,382 kg/m^3, mu = 0.25 for
// every contact, blade 0.2 m wide moving at 0.2 m/s at an initial depth of 0.2 m.
constexpr double kRadiusMin = 0.008, kRadiusMax = 0.016;  // m
constexpr double kMeanRadius = 0.5 * (kRadiusMin + kRadiusMax);
constexpr double kBulkDensity = 1382.0;  // kg/m^3
constexpr double kMu = 0.25;
constexpr double kBladeSpeed = 0.2;  // m/s
constexpr double kGravity = 9.81;

// The IPM's predictor solved to this relative residual of its right-hand side (one digit; the
// loosest any solve gets): its late solves otherwise reach the CG's cap
// (conic::InteriorPointOptions::predictor_relative_residual, README.md "Where the iterations go").
constexpr double kPredictorRelativeResidual = 0.1;

struct TrenchGeometry {
  int spheres = 0;
  double length = 0.0, width = 0.0;  // inner size of the trench (x, z), m
  double blade_width = 0.2;          // along z, m
  double blade_depth = 0.2;          // below the expected surface, m
  double blade_thickness = 0.02;     // along x, m
  double fill_height() const;        // expected settled height at packing fraction 0.6, m
  std::string tag() const;           // names the cache file
};

// The scene (scene-format JSON) of the trench with particles of `density`: container with
// open top, lattice fill (generator random_spheres, seeded), blade as a prescribed box moving
// at `blade_speed` along +x. The same document with another density or blade speed gives
// the same bodies in the same order, so one checkpoint serves all of them.
nlohmann::json trench_scene(const TrenchGeometry& g, double density, double blade_speed);

// Index of the blade in a world built from trench_scene.
int blade_index(const moreau::World& world);

struct Packing {
  double packing_fraction = 0.0;  // solid share of the bulk away from walls and surface
  double surface_height = 0.0;    // height of a level fill of the same grains and packing, m
  double blade_depth = 0.0;       // surface height - blade bottom, m
  double particle_density() const { return kBulkDensity / packing_fraction; }
};
Packing measure_packing(const moreau::World& world, const TrenchGeometry& g);

struct Settled {
  std::filesystem::path checkpoint;  // the settled packing, blade at rest
  long steps = 0;                    // DEM steps of the settling
  double seconds = 0.0;              // wall time of the settling (0 when read from the cache)
  double cpu_seconds = 0.0;          // its CPU time, all threads (0 when read from the cache)
  double max_speed = 0.0;            // largest grain speed when it stopped, m/s
  bool from_cache = false;
  bool resumed = false;  // continued from a settling's checkpoint: seconds are this process's
};

// Pours the lattice into the trench and settles it with the penalty DEM, then writes the state
// (grain velocities zeroed) to <cache>/trench_<tag>_..._settled.json, an engine checkpoint
// (moreau/io/checkpoint.hpp) whose metadata names the trench, seed and settling version and
// holds the settling's steps and final speed. A file there is reused; one that cannot be read
// or is of another trench is an InputError naming it (delete it to settle again). Throws
// moreau::SimulationError when the fill does not come to rest.
// `checkpoints_left` (the --interrupt-after test hook; null: none) counts the settling's
// checkpoints down; at zero it stops as if killed (resumable::Interrupted), and the next call
// resumes it from its last checkpoint, with the DEM's springs, forces, time step and schedules,
// so that it ends where the uninterrupted settling does.
Settled settled_trench(const TrenchGeometry& g, const std::filesystem::path& cache,
                       long* checkpoints_left = nullptr);

// World of trench_scene(g, density, blade_speed) in the settled state of `checkpoint`.
moreau::World trench_world(const TrenchGeometry& g, double density, double blade_speed,
                           const std::filesystem::path& checkpoint);

// Largest speed of a dynamic body, m/s, and the number of them faster than `limit`.
struct Speeds {
  double max_speed = 0.0;
  double fastest_height = 0.0;  // height of the fastest grain's centre, m
  int above = 0;
};
Speeds grain_speeds(const moreau::World& world, double limit);

}  // namespace blade_trench
