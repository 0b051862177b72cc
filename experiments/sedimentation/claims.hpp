#pragma once
// Dumont's claims on the local solvers (Tables 2-4, Sec. 4.2-4.4): the Newton methods need fewer
// NLGS iterations, EAL penetrates least (on the measured step and over every step), and EBP at
// alpha = 5 with the local Newton converged.
#include <string>
#include <vector>

#include "moreau/harness/results.hpp"
#include "nlgs_runs.hpp"

namespace sedimentation {

using moreau::ExperimentResults;

// Orderings of Dumont Tables 2-3 on the measured step of one part.
void check_orderings(ExperimentResults& results, const std::string& part,
                     const std::vector<Outcome>& outcomes, bool strictly_fewer);

// ---- EAL's penetration against EBP's over a whole run, and EBP at alpha = 5 ----

// The penetration statistic, declared before it was measured: over every step of the run, the
// largest per-step penetration term -min(0, u~_n) (m/s; Dumont eq. 37 at the last NLGS
// iteration) and the number of steps in which it exceeds 1e-15 m/s (about ten round-offs of the
// contact velocities here). One measured step (Tables 2-3) can fall in a static stack where
// every method sits at round-off; the statistic over all steps cannot.
struct PenetrationStatistic {
  double largest = 0.0;
  long steps_above = 0;
};

// EBP and EAL with the paper's plain local Newton (no line search) over the whole run of a part,
// and the same statistic for the suite's default (Armijo line search) runs already made. Checks
// that EAL's largest penetration is at least 100 times below EBP's under plain Newton.
void penetration_over_all_steps(ExperimentResults& results, const std::string& part,
                                const World& initial, const Settings& settings,
                                const std::vector<Outcome>& line_search_runs, CsvTable& steps);

// EBP at alpha = 5 with the local Newton converged (eps_Newt <= 1e-10 instead of the published
// absolute 1e-5 N, which these ~1e-6 N contact forces meet after one Newton step): a diagnostic,
// not a check, of whether the stall at the published scale is EBP's or the local stop's.
void ebp_converged_local_newton(ExperimentResults& results, const World& initial,
                                const Settings& settings);

}  // namespace sedimentation
