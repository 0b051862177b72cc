#pragma once
// Scalar measures of one biaxial response curve (README.md, "Measures"), read off the
// chapter's Fig. 4.4-4.7: the peak and residual deviatoric stress, the initial peak, the largest
// dilation and the initial compaction.
#include <vector>

#include "biaxial_test.hpp"

namespace moreau {
class ExperimentResults;
}

namespace biaxial {

struct ResponseMeasures {
  double final_axial_strain = 0.0;  // reached (0.21 unless a solve failed)
  double peak = 0.0;                // max (sigma_1 - sigma_3) over the test, N/m^2
  double residual = 0.0;            // mean of sigma_1 - sigma_3 over eps_a >= 2/3 of the final
  double residual_deviation = 0.0;  // its standard deviation over the same window
  double mean = 0.0;                // mean of sigma_1 - sigma_3 over the load steps
  double first_step_ratio = 0.0;    // (sigma_1 - sigma_3) at load step 1 / peak
  double dilation = 0.0;            // -min eps_v: largest volume increase
  double compaction = 0.0;          // max(0, max eps_v): largest volume decrease
  double mean_newton_steps = 0.0;   // per load step (last solve of the step)
  double mean_step_seconds = 0.0;   // wall-clock per load step
  long substeps = 0;                // solves beyond one per load step (halvings)
};

ResponseMeasures measure_response(const TestRun& run);

// One test of the experiment: a family at one stiffness, with its measures.
struct Outcome {
  Family family = Family::disk;
  double k_normal = 0.0;
  TestRun run;
  ResponseMeasures measures;
};

// Records the checks of reference/biaxial_compression/expected.json (checks.cpp).
// full: the published scale, where the orderings that a 40-particle sample cannot decide are
// evaluated too (expected.json "scales").
void run_checks(moreau::ExperimentResults& results, const std::vector<Outcome>& outcomes,
                bool full);

}  // namespace biaxial
