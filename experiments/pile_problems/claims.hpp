#pragma once
// Kleinert Sec. 5's claims over the piles (Fig. 6-7): PGJ stalls on the larger piles, the IPM is
// faster than PGJ at 1e-2, and PGJ's time over the IPM's to 5e-4 on the largest pile; gathered
// pile by pile, checked once every pile has run.
#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "moreau/harness/results.hpp"
#include "solver_runs.hpp"

namespace pile_problems {

struct Claims {
  bool larger_piles_stall = true;
  std::string stall_note;
  bool ipm_faster_at_1e2 = false;  // starts true where this build has an IPM
  std::string ipm_note;
  double largest_ratio = std::numeric_limits<double>::quiet_NaN();
  // PGJ that has not reached 5e-4 when its run ends (its cap, or the budget of ratio_budget)
  // leaves only a lower bound of the ratio: the run measured its own budget, not the ratio.
  moreau::Measured ratio_is = moreau::Measured::exact;
  std::string ratio_note = "no IPM solver in this build";
};

// The runs of pile p (the last pile: `largest`) as evidence for the claims.
void judge_pile(Claims& claims, const std::vector<SolverRun>& runs, std::size_t p, bool largest);

// The checks of the claims; `have_ipm`: this build has an IPM.
void check_claims(moreau::ExperimentResults& results, const Claims& claims, bool full,
                  bool have_ipm);

}  // namespace pile_problems
