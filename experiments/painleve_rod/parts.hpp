#pragma once
// The four parts of the experiment (README.md): the academic problem (Preclik et al. Sec. 4.1,
// Fig. 7), the Painleve rod's impact (Sec. 4.2, Fig. 8), its time stepping, and the cost of a
// single-contact solve.
#include "moreau/harness/experiment.hpp"

namespace painleve_rod {

using moreau::ExperimentArguments;
using moreau::ExperimentResults;

struct Scale {
  int sweep_angles;     // theta0 values of the (theta0, mu) sweep
  int sweep_mus;        // mu values per angle
  int contour_points;   // per axis of the academic contour grid
  int timing_problems;  // random single-contact problems for the solves-per-second figures
};

void run_academic(const ExperimentArguments& args, const Scale& scale, ExperimentResults& results);
void run_rod_impact(const ExperimentArguments& args, const Scale& scale,
                    ExperimentResults& results);
void run_time_stepping(const ExperimentArguments& args, ExperimentResults& results);
void run_timing(const ExperimentArguments& args, const Scale& scale, ExperimentResults& results);

}  // namespace painleve_rod
