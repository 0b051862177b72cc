#include "claims.hpp"

#include <cmath>
#include <optional>

#include "moreau/core/error.hpp"

namespace pile_problems {

using namespace moreau;

namespace {

const SolverRun& find_run(const std::vector<SolverRun>& runs, const std::string& label) {
  for (const SolverRun& r : runs)
    if (r.label == label) return r;
  throw InputError("no run " + label);
}

// Kleinert Fig. 7(c): PGJ's time over the IPM's to 5e-4 on the largest pile. At the published
// scale PGJ runs for the bound times the IPM's time (ratio_budget); the quick run stops it at
// its cap, which leaves a lower bound (a separate reference entry, a known difference).
std::string ratio_check(bool full) {
  return full ? "pgj_over_ipm_time_at_5e-4_largest" : "pgj_over_ipm_time_at_5e-4_largest_quick";
}

}  // namespace

void judge_pile(Claims& claims, const std::vector<SolverRun>& runs, std::size_t p, bool largest) {
  const std::string tag = "pile " + std::to_string(p + 1);
  const SolverRun& pgj = find_run(runs, "PGJ");
  // The paper's claims are on its error(gamma, u) (Fig. 6-7): PGJ and the IPM compared there.
  const SolverRun& pgj_error = find_run(runs, "PGJ" + kErrorSuffix);
  // PGJ stalls (Kleinert Sec. 5: "its convergence rate stalled almost completely before a
  // reasonably small error was achieved"): above 5e-4 at its cap, and the second half of its
  // iterations reduced the merit by less than a factor 2.
  if (p >= 1) {
    const std::vector<double>& h = pgj.stats.merit_history;
    const double half = h[h.size() / 2], last = h.back();
    const bool stalled = last > kTolerances.back() && last > 0.5 * half;
    claims.larger_piles_stall = claims.larger_piles_stall && stalled;
    claims.stall_note += tag + ": PGJ merit " + std::to_string(half) + " at iteration " +
                         std::to_string(h.size() / 2) + ", " + std::to_string(last) + " at " +
                         std::to_string(h.size() - 1) + "; ";
  }
  // The IPM against PGJ at 1e-2 (Fig. 7b) and, on the largest pile, at 5e-4.
  const auto seconds = [](const SolverRun& r, std::size_t k) -> std::optional<double> {
    const double t = r.time_to_tolerance[k];
    return std::isnan(t) ? std::nullopt : std::optional<double>(t);
  };
  for (const SolverRun& r : runs) {
    if (r.label != "IPM" + kErrorSuffix) continue;  // the paper's IPM-MF
    const std::optional<double> ipm = seconds(r, 1), jacobi = seconds(pgj_error, 1);  // 1e-2
    const bool faster = ipm && (!jacobi || *ipm < *jacobi);
    claims.ipm_faster_at_1e2 = claims.ipm_faster_at_1e2 && faster;
    claims.ipm_note += tag + ": IPM " + (ipm ? std::to_string(*ipm) : std::string("never")) +
                       " s, PGJ " + (jacobi ? std::to_string(*jacobi) : std::string("never")) +
                       " s; ";
    if (largest) {
      const std::optional<double> ipm_tight = seconds(r, 2), pgj_tight = seconds(pgj_error, 2);
      if (ipm_tight) {
        // Not reached by PGJ: its whole run is a lower bound of the time it would need.
        claims.largest_ratio = (pgj_tight ? *pgj_tight : pgj_error.stats.wall_seconds) / *ipm_tight;
        claims.ratio_is = pgj_tight ? Measured::exact : Measured::lower_bound;
        claims.ratio_note =
            "on error(gamma, u): PGJ " +
            (pgj_tight ? std::to_string(*pgj_tight) + " s"
                       : "not reached in " + std::to_string(pgj_error.stats.wall_seconds) +
                             " s (a lower bound)") +
            ", IPM " + std::to_string(*ipm_tight) + " s";
      } else {
        claims.ratio_note = "the IPM did not reach 5e-4";
      }
    }
  }
}

void check_claims(ExperimentResults& results, const Claims& claims, bool full, bool have_ipm) {
  results.check("pgj_stalls_on_larger_piles", claims.larger_piles_stall, claims.stall_note);
  results.check("ipm_faster_than_pgj_at_1e-2", claims.ipm_faster_at_1e2,
                have_ipm ? claims.ipm_note : "no IPM solver in this build");
  // Our bound (100, the entry's reason) and the paper's own "more than 200 times" (Kleinert
  // Sec. 5, Fig. 7c), each judged from the same ratio or bound.
  const auto check_ratio = [&](const std::string& name) {
    if (std::isnan(claims.largest_ratio))
      results.not_evaluated(name, claims.ratio_note);
    else
      results.check_bound(name, claims.largest_ratio, claims.ratio_is, claims.ratio_note);
  };
  check_ratio(ratio_check(full));
  if (full) check_ratio("pgj_over_ipm_time_at_5e-4_largest_published");
}

}  // namespace pile_problems
