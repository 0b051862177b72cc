#pragma once
// What each scale of the blade trench runs (README.md says why): geometry, the tolerances
// with their simulated durations, the DEM reference and the PGJ comparison.
#include <string>
#include <vector>

#include "moreau/conic/interior_point.hpp"
#include "trench_scene.hpp"

namespace blade_trench {

struct ToleranceRun {
  double tolerance = 0.0;  // on the suite's merit (the paper's tolerance on its error)
  double duration = 0.0;   // simulated, s
};

struct TrenchConfig {
  TrenchGeometry geometry;
  std::vector<ToleranceRun> ipm;     // SHAKE + ipm at h = 1e-2 s, in the order they run
  double dem_duration = 0.0;         // s
  double pgj_duration = 0.0;         // s; SHAKE + PGJ at h = 1e-3 s, 2,000 iterations per step
  double pgj_coarse_duration = 0.0;  // s; the same at h = 1e-2 s (the time step's share)
  // s; SHAKE + ipm at ipm_fine_tolerance with h = 1e-3 s: the time step's share of the IPM's
  // difference from the DEM (the paper runs the IPM at 1e-2 s only)
  double ipm_fine_duration = 0.0;
  double ipm_fine_tolerance = 1e-5;
  double steady_start = 0.0;  // s: the steady part is [steady_start, end of the run]
  long checkpoint_every = 0;  // windows of 10 ms between checkpoints (0: none)
  moreau::conic::BodySpacePreconditioner ipm_preconditioner =  // of the IPM's body-space CG
      moreau::conic::BodySpacePreconditioner::symmetric_gauss_seidel;
};

// Options that change the configuration of a scale (README.md, "Scales", size options).
struct SizeOptions {
  // Another number of grains; 0: the scale's own. Quick: the trench grows in length and width
  // (both by sqrt(spheres / 300)), blade and fill depth fixed. Full: the published
  // cross-section (width, fill depth, blade) over a trench shortened to the count.
  int spheres = 0;
  // > 0: the cost run, DEM and IPM 1e-3 and 1e-5 over this many seconds of ploughing and no
  // PGJ, for the cost per step at a size.
  double cost_duration = 0.0;
  // > 0: the time-step study at this tolerance, the DEM and the IPM at h = 1e-2 s and at
  // h = 1e-3 s over the scale's duration and no other run: the time step's share of the IPM's
  // difference from the DEM at the scale's own steady part.
  double fine_tolerance = 0.0;
};

// The trench of the full scale (README.md, "Scales"): medium (the published grains, blade and
// speed in a shorter, narrower trench; the main job) or the published 105,144 spheres.
enum class FullTrench { medium, published };

// scale: "quick" or "full"; trench: which one at the full scale; complete: every tolerance
// over the whole duration (the published trench only).
TrenchConfig trench_config(const std::string& scale, FullTrench trench, bool complete,
                           const SizeOptions& size = {});

}  // namespace blade_trench
