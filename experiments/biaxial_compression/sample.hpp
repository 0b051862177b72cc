#pragma once
// The biaxial sample of the Krabbenhoft/NURBS chapter Sec. 4.4.1: particles of one shape family
// settled under gravity in a box (dynamic variational scheme, eq. 4.15), then closed by a top
// wall. See README.md for the choices (units, box, settling friction).
#include <string>

#include "moreau/harness/resumable_run.hpp"
#include "moreau/model/world.hpp"
#include "moreau/variational/quasi_static_driver.hpp"

namespace biaxial {

using moreau::resumable::Persistence;

enum class Family { disk, angular, non_convex };
std::string to_string(Family family);

struct SampleOptions {
  Family family = Family::disk;
  int count = 100;               // particles
  double aspect = 2.0;           // H0 / W0 of the settled sample
  double settle_friction = 0.1;  // interparticle mu while settling (dense packing)
  // s of dynamic settling under gravity, at most (it ends earlier once every particle is at
  // rest). 2 s at the quick scale; the full scale's pour is taller (main.cpp, README.md).
  double settle_time = 2.0;
  double settle_step = 0.01;  // s
  double stress = 125.0;      // N/m^2: servo consolidation stress on top and right walls
  // Most servo steps (settle_step each). 300 (3 s): the 500- and 1,520-disk samples come to rest
  // in about 200 steps, the quick samples in 30-120, and the quick ctest budget affords no
  // more. The full scale's polygon samples need more (main.cpp, README.md).
  long max_servo_steps = 300;
};

struct Sample {
  Family family = Family::disk;
  moreau::World world;
  moreau::SampleBox box;  // left, right (x), bottom, top (y) wall bodies
  int wall_material = 1;  // frictionless walls (Sec. 4.4.1: "All walls are frictionless")
  long settle_steps = 0;
  long consolidation_steps = 0;
  long settle_failures = 0;  // settling steps whose solve did not converge
  long settle_newton_steps = 0;
  double settle_seconds = 0.0;
  // Settling steps shortened to keep their motion within half the margin, and the shortest dt
  // (s; 0 when none was).
  long shortened_settle_steps = 0;
  double shortest_settle_step = 0.0;
  double largest_overlap = 0.0;  // deepest penetration seen while settling, m
  double porosity = 0.0;         // 1 - particle area / box area after consolidation
  // At the end of the consolidation (the last dynamic step): the walls' stresses, N/m^2, and
  // the mean particle speed, m/s.
  double top_stress = 0.0, right_stress = 0.0, final_speed = 0.0;
  // Whether the consolidation ended in equilibrium (both walls loaded, particles at rest); if
  // not, the static reference step may have no solution (README.md).
  bool consolidated = false;
};

// Builds, settles and consolidates the sample. Throws moreau::SimulationError when a settling
// step does not converge; a consolidation without equilibrium is `consolidated = false`.
// With a persistence directory, checkpoints the preparation there (every_seconds, and once
// done) and, resuming, continues from its checkpoint or reads the finished sample back.
Sample prepare_sample(const SampleOptions& options, const Persistence& persistence = {});

// Total area of the particles (exact, from the shapes), m^2.
double particle_area(const moreau::World& world);

}  // namespace biaxial
