#pragma once
// The settling of a column in its closed box before the release (README.md, "Scene"),
// checkpointed so that a published-scale run continues across processes.
#include "column.hpp"
#include "moreau/harness/resumable_run.hpp"

namespace moreau::column_drop {

using resumable::Persistence;

struct Settled {
  World world;
  long steps = 0;
  double seconds = 0.0, height = 0.0, max_overlap = 0.0;
  long non_converged = 0;
};

// Settles the lattice under gravity in the closed box (mu of the particles: 0.5). The chapter
// gives no settling parameters: theta = 1 (e = 0, eq. 4.7) so that the packing does not bounce.
// The fastest approach is the top row landing on the settled column, sqrt(2 g (top - H0)); the
// margin covers one step of it (and is at least the release's). The run stops once the kinetic
// energy is below 1e-4 M g d (a tenth of the release's stop measure, rms speed 1.4% of
// sqrt(g d)), after at least one free-fall time of the lattice top and at most two.
// Checkpointed in `persistence` (moreau/harness/resumable_run.hpp) and, resuming, continued or read
// back.
Settled settle(const Setup& setup, const ShapeFamilies& shapes, Family family, double margin,
               const Persistence& persistence);

}  // namespace moreau::column_drop
