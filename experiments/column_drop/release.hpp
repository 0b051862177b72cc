#pragma once
// The release of a settled column (chapter Sec. 4.4.2, Fig. 4.8-4.13): the run of each family
// and mu after the side wall is removed, its record of every step, its snapshots and the
// deposit's measures at the end (README.md, "Measures").
#include <string>
#include <vector>

#include "column.hpp"
#include "deposit.hpp"
#include "moreau/harness/resumable_run.hpp"
#include "settling.hpp"

namespace moreau::column_drop {

using resumable::Persistence;

struct StepRecord {
  long step = 0;
  double kinetic_energy = 0.0, toe = 0.0, max_overlap = 0.0, seconds = 0.0;
  double energy_ratio = 0.0;    // kinetic energy / (M g d), all particles
  double deposit_energy = 0.0;  // kinetic energy of the deposit / (its m g d)
  long contacts = 0, newton_steps = 0;
  bool converged = true;
  std::string status;  // of the interior point method, for a step that did not converge
};

struct Snapshot {
  long step = 0;
  std::vector<Vec3> pose;  // x, y, angle of each particle
};

struct Run {
  Family family = Family::disk;
  double mu = 0.0;
  std::vector<StepRecord> steps;
  std::vector<Snapshot> snapshots;
  std::vector<SurfaceBin> final_surface;
  SlopeFit slope;
  double spread = 0.0, toe_advance = 0.0;
  bool stopped = false;
  std::string label() const { return std::string(name(family)) + (mu > 0 ? "_mu0.5" : "_mu0"); }
};

// Removes the side wall (body 2) of the settled column and lets it spread: at least `steps`
// steps (the paper's final configuration, scaled), then until the deposit stops, at most twice
// as many (the paper's mu = 0 run). Checkpointed in `persistence` and, resuming, continued or
// read back.
Run release(const Settled& settled, Family family, double mu, long steps, double margin,
            double gravity, const Persistence& persistence);

}  // namespace moreau::column_drop
