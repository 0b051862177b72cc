// The checks of the biaxial experiment against the claims of the Krabbenhoft/NURBS chapter
// Sec. 4.4.1 (reference/biaxial_compression/expected.json holds the statements, bands and
// reasons).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "biaxial_test.hpp"
#include "moreau/harness/results.hpp"
#include "response.hpp"

namespace {

using namespace biaxial;

constexpr double kFinalStrain = 0.2;  // Sec. 4.4.1: 0.21; a stopped run ends a step or more short

const ResponseMeasures* find(const std::vector<Outcome>& outcomes, Family family, double k) {
  for (const Outcome& o : outcomes)
    if (o.family == family && (o.k_normal == k || (std::isinf(k) && std::isinf(o.k_normal))))
      return &o.measures;
  return nullptr;
}

// disk < angular < non-convex for the measure `of` at stiffness k.
bool grows_with_angularity(const std::vector<Outcome>& outcomes, double k,
                           double (*of)(const ResponseMeasures&)) {
  const ResponseMeasures* d = find(outcomes, Family::disk, k);
  const ResponseMeasures* a = find(outcomes, Family::angular, k);
  const ResponseMeasures* n = find(outcomes, Family::non_convex, k);
  // Curves that stopped early (README.md) are not the chapter's: the ordering needs all three.
  auto complete = [](const ResponseMeasures* m) {
    return m != nullptr && m->final_axial_strain >= kFinalStrain;
  };  // every load step solved: eps_a = 0.21 of the pre-reference height, >= 0.21 of H0
  return complete(d) && complete(a) && complete(n) && of(*d) < of(*a) && of(*a) < of(*n);
}

}  // namespace

namespace biaxial {

void run_checks(moreau::ExperimentResults& results, const std::vector<Outcome>& outcomes,
                bool full) {
  const double rigid = std::numeric_limits<double>::infinity();
  const Family families[] = {Family::disk, Family::angular, Family::non_convex};
  if (full) {
    results.check(
        "peak_strength_grows_with_angularity",
        grows_with_angularity(outcomes, 1e8, [](const ResponseMeasures& m) { return m.peak; }),
        "peak sigma_1 - sigma_3 at k_N = 1e8: disk < angular < non-convex");
    results.check(
        "dilatancy_grows_with_angularity",
        grows_with_angularity(outcomes, 1e8, [](const ResponseMeasures& m) { return m.dilation; }),
        "largest volume increase -eps_v at k_N = 1e8: disk < angular < non-convex");
  }
  double worst = 0.0;
  bool suppressed = true, compaction = true, complete = true;
  for (Family f : families) {
    const ResponseMeasures* r = find(outcomes, f, rigid);
    const ResponseMeasures* stiff = find(outcomes, f, 1e8);
    const ResponseMeasures* soft = find(outcomes, f, 1e5);
    if (!r || !stiff || !soft) {
      complete = suppressed = compaction = false;
      continue;
    }
    worst = std::max(worst, std::abs(stiff->mean - r->mean) /
                                std::max(r->residual_deviation, 1e-12 * r->residual));
    // Against k_N = 1e8, "close to rigid" in the chapter (the non-convex rigid run has no
    // curve here: expected.json, every_run_reaches_final_strain).
    suppressed = suppressed && soft->peak > 0.0 && stiff->peak > 0.0 &&
                 soft->first_step_ratio < stiff->first_step_ratio;
    compaction = compaction && soft->compaction > 0.0 && soft->dilation > soft->compaction;
  }
  for (const Outcome& o : outcomes) complete = complete && o.run.failure.empty();
  results.check("stiff_response_close_to_rigid", worst,
                "largest over the families of |mean q(1e8) - mean q(inf)| / (standard deviation "
                "of the rigid q over eps_a >= 2/3 of the final strain), q = sigma_1 - sigma_3");
  if (full) {
    results.check("soft_contacts_suppress_initial_peak", suppressed,
                  "q at load step 1 / peak q is smaller at k_N = 1e5 than at 1e8, every family");
  }
  results.check("soft_contacts_compact_then_dilate", compaction,
                "at k_N = 1e5 eps_v > 0 at some step and the largest dilation exceeds it, every "
                "family");
  results.check("every_run_reaches_final_strain", complete,
                "every family and stiffness reached eps_a = 0.21 with converged load steps");
}

}  // namespace biaxial
