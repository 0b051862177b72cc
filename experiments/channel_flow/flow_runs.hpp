#pragma once
// One run of the granular channel flow (Preclik et al. Sec. 4.3): a scene of
// scenes/channel_flow_*.json, at the published geometry or shrunk to the quick scale, with the
// inflow of ChannelInflow, sampled as the paper did (Table 2: every 10 ms; the profiles of
// Fig. 10-11 and the radial distribution of Fig. 12 from the last frame).
#include <string>
#include <vector>

#include "moreau/harness/resumable_run.hpp"
#include "moreau/io/scene.hpp"
#include "moreau/simulation/channel_flow.hpp"

namespace channel_flow {

using moreau::Scene;

inline const std::string kCoulombScene =
    std::string(MOREAU_SCENES_DIR) + "/channel_flow_coulomb.json";
inline const std::string kMaxDissipationScene =
    std::string(MOREAU_SCENES_DIR) + "/channel_flow_max_dissipation.json";

// The channel shrunk by `factor` in x and y (the obstacle, the walls, the outlet and the cell
// grid with it) and cut to `height` in z, the particles, the inflow and the time step kept:
// the quick scale. Throws InputError when the scene lacks the bodies this program edits.
void shrink_channel(Scene& scene, double factor, double height);

// One sample (every `sample_every` steps).
struct Sample {
  double time = 0.0;            // s
  long particles = 0;           // dynamic spheres in the channel
  long contacts = 0;            // contacts of the step's problem (touching or penetrating)
  double solid_fraction = 0.0;  // bed_solid_fraction at this step
  double penetration = 0.0;     // largest particle-particle overlap of this step, m
  int iterations = 0;           // solver sweeps of this step
};

struct CellProfile {
  moreau::CellFields last;  // the last frame (Preclik et al. Fig. 10-11)
  moreau::CellFields mean;  // every sample of the steady part
};

struct Outcome {
  std::string label;  // "coulomb seed 1", ...
  std::string model;  // "coulomb" or "max_dissipation"
  unsigned seed = 0;
  std::vector<Sample> samples;
  std::vector<CellProfile> profile;           // one entry, filled at the end
  std::vector<double> rdf;                    // g(r) of the last frame, bins of rdf_bin_width
  double rdf_bin_width = 0.0;                 // m
  double diameter = 0.0;                      // m, of the particles (the scene's)
  double largest_penetration_any_step = 0.0;  // m, over every step, not only the samples
  long steps = 0;
  long resumed_at = 0;  // the step of the checkpoint the run continued from (0: from the start)
  long particles_added = 0, particles_removed = 0;
  long initial_particles = 0;   // the first layer and the filling
  double duration = 0.0;        // simulated, s
  double wall_seconds = 0.0;    // over every process the run took
  double particle_steps = 0.0;  // sum over steps of the particles stepped
  double contact_sweeps = 0.0;  // sum over steps of contacts x solver sweeps
  double collision_seconds = 0.0, solve_seconds = 0.0;
};

struct RunSpec {
  std::string scene;     // path
  double shrink = 1.0;   // 1: the published geometry
  double height = 0.02;  // m, channel height (the published 2 cm at full scale)
  unsigned seed = 1;
  double duration = 10.0;    // s
  long sample_every = 1000;  // steps (10 ms at dt = 10 us, Preclik et al. Table 2)
  double steady_from = 0.0;  // s: samples from here on are the steady part
  int max_iterations = 0;    // 0: the scene's
  double tolerance = -1.0;   // < 0: the scene's
  int check_every = 0;       // 0: the scene's
  // The run's checkpoint (README.md "Resuming from checkpoints"): written every
  // persistence.every_seconds of wall clock and at the end when persistence.directory is set,
  // continued from with persistence.resume.
  moreau::resumable::Persistence persistence;
};

// Throws moreau::resumable::Interrupted where spec.persistence.interrupt_after stops the run
// (the test of resuming), after its checkpoint.
Outcome run(const RunSpec& spec);

// Means over the samples from `from` (s) on.
struct Means {
  double particles = 0.0, contacts = 0.0, contacts_per_particle = 0.0, solid_fraction = 0.0,
         penetration_max = 0.0;
  long samples = 0;
};
Means steady_means(const Outcome& outcome, double from);

// The relative difference of the mean particle count between the first and second half of the
// samples from `from` (s) on (NaN with fewer than two): how far the flow is from steady.
double steady_drift(const Outcome& outcome, double from);
// Whether the largest g(r) lies within 10% of the particle diameter (Preclik et al. Fig. 12:
// "a strong peak at a distance equal to the particle diameter").
bool rdf_peak_at_diameter(const Outcome& outcome);

}  // namespace channel_flow
